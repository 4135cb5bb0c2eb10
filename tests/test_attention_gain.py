"""Chapter 7's question beside Figure 4, on made-up models whose answer is known: a gain carried wholly by a
sharper attention vanishes among models of equal entropy, an own gain stays, and the correlations are
scipy's."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from vvlib.book.chapters.c07_dispersion import attention_gain

LENGTHS = [16, 1024, 16384]


def made_up(own_gain: float, seeds=60, seed=0):
    """Per seed and length an entropy (+LN's 0.3 nats lower) and an accuracy that falls 20 points per nat,
    +LN's raised by own_gain points: ({variant: (seeds, lengths) fractions}, chapter 7's attention table)."""
    rng = np.random.default_rng(seed)
    accuracy, rows = {}, []
    for variant, shift, gain in (("baseline", 0.0, 0.0), ("layernorm", -0.3, own_gain)):
        entropy = np.log(LENGTHS)[None, :] / 3 + shift + rng.normal(0, 0.2, (seeds, len(LENGTHS)))
        accuracy[variant] = (90 - 20 * entropy + gain + rng.normal(0, 1, entropy.shape)) / 100
        rows += [{"variant": variant, "seed": s, "N": n, "entropy": entropy[s, j], "top1_weight": 0.5}
                 for s in range(seeds) for j, n in enumerate(LENGTHS)]
    return accuracy, pd.DataFrame(rows)


def test_a_gain_carried_by_the_sharper_attention_vanishes_at_equal_entropy():
    accuracy, attention = made_up(own_gain=0.0)
    gains = attention_gain.gain_and_entropy(accuracy, attention, LENGTHS, reference=16)
    assert list(gains.index) == [1024, 16384]  # only beyond the training length
    row = gains.loc[16384]
    assert row["gain"] == pytest.approx(100 * (accuracy["layernorm"][:, 2] - accuracy["baseline"][:, 2]).mean())
    assert row["gain"] > 4 and row["equal_low"] < 0 < row["equal_high"]
    assert row["points_per_nat"] == pytest.approx(-20, abs=2)
    here = attention[attention.N == 16384]
    ent = {v: here[here.variant == v].sort_values("seed")["entropy"].to_numpy() for v in accuracy}
    assert row["r_baseline"] == pytest.approx(scipy_stats.pearsonr(100 * accuracy["baseline"][:, 2], ent["baseline"])[0])
    assert row["r_pairs"] == pytest.approx(scipy_stats.pearsonr(
        100 * (accuracy["layernorm"][:, 2] - accuracy["baseline"][:, 2]), ent["layernorm"] - ent["baseline"])[0])
    assert row["pairs_sharper"] == int((ent["layernorm"] < ent["baseline"]).sum()) and row["pairs"] == 60


def test_an_own_gain_stays_at_equal_entropy_and_is_named_as_a_share_of_the_gain():
    accuracy, attention = made_up(own_gain=5.0)
    gains = attention_gain.gain_and_entropy(accuracy, attention, LENGTHS, reference=16)
    row = gains.loc[16384]
    assert row["equal_low"] < 5 < row["equal_high"] and row["equal_low"] > 0
    share = f"{row['at_equal_entropy'] / row['gain']:.0%} of the gain"
    assert share in attention_gain.gain_sentence(gains, "S")
    table = attention_gain.gain_table(gains)
    assert list(table.index) == ["2¹⁰", "2¹⁴"] and table.loc["2¹⁴", "pairs with +LN sharper"].endswith("of 60")


def test_accuracy_and_attention_of_other_models_are_refused():
    accuracy, attention = made_up(own_gain=0.0, seeds=5)
    fewer = attention[attention.seed != 3]
    with pytest.raises(ValueError, match="same models"):
        attention_gain.gain_and_entropy(accuracy, fewer, LENGTHS, reference=16)


def sharpness_made_up(extra: float, seeds=4, layernorm_base=1.0):
    """A made-up probe-sharpness table: a model's accuracy falls 20 points per nat of entropy along its betas
    (entropy = base / beta), the Baseline's base 1.3 nats and +LN's `layernorm_base` (1.0: 0.3 sharper), and +LN's
    accuracy `extra` points above what its entropy gives the Baseline."""
    rows = []
    for variant, base, extra_points in (("baseline", 1.3, 0.0), ("layernorm", layernorm_base, extra)):
        for seed in range(seeds):
            for beta in (0.6, 0.8, 1.0, 1.25, 1.6):
                ent = (base + 0.01 * seed) / beta
                rows.append({"variant": variant, "seed": seed, "N": 1024, "beta": beta,
                             "accuracy": (90 - 20 * ent + extra_points) / 100, "entropy": ent})
    return pd.DataFrame(rows)


def test_the_sharpness_test_reads_each_model_at_its_partners_entropy():
    """Sharpness carries the whole gain (extra 0): the Baseline read at +LN's entropy reaches +LN exactly (the
    accuracy is linear in entropy, so interpolating between betas is exact), and +LN read at the Baseline's
    falls to the Baseline.  With an own gain of 3 points, 3 are left either way."""
    for extra in (0.0, 3.0):
        matched = attention_gain.matched_sharpness(sharpness_made_up(extra))
        assert len(matched) == 4
        np.testing.assert_allclose(matched["layernorm"] - matched["baseline_at_partner"], extra, atol=1e-9)
        np.testing.assert_allclose(matched["layernorm_at_partner"] - matched["baseline"], extra, atol=1e-9)
        np.testing.assert_allclose(matched["layernorm"] - matched["baseline"], 6.0 + extra, atol=1e-9)
    table = attention_gain.sharpness_table(matched)
    assert table.loc["2¹⁰", "+LN − Baseline [95%]"].startswith("+9.0")
    assert table.loc["2¹⁰", "Baseline at +LN's entropy, − Baseline"].endswith("(67% of the gap)")  # 6 of 9 points
    assert table.loc["2¹⁰", "+LN at Baseline's entropy, − Baseline"].startswith("+3.0")
    assert table.loc["2¹⁰", "+LN − Baseline at +LN's entropy"].startswith("+3.0")
    assert table.loc["2¹⁰", "pairs with +LN sharper"] == "4 of 4"


def test_the_share_of_a_difference_is_given_only_where_the_difference_is_significant():
    """Seed pairs whose differences scatter around 0 (+3 and -3 points in turn): the Baseline's move is given, but
    not as a share of a difference the paired interval cannot tell from 0."""
    frame = sharpness_made_up(0.0)
    shifted = frame["variant"].eq("layernorm") & frame["seed"].isin([0, 2])
    frame.loc[shifted, "accuracy"] -= 0.09  # +LN's 6 points of gain become -3 in these two pairs, +6 in the others
    table = attention_gain.sharpness_table(attention_gain.matched_sharpness(frame))
    assert table.loc["2¹⁰", "+LN − Baseline [95%]"].startswith("+1.5")
    moved = table.loc["2¹⁰", "Baseline at +LN's entropy, − Baseline"]
    assert moved.startswith("+6.0") and "of the gap" not in moved


def test_an_entropy_beyond_the_betas_tried_is_not_extrapolated():
    frame = sharpness_made_up(0.0)
    narrow = frame[frame["beta"].isin([0.8, 1.0])]  # the Baseline cannot reach +LN's entropy without beta > 1
    matched = attention_gain.matched_sharpness(narrow)
    assert matched["baseline_at_partner"].isna().all() and matched["layernorm_at_partner"].isna().all()
    assert "seeds 0, 1, 2, 3:" in attention_gain.sharpness_note(matched, "S")
    assert attention_gain.sharpness_table(matched).loc["2¹⁰", "+LN − Baseline at +LN's entropy"].startswith("— (beyond")
