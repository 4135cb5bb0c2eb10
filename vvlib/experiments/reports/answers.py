"""The answer a chapter page opens with: a verdict table (a row per scale and claim), then a few rows of
numbers beside the paper's.

Every answer names the test lengths that matter (ANSWER_LENGTHS: 64 and 1,024 times the
training length), the paired difference with its 95% interval, the scale, and the verdict
by the summary's rule (compare.compare), provisional below the paper's steps
(provisional.qualified) -- the same rule the intro and the summary print.
"""

import numpy as np
import pandas as pd

from . import provisional
from ..setups import variants
from ..setups.paper import column
from ..setups.sensitivity import PAIR
from .probed import drift_sides, drift_size, figure3_metrics
from .report import per_length
from ...compare import beyond_training, compare, format_interval, format_p, pair_name, power_of_two
from ...stats import paired_difference, summary_by_length

ANSWER_LENGTHS = (1024, 16384)  # the lengths a page's answer names: 64 and 1,024 times the training length
SHORT_LABELS = {v: variants.SHORT_LABELS[v] for v in PAIR}  # an answer's two labels, short enough for its headers


def answer_lengths(lengths, at=ANSWER_LENGTHS) -> list:
    """The lengths of `at` a run was tested at, or its longest where it was tested at none of them."""
    return [n for n in at if n in lengths] or [max(lengths)]


def answer_table(accuracy: dict, lengths, pair, labels: dict, paper_table: dict, at=ANSWER_LENGTHS) -> pd.DataFrame:
    """A chapter's answer in a few rows: at each length of `at` (or the longest tested, where none of
    them is), the paper's two means, ours (over seeds, in percent) and our paired difference second -
    first with its 95% interval and p.
    accuracy: {run: per-seed accuracy (seeds, lengths)}."""
    first, second = pair
    rows = []
    for n in answer_lengths(lengths, at):
        j = list(lengths).index(n)
        a, b = (100 * np.asarray(accuracy[v])[:, j] for v in pair)
        d = paired_difference(a, b)
        shown = lambda x: "—" if x is None else f"{x:.1f}"
        rows.append({"N": power_of_two(n), f"paper: {labels[first]}": shown(column(paper_table, first, n)),
                     f"paper: {labels[second]}": shown(column(paper_table, second, n)),
                     f"ours: {labels[first]}": f"{a.mean():.1f}", f"ours: {labels[second]}": f"{b.mean():.1f}",
                     f"ours: {labels[second]} − {labels[first]} [95%]": format_interval(d),
                     "p": format_p(d["p"])})
    return pd.DataFrame(rows).set_index("N")


def verdict_row(scale: str, claim: str, evidence, task: str, steps: int) -> dict:
    """One line of a page's verdict table (verdict_table): a claim at one scale, its verdict by the summary's rule
    (provisional below the paper's steps), and at how many lengths beyond training the claimed side is ahead or
    behind, with how many of those at p < alpha in brackets."""
    return {"scale": scale, "claim": claim, "verdict": provisional.qualified(evidence.verdict(), task, steps),
            f"lengths ahead, of {evidence.lengths} beyond training (p < {evidence.alpha})":
                f"{evidence.ahead} ({evidence.ahead_significant})",
            f"lengths behind (p < {evidence.alpha})": f"{evidence.behind} ({evidence.behind_significant})"}


def verdict_table(rows: list) -> pd.DataFrame:
    """verdict_row's lines as one table, a row per scale (and claim, where the rows answer several)."""
    frame = pd.DataFrame(rows)
    if frame["claim"].nunique() == 1:
        return frame.drop(columns="claim").set_index("scale")
    return frame.set_index(["scale", "claim"])


def accuracy_claim(pair, labels: dict) -> str:
    """The paper's claim of Tables 1, 2, 4 and 5 for `pair`: '+LN is more accurate than the Baseline beyond ...'."""
    return f"{labels[pair[1]]} is more accurate than the {labels[pair[0]]} beyond the training lengths"


def accuracy_evidence(accuracy: dict, lengths, pair, in_distribution: int):
    """compare.Evidence that the second of `pair` is more accurate than the first beyond the training lengths,
    paired over seeds: the summary's rule.  accuracy: {run: per-seed accuracy (seeds, lengths)}."""
    metrics = per_length(accuracy, lengths, [pair])
    ood = [str(n) for n in beyond_training(lengths, in_distribution)]
    return compare(metrics["accuracy"][pair[1]], metrics["accuracy"][pair[0]], metrics["p_value"][pair_name(pair)],
                   ood)


def paired_table(frame: pd.DataFrame, value: str, pair, labels: dict, lengths, digits: int = 3,
                 at=ANSWER_LENGTHS) -> pd.DataFrame:
    """A probed quantity's answer: at each length of `at`, both runs' means over seeds and the paired
    difference second - first with its 95% interval and p.  frame: long (variant, seed, N, value),
    one row per model and length, as the probes of chapters 6 and 7 write it."""
    table = frame.pivot_table(index=["variant", "N"], columns="seed", values=value)
    first, second = pair
    rows = []
    for n in answer_lengths(lengths, at):
        a, b = (table.loc[(v, n)].to_numpy() for v in pair)
        d = paired_difference(a, b)
        rows.append({"N": power_of_two(n), labels[first]: f"{a.mean():.{digits}f}",
                     labels[second]: f"{b.mean():.{digits}f}",
                     f"{labels[second]} − {labels[first]} [95%]": format_interval(d, digits), "p": format_p(d["p"])})
    return pd.DataFrame(rows).set_index("N")


