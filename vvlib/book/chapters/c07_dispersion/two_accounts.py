"""Two accounts of why argmax retrieval fails at long lengths, read on the same models (chapter 7).

The paper's account: the attention output's variance shrinks as N grows, so the readout is fed inputs unlike
those it was trained on; chapter 6 measures this as the global variance of the readout's input divided by its
value at the training length (the variance ratio).  The dispersion account: the attention spreads over more
items as N grows and loses the one it should pick; chapter 7 measures the largest attention weight.  Each
model (seed) and length is one cell: its accuracy, its largest weight, its variance ratio.  Three readings,
each a correlation over trained models, none an experiment on them:
- across lengths, model by model: does the measure fall as the model's accuracy falls?
- across models at one length: are the models with more of the measure the more accurate?
- between the variants, seed pair by seed pair: does +LN's accuracy gain come with more of the measure?
"""

import numpy as np
import pandas as pd

from ....experiments.reports.answers import SHORT_LABELS
from ....experiments.setups.probes import PAIR
from ....compare import format_interval, power_of_two
from ....stats import correlation, mean_interval, paired_difference

# each account's measure: (its column in the cells, its name on the page)
MEASURES = {"dispersion": ("top1_weight", "largest attention weight"),
            "variance": ("relative_variance", "variance ratio")}


def cells(accuracy: dict, lengths, attention: pd.DataFrame, global_frame: pd.DataFrame, pair=PAIR) -> pd.DataFrame:
    """One row per variant, seed and length: accuracy (percent), top1_weight and relative_variance.
    accuracy: {variant: (seeds, lengths)} as fractions (chapter 4's scores); attention: chapter 7's probe
    (variant, seed, N, top1_weight); global_frame: chapter 6's (variant, seed, N, relative_variance).  All three
    must hold the same seeds from 0, since they must be the same models."""
    rows = []
    for v in pair:
        score = 100 * np.asarray(accuracy[v], dtype=float)
        for j, n in enumerate(lengths):
            rows += [(v, seed, n, score[seed, j]) for seed in range(score.shape[0])]
    frame = pd.DataFrame(rows, columns=["variant", "seed", "N", "accuracy"])
    for probe, column in ((attention, "top1_weight"), (global_frame, "relative_variance")):
        found = probe[probe["variant"].isin(pair)][["variant", "seed", "N", column]]
        frame = frame.merge(found, on=["variant", "seed", "N"], how="left")
        if frame[column].isna().any():
            missing = frame[frame[column].isna()][["variant", "seed", "N"]].iloc[0].to_dict()
            raise ValueError(f"{column}: the probe has no value for {missing}; it must probe the scored models")
    return frame


def across_lengths(frame: pd.DataFrame) -> pd.DataFrame:
    """Per variant and account: Pearson's r between accuracy and the measure over the lengths, model by model,
    as a mean over the models with its t interval (r, low, high), and r over all cells pooled (pooled)."""
    rows = []
    for (variant, account), (column, _) in ((key, MEASURES[key[1]]) for key in _keys(frame)):
        here = frame[frame["variant"] == variant]
        per_model = [np.corrcoef(model["accuracy"], model[column])[0, 1] for _, model in here.groupby("seed")]
        r, low, high = mean_interval(per_model)
        rows.append({"variant": variant, "account": account, "r": r, "low": low, "high": high,
                     "pooled": float(np.corrcoef(here["accuracy"], here[column])[0, 1])})
    return pd.DataFrame(rows).set_index(["variant", "account"])


def across_models(frame: pd.DataFrame, reference: int) -> pd.DataFrame:
    """Per length beyond the training length `reference`, variant and account: Pearson's r between the models'
    accuracies and their measure, with its 95% interval (stats.correlation)."""
    rows = []
    for n, here in frame[frame["N"] > reference].groupby("N"):
        for variant, account in _keys(frame):
            models = here[here["variant"] == variant]
            found = correlation(models["accuracy"], models[MEASURES[account][0]])
            rows.append({"N": n, "variant": variant, "account": account, **found})
    return pd.DataFrame(rows).set_index(["N", "variant", "account"])


