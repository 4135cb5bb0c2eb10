"""Seaborn figures for the chapters."""

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ...compare import ALPHA
from ...stats import mean_interval
from . import palette


def _finish(fig, ax, xlabel, ylabel, title):
    """The house style: lengths on a log2 axis, labels, a small legend."""
    ax.set_xscale("log", base=2)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def accuracy_vs_length(df, labels: dict, paper: dict | None = None, title=""):
    """Mean accuracy (± s.e. over seeds) against N on a log2 axis; the paper's as dashed lines.

    df: long form with columns variant, seed, length, accuracy (percent).
    """
    sns.set_theme(style="whitegrid")
    fig, ax = plt.subplots(figsize=(7, 4.2))
    df = df.assign(variant=df["variant"].map(labels))
    sns.lineplot(data=df, x="length", y="accuracy", hue="variant", errorbar="se", marker="o",
                 palette={label: palette.colour(v) for v, label in labels.items()}, ax=ax)
    if paper:
        lengths, rows = paper["lengths"], paper["rows"]
        for variant, values in rows.items():
            values = np.array(values, dtype=float)  # cells missing from the paper (None) become gaps
            ax.plot(lengths, values, linestyle="--", marker="x", color=palette.paper_colour(variant),
                    label=f"{labels[variant]} (paper)")
    return _finish(fig, ax, "test length N (items)", "accuracy (%)", title)


def answer(panels: list, labels: dict, paper_lengths=(), title=""):
    """The book's answer in one figure: a panel per task, accuracy against N for each variant, ours
    as the mean over seeds with its 95% interval (shaded), the paper's as dashed lines where it has them.

    panels: [{"title", "lengths", "ours": {variant: (seeds, lengths) in percent}, "paper": {variant: [..]}}]."""
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.8), sharey=True, squeeze=False)
    for ax, panel in zip(axes[0], panels):
        for variant, runs in panel["ours"].items():
            papers = panel.get("paper", {}).get(variant)
            mean, low, high = np.array([mean_interval(runs[:, j]) for j in range(runs.shape[1])]).T
            ax.plot(panel["lengths"], mean, marker="o", color=palette.colour(variant),
                    label=labels[variant] + (" (ours)" if papers is not None else ""))
            ax.fill_between(panel["lengths"], low, high, color=palette.colour(variant), alpha=0.25, linewidth=0)
            if papers is not None:
                ax.plot(paper_lengths, np.array(papers, dtype=float), linestyle="--", marker="x",
                        color=palette.paper_colour(variant), label=f"{labels[variant]} (paper)")
        _finish(fig, ax, "test length N (items)", "accuracy (%)", panel["title"])
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def std_vs_length(df, hue="setting", title="", reference_slope=-0.5):
    """Log-log std against N, one line per `hue` value, with a dotted N^slope guide."""
    sns.set_theme(style="whitegrid")
    fig, ax = plt.subplots(figsize=(7, 4.2))
    sns.lineplot(data=df, x="N", y="std", hue=hue, marker="o", ax=ax)
    if reference_slope is not None:
        n = np.array(sorted(df["N"].unique()), dtype=float)
        anchor = df[df["N"] == n[0]]["std"].median()
        ax.plot(n, anchor * (n / n[0]) ** reference_slope, "k:", label=f"N^{reference_slope}")
    ax.set_yscale("log")
    return _finish(fig, ax, "sequence length N", "std of the output component", title)


def relative_gain_vs_length(df, labels: dict, title=""):
    """Accuracy change relative to the Baseline (percent) against N, ± s.e. over seeds."""
    sns.set_theme(style="whitegrid")
    fig, ax = plt.subplots(figsize=(7, 4.2))
    sns.lineplot(data=df.assign(variant=df["variant"].map(labels)), x="length", y="gain", hue="variant",
                 errorbar="se", marker="o", ax=ax,
                 palette={label: palette.colour(v) for v, label in labels.items() if v in set(df["variant"])})
    ax.axhline(0, color="k", linewidth=0.8)
    return _finish(fig, ax, "test length N (items)", "accuracy change vs Baseline (%)", title)


