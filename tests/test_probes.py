"""A chapter's probe stored as one part per trained run (experiments/setups/probes.py): the parts joined
equal the probe computed over all runs at once (the sharpness test: a part per run and beta)."""


import pandas as pd
import pytest

from vvlib import probing
from vvlib.book.runner import resolved
from vvlib.book.chapters.c06_distribution_shift import distribution_probe, longer_probe
from vvlib.book.chapters.c07_dispersion import dispersion_probe, sharpness_probe
from vvlib.experiments.setups import probes, variants
from vvlib.experiments.storage import runs

SMALL = {"n_seeds": 2, "steps": 4, "hidden": 16, "checkpoint_every": 4, "eval_lengths": [16, 32, 64],
         "n_probe_sequences": 8}
OWN = {"06_distribution_shift": {"distribution_lengths": [16, 64], "components": [0, 3], "histogram_bins": 5},
       "07_dispersion": {"n_examples": 3, "heatmap_lengths": [16, 64]}}


def params(chapter, store_dir):
    return resolved(chapter, "ci", {**SMALL, **OWN[chapter], "store_dir": str(store_dir)})


def whole_distribution(P, probe) -> dict:
    """Chapter 6's tables over both variants at once (as a single probe of two runs computed them)."""
    cfg = variants.eval_config(P, n_sequences=P.n_probe_sequences)
    probed = {v: probing.probe(run.model_cfg, run.weights, cfg, progress=False) for v, (run,) in probe.models.items()}
    return probing.distribution_tables(probed, P.components, P.shown_seed, P.distribution_lengths, P.max_len,
                                       P.histogram_bins)


def whole_dispersion(P, probe) -> dict:
    cfgs = {t: variants.eval_config(P, t, n_sequences=P.n_probe_sequences) for t in probes.TEMPERATURES}
    probed = {variants.run_name(v, t): probing.probe(run.model_cfg, run.weights, cfg, progress=False)
              for v, (run,) in probe.models.items() for t, cfg in cfgs.items()}
    return probing.dispersion_tables(probed, P.shown_seed, P.n_examples, P.heatmap_lengths, list(probes.PAIR))


@pytest.mark.parametrize("chapter, make, whole", [("06_distribution_shift", distribution_probe, whole_distribution),
                                                  ("07_dispersion", dispersion_probe, whole_dispersion)])
def test_the_parts_joined_equal_the_whole_probe(tmp_path, chapter, make, whole):
    P = params(chapter, tmp_path / "parts")
    probe = make(P, "cpu")
    assert [p.variant for p in probe.parts] == list(probes.PAIR)
    joined = probe.tables(P.store_dir, "cpu")
    expected = whole(P, probe)
    for t, frame in expected.items():
        pd.testing.assert_frame_equal(joined[t], frame)


def by_run_row(frame: pd.DataFrame) -> pd.DataFrame:
    """A table's rows ordered by variant, seed and N where it has them (stable: the rest keep their order)."""
    keys = [k for k in ("variant", "seed", "N") if k in frame]
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


@pytest.mark.parametrize("chapter, make", [("06_distribution_shift", distribution_probe),
                                           ("07_dispersion", dispersion_probe)])
def test_a_probe_of_seeds_stored_as_several_runs_equals_the_probe_of_one_run(tmp_path, chapter, make):
    """seed_chunk 2 stores 3 seeds as runs of 2 + 1: a part per run, seeds numbered as in one run of all
    three, the shown seed's tables from the run that holds it (seed 2, the second run's first)."""
    settings = {**SMALL, **OWN[chapter], "n_seeds": 3, "shown_seed": 2, "draws": "counter"}
    whole = make(resolved(chapter, "ci", {**settings, "store_dir": str(tmp_path / "one")}), "cpu")
    cut = make(resolved(chapter, "ci", {**settings, "store_dir": str(tmp_path / "cut"), "seed_chunk": 2}), "cpu")
    assert [(p.variant, p.run.train_cfg.first_seed, p.run.train_cfg.n_seeds) for p in cut.parts] == [
        (v, first, n) for v in probes.PAIR for first, n in ((0, 2), (2, 1))]
    expected, joined = whole.tables(tmp_path / "one", "cpu"), cut.tables(tmp_path / "cut", "cpu")
    assert sorted(joined) == sorted(expected)
    for t, frame in expected.items():  # the same rows; a norm's rows before it come after each run's, not all runs'
        pd.testing.assert_frame_equal(by_run_row(joined[t]), by_run_row(frame), check_exact=False, rtol=1e-6, atol=1e-7)
    shown_only = set(expected) - set(cut.parts[0].tables(tmp_path / "cut", "cpu"))
    shown_tables = {"06_distribution_shift": {"values", "histograms", "component_std"}, "07_dispersion": {"heatmaps"}}
    assert shown_only == shown_tables[chapter]
    records = cut.records()
    assert [len(r["parts"]) for r in records.values()] == [2, 2]
    assert records["baseline"]["loss_history"] == whole.records()["baseline"]["loss_history"]


