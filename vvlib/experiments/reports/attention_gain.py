"""Beside Figure 4 (chapter 7): does +LN's accuracy gain go with its sharper attention?

Per test length beyond training: +LN's paired gain in accuracy, what a linear fit over both variants'
models leaves of it among models of equal attention entropy (stats.difference_at_equal_covariate), and how
accuracy and entropy go together within each variant and seed pair by seed pair.  Accuracy and entropy
are each model's means over its test sequences.  All of it describes trained models; none of it is an
intervention, so it can say where the gain shows, not what causes it.
"""

import numpy as np
import pandas as pd

from .answers import SHORT_LABELS, answer_lengths
from ..setups.probes import PAIR
from ...compare import format_interval, power_of_two
from ...stats import difference_at_equal_covariate, paired_difference


def per_model(accuracy: dict, attention: pd.DataFrame, lengths, n: int, pair=PAIR) -> dict:
    """{variant: (accuracy in percent, attention entropy)} at length n, one value per seed in seed order.
    accuracy: {variant: (seeds, lengths)} as fractions; attention: chapter 7's table (variant, seed, N, entropy)."""
    j = list(lengths).index(n)
    found = {}
    for v in pair:
        here = attention[(attention["variant"] == v) & (attention["N"] == n)].sort_values("seed")
        score = 100 * np.asarray(accuracy[v], dtype=float)[:, j]
        if list(here["seed"]) != list(range(len(score))):
            raise ValueError(f"{v}: the attention probe holds seeds {list(here['seed'])}, the accuracy "
                             f"{len(score)} seeds from 0; both must be the same models")
        found[v] = (score, here["entropy"].to_numpy(dtype=float))
    return found


def gain_and_entropy(accuracy: dict, attention: pd.DataFrame, lengths, reference: int, pair=PAIR) -> pd.DataFrame:
    """One row per length beyond the training length `reference`: the gain (second of `pair` minus the first,
    points, paired), the gain at equal entropy (one slope for both variants) and its slope (points per nat),
    the correlation of accuracy with entropy within each variant, that of the pairs' differences, and in how
    many pairs the second's attention is the sharper."""
    first, second = pair
    rows = []
    for n in (n for n in lengths if n > reference):
        (acc_a, ent_a), (acc_b, ent_b) = per_model(accuracy, attention, lengths, n, pair).values()
        gain, equal = paired_difference(acc_a, acc_b), difference_at_equal_covariate(acc_a, acc_b, ent_a, ent_b)
        rows.append({"N": n, "gain": gain["diff"], "gain_low": gain["low"], "gain_high": gain["high"],
                     "at_equal_entropy": equal["diff"], "equal_low": equal["low"], "equal_high": equal["high"],
                     "points_per_nat": equal["slope"], f"r_{first}": np.corrcoef(acc_a, ent_a)[0, 1],
                     f"r_{second}": np.corrcoef(acc_b, ent_b)[0, 1],
                     "r_pairs": np.corrcoef(acc_b - acc_a, ent_b - ent_a)[0, 1],
                     "pairs_sharper": int((ent_b < ent_a).sum()), "pairs": len(acc_a)})
    return pd.DataFrame(rows).set_index("N")


def gain_table(gains: pd.DataFrame, pair=PAIR, labels=SHORT_LABELS) -> pd.DataFrame:
    """gain_and_entropy's rows as the page prints them."""
    first, second = pair
    interval = lambda row, key, low, high: format_interval({"diff": row[key], "low": row[low], "high": row[high]}, 1)
    return pd.DataFrame([{
        "N": power_of_two(n), f"{labels[second]} − {labels[first]} (points) [95%]":
            interval(row, "gain", "gain_low", "gain_high"),
        "at equal entropy [95%]": interval(row, "at_equal_entropy", "equal_low", "equal_high"),
        f"r (accuracy, entropy): {labels[first]}": f"{row[f'r_{first}']:.2f}",
        f"r: {labels[second]}": f"{row[f'r_{second}']:.2f}",
        "r of the pairs' differences": f"{row['r_pairs']:.2f}",
        f"pairs with {labels[second]} sharper": f"{row['pairs_sharper']:.0f} of {row['pairs']:.0f}"}
        for n, row in gains.iterrows()]).set_index("N")


def gain_sentence(gains: pd.DataFrame, scale: str, pair=PAIR, labels=SHORT_LABELS) -> str:
    """What gain_and_entropy says at the answer's lengths, by fixed rules: whether the gain at equal entropy is
    significant (its interval leaves out 0) and what share of the gain it is; then, at the longest of them,
    which way accuracy goes with entropy within each variant and across the seed pairs."""
    first, second = pair
    parts = []
    for n in answer_lengths(list(gains.index)):
        row = gains.loc[n]
        left = ("not significantly different from 0" if row["equal_low"] <= 0 <= row["equal_high"]
                else f"{row['at_equal_entropy'] / row['gain']:.0%} of the gain")
        parts.append(f"at $N = {n}$ {labels[second]} is {row['gain']:+.1f} points ahead, and among models of equal "
                     f"entropy the fit leaves {row['at_equal_entropy']:+.1f} ({row['equal_low']:+.1f} to "
                     f"{row['equal_high']:+.1f}), {left}")
    row = gains.loc[answer_lengths(list(gains.index))[-1]]
    way = lambda r: f"{'higher' if r < 0 else 'lower'} accuracy (r = {r:.2f})"
    pairs = "larger" if row["r_pairs"] < 0 else "smaller"
    return (f"*{scale}:* {'; '.join(parts)}. At $N = {row.name}$ a sharper attention goes with "
            f"{way(row[f'r_{first}'])} among the {labels[first]}'s models and {way(row[f'r_{second}'])} among "
            f"{labels[second]}'s; across the seed pairs, the sharper {labels[second]}'s attention is than the "
            f"{labels[first]}'s, the {pairs} its gain (r = {row['r_pairs']:.2f} between the two differences).")
