"""The summary's accuracy claims at each scale a chapter ran, the headline sentence, and the
tables that set the scales side by side."""

from vvlib.compare import CONTRADICTED, SUPPORTED
from vvlib.experiments.reports import answers
from vvlib.book.chapters.summary import claims as summary, summary_tables
from vvlib.experiments.setups import paper, paper_tasks

LENGTHS = [16, 32, 64]


def metrics(ln_minus_baseline: float, p: float, **extra) -> dict:
    """per_length-style metrics: +LN differs from the Baseline by ln_minus_baseline at every length."""
    base = {str(n): 50.0 for n in LENGTHS}
    ln = {str(n): 50.0 + ln_minus_baseline for n in LENGTHS}
    runs = {"baseline": base, "layernorm": ln, "adaptive_baseline": base, "adaptive_layernorm": ln}
    pairs = ("baseline_vs_layernorm", "adaptive_baseline_vs_adaptive_layernorm", "layernorm_vs_adaptive_layernorm")
    return {"accuracy": runs, "p_value": {pair: {str(n): p for n in LENGTHS} for pair in pairs}, **extra}


def results(paper_scale=None, long=None) -> dict:
    m = metrics(-2.0, 0.001)  # the book's scale: +LN significantly behind
    P = {"eval_lengths": LENGTHS, "max_len": 16, "n_seeds": 20, "steps": 4000, "profile": "book"}
    if paper_scale is not None:
        m["paper_scale"] = paper_scale
    if long is not None:
        m["long"], P["long_seeds"] = long, long["n_seeds"]
    return {"chapter": "04_argmax_retrieval", "parameters": P, "metrics": m,
            "provenance": {"device": "cpu (x86_64, 2 threads)",
                           "sources": {"training/paper_scale/baseline": {"device": GPU}}}}


GPU = "NVIDIA H100 80GB HBM3"


def test_a_claim_takes_its_verdict_from_its_largest_scale_and_keeps_the_others_as_evidence():
    rows = summary._accuracy_claims(paper_tasks.ARGMAX, results(metrics(3.0, 0.001, n_seeds=100, steps=100_000,
                                                               device_type="cuda")))
    claim = {c.claim: c for c in rows}["argmax: " + summary.HEADLINE]
    book, big = claim.readings
    assert book.evidence.verdict() == CONTRADICTED and book.scale() == "20 seeds x 4,000 steps, CPU (profile book)"
    assert big.scale() == "100 seeds x 100,000 steps, GPU (profile paper)" and big.device == GPU
    assert (big.evidence.ahead, big.evidence.ahead_significant) == (2, 2)  # 32 and 64: beyond N = 16
    assert claim.decisive() is big and claim.smaller() == [book] and claim.verdict() == SUPPORTED
    record = claim.record()
    assert (record["verdict"], record["n_seeds"], record["steps"], record["device"]) == (SUPPORTED, 100, 100_000, GPU)
    assert record["paper"] == "Table 1" and [s["verdict"] for s in record["smaller_scales"]] == [CONTRADICTED]
    assert record["longest"] == {"N": "64", "claimed": 53.0, "other": 50.0}
    at_64 = paper.LENGTHS.index(64)
    assert record["paper_at_longest"] == {"claimed": paper.TABLE1_ARGMAX["layernorm"][at_64],
                                          "other": paper.TABLE1_ARGMAX["baseline"][at_64]}


def test_more_training_steps_outrank_more_seeds():
    """12 seeds at 100,000 steps decide over 20 seeds at 4,000: too little training can reverse a verdict."""
    rows = summary._accuracy_claims(paper_tasks.ARGMAX, results(long=metrics(3.0, 0.001, n_seeds=12, steps=100_000)))
    claim = rows[0]
    assert claim.decisive().n_seeds == 12 and claim.verdict() == SUPPORTED


