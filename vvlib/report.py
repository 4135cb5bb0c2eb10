"""Tables beside the paper's, one-sentence verdicts, and the chapter's results.json."""

from pathlib import Path

import numpy as np
import pandas as pd

from . import store
from .stats import mean_and_sem, paired_ttest


def _pct(mean, sem):
    return f"{mean:.1f}" if np.isnan(sem) else f"{mean:.1f} ± {sem:.1f}"


def _p(p):
    if p is None:
        return "n/a"
    return "n/a" if np.isnan(p) else f"{p:.1g}"


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_two(n: int) -> str:
    """16 -> '2⁴'; lengths that are not powers of two stay as they are."""
    return "2" + str(n.bit_length() - 1).translate(_SUPERSCRIPT) if n > 0 and n & (n - 1) == 0 else str(n)


def per_length(accuracy: dict, lengths, pair) -> dict:
    """Metrics in percent: {"accuracy": {variant: {N: mean}}, "accuracy_sem": ..., "p_value": {N: p}}."""
    acc = {v: 100 * np.asarray(a) for v, a in accuracy.items()}
    mean = {v: {str(n): mean_and_sem(a[:, j])[0] for j, n in enumerate(lengths)} for v, a in acc.items()}
    sem = {v: {str(n): mean_and_sem(a[:, j])[1] for j, n in enumerate(lengths)} for v, a in acc.items()}
    first, second = pair
    p = {str(n): paired_ttest(acc[first][:, j], acc[second][:, j]) for j, n in enumerate(lengths)}
    return {"accuracy": mean, "accuracy_sem": sem, "p_value": p}


def comparison_table(metrics: dict, lengths, pair, labels: dict, paper_table: dict) -> pd.DataFrame:
    """One row per length: ours (mean ± s.e. over seeds), our p-value, the paper's numbers."""
    from .paper import column

    rows = []
    for n in lengths:
        key, row = str(n), {"N": power_of_two(n)}
        for v in pair:
            row[f"{labels[v]} (ours)"] = _pct(metrics["accuracy"][v][key], metrics["accuracy_sem"][v][key])
        row["p (ours)"] = _p(metrics["p_value"][key])
        for v in pair:
            paper = column(paper_table, v, n)
            row[f"{labels[v]} (paper)"] = "n/a" if paper is None else f"{paper:.1f}"
        row["p (paper)"] = _p(column(paper_table, "p_value", n))
        rows.append(row)
    return pd.DataFrame(rows).set_index("N")


def verdict(metrics: dict, lengths, pair, labels: dict, in_distribution: int, n_seeds: int, alpha=0.05) -> str:
    """Sentences computed from the numbers: where the second variant beats the first, and
    where it loses, each with how many of those differences are significant."""
    first, second = pair
    ood = [str(n) for n in lengths if n > in_distribution]
    if not ood:
        return "No test length lies beyond the training lengths."
    diff = {n: metrics["accuracy"][second][n] - metrics["accuracy"][first][n] for n in ood}
    significant = {n for n in ood if (metrics["p_value"][n] if metrics["p_value"][n] is not None else 1.0) < alpha}
    better = [n for n in ood if diff[n] > 0]
    worse = [n for n in ood if diff[n] < 0]
    return (f"Beyond the training lengths (N > {in_distribution}), {labels[second]} is more accurate than "
            f"{labels[first]} at {len(better)} of {len(ood)} lengths ({len(significant & set(better))} with "
            f"p < {alpha}) and less accurate at {len(worse)} ({len(significant & set(worse))} with p < {alpha}); "
            f"paired t-test over {n_seeds} seeds.")


def write_results(output_dir, chapter: str, parameters: dict, device, metrics: dict, wall_time_s=None,
                  sources: dict | None = None) -> Path:
    """results.json: {"chapter", "parameters", "provenance", "metrics"}, written atomically.

    `sources` records where cached inputs came from (e.g. each variant's training
    provenance), since a chapter that loads stored models runs in seconds."""
    path = Path(output_dir) / "results.json"
    provenance = store.provenance(device, wall_time_s)
    if sources:
        provenance["sources"] = sources
    store.write_json(path, {
        "chapter": chapter,
        "parameters": dict(parameters),
        "provenance": provenance,
        "metrics": metrics,
    })
    return path