def drift_table(frame: pd.DataFrame, lengths, reference: int, variant: str = PAIR[0], at=ANSWER_LENGTHS):
    """Figure 3 for one probed run alone (at the paper's scale its partner's probe may still be in the GPU
    queue): at each length of `at`, the means over seeds of its global variance over its value at the
    training length `reference`, and of its global mean's drift (in sd at `reference`) with the drift's
    95% interval and its p against none, and the drift's size seed by seed (probed.drift_size).
    frame: chapter 6's `global` table (variant, seed, N, ...)."""
    rows = []
    for n in answer_lengths(lengths, at):
        here = frame[(frame["variant"] == variant) & (frame["N"] == n)]
        drift = paired_difference(np.zeros(len(here)), here["mean_drift"].to_numpy())
        rows.append({"N": power_of_two(n),
                     f"global variance / at N = {reference}": f"{here['relative_variance'].mean():.3f}",
                     "drift of the global mean (sd) [95%]": format_interval(drift, 4), "p": format_p(drift["p"]),
                     "its size seed by seed (sd): mean, largest": "{:.4f}, {:.4f}".format(*drift_size(frame, variant, n))})
    return pd.DataFrame(rows).set_index("N")


def drift_size_row(frame: pd.DataFrame, lengths, labels: dict, scale: str, at=ANSWER_LENGTHS) -> dict:
    """One scale's line of the table under the drift's verdict: at the longest length of `at` tested, how far
    each of `labels`' runs moves its global mean seed by seed (probed.drift_size), the mean and the largest, so
    that a small mean over seeds is not read as cancelling drifts.  frame: chapter 6's `global` table."""
    n = answer_lengths(lengths, at)[-1]
    return {"scale": scale, **{f"{label} at N = {power_of_two(n)}: mean, largest": "{:.4f}, {:.4f}".format(
        *drift_size(frame, v, n)) for v, label in labels.items()}}


def attention_table(frame: pd.DataFrame, runs: dict, lengths, at=ANSWER_LENGTHS) -> pd.DataFrame:
    """Figure 4 for the runs of one variant alone (at the paper's scale its partner's probe may still be in the
    GPU queue): at each length of `at`, each run's mean over seeds of its attention's entropy (nats) and
    largest weight, beside ln N, the entropy of uniform weights.  frame: chapter 7's `attention` table;
    runs: {run name: label}."""
    rows = []
    for n in answer_lengths(lengths, at):
        here = frame[frame["N"] == n].groupby("variant")[["entropy", "top1_weight"]].mean()
        row = {"N": power_of_two(n), "ln N (uniform)": f"{np.log(n):.2f}"}
        for run, label in runs.items():
            row[f"{label}: entropy"] = f"{here.loc[run, 'entropy']:.2f}"
            row[f"{label}: largest weight"] = f"{here.loc[run, 'top1_weight']:.3f}"
        rows.append(row)
    return pd.DataFrame(rows).set_index("N")


def drift_evidence(frame: pd.DataFrame, lengths, in_distribution: int):
    """compare.Evidence for Figure 3's claim that the Baseline's global mean drifts (probed.DRIFT_CLAIM) beyond the
    training lengths, from chapter 6's `global` table: a one-sample t-test over seeds against no drift (one
    variant: nothing to pair)."""
    ood = [str(n) for n in beyond_training(lengths, in_distribution)]
    return compare(*drift_sides(figure3_metrics(frame, lengths)), ood)


def variants_table(accuracy: dict, lengths, labels: dict, papers: dict, at=ANSWER_LENGTHS) -> pd.DataFrame:
    """Several variants on several tasks at the answer's lengths: one row per variant, one column per
    (task, N), mean accuracy over seeds in percent; the paper's Baseline and +LN where it has them.
    accuracy: {task: {variant: (seeds, lengths)}}; papers: {task: the paper's table of that task}."""
    shown = answer_lengths(lengths, at)
    columns = {}
    for task, by_variant in accuracy.items():
        for n in shown:
            j = list(lengths).index(n)
            cell = {f"paper: {labels[v]}": column(papers[task], v, n) for v in SHORT_LABELS}
            cell.update({labels[v]: 100 * float(np.mean(np.asarray(a)[:, j])) for v, a in by_variant.items()})
            columns[(task, power_of_two(n))] = {k: "—" if x is None else f"{x:.1f}" for k, x in cell.items()}
    return pd.DataFrame(columns)


def probed_evidence(frame: pd.DataFrame, value: str, pair, lengths, in_distribution: int, higher_is_better=True):
    """compare.Evidence that the second of `pair` has the higher (or, higher_is_better=False, the
    lower) mean `value` beyond the training lengths, paired over seeds: what the summary reads from
    the chapter's results.json, computed here from the probe's long frame."""
    s = summary_by_length(frame, value, [pair])
    ood = [str(n) for n in beyond_training(lengths, in_distribution)]
    return compare(s["mean"][pair[1]], s["mean"][pair[0]], s["p_value"][pair_name(pair)], ood, higher_is_better)


def device_kind(device: str) -> str:
    """'CPU' or 'GPU' from a record's device description ('cpu (x86_64, 2 threads)', 'cuda', 'NVIDIA ...')."""
    return "CPU" if device.startswith("cpu") else "GPU"


def scale_text(n_seeds: int, steps: int, device: str) -> str:
    """'8 seeds x 3,000 steps, CPU' from a run's record (device: its provenance's description)."""
    return f"{n_seeds} seeds x {steps:,} steps, {device_kind(device)}"
