"""Figures of measures along training (vvlib/dynamics.py): chapter 5's measured runs."""

import textwrap

import matplotlib.pyplot as plt
import seaborn as sns



DYNAMICS_PANELS = [("train_loss", "training loss", True), ("missed", "share of probe sequences missed", True),
                   ("loss_missed", "probe loss of a missed sequence", False),
                   ("margin", "answer's logit minus the largest other (cap 87)", False), ("grad_norm", "gradient norm", True),
                   ("adam_root_keys", "AdamW's median sqrt(v), key embeddings", True)]


def training_dynamics(tables: dict, title=""):
    """Measures along training (vvlib/dynamics.py), the mean over seeds, one line per run.

    tables: {label: long-form frame with columns step, seed and the measures}.
    """
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(2, 3, figsize=(13, 7), sharex=True)
    for ax, (column, ylabel, log_y) in zip(axes.flat, DYNAMICS_PANELS):
        for label, frame in tables.items():
            mean = frame.groupby("step")[column].mean()
            ax.plot(mean.index, mean.values, label=label)
        if log_y:
            ax.set_yscale("log")
        ax.set_ylabel(textwrap.fill(ylabel, 26), fontsize=9)  # wrapped, so neighbouring panels' labels never meet
    for ax in axes[-1]:
        ax.set(xlabel="training step")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def _mean_lines(ax, tables: dict, column: str, name: str):
    """One line per run: `column`'s mean over seeds at each step."""
    for label, frame in tables.items():
        mean = frame.groupby("step")[column].mean()
        ax.plot(mean.index, mean.values, label=label)
    ax.set_title(name, fontsize=10)