def test_at_equal_steps_and_seeds_the_paper_profiles_runs_decide_in_either_order():
    """Chapter 5's longer training on a CPU (100 seeds x 10,000 steps, scored on 128 test sequences) ties the
    GPU's paper-profile runs (the same, on 1,024): the paper's own runs decide, whichever reading comes first;
    the longer training stays beside them as evidence."""
    long, big = metrics(-2.0, 0.001, n_seeds=100, steps=10_000), metrics(0.0, 0.9, n_seeds=100, steps=10_000,
                                                                          device_type="cuda")
    claim = summary._accuracy_claims(paper_tasks.DICTIONARY, results(paper_scale=big, long=long))[0]
    assert claim.decisive().profile == "paper" and claim.decisive().device == GPU and claim.verdict() != CONTRADICTED
    assert [r.profile for r in claim.smaller()] == ["book", "book"]
    assert claim.smaller()[1].evidence.verdict() == CONTRADICTED  # the CPU's tied reading, kept as evidence
    flipped = summary.Claim(claim.claim, claim.source, claim.chapter, claim.readings[::-1], claim.paper)
    assert flipped.decisive() is claim.decisive()


def test_the_claims_table_has_a_row_per_claim_with_both_sides_numbers():
    rows = summary._accuracy_claims(paper_tasks.ARGMAX, results())
    records = {c.claim: c.record() for c in rows}
    records["a figure's claim"] = {**records[rows[0].claim], "paper_at_longest": None, "quantity": "entropy, in nats",
                                   "longest": {"N": "1024", "claimed": 0.123456, "other": 2.0}}
    records["a difference"] = {**records[rows[0].claim], "paper_at_longest": {"difference": 0.7}}
    lines = summary.claims_table(records).splitlines()
    assert len(lines) == 4 + len(records)
    at_64 = paper.LENGTHS.index(64)
    table1 = f"{paper.TABLE1_ARGMAX['layernorm'][at_64]:.1f} vs {paper.TABLE1_ARGMAX['baseline'][at_64]:.1f}"
    assert f"| {table1} | 48.0 vs 50.0 at N = 2⁶ |" in lines[4] and "(provisional: 4% of" in lines[4]
    assert "0.123 vs 2 at N = 2¹⁰" in lines[-2] and "+0.70" in lines[-1]


def test_claims_at_the_papers_steps_get_a_table_of_their_own_above_the_provisional_ones():
    rows = summary._accuracy_claims(paper_tasks.ARGMAX, results(metrics(3.0, 0.001, n_seeds=100, steps=100_000,
                                                               device_type="cuda")))
    decided = {c.claim: c.record() for c in rows}  # decided at 100,000 steps
    book = {f"{c.claim} (book)": {**c.smaller()[0].record(), "chapter": c.chapter, "paper": c.source,
                                  "paper_at_longest": None, "quantity": c.quantity} for c in rows}
    text = summary.claims_table({**book, **decided})
    first, second = text.split("**Tested at fewer steps")
    assert first.startswith("**Tested at the paper's steps**") and first.count("| argmax") == 3
    assert "provisional" not in first and second.count("(provisional: 4% of the paper's steps)") == 3


def test_training_minutes_of_different_machines_are_not_added_up(tmp_path):
    import json

    from vvlib.book import chapters

    def write(chapter, sources):
        (tmp_path / chapter).mkdir()
        (tmp_path / chapter / "results.json").write_text(json.dumps({
            "parameters": {"n_seeds": 2, "steps": 10, "profile": "ci", "eval_lengths": LENGTHS, "max_len": 16},
            "metrics": {key: {} for key in chapters.get_chapter(chapter).metrics.required},
            "provenance": {"wall_time_s": 30, "device": "cpu", "sources": sources}}))

    cpu, gpu = "cpu (x86_64, 2 threads)", "NVIDIA H100 80GB HBM3"
    write("04_argmax_retrieval", {"a": {"device": cpu, "wall_time_s": 120}, "b": {"device": cpu, "wall_time_s": 60},
                                  "c": {"device": gpu, "wall_time_s": 30}})
    shared = {"device": cpu, "wall_time_s": 90, "created": "2026-11-24T17:31:00+00:00"}
    write("05_dictionary_lookup", {"a": shared, "b (the same run, cited twice)": dict(shared)})
    rows = {r["chapter"]: r for r in summary_tables.compute_table(tmp_path, ["04_argmax_retrieval", "05_dictionary_lookup"])}
    assert rows["04_argmax_retrieval"]["training time (min)"] == f"0.5 on {gpu}; 3.0 on {cpu}"
    assert rows["04_argmax_retrieval"]["device"] == f"{gpu}; {cpu}" and rows["04_argmax_retrieval"]["training runs"] == 3
    assert rows["05_dictionary_lookup"]["training time (min)"] == 1.5  # counted once
    assert rows["05_dictionary_lookup"]["training runs"] == 1


