"""The introduction's key results: the paper's two headline tables at its own scale, read from the committed
runs when the book is built. Per task: +LN minus the Baseline with its 95% interval beside the paper's
difference, the verdict over the lengths beyond training (compare's rule), and whether our interval holds the
paper's difference, so that "reproduces" never stands for more than the numbers show."""

from dataclasses import dataclass

import numpy as np

from ..compare import beyond_training, compare
from ..experiments.chapters import BY_TASK
from ..experiments.reports.report import power_of_two
from ..experiments.setups import paper
from ..experiments.setups.paper_tasks import TASKS
from ..experiments.setups.variants import BASE, PAIR
from ..stats import paired_difference
from .paper_scale import latest_accuracy_runs

SHOWN = (2**10, 2**14)  # the two lengths the box shows: far beyond training, and the paper's longest


@dataclass(frozen=True)
class Headline:
    table: str            # the paper's table ("Table 1")
    title: str            # the task, as prose names it
    n_seeds: int
    steps: int
    device: str           # the GPU the Baseline trained on
    differences: dict     # {N: paired_difference of +LN minus the Baseline, points}
    paper: dict           # {N: the paper's +LN minus Baseline, points}
    baseline: dict        # {N: (ours, the paper's) Baseline accuracy, %}
    verdict: str          # compare's verdict over the lengths beyond training
    evidence: str         # compare's count behind it


def headline(task, store_dir) -> Headline:
    """One task's headline from the committed paper-scale runs of its chapter (chapter 4 or 5)."""
    _, P, accuracy, records = latest_accuracy_runs(BY_TASK[task.name].name, task.name, store_dir)
    base, ln = (100 * np.asarray(accuracy[v]) for v in PAIR)
    column = {n: j for j, n in enumerate(P.eval_lengths)}
    differences = {n: paired_difference(base[:, j], ln[:, j]) for n, j in column.items()}
    beyond = beyond_training(P.eval_lengths, P.max_len)
    evidence = compare({n: ln[:, column[n]].mean() for n in beyond}, {n: base[:, column[n]].mean() for n in beyond},
                       {n: differences[n]["p"] for n in beyond}, beyond)
    return Headline(task.table, task.title, P.n_seeds, P.steps, records[BASE]["provenance"]["device"],
                    {n: differences[n] for n in SHOWN}, {n: paper.difference(task.accuracy, PAIR, n) for n in SHOWN},
                    {n: (base[:, column[n]].mean(), paper.column(task.accuracy, BASE, n)) for n in SHOWN},
                    evidence.verdict(), evidence.text())


def headlines(store_dir) -> list[Headline]:
    return [headline(task, store_dir) for task in TASKS]


def interval(d: dict) -> str:
    return f"{d['diff']:+.1f} ({d['low']:+.1f} to {d['high']:+.1f})"


def size_words(h: Headline, n: int = SHOWN[-1]) -> str:
    """Whether our interval at N holds the paper's difference, and where our Baseline sits against the paper's."""
    d, theirs = h.differences[n], h.paper[n]
    holds = d["low"] <= theirs <= d["high"]
    ours_base, paper_base = h.baseline[n]
    return (f"at N = {power_of_two(n)} our interval {'holds' if holds else 'excludes'} the paper's {theirs:+.1f}; "
            f"our Baseline scores {ours_base:.1f}% there, the paper's {paper_base:.1f}%.")


def markdown(rows: list[Headline], pending_line: str) -> str:
    """The key-result box the introduction opens with."""
    first, devices = rows[0], sorted({h.device for h in rows})
    head = (f"| | +LN minus Baseline at N = {power_of_two(SHOWN[0])} | at N = {power_of_two(SHOWN[1])} | "
            f"the paper at N = {power_of_two(SHOWN[1])} | verdict over the lengths beyond training |")
    lines = [head, "|---|---|---|---|---|"]
    for h in rows:
        lines.append(f"| {h.table}, {h.title} | {interval(h.differences[SHOWN[0]])} | "
                     f"{interval(h.differences[SHOWN[1]])} | {h.paper[SHOWN[1]]:+.1f} | **{h.verdict}**: {h.evidence} |")
    scale = (f"{first.n_seeds} seeds per variant at the paper's steps, trained on {' and '.join(devices)}; points of "
             "accuracy with 95% intervals over seeds, paired by seed.")
    sizes = " ".join(f"{h.table}: {size_words(h)}" for h in rows)
    return "\n".join(["```{admonition} The answer at the paper's scale", ":class: tip", "", *lines, "",
                      scale, sizes, "", pending_line, "```"])
