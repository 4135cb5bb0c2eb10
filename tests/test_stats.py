import math

import numpy as np
import pytest
from scipy import stats as sps

from vvlib import compare
from vvlib.stats import mean_and_sem, one_sample_ttest, paired_difference, paired_ttest, relative_difference


def test_paired_ttest_matches_the_textbook_formula():
    a = np.array([0.91, 0.85, 0.88, 0.95, 0.80, 0.86])
    b = np.array([0.93, 0.86, 0.91, 0.95, 0.84, 0.85])
    d = a - b
    t = d.mean() / (d.std(ddof=1) / math.sqrt(len(d)))
    expected = 2 * sps.t.sf(abs(t), df=len(d) - 1)
    assert paired_ttest(a, b) == pytest.approx(expected, rel=1e-10)
    assert paired_ttest(a, b) == pytest.approx(paired_ttest(b, a))


def test_paired_ttest_undefined_cases_are_nan_and_shapes_checked():
    assert math.isnan(paired_ttest([0.5, 0.6], [0.5, 0.6]))
    # every difference the same (0.25 each; 0.2 each but for float rounding): no spread, so no test, where scipy
    # gives p = 0 or about 1e-16 and a two-seed run would count as a significant difference
    assert math.isnan(paired_ttest([0.5, 0.25], [0.25, 0.0])) and math.isnan(paired_ttest([0.3, 0.2], [0.1, 0.0]))
    assert math.isnan(one_sample_ttest([0.2, 0.2, 0.2])) and math.isnan(one_sample_ttest([0.3 - 0.1, 0.2 - 0.0]))
    assert 0 < paired_ttest([0.5, 0.25, 0.3], [0.25, 0.0, 0.1]) < 0.05  # a spread, however small a p it gives
    assert math.isnan(paired_ttest([0.5], [0.6]))
    with pytest.raises(ValueError, match="equal shapes"):
        paired_ttest([1, 2, 3], [1, 2])


