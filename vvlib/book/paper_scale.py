"""A chapter's results at its `paper` profile, read from a results store (results/paper in the book)
where the GPU queue has committed them, never trained or evaluated here: the opening that says what
of them is committed, and per kind of chapter the runs, probes and slopes a page shows beside its own.
"""

from dataclasses import replace

import pandas as pd
import torch

from .. import beyond
from .chapters import ARGMAX_RETRIEVAL, DISPERSION, get_chapter
from .chapters.c07_dispersion import sharpness_probe
from .chapters.c10_beyond import slopes_probe
from .gpu_queue import plan
from ..experiments.records.scales import EARLIER_PAPER_RUN, PAPER_SCALE_STORE, PAPER_TRAINING
from ..experiments.setups import variants
from ..experiments.setups.params import task_value
from ..experiments.setups.paper import STEPS as PAPER_STEPS
from ..experiments.setups.paper_tasks import ARGMAX, DICTIONARY
from ..experiments.storage.runs import stored_only
from ..experiments.storage.store import REPO_ROOT, StoreError
from .runner import resolved


def entries(name: str, store_dir=REPO_ROOT / PAPER_SCALE_STORE) -> tuple[list, list]:
    """([committed], [pending]): the labels of chapter `name`'s store entries at its `paper` profile (the
    GPU queue's, python -m vvlib paper --plan) that store_dir holds and does not."""
    P = resolved(name, "paper", {"store_dir": str(store_dir)})
    jobs = plan.chapter_jobs(name, P, torch.device("cuda"))
    return [job.label for job in jobs if job.path.exists()], [job.label for job in jobs if not job.path.exists()]


def pending(name: str, P, store_dir="", shows: str = "") -> str:
    """The opening of a chapter whose paper-scale results this page does not show (or shows only `shows` of): the
    scale of its numbers beside the paper's, and what of its paper-scale entries store_dir holds (results/paper)."""
    committed, waiting = entries(name, store_dir or REPO_ROOT / PAPER_SCALE_STORE)
    if committed:
        shown = f"this page shows some of them ({shows})" if shows else "this page does not show them yet"
        share = f"{len(committed)} of {len(committed) + len(waiting)}" if waiting else f"all {len(committed)}"
        listed = f"Committed: {'; '.join(committed)}." if len(committed) <= 3 else ""
        queue = (f"**Paper-scale results of this chapter are {'partly ' if waiting else ''}committed, and {shown}.** "
                 f"{share.capitalize()} store entries of its `paper` profile are in {PAPER_SCALE_STORE}/"
                 f"{'; the rest wait in the GPU queue' if waiting else ''}. {listed} ")
    else:
        queue = (f"**No paper-scale results for this chapter yet** (none of the {len(waiting)} store entries of its "
                 f"`paper` profile is committed; they wait in the GPU queue, `python -m vvlib paper --plan`). ")
    tasks = list(P["steps"]) if isinstance(P["steps"], dict) else []  # a two-task chapter's: one value per task
    steps = (" and ".join(f"{P['steps'][t]:,}{' steps' if i == 0 else ''} ({t})" for i, t in enumerate(tasks))
             if tasks else f"{P['steps']:,} steps")
    longer = [f"{task_value(P, 'long_seeds', t)} seeds x {task_value(P, 'long_steps', t):,} steps ({t})" for t in tasks
              if P.get("long_steps") and task_value(P, "long_steps", t)]
    longer = f" A longer training runs {' and '.join(longer)}." if longer else ""
    if committed and shows:  # what is shown at the paper's scale needs no caveat; the rest does
        caveat = ("Read the verdicts of those runs as provisional; the ones at the paper's scale are named as such."
                  if not waiting else "Read those verdicts as provisional until the rest of its `paper` profile is "
                                      "committed.")
    else:
        caveat = "Read its verdicts as provisional until this chapter runs at its `paper` profile."
    own = " (the rest of the page; each figure names its scale)" if committed and shows else ""
    return (f"{queue}This page's own runs{own} have {P['n_seeds']} seeds per variant trained for {steps}.{longer} "
            f"The paper trains {PAPER_TRAINING['n_seeds']} seeds for {PAPER_STEPS[ARGMAX.name]:,} steps on "
            f"{ARGMAX.title} and {PAPER_STEPS[DICTIONARY.name]:,} on {DICTIONARY.title}; too few steps can reverse a "
            f"verdict. {caveat}")


def accuracy_runs(name: str, task: str, store_dir, draws: str = EARLIER_PAPER_RUN["draws"]):
    """Chapter `name`'s Baseline and +LN at its `paper` profile with `draws` (default: the earlier run's), from
    store_dir: (parameters, per-seed accuracy {run name: (seeds, lengths)} with fixed and adaptive temperature,
    {variant: run record}).  StoreError where they are not committed."""
    stream = EARLIER_PAPER_RUN if draws == EARLIER_PAPER_RUN["draws"] else {"draws": draws}  # its seeds' runs too
    P = resolved(name, "paper", {"store_dir": str(store_dir), **stream})
    accuracy, records = variants.stored_train_and_evaluate(P, variants.task_config(P, task), ["baseline", "layernorm"],
                                                           ["fixed", "adaptive"], "cuda")
    return P, accuracy, records


def latest_accuracy_runs(name: str, task: str, store_dir):
    """accuracy_runs of the paper profile's own stream (PAPER_TRAINING's draws) where committed,
    else of the earlier run: (its draws, accuracy_runs' three)."""
    for draws in dict.fromkeys((PAPER_TRAINING["draws"], EARLIER_PAPER_RUN["draws"])):
        try:
            return draws, *accuracy_runs(name, task, store_dir, draws)
        except StoreError:
            if draws == EARLIER_PAPER_RUN["draws"]:
                raise


