"""The answers chapter pages open with (vvlib/experiments/reports/answers.py), against independent arithmetic."""

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from vvlib.compare import compare
from vvlib.experiments.reports import answers
from vvlib.experiments.setups import paper

LABELS = {"baseline": "Baseline", "layernorm": "+LN", "rescale": "Rescaled"}


def probe_frame(rng, seeds=6, lengths=(16, 1024, 16384)):
    """A long frame as chapters 6-7's probes write it: one row per (variant, seed, N)."""
    return pd.DataFrame([{"variant": v, "seed": s, "N": n, "entropy": rng.normal(2.0 + (v == "layernorm"), 0.3)}
                         for v in ("baseline", "layernorm") for s in range(seeds) for n in lengths])


def test_a_probed_quantity_is_answered_with_both_means_and_the_paired_interval():
    rng = np.random.default_rng(1)
    frame = probe_frame(rng)
    table = answers.paired_table(frame, "entropy", ("baseline", "layernorm"), LABELS, [16, 1024, 16384])
    assert list(table.index) == ["2¹⁰", "2¹⁴"]
    at = frame[frame.N == 16384].sort_values("seed")
    a = at[at.variant == "baseline"]["entropy"].to_numpy()
    b = at[at.variant == "layernorm"]["entropy"].to_numpy()
    d = b - a
    half = scipy_stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    row = table.loc["2¹⁴"]
    assert row["Baseline"] == f"{a.mean():.3f}" and row["+LN"] == f"{b.mean():.3f}"
    assert row["+LN − Baseline [95%]"] == f"{d.mean():+.3f} [{d.mean() - half:+.3f}, {d.mean() + half:+.3f}]"
    # pairing by seed matters: shuffling one variant's seeds moves the interval
    shuffled = frame.copy()
    mask = shuffled.variant == "layernorm"
    shuffled.loc[mask, "seed"] = (shuffled.loc[mask, "seed"] + 1) % 6
    moved = answers.paired_table(shuffled, "entropy", ("baseline", "layernorm"), LABELS, [16, 1024, 16384])
    assert moved.loc["2¹⁴", "+LN − Baseline [95%]"] != row["+LN − Baseline [95%]"]


def test_several_variants_are_answered_per_task_and_length_with_the_papers_two_rows():
    rng = np.random.default_rng(2)
    lengths = list(paper.LENGTHS)
    accuracy = {t: {v: rng.uniform(0, 1, (4, len(lengths))) for v in LABELS} for t in ("argmax", "dictionary")}
    papers = {"argmax": paper.TABLE1_ARGMAX, "dictionary": paper.TABLE2_DICTIONARY}
    table = answers.variants_table(accuracy, lengths, LABELS, papers)
    assert list(table.columns) == [(t, n) for t in ("argmax", "dictionary") for n in ("2¹⁰", "2¹⁴")]
    j = lengths.index(1024)
    rescaled = 100 * accuracy["dictionary"]["rescale"][:, j].mean()
    assert table.loc["Rescaled", ("dictionary", "2¹⁰")] == f"{rescaled:.1f}"
    assert table.loc["paper: +LN", ("argmax", "2¹⁰")] == f"{paper.TABLE1_ARGMAX['layernorm'][j]:.1f}"


def test_a_verdict_table_has_a_row_per_scale_and_claim_with_the_lengths_ahead_and_behind():
    """Three lengths: +LN ahead at two (one of them at p < 0.05), behind at one (p < 0.05): 'mixed' by the rule,
    provisional below the paper's steps; one claim needs no claim column, two claims index by scale and claim."""
    evidence = compare({"1": 2.0, "2": 2.0, "3": 0.0}, {"1": 1.0, "2": 1.0, "3": 1.0},
                       {"1": 0.01, "2": 0.5, "3": 0.001}, ["1", "2", "3"])
    row = answers.verdict_row("8 seeds x 3,000 steps, CPU", "sharper", evidence, "argmax", 3000)
    assert list(row.values())[2:] == ["mixed (provisional: 3% of the paper's steps)", "2 (1)", "1 (1)"]
    one = answers.verdict_table([row, {**row, "scale": "100 seeds"}])
    assert list(one.index) == ["8 seeds x 3,000 steps, CPU", "100 seeds"] and "claim" not in one.columns
    two = answers.verdict_table([row, {**row, "claim": "drifts"}])
    assert list(two.index) == [("8 seeds x 3,000 steps, CPU", "sharper"), ("8 seeds x 3,000 steps, CPU", "drifts")]


def test_drifts_of_opposite_sign_cancel_in_the_claims_mean_but_not_in_their_size_seed_by_seed():
    """Half the seeds move their global mean up by 0.5 sd and half down: the drift claim's signed mean is 0, but
    drift_table and drift_size_row give each seed's own size (0.5 on average and at most), and a second run
    that does not move gives 0."""
    seeds, lengths = 6, [16, 1024, 16384]
    rows = [{"variant": v, "seed": s, "N": n, "relative_variance": 1.0,
             "mean_drift": 0.0 if n == 16 or v == "layernorm" else (0.5 if s % 2 else -0.5)}
            for v in ("baseline", "layernorm") for s in range(seeds) for n in lengths]
    frame = pd.DataFrame(rows)
    table = answers.drift_table(frame, lengths, 16)
    assert table.loc["2¹⁴", "drift of the global mean (sd) [95%]"].startswith("+0.0000")
    assert table.loc["2¹⁴", "its size seed by seed (sd): mean, largest"] == "0.5000, 0.5000"
    row = answers.drift_size_row(frame, lengths, {"baseline": "Baseline", "layernorm": "+LN"}, "6 seeds")
    assert row == {"scale": "6 seeds", "Baseline at N = 2¹⁴: mean, largest": "0.5000, 0.5000",
                   "+LN at N = 2¹⁴: mean, largest": "0.0000, 0.0000"}