def test_mean_sem_and_relative_difference():
    mean, sem = mean_and_sem([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5 and sem == pytest.approx(np.std([1, 2, 3, 4], ddof=1) / 2)
    assert math.isnan(mean_and_sem([3.0])[1])
    assert relative_difference([0.5, 0.5], [0.55, 0.55]) == pytest.approx(10.0)
    assert math.isnan(relative_difference([0.0, 0.0], [0.1, 0.0]))  # no base accuracy: undefined, not a crash


def test_verdict_counts_wins_and_losses_with_significance():
    from vvlib.experiments.reports.report import verdict

    metrics = {"accuracy": {"a": {"16": 99, "32": 80, "64": 50, "128": 30},
                            "b": {"16": 99, "32": 85, "64": 40, "128": 31}},
               "p_value": {"a_vs_b": {"16": 0.9, "32": 0.01, "64": 0.001, "128": None}}}
    text = verdict(metrics, [16, 32, 64, 128], ("a", "b"), {"a": "A", "b": "B"}, 16, n_seeds=5)
    assert "B is more accurate than A at 2 of 3 lengths (1 with p < 0.05)" in text
    assert "less accurate at 1 (1 with p < 0.05)" in text and "5 seeds" in text


def test_relative_gains_average_to_the_relative_difference():
    from vvlib.stats import relative_gains

    acc = {"baseline": np.array([[0.5, 0.2], [0.7, 0.4]]), "layernorm": np.array([[0.6, 0.2], [0.7, 0.5]])}
    df = relative_gains(acc, [16, 32])
    assert set(df.variant) == {"layernorm"} and len(df) == 4
    for j, n in enumerate([16, 32]):
        expected = relative_difference(acc["baseline"][:, j], acc["layernorm"][:, j])
        assert df[df.length == n].gain.mean() == pytest.approx(expected)


def test_ablation_metrics_compare_ln_with_std_paired():
    from vvlib.experiments.reports.report import ablation_metrics

    rng = np.random.default_rng(1)
    base = rng.uniform(0.3, 0.6, size=(6, 2))
    acc = {"baseline": base, "standardize": base + 0.05, "layernorm": base + 0.1 + rng.normal(0, 0.01, (6, 2))}
    m = ablation_metrics(acc, [16, 32])
    assert m["relative_gain"]["standardize"]["16"] == pytest.approx(100 * 0.05 / base[:, 0].mean())
    assert m["p_value_ln_vs_std"]["16"] == pytest.approx(paired_ttest(acc["layernorm"][:, 0], acc["standardize"][:, 0]))
    assert m["p_value_ln_vs_std"]["32"] < 1e-3


def test_without_ln_the_ablation_reads_std_against_the_baseline_alone_and_says_ln_is_pending():
    """At the paper's scale +LN's runs may still wait in the GPU queue: +std against the Baseline is then read
    alone (its paired test over seeds, its verdict), the +LN cells say 'pending', and nothing compares +LN."""
    from vvlib.experiments.reports.report import ablation_metrics, ablation_row, ablation_table
    from vvlib.experiments.setups import paper_tasks, variants

    rng = np.random.default_rng(2)
    base = rng.uniform(0.3, 0.6, size=(8, 3))
    std = base + 0.05 + rng.normal(0, 0.01, (8, 3))
    m = ablation_metrics({"baseline": base, "standardize": std}, [16, 32, 64])
    assert set(m) == {"relative_gain", "p_value_vs_baseline", "n_seeds"} and list(m["relative_gain"]) == ["standardize"]
    assert m["p_value_vs_baseline"]["standardize"]["64"] == pytest.approx(paired_ttest(std[:, 2], base[:, 2]))
    table = ablation_table(m, [16, 64], variants.LABELS, paper_tasks.ARGMAX.ablation)
    assert list(table.iloc[:, 1]) == ["pending", "pending"] and list(table["p, LN vs std (ours)"]) == ["pending"] * 2
    assert table.iloc[1, 0] == f"{m['relative_gain']['standardize']['64']:+.2f}"
    row = ablation_row("argmax", m, [16, 32, 64], 16, "8 seeds, GPU", 100_000)  # +LN still in the GPU queue
    assert list(row.values()) == ["argmax", "8 seeds, GPU", "2 (2): supported", "pending", "pending"]
    behind = ablation_metrics({"baseline": base, "standardize": base - 0.05 + rng.normal(0, 0.01, (8, 3))}, [16, 32, 64])
    assert ablation_row("argmax", behind, [16, 32, 64], 16, "S", 1000)["+std ahead of the Baseline, of 2 lengths (p < "
                                                                        "0.05)"] == "0 (0): contradicted (provisional: 1% of the paper's steps)"


def test_verdict_compares_directions_with_the_paper():
    from vvlib.experiments.reports.report import verdict

    metrics = {"accuracy": {"baseline": {"16": 99, "32": 80, "64": 50}, "layernorm": {"16": 99, "32": 85, "64": 40}},
               "p_value": {"baseline_vs_layernorm": {"16": 0.9, "32": 0.01, "64": 0.01}}}
    paper_table = {"baseline": [99.6, 99.2, 98.4] + [0] * 8, "layernorm": [99.6, 99.3, 98.6] + [0] * 8}
    text = verdict(metrics, [16, 32, 64], ("baseline", "layernorm"), {"baseline": "B", "layernorm": "L"}, 16, 3,
                   paper_table=paper_table)
    assert "The paper has L ahead at 2 of those 2 lengths; our difference points the same way at 1 of them." in text


def test_comparison_table_puts_ours_with_seed_count_beside_the_paper():
    from vvlib.experiments.setups.paper import TABLE1_ARGMAX
    from vvlib.experiments.reports.report import comparison_table, per_length

    rng = np.random.default_rng(0)
    acc = {"baseline": rng.uniform(0.4, 0.6, (5, 2)), "layernorm": rng.uniform(0.5, 0.7, (5, 2))}
    metrics = per_length(acc, [16, 32], [("baseline", "layernorm")])
    assert metrics["n_seeds"] == 5
    table = comparison_table(metrics, [16, 32], ("baseline", "layernorm"), {"baseline": "B", "layernorm": "L"},
                             TABLE1_ARGMAX, "p_value")
    mean, sem = mean_and_sem(100 * acc["layernorm"][:, 1])
    assert table.loc["2⁵", ("ours, 5 seeds", "L")] == f"{mean:.1f} ± {sem:.1f}"
    p = paired_ttest(100 * acc["baseline"][:, 1], 100 * acc["layernorm"][:, 1])
    assert table.loc["2⁵", ("ours, 5 seeds", "p")] == f"{p:.1g}"
    assert table.loc["2⁴", ("paper", "B")] == f"{TABLE1_ARGMAX['baseline'][0]:.1f}"


def test_evidence_and_verdict_rule():
    claimed = {"32": 60, "64": 55, "128": 40, "256": 30}
    other = {"32": 50, "64": 50, "128": 41, "256": 30}
    p = {"32": 0.01, "64": 0.04, "128": 0.5, "256": None}
    e = compare.compare(claimed, other, p, list(claimed))
    assert (e.lengths, e.ahead, e.ahead_significant, e.behind, e.behind_significant) == (4, 2, 2, 1, 0)
    assert e.verdict() == compare.SUPPORTED  # significantly ahead at half the lengths, never behind
    assert compare.compare(other, claimed, p, list(claimed)).verdict() == compare.CONTRADICTED
    # lower is better (entropy): the same numbers read the other way
    assert compare.compare(claimed, other, p, list(claimed), higher_is_better=False).verdict() == compare.CONTRADICTED
    assert compare.compare(claimed, other, {**p, "128": 0.01}, list(claimed)).verdict() == compare.MIXED
    assert compare.compare(claimed, other, {"32": 0.01}, list(claimed)).verdict() == compare.UNCLEAR
    # a stricter alpha drops the 0.04 and says so in the text
    strict = compare.compare(claimed, other, p, list(claimed), alpha=0.02)
    assert strict.ahead_significant == 1 and "p < 0.02" in strict.text()


def test_missing_and_undefined_p_values_are_never_significant():
    assert [compare.is_significant(p) for p in (0.049, 0.05, 0.2, None, float("nan"))] == [True, False, False, False,
                                                                                          False]
    # an undefined p-value (one seed) counts neither way, even beside a large difference
    e = compare.compare({"64": 90.0}, {"64": 10.0}, {"64": float("nan")}, ["64"])
    assert (e.ahead, e.ahead_significant) == (1, 0) and e.verdict() == compare.UNCLEAR
    assert [compare.format_p(p) for p in (0.0123, None, float("nan"))] == ["0.01", "n/a", "n/a"]
    # near alpha, enough digits to show the side: one digit would print both as the threshold itself
    assert [compare.format_p(p) for p in (0.048, 0.052, 0.0499, 0.05, 0.2)] == ["0.048", "0.052", "0.0499", "0.05", "0.2"]
    assert compare.pair_name(("baseline", "layernorm")) == "baseline_vs_layernorm"


def test_claims_are_judged_beyond_the_longest_training_length():
    assert compare.beyond_training([16, 32, 1024], 16) == [32, 1024]
    assert compare.beyond_training(["16", "32"], 16) == ["32"]  # results.json's keys stay keys
    assert compare.beyond_training([8, 16], 16) == []


def test_mean_interval_is_scipys_t_interval():
    from scipy import stats as scipy_stats

    from vvlib.stats import mean_interval

    x = np.array([48.0, 51.5, 39.0, 44.2, 57.3])
    mean, low, high = mean_interval(x)
    expected = scipy_stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=scipy_stats.sem(x))
    assert mean == pytest.approx(x.mean()) and (low, high) == pytest.approx(expected)
    assert np.isnan(mean_interval([3.0])[1])


def test_the_difference_at_equal_covariate_is_the_textbook_ancova_adjusted_difference():
    """The coefficient equals the adjusted difference of means through the pooled within-set slope,
    (mean y_b - mean y_a) - slope (mean x_b - mean x_a), and its standard error the Frisch-Waugh-Lovell one:
    the set indicator's residual on [1, x], r, gives se^2 = s^2 / r.r with s^2 the fit's residual variance."""
    from vvlib.stats import difference_at_equal_covariate

    rng = np.random.default_rng(3)
    xa, xb = rng.normal(1.3, 0.2, 40), rng.normal(1.0, 0.15, 30)
    ya, yb = 60 - 20 * xa + rng.normal(0, 2, 40), 62 - 20 * xb + rng.normal(0, 2, 30)
    got = difference_at_equal_covariate(ya, yb, xa, xb)
    within = lambda x, y: ((x - x.mean()) * (y - y.mean())).sum()
    slope = (within(xa, ya) + within(xb, yb)) / (within(xa, xa) + within(xb, xb))
    assert got["slope"] == pytest.approx(slope)
    assert got["diff"] == pytest.approx((yb.mean() - ya.mean()) - slope * (xb.mean() - xa.mean()))
    x, y, of_b = np.r_[xa, xb], np.r_[ya, yb], np.r_[np.zeros(40), np.ones(30)]
    ones_x = np.column_stack([np.ones(70), x])
    r = of_b - ones_x @ np.linalg.lstsq(ones_x, of_b, rcond=None)[0]
    fitted = got["diff"] * of_b + ones_x @ np.linalg.lstsq(ones_x, y - got["diff"] * of_b, rcond=None)[0]
    se = np.sqrt(((y - fitted) ** 2).sum() / (70 - 3) / (r @ r))
    half = sps.t.ppf(0.975, 67) * se
    assert (got["low"], got["high"]) == pytest.approx((got["diff"] - half, got["diff"] + half))
    assert got["p"] == pytest.approx(2 * sps.t.sf(abs(got["diff"]) / se, 67))
    with pytest.raises(ValueError, match="covariate"):
        difference_at_equal_covariate(ya, yb, xa, xb[:-1])


def test_paired_difference_matches_a_worked_example():
    # differences 1, 2, 3: mean 2, sd 1, s.e. 1/sqrt(3); t(0.975, 2 d.f.) = 4.3027 from tables
    d = paired_difference([0.0, 0.0, 0.0], [1.0, 2.0, 3.0])
    half = 4.302653 / np.sqrt(3)
    assert d["diff"] == pytest.approx(2) and d["low"] == pytest.approx(2 - half, abs=1e-5)
    assert d["high"] == pytest.approx(2 + half, abs=1e-5) and d["p"] == pytest.approx(0.0741799, abs=1e-6)
    assert np.isnan(paired_difference([1.0], [2.0])["low"])