def accuracy_of_probed(records: dict, store_dir) -> tuple | None:
    """Chapter 4's scores of the very runs a paper-scale probe read (its {variant: training record}): (the lengths
    scored, {variant: per-seed accuracy (seeds, lengths)} at fixed temperature), or None where chapter 4's
    committed evaluation is of other runs or not committed."""
    try:
        _, P, accuracy, scored = latest_accuracy_runs(ARGMAX_RETRIEVAL.name, ARGMAX.name, store_dir)
    except StoreError:
        return None
    if any(v not in scored or scored[v]["spec"] != record["spec"] for v, record in records.items()):
        return None
    return P.eval_lengths, {v: accuracy[v] for v in records}


def probe(name: str, store_dir=REPO_ROOT / PAPER_SCALE_STORE, needed=None) -> tuple | None:
    """Chapter `name`'s probe of argmax retrieval's runs (chapters 6 and 7) at its `paper` profile, where every part
    of the variants `needed` is in store_dir (default: its record's `paper_scale_needs`, else all): (parameters, the
    probe's tables, {variant: training record}), with the other variants' committed parts too; else None."""
    chapter, P = get_chapter(name), resolved(name, "paper", {"store_dir": str(store_dir)})
    (_, probe), *_ = chapter.probes(P, "cuda")  # the main runs' probe (chapter 6's longer runs' come after it)
    committed = [v for v in probe.models if all(part.stored(P.store_dir) for part in probe.parts if part.variant == v)]
    if not set(needed or chapter.paper_scale_needs or probe.models) <= set(committed):
        return None
    probe = replace(probe, parts=tuple(part for part in probe.parts if part.variant in committed))
    with stored_only():
        try:
            return P, probe.tables(P.store_dir, "cuda"), probe.records()
        except StoreError:
            return None


def probe_entries(name: str, store_dir=REPO_ROOT / PAPER_SCALE_STORE) -> list:
    """The store entries (tables.json) of every part of chapter `name`'s probes at its `paper` profile in store_dir,
    stored or not: what the GPU queue's units write for them (pending.units_computing finds those units)."""
    P = resolved(name, "paper", {"store_dir": str(store_dir)})
    return [part.folder(P.store_dir) / "tables.json" for _, probe in get_chapter(name).probes(P, "cuda")
            for part in probe.parts]


def sharpness(store_dir=REPO_ROOT / PAPER_SCALE_STORE, P=None, device="cuda") -> tuple:
    """Chapter 7's sharpness test on chapter 4's main runs at its `paper` profile (or at P, a test's tiny one), read
    from store_dir (P's): (P, the probe, its table, {variant: training record}) where every part of both variants is
    committed, else (P, the probe, None, None)."""
    P = P or resolved(DISPERSION.name, "paper", {"store_dir": str(store_dir)})
    probe = sharpness_probe(P, device, "main")
    if not all(part.stored(P.store_dir) for part in probe.parts):
        return P, probe, None, None
    with stored_only():
        return P, probe, probe.tables(P.store_dir, device)["sharpness"], probe.records()


def trained(name: str, store_dir=REPO_ROOT / PAPER_SCALE_STORE, needed=None) -> tuple:
    """A two-task chapter's (8, 9, 10) runs at its `paper` profile in store_dir: (parameters, {task: (its parameters,
    accuracy {variant: (seeds, lengths)} at the chapter's temperatures, {variant: training record})}) for each task
    whose every run and evaluation of the variants `needed` is committed (default: its record's `paper_scale_needs`,
    else all), with the chapter's other variants that are committed, in the chapter's order."""
    chapter, P = get_chapter(name), resolved(name, "paper", {"store_dir": str(store_dir)})
    work = chapter.work
    needed = list(needed or chapter.paper_scale_needs or work.variants)
    found = {}
    for task in work.tasks:
        P_task = variants.task_params(P, task)
        accuracy, records = {}, {}
        for chosen in [needed] + [[v] for v in work.variants if v not in needed]:  # the others where they are in
            try:
                more = variants.stored_train_and_evaluate(P_task, variants.task_config(P_task, task), chosen,
                                                          list(work.temperatures), "cuda")
            except StoreError:
                if chosen is needed:
                    break
                continue
            accuracy, records = accuracy | more[0], records | more[1]
        if records:
            shown = [v for v in work.variants if v in records]
            found[task] = (P_task, {variants.run_name(v, t): accuracy[variants.run_name(v, t)] for v in shown
                                    for t in work.temperatures}, {v: records[v] for v in shown})
    return P, found


def slopes(name: str, tasks: dict, store_dir=REPO_ROOT / PAPER_SCALE_STORE) -> tuple[pd.DataFrame, object]:
    """Chapter `name`'s committed paper-scale slope probes (chapter 10): (a table, one row per variant of tasks
    {task: [variant]} and one column per task, the mean over seeds of the log-log slope where every part of that
    variant's probe is in store_dir, else None; the paper profile's parameters)."""
    P = resolved(name, "paper", {"store_dir": str(store_dir)})
    found = {}
    with stored_only():
        for task, chosen in tasks.items():
            P_task = variants.task_params(P, task)
            for variant in chosen:
                try:
                    frame = slopes_probe(P, P_task, task, [variant], "cuda").tables(P.store_dir, "cuda")["slopes"]
                except StoreError:
                    continue
                found.setdefault(task, {})[variant] = beyond.slope_summary(frame)[variant]
    rows = list(dict.fromkeys(v for chosen in tasks.values() for v in chosen))
    return pd.DataFrame({task: [found.get(task, {}).get(v) for v in rows] for task in tasks}, index=rows), P
