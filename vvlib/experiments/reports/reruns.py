"""Seeds trained a second time, each in a run of its own (chapter 9's rerun_seeds): does a seed's score follow its
draws, or does the rounding move it?

A rerun draws the same batches and test sequences as the seed's first run (variants.rerun_train_configs); only
the arithmetic can differ: another CPU, another number of threads, another seed group.  same_seeds.loss_parting
tells whether the two runs started alike and how far apart their losses went; this module sets each rerun's
scores beside its first run's, and the change beside how far the first runs' seeds lie from one another.
"""

import numpy as np
import pandas as pd

from ...compare import power_of_two


def first_run_loss(records: list, seed: int) -> float:
    """The seed's final logged training loss in the first run that holds it, from that run's record."""
    for record in records:
        train = record["spec"]["train"]
        if train["first_seed"] <= seed < train["first_seed"] + train["n_seeds"]:
            return record["final_loss"][seed - train["first_seed"]]
    raise ValueError(f"no run holds seed {seed}")


def changes(first: dict, again: dict, seeds, lengths, n: int) -> dict:
    """{variant: rerun score minus first score at length n, in points, one per rerun seed}.
    first: {variant: (the first runs' seeds 0.., lengths)}; again: {variant: (rerun seeds, lengths)}."""
    at = list(lengths).index(n)
    return {v: 100 * (np.asarray(again[v])[:, at] - np.asarray(first[v])[list(seeds), at]) for v in again}


def scores_table(first: dict, again: dict, seeds, lengths, shown, labels: dict, first_records: dict,
                 again_records: dict) -> pd.DataFrame:
    """Per rerun seed and variant: the first run's score and the rerun's at each length of `shown` (in %), and
    each one's final training loss."""
    rows = []
    for variant in again:
        for k, seed in enumerate(seeds):
            row = {"seed": seed, "variant": labels[variant]}
            for n in shown:
                at = list(lengths).index(n)
                row[f"{power_of_two(n)}: first"] = round(100 * float(first[variant][seed, at]), 1)
                row[f"{power_of_two(n)}: alone"] = round(100 * float(again[variant][k, at]), 1)
            row["final loss: first"] = round(first_run_loss(first_records[variant], seed), 4)
            row["final loss: alone"] = round(again_records[variant][k]["final_loss"][0], 4)
            rows.append(row)
    return pd.DataFrame(rows).set_index(["seed", "variant"])


def _where(records: list) -> str:
    """Where runs were trained: each distinct CPU and thread count their provenance names."""
    def place(provenance):
        threads = provenance["device"].rpartition(", ")[2].rstrip(")")  # 'cpu (x86_64, 2 threads)' -> '2 threads'
        return f"{provenance.get('cpu', 'a CPU not recorded')}, {threads}"
    return " and ".join(dict.fromkeys(place(r["provenance"]) for r in records))


def _lowest_first(first: dict, seeds, at: int) -> tuple | None:
    """(variant, seed) of the first runs' lowest score at length index `at`, where that seed was trained again."""
    variant = min(first, key=lambda v: np.min(np.asarray(first[v])[:, at]))
    seed = int(np.argmin(np.asarray(first[variant])[:, at]))
    return (variant, seed) if seed in seeds else None


