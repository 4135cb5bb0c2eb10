"""Chapters 6 and 7 once the GPU queue commits their probes of chapter 4's paper-profile runs (its two units):
the probe is read joined from its parts, nothing is read before every part is there, the metrics the
summary reads are the ones an independent computation gives, and the summary's claims of Figures 3 and 4
then rest on the paper's scale.  The records and tables are made up under the real store keys, so all this
runs on the CPU before a GPU ever commits them."""

import pytest
from scipy import stats as scipy_stats

from tests.paper_records import GPU, made_up_probe_store
from vvlib.book import paper_scale
from vvlib.compare import CONTRADICTED, SUPPORTED
from vvlib.experiments.reports import probed
from vvlib.book.chapters.summary import claims as summary
from vvlib.experiments.setups import probes
from vvlib.experiments.storage import runs


@pytest.mark.parametrize("name", ["06_distribution_shift", "07_dispersion"])
def test_the_paper_scale_probe_is_read_only_once_every_part_is_committed(tmp_path, name):
    made_up_probe_store(tmp_path, name, variants_probed=("baseline",))
    assert paper_scale.probe(name, tmp_path / "empty") is None  # nothing committed yet
    assert paper_scale.probe(name, tmp_path, needed=probes.PAIR) is None  # +LN's parts still wait in the queue
    made_up_probe_store(tmp_path / "all", name)
    P, tables, records = paper_scale.probe(name, tmp_path / "all")
    table = tables[{"06_distribution_shift": "global", "07_dispersion": "attention"}[name]]  # (and chapter 6's slopes)
    assert (P.n_seeds, P.steps, P.seed_chunk) == (100, 100_000, 0)  # each variant one run of 100 seeds
    for variant in probes.PAIR:
        assert sorted(table[table.variant == variant]["seed"].unique()) == list(range(100))
        assert [r["provenance"]["device"] for r in runs.run_records(records[variant])] == [GPU]


def test_chapter_6_may_read_the_baselines_part_alone_and_tests_its_drift(tmp_path):
    """By default (the record's paper_scale_needs: the Baseline) the Baseline's committed part is read while +LN's
    waits (and not while the Baseline's does): Figure 3's metrics then hold its drift, not the paired ratio, and
    drift_evidence counts the lengths beyond training where its one-sample t-test finds it."""
    from vvlib.experiments.reports import answers

    frame = made_up_probe_store(tmp_path, "06_distribution_shift", variants_probed=("baseline",))
    assert paper_scale.probe("06_distribution_shift", tmp_path, needed=["layernorm"]) is None
    P, tables, records = paper_scale.probe("06_distribution_shift", tmp_path)
    assert list(records) == ["baseline"] and set(tables["global"]["variant"]) == {"baseline"}
    metrics = probed.figure3_metrics(tables["global"], P.eval_lengths)
    assert "p_value_relative_global_variance" not in metrics and list(metrics["global_mean_drift"]) == ["baseline"]
    evidence = answers.drift_evidence(tables["global"], P.eval_lengths, P.max_len)  # the Baseline's alone
    beyond = [n for n in P.eval_lengths if n > P.max_len]
    p = [scipy_stats.ttest_1samp(frame[frame.N == n]["mean_drift"], 0).pvalue for n in beyond]
    drifted = [abs(frame[frame.N == n]["mean_drift"].mean()) > 0 for n in beyond]
    assert (evidence.lengths, evidence.ahead, evidence.ahead_significant, evidence.behind) == (
        len(beyond), sum(drifted), sum(d and q < 0.05 for d, q in zip(drifted, p)), 0)


def test_figure_3s_metrics_are_means_over_seeds_and_paired_tests_of_the_joined_table(tmp_path):
    frame = made_up_probe_store(tmp_path, "06_distribution_shift")
    metrics = probed.figure3_metrics(frame, [16, 1024])
    at = {v: frame[(frame.variant == v) & (frame.N == 1024)].sort_values("seed") for v in probes.PAIR}
    assert metrics["relative_global_variance"]["layernorm"]["1024"] == pytest.approx(
        at["layernorm"]["relative_variance"].mean())
    assert metrics["global_mean"]["baseline"]["1024"] == pytest.approx(at["baseline"]["global_mean"].mean())
    paired = scipy_stats.ttest_rel(at["baseline"]["relative_variance"], at["layernorm"]["relative_variance"])
    assert metrics["p_value_relative_global_variance"]["1024"] == pytest.approx(paired.pvalue)
    drift = scipy_stats.ttest_1samp(at["baseline"]["mean_drift"], 0.0)
    assert metrics["p_value_mean_drift"]["baseline"]["1024"] == pytest.approx(drift.pvalue)


def probing_results(chapter: str, own: dict, paper_scale: dict | None) -> dict:
    """A probing chapter's results.json: its own metrics at 8 seeds x 3,000 CPU steps, and the paper scale's."""
    metrics = {**own, **({"paper_scale": paper_scale} if paper_scale else {})}
    sources = {"training/baseline": {"device": "cpu (x86_64, 2 threads)"}}
    sources.update({"training/paper_scale/baseline": {"device": GPU}} if paper_scale else {})
    return {"chapter": chapter, "metrics": metrics,
            "parameters": {"eval_lengths": [16, 256, 16384], "max_len": 16, "n_seeds": 8, "steps": 3000,
                           "profile": "default"},
            "provenance": {"device": "cpu (x86_64, 2 threads)", "sources": sources}}


