"""Seaborn figures for the chapters."""

import matplotlib.pyplot as plt
import seaborn as sns


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
    palette = dict(zip(labels.values(), sns.color_palette("deep", len(labels))))
    sns.lineplot(data=df, x="length", y="accuracy", hue="variant", errorbar="se", marker="o",
                 palette=palette, ax=ax)
    if paper:
        lengths, rows = paper["lengths"], paper["rows"]
        for variant, values in rows.items():
            ax.plot(lengths, values, linestyle="--", color=palette[labels[variant]], alpha=0.6,
                    label=f"{labels[variant]} (paper)")
    return _finish(fig, ax, "test length N (items)", "accuracy (%)", title)


def std_vs_length(df, hue="setting", title="", reference_slope=-0.5):
    """Log-log std against N, one line per `hue` value, with a dotted N^slope guide."""
    import numpy as np

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
                 errorbar="se", marker="o", ax=ax)
    ax.axhline(0, color="k", linewidth=0.8)
    return _finish(fig, ax, "test length N (items)", "accuracy change vs Baseline (%)", title)
