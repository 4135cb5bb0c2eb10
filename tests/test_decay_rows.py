"""Chapter 11's rows of chapter 10's deep model (heads and layers as row settings), and chapter 10's reading
of them: a constant and a decayed rate on the same seeds, compared seed by seed."""

import numpy as np
import pytest
from scipy import stats as scipy_stats

from vvlib.book import decay_rows, runner
from vvlib.compare import format_p
from vvlib.experiments.reports import layer_rows
from vvlib.experiments.setups import sensitivity, variants
from vvlib.experiments.setups.params import ParameterError

DEEP = {"heads": 2, "layers": 2}


def rows_params(store_dir, **overrides):
    return runner.resolved("11_sensitivity", "ci", {"store_dir": str(store_dir), **overrides})


def test_a_row_sets_the_models_heads_and_layers_and_a_deep_variants_own_win():
    P = rows_params("unused", argmax_rows=[], dictionary_rows=[{}, DEEP])
    (_, _, defaults), (_, row, deep) = sensitivity.check_rows(P)
    models = [variants.model_config(p, variants.task_config(p, "dictionary"), "layernorm") for p in (defaults, deep)]
    assert [(m.heads, m.layers, m.norm) for m in models] == [(1, 1, "layernorm"), (2, 2, "layernorm")]
    assert sensitivity.model_changes(row) == DEEP and sensitivity.model_changes({"lr": 0.003, "steps": 9}) == {}
    chapter_10 = runner.resolved("10_beyond", "ci")
    both = variants.task_params(runner.resolved("10_beyond", "ci", {"deep_heads": 4}), "dictionary")
    given = type(both)({**both, "heads": 2, "layers": 3})  # a cell's heads and layers do not reach the deep variant
    deep_model = variants.model_config(given, variants.task_config(given, "dictionary"), "deep_baseline")
    assert (deep_model.heads, deep_model.layers) == (4, chapter_10.deep_layers)


def test_a_row_whose_heads_do_not_divide_the_width_is_refused_before_anything_trains():
    with pytest.raises(ParameterError) as refused:
        sensitivity.check_rows(rows_params("unused", argmax_rows=[], dictionary_rows=[{"heads": 3}]))
    assert "dictionary_rows[0]: heads must divide hidden" in str(refused.value)


def test_rows_of_a_model_are_those_changing_exactly_it():
    P = rows_params("unused", argmax_rows=[], dictionary_rows=[{}, {"lr": 0.003}, DEEP, {**DEEP, "lr_schedule": "cosine"},
                                                               {"heads": 2}, {**DEEP, "hidden": 64}])
    assert sensitivity.rows_of_model(P, "dictionary", DEEP) == [DEEP, {**DEEP, "lr_schedule": "cosine"}]
    assert sensitivity.rows_of_model(P, "dictionary", {}) == [{}, {"lr": 0.003}]
    named = [{**DEEP, "steps": 50, "n_seeds": 3}, {**DEEP, "steps": 50, "lr_schedule": "cosine"}]
    assert ([decay_rows.rate_name(row, sensitivity.row_params(P, "dictionary", row)) for row in named]
            == ["constant rate, 50 steps", "lr_schedule=cosine, 50 steps"])


def test_the_schedule_table_is_a_paired_comparison_over_the_same_seeds():
    rng = np.random.default_rng(1)
    lengths = [16, 64, 256]
    constant = {side: rng.uniform(0, 1, (6, 3)) for side in sensitivity.PAIR}
    decayed = {side: np.clip(a + rng.normal(0.05, 0.03, a.shape), 0, 1) for side, a in constant.items()}
    table = layer_rows.schedule_table([("constant rate", constant), ("lr_schedule=cosine", decayed)], lengths, [64, 256])
    assert list(table.columns) == ["mean (%)", "constant rate (%)", "difference (points)", "p"]
    for side in sensitivity.PAIR:
        for j, n in ((1, 64), (2, 256)):
            diff = 100 * (decayed[side][:, j] - constant[side][:, j])
            p = scipy_stats.ttest_rel(decayed[side][:, j], constant[side][:, j]).pvalue
            half = scipy_stats.t.ppf(0.975, 5) * diff.std(ddof=1) / np.sqrt(6)
            assert table.loc[("lr_schedule=cosine", variants.short_label(side), f"{n:,}")].tolist() == [
                f"{100 * decayed[side][:, j].mean():.1f}", f"{100 * constant[side][:, j].mean():.1f}",
                f"{diff.mean():+.1f} [{diff.mean() - half:+.1f}, {diff.mean() + half:+.1f}]", format_p(p)]


