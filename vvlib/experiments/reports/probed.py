"""What chapters 6 and 7 keep of their probe tables in results.json, where the summary reads the
claims of Figures 3 and 4: the same numbers at every scale a page shows (its own runs, and the
paper profile's where the GPU queue has committed them)."""

import pandas as pd

from ..setups.probes import PAIR
from .report import means_by_length
from ...compare import pair_name
from ...stats import one_sample_ttest, summary_by_length


def figure3_metrics(global_frame: pd.DataFrame, lengths) -> dict:
    """Chapter 6's `global` table (one row per variant of PAIR, seed and N) as results.json keeps it:
    per variant and length the means over seeds of the global mean, the global variance, the mean's
    drift and the variance over its value at the training length; per variant the p of a drift against
    none (one-sample t-test); and where the frame holds both of PAIR (at the paper's scale +LN's probe
    may still wait in the GPU queue), the paired p of that ratio (+LN against the Baseline)."""
    present = [v for v in PAIR if v in set(global_frame["variant"])]
    means = {key: means_by_length(global_frame, column, present, lengths) for key, column in (
        ("global_mean", "global_mean"), ("global_variance", "global_variance"),
        ("global_mean_drift", "mean_drift"), ("relative_global_variance", "relative_variance"))}
    drift = {v: {str(n): one_sample_ttest(rows["mean_drift"])
                 for n, rows in global_frame[global_frame["variant"] == v].groupby("N")} for v in present}
    if present != list(PAIR):
        return {**means, "p_value_mean_drift": drift}
    ratio = summary_by_length(global_frame, "relative_variance", [PAIR])["p_value"][pair_name(PAIR)]
    return {**means, "p_value_relative_global_variance": ratio, "p_value_mean_drift": drift}


def slope_metrics(slopes_frame: pd.DataFrame) -> dict:
    """Chapter 6's `slopes` table (one row per variant and seed: the median component's log-log slope of
    its standard deviation against N) as results.json keeps it: per variant the mean over seeds and its
    standard error."""
    by_variant = slopes_frame.groupby("variant", sort=False)["slope"]
    return {"component_std_slope": by_variant.mean().astype(float).to_dict(),
            "component_std_slope_sem": by_variant.sem().astype(float).to_dict()}


DRIFT_CLAIM = "the Baseline's global mean drifts away from its value at the training length"  # Figure 3's


def drift_sides(metrics: dict, variant: str = "baseline") -> tuple:
    """Figure 3's claim that `variant`'s global mean drifts away from its value at the training length, as
    compare's (claimed, other, p_values) from figure3_metrics: the size of its mean drift (in sd at the
    training length) against none, with the one-sample p of the drift."""
    drift = metrics["global_mean_drift"][variant]
    return {n: abs(d) for n, d in drift.items()}, dict.fromkeys(drift, 0.0), metrics["p_value_mean_drift"][variant]


def figure4_metrics(attention_frame: pd.DataFrame, pairs) -> dict:
    """Chapter 7's `attention` table (one row per run, seed and N) as results.json keeps it: per run
    and length the mean largest attention weight and entropy, and the paired p of each of `pairs`."""
    summary = {q: summary_by_length(attention_frame, q, pairs) for q in ("top1_weight", "entropy")}
    return {"top1_weight": summary["top1_weight"]["mean"], "entropy": summary["entropy"]["mean"],
            "p_value_top1_weight": summary["top1_weight"]["p_value"], "p_value_entropy": summary["entropy"]["p_value"]}


def at_paper_scale(metrics: dict, P_paper) -> dict:
    """A probe's metrics at the paper profile, with the scale the summary's claims table names."""
    return {**metrics, "n_seeds": P_paper.n_seeds, "steps": P_paper.steps, "device_type": "cuda"}