def component_distributions(df, title=""):
    """Figure 2's grid: one row per variant, one column per N; in each panel the
    distribution over test sequences of a few fixed components (one colour each).

    df: long form with columns variant, N, component, value.  Panels of a row share
    their x axis, so the narrowing with N is seen directly.
    """
    sns.set_theme(style="whitegrid")
    variants, lengths = list(dict.fromkeys(df["variant"])), sorted(df["N"].unique())
    fig, axes = plt.subplots(len(variants), len(lengths), figsize=(3.2 * len(lengths), 2.6 * len(variants)),
                             sharex="row", squeeze=False)
    for i, variant in enumerate(variants):
        for j, n in enumerate(lengths):
            ax = axes[i, j]
            part = df[(df["variant"] == variant) & (df["N"] == n)]
            sns.kdeplot(data=part, x="value", hue="component", common_norm=False, fill=True, alpha=0.3,
                        palette="deep", legend=(i == 0 and j == len(lengths) - 1), ax=ax, warn_singular=False)
            ax.set(title=f"{variant}, N = {n}", xlabel="component value" if i == len(variants) - 1 else "",
                   ylabel="density" if j == 0 else "")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def global_statistics(df, title=""):
    """Figure 3: drift of the global mean (left) and global variance (right) of the
    readout's input against N, both relative to the training length; ± s.e. over seeds.

    df: long form with columns variant, seed, N, mean_drift, relative_variance.
    """
    sns.set_theme(style="whitegrid")
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    sns.lineplot(data=df, x="N", y="mean_drift", hue="variant", errorbar="se", marker="o", ax=left)
    left.axhline(0, color="k", linewidth=0.8)
    _finish(fig, left, "test length N (items)", "drift / global std at training N", "global mean drift")
    sns.lineplot(data=df, x="N", y="relative_variance", hue="variant", errorbar="se", marker="o", ax=right)
    right.axhline(1, color="k", linewidth=0.8)
    right.set_yscale("log")
    _finish(fig, right, "test length N (items)", "variance / variance at training N", "global variance")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def quantity_vs_length(df, y: str, ylabel: str, title="", log_y=False, hue="variant", style=None, reference=None,
                       ax=None):
    """Any per-seed quantity (column `y`) against N, mean ± s.e. over seeds, one line per `hue`;
    `reference` = (label, lengths, values) adds a dotted guide line; ax: a panel of a larger figure."""
    sns.set_theme(style="whitegrid")
    fig, ax = plt.subplots(figsize=(7, 4.2)) if ax is None else (ax.figure, ax)
    named = hue == "variant" and all(palette.has_colour(v) for v in df[hue].unique())
    sns.lineplot(data=df, x="N", y=y, hue=hue, style=style, errorbar="se", marker="o", ax=ax,
                 palette={v: palette.colour(v) for v in df[hue].unique()} if named else None)
    if reference is not None:
        label, xs, ys = reference
        ax.plot(xs, ys, "k:", label=label)
    if log_y:
        ax.set_yscale("log")
    return _finish(fig, ax, "test length N (items)", ylabel, title)


LINE_STYLES = ("-", "--", "-.", ":")