def test_chapter_10_reads_the_deep_rows_from_the_store_and_never_trains_them(tmp_path):
    rows = [{**DEEP, "steps": 6}, {**DEEP, "steps": 6, "lr_schedule": "cosine"}, {**DEEP, "steps": 6, "n_seeds": 3},
            {**DEEP, "steps": 3}]
    P_rows = rows_params(tmp_path, argmax_rows=[], dictionary_rows=rows, n_seeds=2, eval_lengths=[16, 64],
                         compared_lengths=[64])
    P = runner.resolved("10_beyond", "ci", {"store_dir": str(tmp_path), "deep_heads": 2, "deep_layers": 2})
    names = ["constant rate, 6 steps", "lr_schedule=cosine, 6 steps", "constant rate, 3 steps"]  # 3 seeds: left out
    assert [(name, accuracy) for name, _, accuracy, _ in decay_rows.stored_rows(P, P_rows, "cpu")] == [
        (name, None) for name in names]
    assert not list(tmp_path.glob("train-*"))  # reading trains nothing
    plan = [p for p in sensitivity.check_rows(P_rows) if p[1] != rows[2]]
    trained = [sensitivity.train_row(P_row, "dictionary", "cpu") for _, _, P_row in plan[:2]]
    found = decay_rows.stored_rows(P, P_rows, "cpu")
    assert [name for name, *_ in found] == names and found[2][2] is None
    for (_, _, accuracy, training), (accuracy_trained, training_trained) in zip(found, trained):
        assert all(np.array_equal(accuracy[s], accuracy_trained[s]) for s in sensitivity.PAIR)
        assert {s: r["spec"] for s, r in training.items()} == {s: r["spec"] for s, r in training_trained.items()}
    assert {(r["spec"]["model"]["heads"], r["spec"]["model"]["layers"]) for *_, t in found[:2] for r in t.values()} == {
        (2, 2)}
    assert len(list(tmp_path.glob("train-*"))) == 4
    # the row stopped early trains the same seeds the same way: its weights are the longer row's at its step
    sensitivity.train_row(plan[2][2], "dictionary", "cpu")
    early, longer = (decay_rows.stored_rows(P, P_rows, "cpu")[j][3]["baseline"]["loss_history"] for j in (2, 0))
    assert early[:3] == longer[:3]


def _layer_rows(rng, n_seeds, lengths, layers=2):
    """layer_frame's rows of both sides, random entropies."""
    import pandas as pd
    return pd.DataFrame([{"variant": v, "seed": s, "N": n, "layer": layer, "entropy": rng.uniform(0, np.log(n)),
                          "top1_weight": rng.uniform(0, 1), "on_answer": rng.uniform(0, 1)}
                         for v in sensitivity.PAIR for s in range(n_seeds) for n in lengths for layer in range(layers)])


