"""Seaborn figures for the chapters."""

import matplotlib.pyplot as plt
import seaborn as sns


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
    ax.set_xscale("log", base=2)
    ax.set_xlabel("test length N (items)")
    ax.set_ylabel("accuracy (%)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
