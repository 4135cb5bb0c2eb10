"""Chapter 10's deep model in rows that share their seeds: accuracy row against row, and each layer's attention
(entropy, and the largest weight on the answer), in tables."""

import numpy as np
import pandas as pd

from ..setups.variants import BASE, NORMED, PAIR, short_label
from ...compare import format_interval, format_p
from ...stats import paired_difference


def _paired(mine: np.ndarray, other: np.ndarray) -> dict:
    """Two accuracy columns (fractions, one per seed, paired): their means (%) and mine minus other, paired over the
    seeds (points, 95% interval, p)."""
    d = paired_difference(100 * other, 100 * mine)
    return {"mean (%)": f"{100 * mine.mean():.1f}", "against (%)": f"{100 * other.mean():.1f}",
            "difference (points)": format_interval(d), "p": format_p(d["p"])}


def schedule_table(rows: list, lengths, at) -> pd.DataFrame:
    """rows [(label, accuracy {side: (seeds, lengths) array over `lengths`})] of one model on the same seeds, the
    first the reference (the constant rate): per later row, side and N of `at`, the row's mean accuracy against the
    reference's, with the paired difference over the seeds (the same seeds draw the same data and start from the
    same weights in every row)."""
    (reference, base), table = rows[0], {}
    for name, accuracy in rows[1:]:
        for side in PAIR:
            for n in at:
                j = list(lengths).index(n)
                table[(name, short_label(side), f"{n:,}")] = _paired(accuracy[side][:, j], base[side][:, j])
    frame = pd.DataFrame.from_dict(table, orient="index").rename(columns={"against (%)": f"{reference} (%)"})
    return frame.rename_axis(["row", "variant", "N"])


def norm_layers_table(rows: list, lengths, at) -> pd.DataFrame:
    """rows [(rate name, accuracy {side: (seeds, lengths)} of the deep row with +LN's norm after every layer, the
    same of the row with it after the last layer only)], both on the same seeds and with the same Baseline run:
    paired_rows_table of +LN after the last layer only against +LN after every layer."""
    return paired_rows_table(rows, lengths, at, "+LN after every layer")


def paired_rows_table(rows: list, lengths, at, theirs: str) -> pd.DataFrame:
    """rows [(name, accuracy {side: (seeds, lengths)} of a reference row, the same of a row compared with it)], both
    on the same seeds and with the same Baseline run: at each N of `at`, the compared row's +LN mean accuracy against
    the reference row's +LN (`theirs` names it) and against the Baseline, with the paired differences (the compared
    row's +LN minus the other)."""
    table = {}
    for name, reference, compared in rows:
        for n in at:
            j = list(lengths).index(n)
            for other, shown in ((reference[NORMED], theirs), (reference[BASE], short_label(BASE))):
                table[(name, f"{n:,}", shown)] = _paired(compared[NORMED][:, j], other[:, j])
    return pd.DataFrame.from_dict(table, orient="index").rename_axis(["row", "N", "against"])


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


def _entropy_pair(a: np.ndarray, b: np.ndarray, names: tuple, n: int) -> dict:
    """Two sides' first-layer entropies at N = n (nats, one per seed, paired): each mean and its share of ln n, and
    the second minus the first paired seed by seed (95% interval, p)."""
    d = paired_difference(a, b)
    return {f"{names[0]} (nats)": f"{a.mean():.2f} ({a.mean() / np.log(n):.0%})",
            f"{names[1]} (nats)": f"{b.mean():.2f} ({b.mean() / np.log(n):.0%})",
            f"{names[1]} minus {names[0]}": format_interval(d, 2), "p": format_p(d["p"])}


def _entropy_table(rows: dict, n: int) -> pd.DataFrame:
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(
        f"first layer at N = {n:,}: entropy (share of ln N = {np.log(n):.2f})")


def layer_entropy_table(probed: list, n: int, labels: dict | None = None) -> pd.DataFrame:
    """Per row of `probed` (as layer_table's): the first layer's mean entropy at N = n for both sides, as a share
    of ln n, with the second side minus the first paired over the seeds (nats, 95% interval, p); `labels`
    {side: its name}, default Baseline and +LN."""
    names = tuple((labels or {v: short_label(v) for v in PAIR})[side] for side in PAIR)
    return _entropy_table({name: _entropy_pair(*(first_layer_entropy(frame, side, n) for side in PAIR), names, n)
                           for name, frame in probed}, n)


def placement_table(rows: list, n: int) -> pd.DataFrame:
    """rows [(rate name, layer_frame rows of the row with +LN's norm after every layer, the same with it after the
    last layer only)]: +LN's first-layer entropy at N = n in both, paired seed by seed (the same seeds and data)."""
    names = ("+LN, norm after every layer", "+LN, norm after the last only")
    return _entropy_table({name: _entropy_pair(*(first_layer_entropy(f, NORMED, n) for f in (every, last)), names, n)
                           for name, every, last in rows}, n)