def test_differences_by_scale_pair_each_scale_on_its_own_seeds_and_shared_lengths():
    import numpy as np

    from vvlib.experiments.reports import report
    from vvlib.stats import paired_difference

    rng = np.random.default_rng(0)
    small = {"baseline": rng.uniform(size=(4, 3)), "layernorm": rng.uniform(size=(4, 3))}
    large = {"baseline": rng.uniform(size=(9, 2)), "layernorm": rng.uniform(size=(9, 2))}
    frame = report.differences_by_scale({"4 seeds": ([16, 32, 64], small), "9 seeds": ([16, 64], large)},
                                        ("baseline", "layernorm"))
    assert list(frame.index) == ["2⁴", "2⁶"] and list(frame.columns) == ["4 seeds", "9 seeds"]
    d = paired_difference(100 * large["baseline"][:, 1], 100 * large["layernorm"][:, 1])
    assert frame.loc["2⁶", "9 seeds"] == f"{d['diff']:+.1f} [{d['low']:+.1f}, {d['high']:+.1f}]"
    d = paired_difference(100 * small["baseline"][:, 2], 100 * small["layernorm"][:, 2])  # 64 is small's third
    assert frame.loc["2⁶", "4 seeds"] == f"{d['diff']:+.1f} [{d['low']:+.1f}, {d['high']:+.1f}]"


def test_the_answer_table_gives_the_papers_means_ours_and_the_paired_difference():
    import numpy as np

    from vvlib.stats import paired_difference

    rng = np.random.default_rng(0)
    lengths = list(paper.LENGTHS)
    accuracy = {"baseline": rng.uniform(0.2, 0.6, (5, 11)), "layernorm": rng.uniform(0.2, 0.6, (5, 11))}
    table = answers.answer_table(accuracy, lengths, ("baseline", "layernorm"), answers.SHORT_LABELS, paper.TABLE2_DICTIONARY)
    assert list(table.index) == ["2¹⁰", "2¹⁴"]
    j = lengths.index(16384)
    d = paired_difference(100 * accuracy["baseline"][:, j], 100 * accuracy["layernorm"][:, j])
    row = table.loc["2¹⁴"]
    assert row["paper: Baseline"] == f"{paper.TABLE2_DICTIONARY['baseline'][j]:.1f}"
    assert row["ours: +LN"] == f"{100 * accuracy['layernorm'][:, j].mean():.1f}"
    assert row["ours: +LN − Baseline [95%]"] == f"{d['diff']:+.1f} [{d['low']:+.1f}, {d['high']:+.1f}]"
    # a run tested at neither 2^10 nor 2^14 answers at its longest length
    assert answers.answer_lengths([16, 32, 64]) == [64] and answers.answer_lengths(lengths) == [1024, 16384]


def test_the_slope_claim_rests_on_the_largest_scale_chapter_6_probed_and_names_it(tmp_path):
    """Chapter 6's results.json as its notebook writes it: its own runs' slopes, and the paper-scale probe's
    where committed; the claim reads the latter and says so, and an older file without them its own."""
    import json

    import pandas as pd

    from vvlib.compare import UNCLEAR
    from vvlib.experiments.reports import probed

    slopes = pd.DataFrame({"variant": ["baseline"] * 3 + ["layernorm"] * 3, "seed": [0, 1, 2] * 2,
                           "slope": [-0.4, -0.41, -0.39, -0.2, -0.3, -0.25]})
    kept = probed.slope_metrics(slopes)
    assert kept["component_std_slope"]["layernorm"] == -0.25
    assert abs(kept["component_std_slope_sem"]["layernorm"] - pd.Series([-0.2, -0.3, -0.25]).std() / 3 ** 0.5) < 1e-12
    flat = probed.slope_metrics(slopes.assign(slope=slopes["slope"].where(slopes["variant"] == "baseline", 0.0)))
    from vvlib.book.chapters import get_chapter

    promised = dict.fromkeys(get_chapter("06_distribution_shift").metrics.required, {})  # what load checks
    book = {**promised, "component_std_slope": {"layernorm": -0.39}, "component_std_slope_sem": {"layernorm": 0.002}}
    chapter = {"chapter": "06_distribution_shift", "parameters": {"n_seeds": 20, "steps": 4000},
               "provenance": {"device": "cpu (x86_64, 2 threads)"}, "metrics": book}
    folder = tmp_path / "06_distribution_shift"
    folder.mkdir()

    def claim(metrics):
        (folder / "results.json").write_text(json.dumps({**chapter, "metrics": metrics}))
        return summary_tables.slope_claim(tmp_path)

    assert claim(book) == (-0.39, 0.002, SUPPORTED, "20 seeds x 4,000 steps, CPU")
    big = {**flat, "n_seeds": 100, "steps": 100_000, "device_type": "cuda"}
    assert claim({**book, "paper_scale": big}) == (0.0, 0.0, UNCLEAR, "100 seeds x 100,000 steps, GPU")
    # a paper-scale probe kept before its slopes were (figure 3's numbers alone): the page's own runs decide
    older = {"n_seeds": 100, "steps": 100_000, "device_type": "cuda", "global_mean": {}}
    assert claim({**book, "paper_scale": older})[3] == "20 seeds x 4,000 steps, CPU"


