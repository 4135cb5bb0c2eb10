"""Chapter 10's deep model in rows that share their seeds: accuracy row against row, and each layer's attention
(entropy, and the largest weight on the answer) in tables and sentences."""

import numpy as np
import pandas as pd

from ..setups.variants import BASE, NORMED, PAIR, short_label
from ...compare import format_interval, format_p
from ...stats import paired_difference


def schedule_sentence(rows: list, lengths, at) -> str:
    """rows [(label, accuracy {side: (seeds, lengths) array over `lengths`})] of one model on the same seeds,
    the first the reference (the constant rate): per later row, each side's mean accuracy (%) at each N of
    `at` against the reference's there, with the paired difference over the seeds (the row minus the
    reference: the same seeds draw the same data and start from the same weights in every row)."""
    (reference, base), parts = rows[0], []
    for name, accuracy in rows[1:]:
        said = []
        for side, shown in ((v, short_label(v)) for v in PAIR):
            for n in at:  # a sentence per side and length
                j = list(lengths).index(n)
                d = paired_difference(100 * base[side][:, j], 100 * accuracy[side][:, j])
                said.append(f"{shown} at N = {n:,}: {100 * accuracy[side][:, j].mean():.1f}% against "
                            f"{100 * base[side][:, j].mean():.1f}% ({format_interval(d)} points, p = {format_p(d['p'])})")
        parts.append(f"*{name}* against *{reference}* ({len(base[BASE])} seeds, row minus reference with its "
                     f"95% interval). " + ". ".join(said))
    return ". ".join(parts) + "."


def norm_layers_sentence(rows: list, lengths, at) -> str:
    """rows [(rate name, accuracy {side: (seeds, lengths)} of the deep row with +LN's norm after every layer, the
    same of the row with it after the last layer only)], both on the same seeds and with the same Baseline run:
    paired_rows_sentence of +LN after the last layer only against +LN after every layer."""
    return paired_rows_sentence(rows, lengths, at, "+LN after the last layer only", "+LN after every layer's")


def paired_rows_sentence(rows: list, lengths, at, ours: str, theirs: str) -> str:
    """rows [(name, accuracy {side: (seeds, lengths)} of a reference row, the same of a row compared with it)], both
    on the same seeds and with the same Baseline run: at each N of `at`, the compared row's +LN mean accuracy (%)
    (`ours` names it) against the reference row's +LN (`theirs`) and the Baseline, with the paired differences (the
    compared row minus the other, 95% interval, p)."""
    parts = []
    for name, reference, compared in rows:
        at_n = []
        for n in at:
            j = list(lengths).index(n)
            mine = 100 * compared[NORMED][:, j]
            against = []
            for other, shown in ((reference[NORMED], theirs), (reference[BASE], f"the {short_label(BASE)}'s")):
                d = paired_difference(100 * other[:, j], mine)
                against.append(f"{shown} {100 * other[:, j].mean():.1f}% ({format_interval(d)} points, p = {format_p(d['p'])})")
            at_n.append(f"At N = {n:,}: {mine.mean():.1f}% against " + " and ".join(against))
        parts.append(f"*{name}* ({len(mine)} seeds), {ours}. " + ". ".join(at_n))
    return ". ".join(parts) + "."


# layer_table's columns: (how a value is shown, its reference row's name, the reference at N, as a value)
LAYER_VALUES = {"entropy": (lambda v: round(v, 3), "uniform weights (ln N)", np.log),
                "on_answer": (lambda v: round(100 * v, 2), "largest weight on a random item (%)", lambda n: 1 / n)}


def layer_table(probed: list, labels: dict, column: str = "entropy") -> pd.DataFrame:
    """probed [(row name, probing.layer_frame's rows of its two sides)]: each row's, side's and layer's mean over the
    seeds of `column` (entropy in nats, or on_answer in %) at every length probed, with the value a uniform
    attention gives beside them (ln N; a largest weight on the answer 1 time in N)."""
    shown, reference_name, reference = LAYER_VALUES[column]
    rows = []
    for name, frame in probed:
        means = frame.groupby(["variant", "layer", "N"])[column].mean()
        for (variant, layer), per_n in means.groupby(level=[0, 1], sort=False):
            rows.append({"row": name, "variant": labels[variant], "layer": int(layer) + 1,
                         **{f"N = {n:,}": shown(float(v)) for (_, _, n), v in per_n.items()}})
    table = pd.DataFrame(rows)
    uniform = {c: shown(float(reference(int(c[4:].replace(",", ""))))) for c in table.columns[3:]}
    uniform_row = pd.DataFrame([{"row": reference_name, "variant": "", "layer": "", **uniform}])
    return pd.concat([table, uniform_row], ignore_index=True).set_index(["row", "variant", "layer"])


def first_layer_entropy(frame: pd.DataFrame, side: str, n: int) -> np.ndarray:
    """One side's first-layer attention entropy at N = n from probing.layer_frame's rows, per seed in seed order."""
    rows = frame[(frame["layer"] == 0) & (frame["N"] == n) & (frame["variant"] == side)]
    return rows.sort_values("seed")["entropy"].to_numpy()


def _entropy_pair(a: np.ndarray, b: np.ndarray, names: tuple, n: int) -> str:
    """'x nats (A, p% of ln n) and y (B, q%); B minus A d [low, high], p = ...', paired seed by seed."""
    d = paired_difference(a, b)
    return (f"{a.mean():.2f} nats ({names[0]}, {a.mean() / np.log(n):.0%} of ln N) and {b.mean():.2f} ({names[1]}, "
            f"{b.mean() / np.log(n):.0%}); {names[1]} minus {names[0]} {format_interval(d, 2)}, p = {format_p(d['p'])}")


def layer_sentence(probed: list, n: int, labels: dict | None = None) -> str:
    """Per row of `probed` (as layer_table's): the first layer's mean entropy at N = n for both sides, as a share
    of ln n, with the second side minus the first paired over the seeds (nats, 95% interval, p); `labels`
    {side: its name}, default Baseline and +LN."""
    names = tuple((labels or {v: short_label(v) for v in PAIR})[side] for side in PAIR)
    parts = [f"*{name}*: " + _entropy_pair(*(first_layer_entropy(frame, side, n) for side in PAIR), names, n)
             for name, frame in probed]
    return (f"The first layer's attention entropy at N = {n:,} (ln N = {np.log(n):.2f}, uniform weights), means over "
            "the seeds, paired seed by seed. " + ". ".join(parts) + ".")


def placement_sentence(rows: list, n: int) -> str:
    """rows [(rate name, layer_frame rows of the row with +LN's norm after every layer, the same with it after the
    last layer only)]: +LN's first-layer entropy at N = n in both, paired seed by seed (the same seeds and data)."""
    parts = [f"*{name}*: " + _entropy_pair(first_layer_entropy(every, NORMED, n),
                                           first_layer_entropy(last, NORMED, n),
                                           ("norm after every layer", "after the last only"), n)
             for name, every, last in rows]
    return f"+LN's first layer at N = {n:,}, by where its norm is, paired seed by seed. " + ". ".join(parts) + "."
