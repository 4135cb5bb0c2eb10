"""Beside Figure 4 (chapter 7): does +LN's accuracy gain go with its sharper attention?

Two readings.  Across trained models (gain_and_entropy): per test length beyond training, +LN's paired gain
in accuracy, what a linear fit over both variants' models leaves of it among models of equal attention
entropy (stats.difference_at_equal_covariate), and how accuracy and entropy go together within each variant
and seed pair by seed pair; that describes the models, so it can say where the gain shows, not what causes
it.  And the sharpness test (matched_sharpness): the same weights scored with their attention's logits
scaled (probing.sharpened) until each model's attention has its partner's entropy: the Baseline's that of
+LN, +LN's that of the Baseline.  That changes the attention alone, at test time.  Accuracy and entropy are
each model's means over its test sequences.
"""

import numpy as np
import pandas as pd

from ....experiments.reports.answers import SHORT_LABELS, answer_lengths
from ....experiments.setups.probes import PAIR
from ....compare import format_interval, power_of_two
from ....stats import difference_at_equal_covariate, paired_difference


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
        parts.append(f"At $N = {n}$ {labels[second]} is {row['gain']:+.1f} points ahead. Among models of equal "
                     f"entropy the fit leaves {row['at_equal_entropy']:+.1f} ({row['equal_low']:+.1f} to "
                     f"{row['equal_high']:+.1f}), {left}.")
    row = gains.loc[answer_lengths(list(gains.index))[-1]]
    way = lambda r: f"{'higher' if r < 0 else 'lower'} accuracy (r = {r:.2f})"
    pairs = "larger" if row["r_pairs"] < 0 else "smaller"
    return (f"*{scale}.* {' '.join(parts)} At $N = {row.name}$ a sharper attention goes with "
            f"{way(row[f'r_{first}'])} among the {labels[first]}'s models and {way(row[f'r_{second}'])} among "
            f"{labels[second]}'s. Across the seed pairs, the sharper {labels[second]}'s attention is than the "
            f"{labels[first]}'s, the {pairs} its gain (r = {row['r_pairs']:.2f} between the two differences).")


def _at_entropy(curve: pd.DataFrame, target: float) -> float:
    """A model's accuracy (percent) where its attention, sharpened or spread along its betas, has mean entropy
    `target`: linear between the two betas around it; nan outside the betas' range (no extrapolation)."""
    curve = curve.sort_values("entropy")
    x, y = curve["entropy"].to_numpy(), 100 * curve["accuracy"].to_numpy()
    return float(np.interp(target, x, y)) if x[0] <= target <= x[-1] else float("nan")


def matched_sharpness(frame: pd.DataFrame, pair=PAIR) -> pd.DataFrame:
    """Chapter 7's sharpness test, seed pair by seed pair (the probe-sharpness table: variant, seed, N, beta,
    accuracy, entropy): each model as trained (beta 1), and each read at its partner's entropy (`<variant>_at_partner`:
    its accuracy where its attention, sharpened or spread, has the partner's entropy as trained).  One row per
    (N, seed), accuracies in percent."""
    first, second = pair
    rows = []
    for (n, seed), here in frame.groupby(["N", "seed"]):
        curve = {v: here[here["variant"] == v] for v in pair}
        trained = {v: curve[v][curve[v]["beta"] == 1].iloc[0] for v in pair}
        rows.append({"N": n, "seed": seed, first: 100 * trained[first]["accuracy"],
                     second: 100 * trained[second]["accuracy"],
                     f"{first}_entropy": trained[first]["entropy"], f"{second}_entropy": trained[second]["entropy"],
                     f"{first}_at_partner": _at_entropy(curve[first], trained[second]["entropy"]),
                     f"{second}_at_partner": _at_entropy(curve[second], trained[first]["entropy"])})
    return pd.DataFrame(rows)


def sharpness_table(matched: pd.DataFrame, pair=PAIR, labels=SHORT_LABELS) -> pd.DataFrame:
    """matched_sharpness by length: the two variants as trained, their difference, what reading each at the
    other's entropy does, each a mean over the seed pairs with its paired 95% interval (points), and in how
    many pairs the second's attention is the sharper.  The first's move to the second's entropy is also given
    as a share of their difference where that difference is significant (its interval leaves out 0)."""
    first, second = pair
    a, b = labels[first], labels[second]
    rows = []
    for n, here in matched.groupby("N"):
        diff = lambda x, y: ("— (beyond the betas tried)" if here[[x, y]].isna().any().any()
                             else format_interval(paired_difference(here[x], here[y]), 1))
        rows.append({"N": power_of_two(n), a: f"{here[first].mean():.1f}", b: f"{here[second].mean():.1f}",
                     f"{b} − {a} [95%]": diff(first, second),
                     f"{a} at {b}'s entropy, − {a}": diff(first, f"{first}_at_partner") + _share(here, pair),
                     f"{b} − {a} at {b}'s entropy": diff(f"{first}_at_partner", second),
                     f"{b} at {a}'s entropy, − {a}": diff(first, f"{second}_at_partner"),
                     f"pairs with {b} sharper": f"{_sharper(here, pair)} of {len(here)}"})
    return pd.DataFrame(rows).set_index("N")


def _share(here: pd.DataFrame, pair=PAIR) -> str:
    """' (55% of the gap)': the first variant's mean move at its partner's entropy as a share of the two variants'
    mean difference, where that difference is significant and every pair was answered; else ''."""
    first, second = pair
    gap = paired_difference(here[first], here[second])
    moved = (here[f"{first}_at_partner"] - here[first]).mean(skipna=False)
    if np.isnan(moved) or not (gap["low"] > 0 or gap["high"] < 0):
        return ""
    return f" ({moved / gap['diff']:.0%} of the gap)"


def sharpness_note(matched: pd.DataFrame, scale: str) -> str:
    """The sharpness table's scale, and at each length the seed pairs whose two entropies lie further apart than
    the betas tried reach (so the test does not answer there)."""
    notes = []
    for n, here in matched.groupby("N"):
        beyond = sorted(here.loc[here[[c for c in here if c.endswith("_at_partner")]].isna().any(axis=1), "seed"])
        if beyond:
            seeds = ("seed " if len(beyond) == 1 else "seeds ") + ", ".join(str(seed) for seed in beyond)
            notes.append(f"At $N = {n}$, {seeds}: the two entropies lie further apart than the betas tried "
                         f"(`sharpness_betas`) reach, so the test does not answer there.")
    return " ".join([f"*{scale}, {matched['seed'].nunique()} seed pairs.*", *notes])


def _sharper(matched: pd.DataFrame, pair=PAIR) -> int:
    """In how many of matched's rows the second variant's attention, as trained, is the sharper (lower entropy)."""
    first, second = pair
    return int((matched[f"{second}_entropy"] < matched[f"{first}_entropy"]).sum())