def test_the_layer_tables_are_means_over_seeds_and_a_paired_comparison():
    rng = np.random.default_rng(3)
    probed = [("constant rate", _layer_rows(rng, 5, [16, 1024])), ("cosine", _layer_rows(rng, 5, [16, 1024]))]
    table = layer_rows.layer_table(probed, {"baseline": "Deep", "layernorm": "Deep (+ LN)"})
    for name, frame in probed:
        for side, label in (("baseline", "Deep"), ("layernorm", "Deep (+ LN)")):
            for layer in (0, 1):
                mine = frame[(frame["variant"] == side) & (frame["layer"] == layer)]
                for n in (16, 1024):
                    assert table.loc[(name, label, layer + 1), f"N = {n:,}"] == round(mine[mine["N"] == n]["entropy"].mean(), 3)
    assert table.loc[("uniform weights (ln N)", "", ""), "N = 1,024"] == round(np.log(1024), 3)
    shares = layer_rows.layer_table(probed, {"baseline": "Deep", "layernorm": "Deep (+ LN)"}, "on_answer")
    mine = probed[1][1]
    mine = mine[(mine["variant"] == "layernorm") & (mine["layer"] == 0) & (mine["N"] == 16)]
    assert shares.loc[("cosine", "Deep (+ LN)", 1), "N = 16"] == round(100 * mine["on_answer"].mean(), 2)
    assert shares.loc[("largest weight on a random item (%)", "", ""), "N = 1,024"] == round(100 / 1024, 2)
    first = layer_rows.layer_entropy_table(probed, 16)
    for name, frame in probed:
        at_16 = frame[(frame["layer"] == 0) & (frame["N"] == 16)]
        base, ln = (at_16[at_16["variant"] == v].sort_values("seed")["entropy"].to_numpy() for v in sensitivity.PAIR)
        d, p = ln - base, scipy_stats.ttest_rel(ln, base).pvalue
        half = scipy_stats.t.ppf(0.975, 4) * d.std(ddof=1) / np.sqrt(5)
        assert first.loc[name].tolist() == [
            f"{base.mean():.2f} ({base.mean() / np.log(16):.0%})", f"{ln.mean():.2f} ({ln.mean() / np.log(16):.0%})",
            f"{d.mean():+.2f} [{d.mean() - half:+.2f}, {d.mean() + half:+.2f}]", format_p(p)]


def test_chapter_10_reads_each_layers_attention_only_where_chapter_11s_probe_stored_it(tmp_path):
    """The probe of a row's layers is planned with chapter 11's rows (the GPU units that train them probe them);
    chapter 10 reads it from the store and names the rows not probed, computing nothing."""
    from vvlib.experiments.paper_scale import plan
    from vvlib.experiments.setups import probes

    rows = [{**DEEP, "steps": 6}, {**DEEP, "steps": 6, "lr_schedule": "cosine"}]
    P_rows = rows_params(tmp_path, argmax_rows=[{}], dictionary_rows=[{}, *rows], n_seeds=2, eval_lengths=[16, 64],
                         compared_lengths=[64])
    probed = probes.layers(P_rows, "cpu")
    assert [task for task, _ in probed] == ["dictionary", "dictionary"]  # the one-layer rows have no layers to probe
    jobs = [job for job in plan.chapter_jobs("11_sensitivity", P_rows, "cpu") if job.kind == "dictionary probing"]
    assert {job.path for job in jobs} == {part.folder(tmp_path) / "tables.json" for _, probe in probed for part in probe.parts}
    assert all(len(job.reads) == 1 and job.reads[0].name.startswith("train-") for job in jobs)
    for _, _, P_row in [p for p in sensitivity.check_rows(P_rows) if p[1] in rows]:
        sensitivity.train_row(P_row, "dictionary", "cpu")
    P_row, P_cosine = (sensitivity.row_params(P_rows, "dictionary", row) for row in rows)
    assert decay_rows.stored_layers(P_row, "cpu")[1] is None
    assert not list(tmp_path.glob("probe-layers-*"))  # reading computes nothing
    computed = probes.layer_probe(P_row, "dictionary", "cpu").tables(str(tmp_path), "cpu")["layers"]
    _, frame = decay_rows.stored_layers(P_row, "cpu")
    assert frame.equals(computed) and set(frame["N"]) == {16, 64} and set(frame["layer"]) == {0, 1}
    assert set(frame["variant"]) == set(sensitivity.PAIR) and len(frame) == 2 * 2 * 2 * 2
    sources = decay_rows.show_layers(P_rows, [("constant", P_row), ("cosine", P_cosine)], "cpu", "here", "CPU")
    assert set(sources) == {"deep_layers/here/constant/baseline", "deep_layers/here/constant/layernorm"}
    assert all("git_commit" in provenance for provenance in sources.values())