def test_the_norms_numbers_are_means_over_seeds_and_its_sentence_follows_epsilons_share():
    """probed.norm_metrics: per length the mean over seeds of the input's spread and eps's share, the gain's and bias's
    means; norm_sentence says eps cannot account for a change where its share stays under 5%, and that the norm no
    longer standardizes where it passes one half."""
    import pandas as pd
    import pytest

    from vvlib.experiments.reports import probed

    frame = pd.DataFrame({"variant": "layernorm", "seed": [0, 0, 1, 1], "N": [16, 1024, 16, 1024],
                          "input_std": [0.1, 0.05, 0.3, 0.15], "epsilon_share": [0.001, 0.002, 0.003, 0.004],
                          "gain_rms": [0.2, 0.2, 0.4, 0.4], "bias_rms": [0.01, 0.01, 0.03, 0.03],
                          "global_variance": [0.04, 0.03, 0.16, 0.09], "gain_energy": [0.01, 0.005, 0.03, 0.02],
                          "fixed_share": [0.95, 0.99, 0.97, 0.99]})
    kept = probed.norm_metrics(frame, [16, 1024])
    assert kept["input_std"] == pytest.approx({"16": 0.2, "1024": 0.1})
    assert kept["epsilon_share"] == pytest.approx({"16": 0.002, "1024": 0.003})
    assert kept["gain_energy"] == pytest.approx({"16": 0.02, "1024": 0.0125})
    assert kept["fixed_share"] == pytest.approx({"16": 0.96, "1024": 0.99})
    assert (kept["gain_rms"], kept["bias_rms"]) == pytest.approx((0.3, 0.02))
    table = probed.norm_table(frame, [16, 1024], reference=16)
    assert list(table.index) == ["2⁴", "2¹⁰"]
    assert table.iloc[1].tolist() == ["0.1", "0.003", "0.990", "0.0125", "0.06", "0.66"]
    assert table.columns[-1] == "the same / at N = 16"  # (0.03 / 0.04 + 0.09 / 0.16) / 2, seed by seed (not 0.6)
    said = probed.norm_sentence(kept, 16, 1024, 2)
    # the rule: eps's share under 5% cannot account for a change; past one half the norm no longer standardizes
    assert "cannot account" in said and "no longer standardizes" not in said
    swamped = probed.norm_sentence({**kept, "epsilon_share": {"16": 0.002, "1024": 0.7}}, 16, 1024, 2)
    assert "no longer standardizes" in swamped and "cannot account" not in swamped


def test_the_claims_read_figure_3_at_chapter_4s_longer_runs_once_both_variants_are_probed():
    """summary._probe_views: chapter 6's `longer` metrics join its scales (the paper's steps, on the CPU) only where
    they hold +LN against the Baseline; +LN's probe alone leaves them out."""
    base = {"parameters": {"n_seeds": 20, "steps": 4000}, "metrics": {"global_mean": {}}}
    paired = {"n_seeds": 4, "steps": 100_000, "p_value_relative_global_variance": {"1024": 0.01}}
    views = summary._probe_views({**base, "metrics": {"global_mean": {}, "longer": paired}})
    assert [(n, steps) for _, n, steps, *_ in views] == [(20, 4000), (4, 100_000)]
    alone = {"n_seeds": 4, "steps": 100_000, "p_value_mean_drift": {"layernorm": {}}}
    assert len(summary._probe_views({**base, "metrics": {"global_mean": {}, "longer": alone}})) == 1