def training_curves(histories: dict, schedule=None, title="", band=False, ax=None):
    """Training loss (mean over seeds) against step, one line per run; with `band`, shaded
    between the seeds' 10th and 90th percentiles; with `schedule` = (steps, longest training
    length), the length cap as a grey step line on a right axis.

    histories: {label: [(step, [loss per seed]), ...]} (a training record's loss_history); ax: draw there (a
    panel of a larger figure) instead of in a figure of its own.
    """
    sns.set_theme(style="whitegrid")
    fig, ax = plt.subplots(figsize=(7, 4.2)) if ax is None else (ax.figure, ax)
    spare = iter(palette.SPARE)
    for k, (label, history) in enumerate(histories.items()):
        steps = [step for step, _ in history]
        losses = np.array([seeds for _, seeds in history], dtype=float)  # (steps, seeds)
        line, = ax.plot(steps, losses.mean(axis=1), label=label,
                        color=palette.colour(label) if palette.has_colour(label) else next(spare, None),
                        linestyle=LINE_STYLES[k % len(LINE_STYLES)])  # a curve on top of another still shows
        if band:
            low, high = np.percentile(losses, [10, 90], axis=1)
            ax.fill_between(steps, low, high, color=line.get_color(), alpha=0.15, linewidth=0)
    ax.set_yscale("log")
    ax.set(xlabel="training step", ylabel="training loss (mean over seeds)", title=title)
    if schedule is not None:
        cap_axis = ax.twinx()
        cap_axis.step(*schedule, where="post", color="grey", alpha=0.7, label="longest training sequence")
        cap_axis.set_yscale("log", base=2)
        cap_axis.set_ylabel("longest training sequence (items)")
        cap_axis.grid(False)
    handles = [h for axis in ax.figure.axes if axis is ax or axis.get_shared_x_axes().joined(axis, ax)
               for h in axis.get_legend_handles_labels()[0]]  # the loss curves and the length cap in one legend
    ax.legend(handles=handles, fontsize=8)
    fig.tight_layout()
    return fig


def slope_heatmap(slopes: dict, xlabel: str, title=""):
    """Annotated heatmap of log-log slopes: one row per key of `slopes`, one column per
    key of its values (e.g. {strategy: {head: slope}})."""
    import pandas as pd

    sns.set_theme(style="white")
    table = pd.DataFrame(slopes).T
    fig, ax = plt.subplots(figsize=(3.0 + 0.75 * table.shape[1], 1.0 + 0.6 * table.shape[0]))
    sns.heatmap(table, annot=True, fmt=".2f", annot_kws={"fontsize": 8}, cmap="vlag", center=0, ax=ax,
                cbar_kws={"label": "slope"})
    ax.set(xlabel=xlabel, ylabel="", title=title)
    fig.tight_layout()
    return fig