def figure_metrics(ln_is_better: bool, n_seeds=None, steps=None) -> tuple[dict, dict]:
    """(chapter 6's, chapter 7's) metrics with +LN ahead or behind at every length, all significant."""
    lengths = ["16", "256", "16384"]
    good, bad = ({n: 0.9 for n in lengths}, {n: 0.5 for n in lengths})
    ratio = {"layernorm": good if ln_is_better else bad, "baseline": bad if ln_is_better else good}
    entropy = {"layernorm": {n: 1.0 for n in lengths}, "baseline": {n: 1.0 + (1 if ln_is_better else -1)
                                                                   for n in lengths}}
    p = {n: 1e-6 for n in lengths}
    shift = {"relative_global_variance": ratio, "p_value_relative_global_variance": p,
             "global_mean_drift": {"baseline": {n: 0.3 for n in lengths}}, "p_value_mean_drift": {"baseline": p}}
    dispersion = {"entropy": entropy, "p_value_entropy": {"baseline_vs_layernorm": p}}
    scale = {"n_seeds": n_seeds, "steps": steps, "device_type": "cuda"} if n_seeds else {}
    return {**shift, **scale}, {**dispersion, **scale}


OTHER_SCALE = {"parameters": {"n_seeds": 1, "steps": 1, "profile": "ci"}, "metrics": {}}  # chapter 4, scale unprobed


def test_figure_claims_rest_on_the_paper_scale_where_the_probes_are_committed():
    shift, dispersion = figure_metrics(ln_is_better=False)  # this page's runs: +LN behind
    big_shift, big_dispersion = figure_metrics(ln_is_better=True, n_seeds=100, steps=100_000)
    results = {"06_distribution_shift": probing_results("06_distribution_shift", shift, big_shift),
               "07_dispersion": probing_results("07_dispersion", dispersion, big_dispersion),
               "04_argmax_retrieval": OTHER_SCALE}  # not the probed runs: no Table 1 row
    claims = {c.source + ": " + c.claim: c for c in summary._figure_claims(results)}
    for key in ("Figure 3: +LN keeps more of the global variance of the readout's input",
                "Figure 4: +LN makes the attention less dispersed (lower entropy)"):
        own, big = claims[key].readings
        assert own.evidence.verdict() == CONTRADICTED and (big.n_seeds, big.device) == (100, GPU)
        assert claims[key].decisive() is big and claims[key].verdict() == SUPPORTED
    without = {"06_distribution_shift": probing_results("06_distribution_shift", shift, None),
               "07_dispersion": probing_results("07_dispersion", dispersion, None),
               "04_argmax_retrieval": OTHER_SCALE}
    assert all(len(c.readings) == 1 for c in summary._figure_claims(without))


def argmax_results(draws: str) -> dict:
    """Chapter 4's results.json at a scale chapter 6 did not probe, with paper-scale runs on `draws`: +LN
    ahead at every length, significantly."""
    lengths = ["16", "256", "16384"]
    pairs = ("baseline_vs_layernorm",)
    big = {"accuracy": {"baseline": {n: 50.0 for n in lengths}, "layernorm": {n: 60.0 for n in lengths}},
           "p_value": {pair: {n: 1e-6 for n in lengths} for pair in pairs}, "n_seeds": 100, "steps": 100_000,
           "device_type": "cuda", "draws": draws}
    return {"chapter": "04_argmax_retrieval", "parameters": OTHER_SCALE["parameters"], "metrics": {"paper_scale": big},
            "provenance": {"device": "cpu (x86_64, 2 threads)",
                           "sources": {"training/paper_scale/baseline": {"device": GPU}}}}


def test_variance_kept_is_set_beside_accuracy_only_where_chapter_6_probed_the_runs_chapter_4_scored():
    """At the paper's scale chapter 6 probes the paper profile's own runs (the counter stream): chapter 4's
    paper-scale accuracy is read beside it when it comes from those runs, not from the earlier generator runs."""
    big_shift, big_dispersion = figure_metrics(ln_is_better=True, n_seeds=100, steps=100_000)
    shift, dispersion = figure_metrics(ln_is_better=False)
    claim = "where +LN keeps more global variance, it is more accurate"

    def claims(draws):
        results = {"06_distribution_shift": probing_results("06_distribution_shift", shift, big_shift),
                   "07_dispersion": probing_results("07_dispersion", dispersion, big_dispersion),
                   "04_argmax_retrieval": argmax_results(draws)}
        return [c for c in summary._figure_claims(results) if c.claim == claim]

    assert claims("generators") == []  # the earlier runs: not the ones chapter 6 probed
    ((paper,),) = [c.readings for c in claims("counter")]
    assert paper.n_seeds == 100 and paper.evidence.verdict() == SUPPORTED
