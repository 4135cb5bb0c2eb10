"""Where adaptive temperature acts: its probe table (probing.adaptive_frame) per length, beside what it
changes in accuracy on the same runs and in the paper.  The rule leaves a head alone unless its entropy
lies in a band (attention.beta_at_entropy), so the share of test sequences inside that band bounds
what it can change."""

import numpy as np
import pandas as pd

from ....stats import paired_difference
from ....experiments.setups.paper import difference
from ....experiments.setups.variants import run_name


def reach(frame: pd.DataFrame, lengths, paper_table: dict) -> dict:
    """{variant: {N: {entropy, sharpened, change, low, high, paper}}}: the mean over seeds of the attention's
    entropy (nats) and of the share of test sequences sharpened (%), the accuracy adaptive temperature adds to
    the same models (points: the mean over seeds of adaptive minus fixed, with its 95% t interval) and the
    paper's change (None where it does not report N)."""
    out = {}
    for variant, rows in frame.groupby("variant", sort=False):
        out[variant] = {}
        for n in lengths:
            at_n = rows[rows["N"] == n].sort_values("seed")
            change = paired_difference(100 * at_n["accuracy_fixed"].to_numpy(), 100 * at_n["accuracy_adaptive"].to_numpy())
            paper = difference(paper_table, (variant, run_name(variant, "adaptive")), n)
            out[variant][n] = {"entropy": float(at_n["entropy"].mean()),
                               "sharpened": 100 * float(at_n["sharpened"].mean()),
                               "change": change["diff"], "low": change["low"], "high": change["high"],
                               "paper": None if paper is None else round(paper, 1)}
    return out


def reach_table(measured: dict, labels: dict, shown_lengths) -> pd.DataFrame:
    """reach(...) as a narrow table, one row per (N, variant), at shown_lengths."""
    rows = []
    for n in shown_lengths:
        for variant, by_length in measured.items():
            m = by_length[n]
            rows.append({"N": n, "variant": labels[variant], "entropy (nats)": round(m["entropy"], 2),
                         "sequences sharpened (%)": round(m["sharpened"], 1),
                         "adaptive − fixed (points)": f"{m['change']:+.2f} [{m['low']:+.2f}, {m['high']:+.2f}]",
                         "the paper's": "—" if m["paper"] is None else f"{m['paper']:+.1f}"})
    return pd.DataFrame(rows).set_index(["N", "variant"])


def sharpened_frame(frame: pd.DataFrame, labels: dict) -> pd.DataFrame:
    """Per seed and N, the share of test sequences sharpened (%), variants by their labels: for a figure."""
    return frame.assign(variant=frame["variant"].map(labels), sharpened=100 * frame["sharpened"])


def reach_sentence(measured: dict, labels: dict, n: int) -> str:
    """What the table says at N, in one sentence, every number from `measured`."""
    parts = [f"{labels[v]}: entropy {m[n]['entropy']:.2f} nats, {m[n]['sharpened']:.0f}% of test sequences sharpened, "
             f"accuracy {m[n]['change']:+.2f} points [{m[n]['low']:+.2f}, {m[n]['high']:+.2f}]"
             + ("" if m[n]["paper"] is None else f" (the paper: {m[n]['paper']:+.1f})")
             for v, m in measured.items()]
    return f"At N = {n:,}, " + "; ".join(parts) + "."


def unchanged(accuracy: dict, variant: str) -> tuple[float, float]:
    """(% of seed x length cells where adaptive temperature leaves the accuracy exactly as it is, the largest
    change in points) for one variant's runs."""
    fixed = np.asarray(accuracy[run_name(variant, "fixed")], dtype=float)
    adaptive = np.asarray(accuracy[run_name(variant, "adaptive")], dtype=float)
    return 100 * float((fixed == adaptive).mean()), 100 * float(np.abs(adaptive - fixed).max())


def unchanged_sentence(accuracy: dict, labels: dict, scale: str) -> str:
    """How much of a scale's accuracy table adaptive temperature leaves as it is, per variant."""
    parts = [f"{share:.1f}% of {labels[v]}'s seed x length cells (at most {largest:.3f} points apart)"
             for v in labels for share, largest in [unchanged(accuracy, v)]]
    return f"At {scale}, adaptive temperature leaves unchanged " + " and ".join(parts) + "."
