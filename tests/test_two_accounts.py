"""The two accounts side by side (chapter 7): the cells joined from three tables, the correlations against
scipy and numpy, the differences between the variants, and the verdict's rule on made-up models whose answer is
known."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from tests.conftest import displayed
from vvlib.book.chapters.c07_dispersion import accounts_page, two_accounts
from vvlib.stats import correlation

LENGTHS = [16, 64, 256, 1024]
PAIR = ("baseline", "layernorm")


def made_up(seeds=30, follows="top1_weight", seed=0):
    """(accuracy, attention, global frame) for models whose accuracy is `follows` plus noise: the largest weight
    falls with N; the variance ratio is 1 at the first length and otherwise noise around a level, higher for the
    Baseline; +LN's largest weight is the higher.  With follows="relative_variance" the accuracy tracks the ratio
    instead, and the Baseline is the more accurate."""
    rng = np.random.default_rng(seed)
    accuracy, attention, variance = {}, [], []
    for k, v in enumerate(PAIR):
        top1 = np.clip(1 / np.log2(LENGTHS)[None, :] * 4 * (1 + 0.1 * k) + rng.normal(0, 0.05, (seeds, len(LENGTHS))),
                       0.01, 1)
        ratio = np.where(np.arange(len(LENGTHS)) == 0, 1.0, 1.0 - 0.3 * k - 0.1 * np.arange(len(LENGTHS)) +
                         rng.normal(0, 0.05, (seeds, len(LENGTHS))))
        driver = top1 if follows == "top1_weight" else ratio
        accuracy[v] = np.clip(driver * 0.9 + rng.normal(0, 0.02, driver.shape), 0, 1)
        attention += [{"variant": v, "seed": s, "N": n, "top1_weight": top1[s, j], "entropy": 0.0}
                      for s in range(seeds) for j, n in enumerate(LENGTHS)]
        variance += [{"variant": v, "seed": s, "N": n, "relative_variance": ratio[s, j]}
                     for s in range(seeds) for j, n in enumerate(LENGTHS)]
    extra = [{"variant": "adaptive_baseline", "seed": 0, "N": 16, "top1_weight": 1.0, "entropy": 0.0}]
    return accuracy, pd.DataFrame(attention + extra), pd.DataFrame(variance)


def test_correlation_and_its_interval_match_scipys_fisher_interval():
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    y = 0.5 * x + rng.normal(size=40)
    found = correlation(x, y)
    expected = scipy_stats.pearsonr(x, y)
    interval = expected.confidence_interval(0.95)
    assert found["r"] == pytest.approx(expected.statistic)
    assert (found["low"], found["high"]) == pytest.approx((interval.low, interval.high))
    assert np.isnan(correlation([1, 2, 3], [1, 3, 2])["low"])
    with pytest.raises(ValueError, match="equal shapes"):
        correlation([1, 2, 3, 4], [1, 2, 3])


def test_cells_join_each_models_accuracy_with_both_probes_and_refuse_a_model_a_probe_lacks():
    accuracy, attention, variance = made_up(seeds=3)
    frame = two_accounts.cells(accuracy, LENGTHS, attention, variance)
    assert len(frame) == 2 * 3 * len(LENGTHS) and set(frame["variant"]) == set(PAIR)  # adaptive rows left out
    row = frame[(frame["variant"] == "layernorm") & (frame["seed"] == 2) & (frame["N"] == 256)].iloc[0]
    assert row["accuracy"] == pytest.approx(100 * accuracy["layernorm"][2, 2])
    assert row["top1_weight"] == attention[(attention["variant"] == "layernorm") & (attention["seed"] == 2)
                                           & (attention["N"] == 256)]["top1_weight"].iloc[0]
    with pytest.raises(ValueError, match="relative_variance: the probe has no value"):
        two_accounts.cells(accuracy, LENGTHS, attention, variance[variance["seed"] < 2])


def test_the_correlations_are_each_models_r_over_lengths_and_each_lengths_r_over_models():
    accuracy, attention, variance = made_up()
    frame = two_accounts.cells(accuracy, LENGTHS, attention, variance)
    lengths = two_accounts.across_lengths(frame)
    by_seed = [np.corrcoef(100 * accuracy["baseline"][s], attention[(attention["variant"] == "baseline")
                                                                     & (attention["seed"] == s)]["top1_weight"])[0, 1]
               for s in range(30)]
    assert lengths.loc[("baseline", "dispersion"), "r"] == pytest.approx(np.mean(by_seed))
    assert lengths.loc[("baseline", "dispersion"), "low"] < np.mean(by_seed) < lengths.loc[("baseline", "dispersion"), "high"]
    models = two_accounts.across_models(frame, reference=16)
    assert sorted(models.index.get_level_values("N").unique()) == LENGTHS[1:]
    here = frame[(frame["N"] == 1024) & (frame["variant"] == "layernorm")]
    assert models.loc[(1024, "layernorm", "variance"), "r"] == pytest.approx(
        scipy_stats.pearsonr(here["accuracy"], here["relative_variance"]).statistic)


def test_between_the_variants_each_quantity_is_a_paired_difference_per_length():
    accuracy, attention, variance = made_up()
    frame = two_accounts.cells(accuracy, LENGTHS, attention, variance)
    differences = two_accounts.between_variants(frame, reference=16)
    at = frame[frame["N"] == 256]
    gain = (at[at["variant"] == "layernorm"].sort_values("seed")["accuracy"].to_numpy()
            - at[at["variant"] == "baseline"].sort_values("seed")["accuracy"].to_numpy())
    assert differences.loc[256, "accuracy"] == pytest.approx(gain.mean())
    low, high = scipy_stats.t.interval(0.95, len(gain) - 1, gain.mean(), scipy_stats.sem(gain))
    assert (differences.loc[256, "accuracy_low"], differences.loc[256, "accuracy_high"]) == pytest.approx((low, high))
    table = two_accounts.difference_table(differences)
    assert list(table.index) == ["2⁶", "2⁸", "2¹⁰"] and table.shape[1] == 3


@pytest.mark.parametrize("follows, account", [("top1_weight", "dispersion"), ("relative_variance", "variance")])
def test_the_verdict_names_the_account_the_made_up_models_follow(follows, account):
    accuracy, attention, variance = made_up(follows=follows)
    frame = two_accounts.cells(accuracy, LENGTHS, attention, variance)
    found = two_accounts.tally(frame, reference=16)
    assert found["lengths"] == 3 and found["cells"] == 6
    if follows == "top1_weight":  # +LN: the larger weight, the smaller ratio, the more accurate
        assert found["stronger"] == 6 and found["agree"]["dispersion"] == 3 and found["against"]["variance"] == 3
    else:  # the Baseline keeps more variance and is the more accurate: the variance account's direction
        assert found["stronger"] == 0 and found["agree"]["variance"] == 3 and found["against"]["dispersion"] == 3
    assert set(two_accounts.favoured(frame, 16).values()) == {account}  # on all three readings


def test_readings_that_split_are_named_one_by_one():
    accuracy, attention, variance = made_up()
    frame = two_accounts.cells(accuracy, LENGTHS, attention, variance)
    swapped = frame.copy()  # between the variants the ratio now agrees with the gain; the correlations stay
    swapped.loc[swapped["variant"] == "layernorm", "relative_variance"] += 1.0
    readings = two_accounts.favoured(swapped, 16)
    assert readings["lengths"] == readings["models"] == "dispersion"
    assert readings["variants"] is None  # both measures now larger in the more accurate variant at every length


def test_the_page_says_what_is_missing_where_the_paper_scale_runs_are_not_committed(tmp_path, monkeypatch):
    shown = displayed(monkeypatch, accounts_page)
    accounts_page.show(tmp_path)
    assert len(shown) == 1 and "nothing to show" in shown[0].data