def summary(first: dict, again: dict, seeds, lengths, labels: dict, first_records: dict, again_records: dict,
            in_distribution: int) -> str:
    """What the reruns show, in numbers read from the scores: whether any rerun ended on its first run's loss to
    the bit, how far the scores moved at the training length and at the longest, what became of the first runs'
    lowest model at the training length (where it was trained again), the first runs' spread at the longest for
    scale, and how closely a seed's two scores there go together (were a score its draws' alone, r would be 1)."""
    seeds, longest = list(seeds), max(lengths)
    at_in, at_long = list(lengths).index(in_distribution), list(lengths).index(longest)
    same_bits = sum(first_run_loss(first_records[v], s) == again_records[v][k]["final_loss"][0]
                    for v in again for k, s in enumerate(seeds))
    moved_in = np.concatenate(list(changes(first, again, seeds, lengths, in_distribution).values()))
    moved_long = np.concatenate(list(changes(first, again, seeds, lengths, longest).values()))
    spread = {v: 100 * np.std(np.asarray(first[v])[:, at_long], ddof=1) for v in again}
    text = (f"Trained again, each alone, {same_bits} of the {moved_in.size} models end on their first run's final "
            f"loss to the bit. The reruns ran on {_where(sum(again_records.values(), []))}; the first runs on "
            f"{_where(sum(first_records.values(), []))}. At {in_distribution} items their scores moved by a median of "
            f"{np.median(np.abs(moved_in)):.1f} points (from {moved_in.min():+.1f} to {moved_in.max():+.1f}). ")
    lowest = _lowest_first(first, seeds, at_in)
    if lowest:
        variant, seed = lowest
        text += (f"Seed {seed}'s {labels[variant]}, the first runs' lowest there "
                 f"({100 * first[variant][seed, at_in]:.1f}%), scores {100 * again[variant][seeds.index(seed), at_in]:.1f}% "
                 f"alone. ")
    text += (f"At {power_of_two(longest)} the scores moved by a median of {np.median(np.abs(moved_long)):.1f} "
             f"points (from {moved_long.min():+.1f} to {moved_long.max():+.1f}), where the first runs' "
             f"{len(next(iter(first.values())))} seeds spread with a standard deviation of "
             + " and ".join(f"{spread[v]:.1f} points ({labels[v]})" for v in again) + ".")
    if len(seeds) >= 3:  # two points always correlate by +1 or -1
        r = {v: np.corrcoef(np.asarray(first[v])[seeds, at_long], np.asarray(again[v])[:, at_long])[0, 1] for v in again}
        text += (f" Over the {len(seeds)} seeds a model's first score there and its score alone correlate by r = "
                 + " and ".join(f"{r[v]:.2f} ({labels[v]})" for v in again) + ".")
    if len(again) == 2:
        second, first_v = list(again)[1], list(again)[0]
        gap = {name: 100 * (acc[second][rows, at_long] - acc[first_v][rows, at_long]).mean()
               for name, acc, rows in (("first", first, seeds), ("alone", again, slice(None)))}
        text += (f" Over these seeds {labels[second]} minus {labels[first_v]} at {power_of_two(longest)} averages "
                 f"{gap['first']:+.1f} points in the first runs and {gap['alone']:+.1f} alone.")
    return text


def parting_sentence(parting: pd.DataFrame, labels: dict) -> str:
    """same_seeds.loss_parting of first runs and reruns in words: how close the same seed's logged losses are at
    the first step (against different seeds': equal draws show as a far smaller gap, taken here as under a tenth
    of theirs for the median seed; a run whose gap is larger had parted already), and the first step at which
    every variant's same-seed gap reaches half the gap between different seeds (the rounding's difference grown as
    large as a new seed's, near enough), if any."""
    steps = list(dict.fromkeys(parting.index.get_level_values("step")))
    early = parting.xs(steps[0], level="step")
    typical, largest = early["same seed: median"].max(), early["same seed: largest"].max()
    others = early["different seeds: median"].min()
    text = (f"At step {steps[0]:,} the same seed's logged training loss differs between its two runs by a median of "
            f"{typical:.3f}% or less and at most {largest:.3f}%, where different seeds differ by a median of "
            f"{others:.2f}% or more")
    if typical >= others / 10:
        text += ". So the reruns did not start alike. "
    elif largest >= others / 10:
        text += (". So the reruns started on their first runs' draws, but at least one had parted from its first "
                 "run within those steps. ")
    else:
        text += ". So the reruns started on their first runs' draws. "
    apart = [step for step in steps
             if (parting.xs(step, level="step")["same seed: median"]
                 >= parting.xs(step, level="step")["different seeds: median"] / 2).all()]
    if not apart:
        return text + "At no step shown do they lie half as far apart as different seeds."
    at = parting.xs(apart[0], level="step")
    return text + (f"By step {apart[0]:,} they lie at least half as far apart as different seeds (a median of "
                   + ", ".join(f"{at.loc[v, 'same seed: median']:.1f}% against {at.loc[v, 'different seeds: median']:.1f}%"
                               f" for {labels[v]}" for v in at.index) + ").")
