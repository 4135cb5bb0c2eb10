"""Per-length summaries over seeds and the paired t-test the paper reports.

Runs are paired by seed index: seed s of two variants shares its initial weights
(where the architectures overlap), its training data and its test sequences.
"""

import warnings

import numpy as np
import pandas as pd
from scipy import stats

from .compare import pair_name


def mean_and_sem(values) -> tuple[float, float]:
    """Mean over seeds and its standard error (nan for a single seed)."""
    values = np.asarray(values, dtype=float)
    sem = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")
    return float(values.mean()), float(sem)


def paired_ttest(a, b) -> float:
    """Two-sided p-value of the paired t-test of a vs b (nan when undefined:
    fewer than two pairs, or all differences identical)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired samples must have equal shapes; got {a.shape} and {b.shape}")
    if len(a) < 2 or _no_spread(a - b):
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(stats.ttest_rel(a, b).pvalue)


def _no_spread(values) -> bool:
    """Whether the values are all the same but for float rounding: scipy then gives p = 0 (or about 1e-16 where
    rounding leaves a spread), as if the sample had proved a difference, where the test is undefined."""
    return bool(np.allclose(values, values[0], rtol=1e-9, atol=1e-12))


def one_sample_ttest(values, mean=0.0) -> float:
    """Two-sided p-value of the t-test that the values' mean is `mean` (nan when undefined)."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2 or _no_spread(values):
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(stats.ttest_1samp(values, mean).pvalue)


def mean_interval(x, confidence=0.95) -> tuple[float, float, float]:
    """(mean, low, high): the mean of x and its two-sided t interval (nan bounds for one value)."""
    mean, sem = mean_and_sem(np.asarray(x, dtype=float))
    half = stats.t.ppf(0.5 + confidence / 2, len(x) - 1) * sem if len(x) > 1 else float("nan")
    return mean, mean - half, mean + half


def paired_difference(a, b, confidence=0.95) -> dict:
    """Mean of b - a over the pairs, its two-sided t interval and the paired t-test's p-value:
    {"diff", "low", "high", "p"} (interval and p are nan for fewer than two pairs)."""
    mean, low, high = mean_interval(np.asarray(b, dtype=float) - np.asarray(a, dtype=float), confidence)
    return {"diff": mean, "low": low, "high": high, "p": paired_ttest(a, b)}


def relative_difference(base, other) -> float:
    """100 * (mean(other) - mean(base)) / mean(base), in percent of the base accuracy."""
    base_mean = float(np.mean(base))
    if base_mean == 0:  # undefined (e.g. a barely trained model that never answers right)
        return float("nan")
    return 100.0 * (float(np.mean(other)) - base_mean) / base_mean


def long_form(accuracy: dict, lengths) -> pd.DataFrame:
    """{variant: array (seeds, lengths)} -> one row per (variant, seed, length)."""
    rows = []
    for variant, acc in accuracy.items():
        acc = np.asarray(acc)
        for seed in range(acc.shape[0]):
            for j, n in enumerate(lengths):
                rows.append({"variant": variant, "seed": seed, "length": n, "accuracy": 100 * acc[seed, j]})
    return pd.DataFrame(rows)


def relative_gains(accuracy: dict, lengths, base="baseline") -> pd.DataFrame:
    """Per seed and length, 100 * (acc_variant - acc_base) / mean_seeds(acc_base): paired
    differences scaled by the base's mean accuracy, so their mean over seeds is
    relative_difference(base, variant)."""
    base_acc = np.asarray(accuracy[base])
    scale = base_acc.mean(axis=0)
    rows = []
    for variant, acc in accuracy.items():
        if variant == base:
            continue
        gain = 100 * (np.asarray(acc) - base_acc) / scale
        for seed in range(gain.shape[0]):
            for j, n in enumerate(lengths):
                rows.append({"variant": variant, "seed": seed, "length": n, "gain": gain[seed, j]})
    return pd.DataFrame(rows)


def by_length(per: dict, pairs=()) -> dict:
    """{variant: {N: per-seed values}} -> {"mean": {variant: {N: m}}, "sem": ...,
    "p_value": {"a_vs_b": {N: p}}} (N as str), with a paired t-test over seeds for each pair."""
    return {
        "mean": {v: {str(n): mean_and_sem(x)[0] for n, x in d.items()} for v, d in per.items()},
        "sem": {v: {str(n): mean_and_sem(x)[1] for n, x in d.items()} for v, d in per.items()},
        "p_value": {pair_name((a, b)): {str(n): paired_ttest(per[a][n], per[b][n]) for n in per[a]} for a, b in pairs},
    }


def summary_by_length(frame: pd.DataFrame, value: str, pairs=()) -> dict:
    """by_length for a long frame (variant, seed, N, value)."""
    table = frame.pivot_table(index=["variant", "N"], columns="seed", values=value)
    lengths = sorted(frame["N"].unique())
    return by_length({v: {n: table.loc[(v, n)].to_numpy() for n in lengths} for v in frame["variant"].unique()}, pairs)


def difference_at_equal_covariate(a, b, covariate_a, covariate_b, confidence=0.95) -> dict:
    """What is left of mean(b) - mean(a) between two sets of models once a quantity measured on each model
    (its covariate) is accounted for linearly, one slope for both sets: the coefficient of "a model of b" in the
    least-squares fit  y = c0 + c1 [of b] + slope * covariate  over the models of both, with its two-sided t
    interval and p (len(a) + len(b) - 3 degrees of freedom, the models taken as independent), and the slope:
    {"diff", "low", "high", "p", "slope"}.  It describes the models; it is not an intervention, so it cannot say
    that the covariate causes the difference."""
    y = np.concatenate([np.asarray(a, dtype=float), np.asarray(b, dtype=float)])
    x = np.concatenate([np.asarray(covariate_a, dtype=float), np.asarray(covariate_b, dtype=float)])
    if len(x) != len(y):
        raise ValueError(f"each model needs its covariate; got {len(y)} models and {len(x)} covariates")
    design = np.column_stack([np.ones_like(y), np.r_[np.zeros(len(a)), np.ones(len(b))], x])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    dof = len(y) - design.shape[1]
    residual = y - design @ coef
    se = float(np.sqrt(residual @ residual / dof * np.linalg.inv(design.T @ design)[1, 1]))
    half = stats.t.ppf(0.5 + confidence / 2, dof) * se
    p = float(2 * stats.t.sf(abs(coef[1]) / se, dof)) if se > 0 else float("nan")
    return {"diff": float(coef[1]), "low": float(coef[1] - half), "high": float(coef[1] + half), "p": p,
            "slope": float(coef[2])}


def correlation(x, y, confidence=0.95) -> dict:
    """Pearson's r between x and y with its two-sided interval from Fisher's z (r's arctanh is about normal with
    standard error 1 / sqrt(n - 3)): {"r", "low", "high", "n"}; nan bounds for fewer than four points."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples must have equal shapes; got {x.shape} and {y.shape}")
    r = float(np.corrcoef(x, y)[0, 1])
    if len(x) < 4:
        return {"r": r, "low": float("nan"), "high": float("nan"), "n": len(x)}
    half = stats.norm.ppf(0.5 + confidence / 2) / np.sqrt(len(x) - 3)
    z = np.arctanh(np.clip(r, -1 + 1e-15, 1 - 1e-15))
    return {"r": r, "low": float(np.tanh(z - half)), "high": float(np.tanh(z + half)), "n": len(x)}
