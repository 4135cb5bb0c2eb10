"""Figures of the attention (chapter 7): Figure 4's heatmaps, accuracy against attention entropy, the sharpness
test, and the two accounts side by side."""

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ....stats import difference_at_equal_covariate
from ....experiments.reports import palette


def attention_heatmaps(top_weights: dict, title=""):
    """Figure 4: for each variant (row) and length (column), the sorted largest attention
    weights (columns of a panel) of each test example (rows of a panel), on one colour scale.

    top_weights: {variant label: {N: array (examples, k)}}.
    """
    sns.set_theme(style="white")
    variants = list(top_weights)
    lengths = list(top_weights[variants[0]])
    fig, axes = plt.subplots(len(variants), len(lengths), figsize=(2.6 * len(lengths) + 1, 3.0 * len(variants)),
                             squeeze=False)
    for i, variant in enumerate(variants):
        for j, n in enumerate(lengths):
            ax = axes[i, j]
            sns.heatmap(top_weights[variant][n], vmin=0, vmax=1, cmap="viridis", ax=ax, cbar=(j == len(lengths) - 1),
                        xticklabels=False, yticklabels=False, cbar_kws={"label": "attention weight"})
            ax.set(title=f"{variant}, N = {n}", xlabel="rank (largest first)" if i == len(variants) - 1 else "",
                   ylabel="test example" if j == 0 else "")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def _entropy_panels(lengths, labels: dict):
    """A panel per length for accuracy (%) against attention entropy (nats): (the figure, {N: its panel},
    {variant: its colour})."""
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(1, len(lengths), figsize=(5 * len(lengths), 4.2), squeeze=False)
    for ax, n in zip(axes[0], lengths):
        ax.set(xlabel="attention entropy (nats)", ylabel="accuracy (%)", title=f"N = {n}")
    return fig, dict(zip(lengths, axes[0])), {v: palette.colour(v) for v in labels}


def _finish_panels(fig, panels: dict, title: str):
    for ax in panels.values():
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def accuracy_against_entropy(models: dict, labels: dict, title=""):
    """Each trained model as a point, its attention entropy (nats) against its accuracy (%), one panel per
    length, with the linear fit of stats.difference_at_equal_covariate: one slope, a line per variant through
    its models' means, so the vertical gap between the lines is the gain at equal entropy.

    models: {N: {variant: (accuracy in percent, entropy), the first variant the fit's first}}."""
    fig, panels, colours = _entropy_panels(list(models), labels)
    for n, by_variant in models.items():
        (acc_a, ent_a), (acc_b, ent_b) = by_variant.values()
        slope = difference_at_equal_covariate(acc_a, acc_b, ent_a, ent_b)["slope"]
        span = np.linspace(min(ent_a.min(), ent_b.min()), max(ent_a.max(), ent_b.max()), 2)
        for variant, (accuracy, entropy) in by_variant.items():
            panels[n].scatter(entropy, accuracy, s=12, alpha=0.6, color=colours[variant], label=labels[variant])
            panels[n].plot(span, accuracy.mean() + slope * (span - entropy.mean()), color=colours[variant])
    return _finish_panels(fig, panels, title)


def accuracy_along_sharpness(frame, labels: dict, title=""):
    """Chapter 7's sharpness test: each model's accuracy (%) against its attention entropy (nats) as its logits
    are scaled by each beta, a line per model, one panel per length; the model as trained (beta 1) as a large dot.

    frame: the probe-sharpness table (variant, seed, N, beta, accuracy, entropy)."""
    fig, panels, colours = _entropy_panels(sorted(frame["N"].unique()), labels)
    for n, ax in panels.items():
        named = set()
        for (variant, _), curve in frame[frame["N"] == n].groupby(["variant", "seed"]):
            curve = curve.sort_values("beta")
            ax.plot(curve["entropy"], 100 * curve["accuracy"], color=colours[variant], alpha=0.7, marker=".",
                    label=None if variant in named else labels[variant])
            named.add(variant)
            trained = curve[curve["beta"] == 1]
            ax.scatter(trained["entropy"], 100 * trained["accuracy"], s=60, color=colours[variant], zorder=3)
    return _finish_panels(fig, panels, title)


def two_accounts(frame, labels: dict, measures: dict, title=""):
    """Each model at each length as a dot, its accuracy (%) against each account's measure, one panel per
    account, a colour per variant; the variants' means per length as large dots joined in length order.
    frame: two_accounts.cells' rows; measures: {account: (column, axis label)}."""
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(1, len(measures), figsize=(6 * len(measures), 4.6), sharey=True, squeeze=False)
    colours = {v: palette.colour(v) for v in labels}
    for ax, (account, (column, name)) in zip(axes[0], measures.items()):
        for variant, here in frame.groupby("variant", sort=False):
            ax.scatter(here[column], here["accuracy"], s=5, alpha=0.25, color=colours[variant])
            means = here.groupby("N")[[column, "accuracy"]].mean()
            ax.plot(means[column], means["accuracy"], marker="o", markersize=6, color=colours[variant],
                    label=f"{labels[variant]} (mean per length)")
        ax.set(xlabel=name, title=f"the {account} account")
        ax.legend(fontsize=8, loc="lower right")
    axes[0, 0].set(ylabel="accuracy (%)")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
