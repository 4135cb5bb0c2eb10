"""The same seeds trained on two devices from the counter stream: where do they part?

On the counter stream a seed starts from the same weights and draws the same training batches
and test sequences on a CPU and a GPU; only the arithmetic differs (the order of additions, the
kernels).  Two questions, each answered from stored records alone:

- loss_parting: how far apart the same seed's logged training loss is on the two devices, step
  by step, beside how far apart two different seeds are (the control: what "unrelated" looks
  like at that step).  Equal batches show as a same-seed gap far below the control early on.
- paired_on_shared_blocks: the accuracy difference between the devices, paired over the shared
  seeds and scored on the test blocks both evaluated (the same sequences), so neither the seeds
  nor the test set can make it: what is left is the arithmetic, amplified by training, and chance.

Chapter 9 reads loss_parting too, for seeds trained twice on CPUs (reports/reruns.py).
"""

import numpy as np
import pandas as pd

from ...compare import format_interval, format_p, power_of_two
from ...stats import paired_difference


SEED_FIELDS = ("n_seeds", "first_seed", "seed_group")  # which seeds a run holds and how it groups them


def trained_alike(first: dict, second: dict) -> bool:
    """Whether every run of two {variant: [training records]} trains a seed as the other's do: the same
    model and training settings, whatever seeds each run holds and however it groups them (a seed ends
    the same up to rounding either way), the device aside."""
    def settings(record):
        train = {k: v for k, v in record["spec"]["train"].items() if k not in SEED_FIELDS}
        return record["spec"]["model"], train

    return first.keys() == second.keys() and all(
        settings(a) == settings(b) for v in first for a in first[v] for b in second[v])


def seed_losses(records: list) -> dict:
    """{seed: {step: logged loss}} from training records of consecutive seeds (each its spec's
    first_seed onwards, in the order of its loss history's columns)."""
    losses = {}
    for record in records:
        first = record["spec"]["train"]["first_seed"]
        for step, per_seed in record["loss_history"]:
            for k, loss in enumerate(per_seed):
                losses.setdefault(first + k, {})[step] = loss
    return losses


def _relative_gap(a: dict, b: dict, step: int) -> float:
    return abs(a[step] - b[step]) / abs(b[step])


def parting_steps(history: list) -> list:
    """The logged steps loss_parting compares: the 1st, 2nd, 5th, 10th and 20th logs and the last, of a
    training record's loss history [(step, per-seed losses)]."""
    return [history[k][0] for k in (0, 1, 4, 9, 19, len(history) - 1) if k < len(history)]


def loss_parting(first: dict, second: dict, steps) -> pd.DataFrame:
    """Per variant and step: the relative gap |second - first| / first between the same seed's
    logged losses (median and largest over the seeds both have), and the median gap between
    different seeds (each shared seed's first-device loss against the next shared seed's on the
    second device).  first, second: {variant: [training records]}."""
    rows = []
    for variant in first:
        a, b = seed_losses(first[variant]), seed_losses(second[variant])
        shared = sorted(set(a) & set(b))
        if len(shared) < 2:
            raise ValueError(f"loss_parting needs two seeds both devices trained; {variant} has {shared}")
        for step in steps:
            same = [_relative_gap(b[s], a[s], step) for s in shared]
            other = [_relative_gap(b[t], a[s], step) for s, t in zip(shared, shared[1:] + shared[:1])]
            rows.append({"variant": variant, "step": step, "seeds": len(shared),
                         "same seed: median": 100 * float(np.median(same)),
                         "same seed: largest": 100 * float(np.max(same)),
                         "different seeds: median": 100 * float(np.median(other))})
    return pd.DataFrame(rows).set_index(["variant", "step"])


def parting_table(parting: pd.DataFrame, labels: dict) -> pd.DataFrame:
    """loss_parting for the page: the variants' labels, the gaps as percentages."""
    shown = parting.rename(index=labels)
    for column in shown.columns[1:]:
        shown[column] = [f"{gap:.3f}%" if gap < 0.1 else f"{gap:.2f}%" for gap in shown[column]]
    return shown


