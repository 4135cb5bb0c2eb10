"""Figures of measures along training (vvlib/dynamics.py): chapter 5's dynamics and chapter 10's deep model, layer
by layer and seed by seed."""

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ...dynamics import attending_below


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


def layer_dynamics(tables: dict, layers: int, length: int, title=""):
    """Each layer along training (dynamics.measure_names' _layerK columns) beside the whole model, the mean over
    seeds, one line per run, the steps on a log scale.  Rows: the training loss and each layer's attention entropy;
    the probe loss and each layer's share of largest weights on the answer (dashed, what uniform weights over the
    probe batch's `length` items give: ln N and 1/N); the gradient norm over all weights and over each layer's
    query and key weights; the norms of those weights.

    tables: {label: long-form frame with columns step, seed and the measures}.
    """
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(4, 1 + layers, figsize=(4 * (1 + layers), 12), sharex=True)
    uniform = {"entropy": np.log(length), "on_answer": 1 / length}  # and each axis' top: 5% above ln N, and 1
    top = {"entropy": 1.05 * np.log(length), "on_answer": 1.0}
    # per row: the whole model's column, its title and y scale; each layer's measure, its title and y scale
    rows = [("train_loss", "training loss", "log", "entropy", "attention entropy (nats)", "linear"),
            ("probe_loss", "probe loss", "log", "on_answer", "share of largest weights on the answer", "linear"),
            ("grad_norm", "gradient norm, all weights", "log", "qk_grad", "gradient norm, query and key", "log"),
            ("weight_norm", "weight norm, all weights", "linear", "qk_norm", "norm of query and key weights", "linear")]
    for i, (whole, whole_title, whole_scale, measure, name, scale) in enumerate(rows):
        _mean_lines(axes[i, 0], tables, whole, whole_title)
        axes[i, 0].set_yscale(whole_scale)
        for k in range(1, layers + 1):
            ax = axes[i, k]
            _mean_lines(ax, tables, f"{measure}_layer{k}", f"layer {k}: {name}")
            ax.set_yscale(scale)
            if measure in uniform:
                ax.axhline(uniform[measure], color="grey", linestyle="--", linewidth=1,
                           label=f"uniform weights, N = {length}")
                ax.set_ylim(0, top[measure])
    for ax in axes.flat:  # where runs part, early, is as legible as the rest
        ax.set_xscale("log")
    for ax in axes[-1]:
        ax.set(xlabel="training step (log scale)")
    handles, labels = axes[0, 1].get_legend_handles_labels()  # below the panels, where it hides no line
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def run_colours(panels: dict) -> dict:
    """{label: colour} for panels {title: {label: ...}}: a run the same colour in every panel it is in, and no two
    runs of a panel alike.  Each run, in order, takes the default palette's first colour no run has yet; once its 10
    clear colours are spent, the first that no run sharing a panel with it has (runs that never meet may share one),
    and in a panel of more than 10 runs, the darker shades of the same 10."""
    palette, colour_of = sns.color_palette() + sns.color_palette("dark"), {}
    for tables in panels.values():
        for label in tables:
            if label in colour_of:
                continue
            taken = {colour_of[other] for others in panels.values() if label in others for other in others
                     if other in colour_of}
            unused = [c for c in palette[:10] if c not in colour_of.values()]
            free = unused or [c for c in palette if c not in taken]
            if not free:
                raise ValueError(f"a panel may draw at most {len(palette)} runs apart; {label!r} is one too many")
            colour_of[label] = free[0]
    return colour_of


