"""Chapter 5's two devices side by side: each device's seeds by Welch's test at every length, and the CPU's test
set scored again on more sequences (is it an easy one?)."""

import numpy as np
import pandas as pd

from ...compare import format_interval, format_p, power_of_two
from ...stats import paired_difference, welch


def device_frame(runs: dict, shown) -> pd.DataFrame:
    """Per-seed accuracy (%) of the same variants trained on several devices, in long form for a
    figure: runs {device label: (lengths, {variant: (seeds, lengths)})}; rows at the lengths in
    `shown` that every device was tested at."""
    rows = []
    for where, (tested, accuracy) in runs.items():
        for variant, per_seed in accuracy.items():
            for n in shown:
                column = np.asarray(per_seed)[:, list(tested).index(n)]
                rows += [{"device": where, "variant": variant, "N": n, "accuracy": 100 * a} for a in column]
    return pd.DataFrame(rows)


def device_table(frame: pd.DataFrame, first: str, second: str, labels: dict) -> pd.DataFrame:
    """Each variant and length: the two devices' mean ± sd (seeds), second minus first and
    Welch's p-value (the devices' seeds are independent runs, not pairs)."""
    rows = []
    for (variant, n), group in frame.groupby(["variant", "N"], sort=False):
        w = welch(group[group.device == first].accuracy, group[group.device == second].accuracy)
        rows.append({"variant": labels[variant], "N": power_of_two(n),
                     first: f"{w['mean_a']:.1f} ± {w['sd_a']:.1f} ({w['n_a']})",
                     second: f"{w['mean_b']:.1f} ± {w['sd_b']:.1f} ({w['n_b']})",
                     f"{second} minus {first}": f"{w['diff']:+.1f}", "Welch p": format_p(w["p"])})
    return pd.DataFrame(rows).set_index(["variant", "N"])


def split_blocks(blocks, scored_blocks: int, block: int) -> tuple:
    """Per-seed accuracy (%) on a test set's first `scored_blocks` blocks and on the others, from the
    right answers per block (seeds, lengths, blocks) of `block` sequences each."""
    blocks = np.asarray(blocks, dtype=float)
    scored, rest = blocks[..., :scored_blocks], blocks[..., scored_blocks:]
    return 100 * scored.sum(-1) / (scored_blocks * block), 100 * rest.sum(-1) / (rest.shape[-1] * block)


def recheck_summary(blocks: dict, lengths, scored_blocks: int, block: int) -> dict:
    """{variant: {N: {"seeds", "scored", "others", "difference"}}}: the mean accuracy (%) over seeds on the
    test sequences a chapter scores (the first scored_blocks blocks) and on the others, and others minus
    scored per seed (paired_difference).  blocks: {variant: right answers (seeds, lengths, blocks)}."""
    summary = {}
    for variant, counts in blocks.items():
        scored, rest = split_blocks(counts, scored_blocks, block)
        summary[variant] = {str(n): {"seeds": len(scored), "scored": float(scored[:, j].mean()),
                                     "others": float(rest[:, j].mean()),
                                     "difference": paired_difference(scored[:, j], rest[:, j])}
                            for j, n in enumerate(lengths)}
    return summary


def recheck_table(summary: dict, scored: int, others: int, labels: dict) -> pd.DataFrame:
    """recheck_summary as a table; scored, others: how many test sequences each part holds."""
    rows = [{"variant": labels[variant], "N": power_of_two(int(n)), "seeds": r["seeds"],
             f"scored ({scored})": round(r["scored"], 1), f"others ({others})": round(r["others"], 1),
             "others minus scored": format_interval(r["difference"]),
             "p": format_p(r["difference"]["p"])}
            for variant, by_length in summary.items() for n, r in by_length.items()]
    return pd.DataFrame(rows).set_index(["variant", "N"])