def right_on_first_blocks(side: tuple, shared, n_blocks: int, n: int) -> np.ndarray:
    """Each shared seed's right answers at length n on the first n_blocks test blocks, from a side
    (right answers per block (seeds, lengths, blocks), its seeds, its lengths)."""
    blocks, seeds, lengths = side
    rows = [list(seeds).index(s) for s in shared]
    return np.asarray(blocks, dtype=float)[rows, list(lengths).index(n), :n_blocks].sum(-1)


def paired_on_shared_blocks(first: dict, second: dict, shown, block: int) -> dict:
    """{variant: {N: paired_difference second - first in points}} over the seeds both devices have,
    scored on the test blocks both evaluated.  first, second: {variant: (right answers per block
    (seeds, lengths, blocks), seeds, lengths)}; every block holds `block` sequences (full blocks);
    shown: the lengths to compare."""
    result = {}
    for variant, side_a in first.items():
        side_b = second[variant]
        shared = sorted(set(side_a[1]) & set(side_b[1]))
        n_blocks = min(np.shape(side_a[0])[2], np.shape(side_b[0])[2])
        points = 100 / (n_blocks * block)
        result[variant] = {n: paired_difference(points * right_on_first_blocks(side_a, shared, n_blocks, n),
                                                points * right_on_first_blocks(side_b, shared, n_blocks, n))
                           for n in shown}
    return result


def summary(parting: pd.DataFrame, paired: dict, labels: dict, alpha: float) -> str:
    """What the two tables say, in numbers read from them, each conclusion only where they show it."""
    first, last = parting.index.get_level_values("step")[[0, -1]]
    seeds = int(parting["seeds"].iloc[0])
    early, late = parting.xs(first, level="step"), parting.xs(last, level="step")
    alike = early["same seed: largest"].max() < early["different seeds: median"].min()
    apart = late["same seed: median"].min() >= late["different seeds: median"].min() / 2
    differ = [(labels[v], n, d) for v, by_n in paired.items() for n, d in by_n.items() if d["p"] < alpha]
    n_tests = sum(len(by_n) for by_n in paired.values())
    return (f"Over the first {first:,} steps the same seed's mean training loss differs between the devices by at "
            f"most {early['same seed: largest'].max():.2f}% (median {early['same seed: median'].median():.3f}%), "
            f"where different seeds differ by a median of {early['different seeds: median'].min():.2f}% or more"
            + (f". So the {seeds} seeds started alike on both devices, as the counter stream promises. " if alike else
               ". The devices' runs of one seed are no closer than different seeds, so they did not start alike. ")
            + f"By step {last:,} the same seed differs by a median of {late['same seed: median'].min():.0f}-"
            f"{late['same seed: median'].max():.0f}%, against {late['different seeds: median'].min():.0f}-"
            f"{late['different seeds: median'].max():.0f}% between different seeds"
            + (". So the arithmetic, the one thing that differs, has taken them as far apart as new seeds. "
               if alike and apart else ". ")
            + f"Scored on the same test sequences, the GPU's seeds differ from the CPU's with p < {alpha} at "
            f"{len(differ)} of {n_tests} variant-lengths"
            + (" (" + "; ".join(f"{v} at {power_of_two(n)}, {d['diff']:+.1f} points" for v, n, d in differ) + ")"
               if differ else "")
            + f". Chance alone would give about {n_tests * alpha:.1f}. The intervals bound what the arithmetic "
            f"does to the mean accuracy at {seeds} seeds.")


def paired_table(differences: dict, labels: dict, name: str) -> pd.DataFrame:
    """paired_on_shared_blocks as a table: per variant and length, the difference with its 95% interval and p."""
    rows = [{"variant": labels[variant], "N": power_of_two(n), name: format_interval(d), "p": format_p(d["p"])}
            for variant, by_n in differences.items() for n, d in by_n.items()]
    return pd.DataFrame(rows).set_index(["variant", "N"])