def between_variants(frame: pd.DataFrame, reference: int, pair=PAIR) -> pd.DataFrame:
    """Per length beyond `reference`: the second variant minus the first, seed pair by seed pair, in accuracy
    (points) and in each account's measure, each a stats.paired_difference (columns <quantity>, <quantity>_low,
    <quantity>_high)."""
    first, second = pair
    rows = []
    for n, here in frame[frame["N"] > reference].groupby("N"):
        a, b = (here[here["variant"] == v].sort_values("seed") for v in pair)
        row = {"N": n}
        for quantity in ("accuracy", *(column for column, _ in MEASURES.values())):
            d = paired_difference(a[quantity].to_numpy(), b[quantity].to_numpy())
            row.update({quantity: d["diff"], f"{quantity}_low": d["low"], f"{quantity}_high": d["high"]})
        rows.append(row)
    return pd.DataFrame(rows).set_index("N")


def _keys(frame):
    return [(variant, account) for variant in frame["variant"].unique() for account in MEASURES]


def _r(found) -> str:
    return f"{found['r']:.2f} [{found['low']:.2f}, {found['high']:.2f}]"


def correlation_table(frame: pd.DataFrame, reference: int, labels=SHORT_LABELS) -> pd.DataFrame:
    """Both correlations as the page prints them, Pearson's r of accuracy with each measure and its 95% interval:
    one row per length beyond training (across models), then one for the mean over models of r across lengths;
    a column per account and variant."""
    models, lengths = across_models(frame, reference), across_lengths(frame)
    columns = [(v, account) for account in MEASURES for v in frame["variant"].unique()]
    name = lambda v, account: f"{MEASURES[account][1]}: {labels[v]}"
    rows = [{"across": f"models at N = {power_of_two(n)}", **{name(v, a): _r(models.loc[(n, v, a)]) for v, a in columns}}
            for n in models.index.get_level_values("N").unique()]
    rows.append({"across": "lengths, model by model (mean)", **{name(v, a): _r(lengths.loc[(v, a)]) for v, a in columns}})
    return pd.DataFrame(rows).set_index("across")


def difference_table(differences: pd.DataFrame, pair=PAIR, labels=SHORT_LABELS) -> pd.DataFrame:
    """between_variants as the page prints it: each difference with its paired 95% interval."""
    first, second = pair
    shown = {"accuracy": ("accuracy (points)", 1), "top1_weight": ("largest attention weight", 3),
             "relative_variance": ("variance ratio", 3)}
    return pd.DataFrame([{"N": power_of_two(n), **{
        f"{labels[second]} − {labels[first]}: {name}": format_interval(
            {"diff": row[q], "low": row[f"{q}_low"], "high": row[f"{q}_high"]}, digits)
        for q, (name, digits) in shown.items()}} for n, row in differences.iterrows()]).set_index("N")


def _above(low, high) -> int:
    return 1 if low > 0 else -1 if high < 0 else 0