def test_chapter_6_probes_chapter_4s_longer_runs_of_the_variants_it_names(tmp_path):
    """longer_probe: one part per stored run of chapter 4's longer training (the very runs chapter 4's plan
    trains), for each variant of long_variants; +LN's parts also hold the norm table, each seed numbered as in
    the whole ensemble.  The chapter probes them only where long_steps names them."""
    from vvlib.book.chapters import get_chapter
    from vvlib.book.gpu_queue import plan

    P6, P4 = (resolved(c, "ci", {"store_dir": str(tmp_path)}) for c in ("06_distribution_shift", "04_argmax_retrieval"))
    probe = longer_probe(P6, "cpu")
    assert [(p.variant, p.run.train_cfg.first_seed) for p in probe.parts] == [
        ("baseline", 0), ("baseline", 1), ("layernorm", 0), ("layernorm", 1)]  # the ci profile: 2 runs of one seed
    chapter4 = {job.path.parent for job in plan.chapter_jobs("04_argmax_retrieval", P4) if job.steps == P4.long_steps}
    assert {runs.run_dir(tmp_path, p.run.model_cfg, p.run.train_cfg, "cpu") for p in probe.parts} == chapter4
    assert [name for name, _ in get_chapter("06_distribution_shift").probes(P6, "cpu")] == ["argmax", "argmax"]
    no_longer = resolved("06_distribution_shift", "ci", {"store_dir": str(tmp_path), "long_steps": 0})
    assert [p.name for _, p in get_chapter("06_distribution_shift").probes(no_longer, "cpu")] == ["probe-distribution"]

    given = {**SMALL, **OWN["06_distribution_shift"], "long_steps": 4, "long_variants": ["layernorm"]}
    small = resolved("06_distribution_shift", "ci", {**given, "store_dir": str(tmp_path)})
    probe = longer_probe(small, "cpu")
    assert {p.variant for p in probe.parts} == {"layernorm"}
    tables = probe.tables(tmp_path, "cpu")
    assert set(tables) == {"global", "norm"}
    for name in tables:
        rows = sorted(set(zip(tables[name]["seed"], tables[name]["N"])))
        assert rows == [(s, n) for s in (0, 1) for n in (16, 32, 64)]
    assert (tables["norm"]["variant"] == "layernorm").all() and (tables["norm"]["epsilon_share"] < 0.5).all()
    joined = pd.merge(tables["global"], tables["norm"], on=["variant", "seed", "N"])  # the same readout, two tables
    assert (joined["global_variance_x"] - joined["global_variance_y"]).abs().max() < 1e-6


def test_chapter_7s_sharpness_tests_read_chapter_4s_main_and_longer_runs(tmp_path):
    """c07_dispersion.sharpness_tests: on the main runs where sharpness_main is set (the very runs chapter 4 trains at
    n_seeds x steps) and on the longer runs where long_steps names them, each with its own seeds and steps and a
    store entry of its own; the chapter's probes are Figure 4's and then these.  An unknown `runs` is refused."""
    from vvlib.book.chapters import c07_dispersion, get_chapter
    from vvlib.book.gpu_queue import plan

    P7, P4 = (resolved(c, "ci", {"store_dir": str(tmp_path)}) for c in ("07_dispersion", "04_argmax_retrieval"))
    tests = c07_dispersion.sharpness_tests(P7, "cpu")
    assert [(seeds, steps) for _, seeds, steps in tests] == [(P4.n_seeds, P4.steps), (P4.long_seeds, P4.long_steps)]
    folders = [{runs.run_dir(tmp_path, p.run.model_cfg, p.run.train_cfg, "cpu") for p in probe.parts}
               for probe, _, _ in tests]
    jobs = plan.chapter_jobs("04_argmax_retrieval", P4)
    assert folders == [{job.path.parent for job in jobs if job.steps == steps} for steps in (P4.steps, P4.long_steps)]
    main, longer = (probe for probe, _, _ in tests)
    assert {p.folder(tmp_path) for p in main.parts}.isdisjoint(p.folder(tmp_path) for p in longer.parts)
    assert [p.name for _, p in get_chapter("07_dispersion").probes(P7, "cpu")] == [
        "probe-dispersion", "probe-sharpness", "probe-sharpness"]
    off = resolved("07_dispersion", "ci", {"store_dir": str(tmp_path), "sharpness_main": False, "long_steps": 0})
    assert c07_dispersion.sharpness_tests(off, "cpu") == []
    with pytest.raises(ValueError, match="runs: one of"):
        sharpness_probe(P7, "cpu", "both")


def test_the_sharpness_test_is_stored_one_part_per_beta_and_an_added_beta_computes_only_its_own(tmp_path):
    """sharpness_probe: a part per variant and beta, whose rows joined equal probing.sharpness_frame over all the
    betas at once; and with a beta added, every part stored stays stored, so only the new beta's parts are
    computed."""
    betas = [0.5, 1.0, 2.0]
    settings = {**SMALL, **OWN["07_dispersion"], "sharpness_lengths": [32, 64], "sharpness_sequences": 8,
                "sharpness_betas": betas}
    P = resolved("07_dispersion", "ci", {**settings, "store_dir": str(tmp_path / "parts")})
    probe = sharpness_probe(P, "cpu", "main")
    assert [(p.variant, p.spec["choices"]) for p in probe.parts] == [(v, {"beta": b}) for v in probes.PAIR
                                                                      for b in betas]
    assert [len(run_list) for run_list in probe.models.values()] == [1, 1]  # a run split by beta counts once
    joined = probe.tables(P.store_dir, "cpu")["sharpness"]
    cfg = variants.eval_config(P, n_sequences=P.sharpness_sequences, lengths=P.sharpness_lengths)
    whole = {v: probing.sharpness_frame(run.model_cfg, run.weights, cfg, betas, v) for v, (run,) in probe.models.items()}
    pd.testing.assert_frame_equal(joined, pd.concat(whole.values(), ignore_index=True), check_exact=True)

    more = resolved("07_dispersion", "ci", {**settings, "sharpness_betas": betas + [3.0],
                                            "store_dir": str(tmp_path / "parts")})
    missing = [(p.variant, p.spec["choices"]["beta"]) for p in sharpness_probe(more, "cpu", "main").parts
               if not p.stored(more.store_dir)]
    assert missing == [(v, 3.0) for v in probes.PAIR]
