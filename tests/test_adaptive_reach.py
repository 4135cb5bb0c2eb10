"""Where adaptive temperature acts: the chapter 5 section's numbers against plain arithmetic."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from vvlib.book.chapters.c05_dictionary_lookup import adaptive_reach
from vvlib.experiments.setups.paper import LENGTHS, TABLE2_DICTIONARY

LABELS = {"baseline": "Baseline", "layernorm": "+LN"}


def probe_frame(rng, lengths, seeds=5):
    return pd.DataFrame([{"variant": v, "seed": s, "N": n, "entropy": rng.uniform(0, 9), "sharpened": rng.uniform(),
                          "beta": 1.0, "accuracy_fixed": rng.uniform(0.2, 0.9), "accuracy_adaptive": rng.uniform(0.2, 0.9)}
                         for v in LABELS for n in lengths for s in range(seeds)])


def test_the_reach_is_the_mean_share_and_the_paired_change_with_its_t_interval_beside_the_papers():
    rng = np.random.default_rng(0)
    lengths = [16, 64, 48]  # 48: a length the paper does not report
    frame = probe_frame(rng, lengths)
    measured = adaptive_reach.reach(frame, lengths, TABLE2_DICTIONARY)
    rows = frame[(frame["variant"] == "layernorm") & (frame["N"] == 64)]
    d = 100 * (rows["accuracy_adaptive"].to_numpy() - rows["accuracy_fixed"].to_numpy())
    half = scipy_stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    m = measured["layernorm"][64]
    assert m["change"] == pytest.approx(d.mean()) and m["high"] - m["low"] == pytest.approx(2 * half)
    assert m["sharpened"] == pytest.approx(100 * rows["sharpened"].mean())
    j = LENGTHS.index(64)
    assert m["paper"] == pytest.approx(TABLE2_DICTIONARY["adaptive_layernorm"][j] - TABLE2_DICTIONARY["layernorm"][j])
    assert measured["baseline"][48]["paper"] is None
    table = adaptive_reach.reach_table(measured, LABELS, [16, 48])
    assert list(table.index) == [(16, "Baseline"), (16, "+LN"), (48, "Baseline"), (48, "+LN")]
    assert "(the paper:" not in adaptive_reach.reach_sentence(measured, LABELS, 48)


def test_unchanged_counts_the_cells_adaptive_temperature_leaves_as_they_are():
    fixed = np.array([[0.5, 0.25], [0.75, 1.0]])
    adaptive = np.array([[0.5, 0.26], [0.75, 1.0]])
    share, largest = adaptive_reach.unchanged({"baseline": fixed, "adaptive_baseline": adaptive}, "baseline")
    assert share == 75.0 and largest == pytest.approx(1.0)