def layer_slopes(frames: dict, labels: dict, title="", reference_slope=-0.5):
    """Log-log slope against layer, one panel per model, one line per kind of input, with its
    95% interval as a band; frames: {model name: pretrained.layer_slope_frame}."""
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(1, len(frames), figsize=(5.5 * len(frames), 3.8), squeeze=False)
    palette = dict(zip(labels, sns.color_palette("deep")))
    for ax, (name, frame) in zip(axes[0], frames.items()):
        for strategy, rows in frame.groupby("strategy", sort=False):
            ax.plot(rows["layer"], rows["slope"], marker="o", markersize=3, color=palette[strategy],
                    label=labels[strategy])
            ax.fill_between(rows["layer"], rows["low"], rows["high"], color=palette[strategy], alpha=0.15)
        ax.axhline(0, color="k", linewidth=0.8)
        ax.axhline(reference_slope, color="k", linestyle=":", linewidth=0.8)
        ax.set(title=name, xlabel="layer", ylabel="log-log slope of the std against N")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def claim_evidence(table, title=""):
    """The summary page at a glance: per claim, the test lengths where the claimed run is
    significantly ahead (right, green) and significantly behind (left, red).

    table: one row per claim (index), columns ahead_significant, behind_significant, lengths."""
    sns.set_theme(style="whitegrid")
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(table) + 1.2))
    y = range(len(table))
    ax.barh(y, table["ahead_significant"], color=sns.color_palette("deep")[2], label="significantly ahead")
    ax.barh(y, -table["behind_significant"], color=sns.color_palette("deep")[3], label="significantly behind")
    ax.set_yticks(list(y), table.index)
    ax.invert_yaxis()
    ax.axvline(0, color="k", linewidth=0.8)
    most = int(table["lengths"].max())
    ax.set_xlim(-most - 0.5, most + 0.5)
    ax.set(xlabel=f"test lengths beyond training with p < {ALPHA} (behind | ahead)", title=title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    fig.tight_layout()
    return fig


FOREST_LABEL_CHARACTERS = 44  # a forest's row names wrap at this width


def forest(frame, lengths, reference: str, title="", marks: dict | None = None, mark_label=""):
    """One row per configuration, one panel per test length: the paired difference (points)
    with its 95% interval; filled where p < ALPHA, the `reference` row (the defaults) in bold;
    marks {N: value} (e.g. the paper's difference) as a dashed vertical line labelled mark_label.

    frame: one row per (configuration, N) with columns row, N, diff, low, high, p."""
    sns.set_theme(style="whitegrid")
    rows = list(dict.fromkeys(frame["row"]))
    # long configuration names wrapped, and the figure widened by their width, so every panel keeps its own width
    names = [textwrap.fill(row, FOREST_LABEL_CHARACTERS) for row in rows]
    label_inches = 0.075 * max(len(line) for name in names for line in name.split("\n"))
    lines = sum(name.count("\n") + 1 for name in names)
    fig, axes = plt.subplots(1, len(lengths), figsize=(label_inches + 3.8 * len(lengths), 0.2 * lines + 0.2 * len(rows)
                                                       + 1.6), sharey=True, squeeze=False, layout="constrained")
    colour = sns.color_palette("deep")[0]
    for ax, n in zip(axes[0], lengths):
        at = frame[frame["N"] == n].set_index("row").reindex(rows)
        y = np.arange(len(rows))
        ax.hlines(y, at["low"], at["high"], color=colour)
        filled = [colour if p < ALPHA else "white" for p in at["p"]]  # nan (undefined p) stays hollow
        ax.scatter(at["diff"], y, s=28, zorder=3, facecolors=filled, edgecolors=[colour] * len(rows))
        ax.axvline(0, color="k", linewidth=0.8)
        if (marks or {}).get(n) is not None:
            ax.axvline(marks[n], color="firebrick", linestyle="--", linewidth=1, label=mark_label)
            ax.legend(fontsize=8, loc="best")
        ax.set(title=f"N = {n}", xlabel="+LN minus Baseline (points)")
    axes[0][0].set_yticks(np.arange(len(rows)), names, fontsize=8)
    for tick in axes[0][0].get_yticklabels():
        tick.set_fontweight("bold" if tick.get_text() == textwrap.fill(reference, FOREST_LABEL_CHARACTERS) else "normal")
    axes[0][0].invert_yaxis()
    fig.suptitle(title)  # constrained layout gives the labels, the panel titles and this their own room
    return fig


def component_histograms(histograms, variants, labels: dict, N: int):
    """Chapter 6's slider view at one length: per variant, the stored histogram of each fixed
    component over test sequences (histograms: probing.distribution_tables' "histograms")."""
    fig, axes = plt.subplots(1, len(variants), figsize=(5 * len(variants), 3))
    for ax, variant in zip(np.atleast_1d(axes), variants):
        part = histograms[(histograms.variant == variant) & (histograms.N == N)]
        for d, bars in part.groupby("component"):
            ax.stairs(bars["density"], [*bars["left"], bars["right"].iloc[-1]], label=f"component {d}")
        ax.set(title=f"{labels[variant]}, N = {N}", xlabel="component value", ylabel="density")
    np.atleast_1d(axes)[-1].legend(fontsize="small")
    fig.tight_layout()
    return fig


def seed_dots(values: dict, threshold: float, ylabel: str, title=""):
    """One column of dots per variant, a dot per seed, with a dashed line at `threshold`: values {label: (seeds,)}."""
    sns.set_theme(style="whitegrid")
    fig, ax = plt.subplots(figsize=(5, 3.6))
    jitter = np.random.default_rng(0)  # fixed: the same picture every build
    for x, (label, v) in enumerate(values.items()):
        ax.scatter(x + jitter.uniform(-0.12, 0.12, len(v)), v, color=palette.colour(label), s=30, label=label)
    ax.axhline(threshold, color="k", linestyle="--", linewidth=1)
    ax.set_xticks(range(len(values)), list(values))
    ax.set(ylabel=ylabel, title=title, xlim=(-0.5, len(values) - 0.5))
    fig.tight_layout()
    return fig