def tally(frame: pd.DataFrame, reference: int) -> dict:
    """The counts the verdict rests on, over the lengths beyond `reference`:
    lengths: how many; differs: at how many the variants' accuracies differ significantly; cells: length x variant cells of the across-models reading;
    stronger: in how many of those cells the largest weight's r with accuracy exceeds the variance ratio's;
    positive: {account: in how many cells its r's interval lies above 0};
    agree: {account: at how many lengths the second variant's measure differs significantly in the direction
    the account needs (more of it) while its accuracy differs significantly (with the accuracy's sign)};
    against: {account: at how many lengths it differs significantly the other way}."""
    models, differences = across_models(frame, reference), between_variants(frame, reference)
    r = models["r"].unstack("account")
    found = {"lengths": len(differences), "cells": len(r),
             "differs": int(((differences["accuracy_low"] > 0) | (differences["accuracy_high"] < 0)).sum()), "stronger": int((r["dispersion"] > r["variance"]).sum()),
             "positive": {a: int((models.xs(a, level="account")["low"] > 0).sum()) for a in MEASURES},
             "agree": {}, "against": {}}
    gain = [_above(row["accuracy_low"], row["accuracy_high"]) for _, row in differences.iterrows()]
    for account, (column, _) in MEASURES.items():
        moved = [_above(row[f"{column}_low"], row[f"{column}_high"]) for _, row in differences.iterrows()]
        found["agree"][account] = sum(1 for g, m in zip(gain, moved) if g and m == g)
        found["against"][account] = sum(1 for g, m in zip(gain, moved) if g and m == -g)
    return found


def favoured(frame: pd.DataFrame, reference: int) -> dict:
    """{reading: the account it favours, or None}: across lengths, the account whose mean r is the higher for
    every variant; across models, the one with the higher r in most length x variant cells; between the
    variants, the one with more lengths where the more accurate variant has significantly more of its measure."""
    t, r = tally(frame, reference), across_lengths(frame)["r"].unstack("account")
    lengths = ("dispersion" if (r["dispersion"] > r["variance"]).all() else
               "variance" if (r["variance"] > r["dispersion"]).all() else None)
    models = ("dispersion" if t["stronger"] > t["cells"] / 2 else
              "variance" if t["stronger"] < t["cells"] / 2 else None)
    agree = t["agree"]
    between = max(agree, key=agree.get) if agree["dispersion"] != agree["variance"] else None
    return {"lengths": lengths, "models": models, "variants": between}


def verdict(frame: pd.DataFrame, reference: int, scale: str, pair=PAIR, labels=SHORT_LABELS) -> str:
    """What the three readings say, by fixed rules (favoured), with the counts of tally, the mean r across
    lengths and the range of the first variant's mean variance ratio over the lengths."""
    t, lengths, readings = tally(frame, reference), across_lengths(frame), favoured(frame, reference)
    per_model = "; ".join(f"{labels[v]} {lengths.loc[(v, 'dispersion'), 'r']:.2f} and "
                          f"{lengths.loc[(v, 'variance'), 'r']:.2f}" for v in pair)
    means = frame.groupby(["variant", "N"])[["accuracy", "relative_variance"]].mean()
    first = means.loc[pair[0]]
    kept = (f"The {labels[pair[0]]}'s mean variance ratio stays between {first['relative_variance'].min():.2f} and "
            f"{first['relative_variance'].max():.2f} at every length while its mean accuracy goes from "
            f"{first['accuracy'].max():.1f}% to {first['accuracy'].min():.1f}%. ")
    winners = set(readings.values())
    ending = (f"On all three readings the data fit the {winners.pop()} account better." if len(winners) == 1 and
              None not in winners else "The three readings do not favour one account: " + ", ".join(
                  f"{reading}: {account or 'neither'}" for reading, account in readings.items()) + ".")
    between = lambda account: (f"the larger {MEASURES[account][1]} at {t['agree'][account]} and the smaller at "
                               f"{t['against'][account]}")
    return (f"*{scale}:* {kept}Across lengths, a model's accuracy goes with its measure (mean r over models with the largest weight and "
            f"with the variance ratio: {per_model}). "
            f"Across models at one length the largest weight is the stronger correlate in {t['stronger']} of "
            f"{t['cells']} length x variant cells; its r is above 0 (95% interval) in {t['positive']['dispersion']} "
            f"of them, the variance ratio's in {t['positive']['variance']}. Between the variants, at the "
            f"{t['differs']} of {t['lengths']} lengths where their accuracies differ significantly, the more "
            f"accurate has significantly {between('dispersion')}. It has {between('variance')}. Each account needs the "
            f"more accurate variant to have more of its measure. {ending}")