def seed_entropy_lines(panels: dict, layer: int, length: int, title=""):
    """One panel per key of panels, {panel title: {label: long-form frame with step, seed and entropy_layer<layer>}}:
    each seed's attention entropy in that layer along training, one colour per label (the same in every panel),
    the steps on a log scale; dashed what uniform weights over `length` items give (ln N), dotted half of it.
    Seeds apart, where a mean over them would blend those that attend with those that do not.  Up to three panels
    side by side, more in rows of two."""
    sns.set_theme(style="whitegrid")
    columns = len(panels) if len(panels) <= 3 else 2
    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.5 * columns, 4.2 * rows), sharey=True, squeeze=False,
                             layout="constrained")  # room for the title, the panels' titles and the legend below
    for ax in axes.flat[len(panels):]:
        fig.delaxes(ax)
    colour_of = run_colours(panels)
    for ax, (name, tables) in zip(axes.flat, panels.items()):
        for label, frame in tables.items():
            colour = colour_of[label]
            by_seed = frame.pivot(index="step", columns="seed", values=f"entropy_layer{layer}")
            for i, seed in enumerate(by_seed.columns):
                ax.plot(by_seed.index, by_seed[seed], color=colour, linewidth=1, alpha=0.8, label=label if i == 0 else None)
        ax.axhline(np.log(length), color="grey", linestyle="--", linewidth=1, label=f"uniform weights, N = {length}")
        ax.axhline(attending_below(length), color="grey", linestyle=":", linewidth=1, label="half of ln N")
        ax.set_xscale("log")
        # a long title in two lines, so that two panels side by side keep theirs apart
        ax.set(title=textwrap.fill(name, 50), xlabel="training step (log scale)", ylim=(0, 1.05 * np.log(length)))
    for ax in axes[:, 0]:
        ax.set(ylabel=f"layer {layer}'s attention entropy (nats)")
    named = {}  # every run's colour once, below the panels, where the legend hides no line
    for ax in axes.flat[:len(panels)]:
        named |= dict(zip(*reversed(ax.get_legend_handles_labels())))
    fig.legend(list(named.values()), list(named), loc="outside lower center", ncol=min(2, columns), fontsize=8)
    fig.suptitle(textwrap.fill(title, 45 * columns))  # about as many characters as the figure is wide
    return fig


def seed_grid(grids: dict, length: int, title=""):
    """One panel per key of grids, {panel title: frame of runs (rows) by seeds (columns) of a layer's attention
    entropy at the end}: each cell coloured by its entropy, from 0 to ln N (uniform weights over `length` items), and
    dotted where it is below half of ln N, each run's count of such seeds beside its name.  A column dark all the way
    down is a seed that attends whichever way it is handed over."""
    sns.set_theme(style="white")
    heights = [len(ends) + 1.5 for ends in grids.values()]
    width = max(ends.shape[1] for ends in grids.values())
    fig, axes = plt.subplots(len(grids), 1, figsize=(6 + 0.2 * width, 0.32 * sum(heights) + 1), layout="constrained",
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    half = attending_below(length)
    for ax, (name, ends) in zip(axes[:, 0], grids.items()):
        image = ax.imshow(ends.to_numpy(), cmap="viridis", vmin=0, vmax=np.log(length), aspect="auto")
        rows, columns = np.nonzero(ends.to_numpy() < half)
        ax.scatter(columns, rows, s=6, color="white")
        counts = [f"{int((run < half).sum())} of {len(run)}" for _, run in ends.iterrows()]
        ax.set_yticks(range(len(ends)), [textwrap.fill(f"{label}: {count}", 60)
                                         for label, count in zip(ends.index, counts)], fontsize=7)
        ax.set_xticks(range(ends.shape[1]), [str(seed) for seed in ends.columns], fontsize=7)
        ax.set(title=name, xlabel="seed")
    fig.colorbar(image, ax=axes[:, 0], shrink=0.6, label=f"entropy at the end (nats; ln {length} = uniform)")
    fig.suptitle(title)
    return fig


def _mean_lines(ax, tables: dict, column: str, name: str):
    """One line per run: `column`'s mean over seeds at each step."""
    for label, frame in tables.items():
        mean = frame.groupby("step")[column].mean()
        ax.plot(mean.index, mean.values, label=label)
    ax.set_title(name, fontsize=10)
