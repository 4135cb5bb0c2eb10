"""Chapter 11: which of the settings the paper leaves unstated decides whether +LN helps?

A *row* is one configuration: the book's defaults with a few settings changed, written as a
dict (`{}` is the defaults, `{"hidden": 64}` one change).  Each row trains the Baseline and +LN
on the same seeds, batches and test sequences (variants.train_and_evaluate), so their paired
difference at a test length is that row's answer; the Baseline's accuracy curve also says how
close the row comes to the paper's Baseline (its "fingerprint").
"""

import json
import math

import numpy as np
import torch

from ... import tasks
from ...stats import paired_difference
from . import paper, variants
from .params import settings_label
from ..storage import runs, store
from . import paper_tasks
from .params import MODEL_PARAMETERS, ROW_MODEL_FIELDS, ParameterError, Params, model_changes, row_parameters

PAIR = BASE, NORMED = variants.PAIR  # the two sides of every row, as its results name them
# What a row may change: the training and model settings, its seeds, and ln_affine (False: chapter 8's +std).
SHARED_SETTINGS = ("n_seeds", "steps", "batch_size", "lr", "weight_decay", "min_len", "max_len", "lr_schedule",
                   "warmup_steps", "drop_step", "adam_eps", "grad_clip", "dropout", *MODEL_PARAMETERS, *ROW_MODEL_FIELDS,
                   "ln_affine")


def tasks_with_rows(records: list) -> list[str]:
    """The tasks that have rows in `records`, in the registered tasks' order (a run may leave one task's list empty)."""
    return [task for task in row_parameters() if any(r["task"] == task for r in records)]


def trained_variants(P) -> tuple:
    """The variants a row trains for PAIR's two sides: the Baseline, and LayerNorm with or without its learned
    scale and shift (ln_affine)."""
    return BASE, (NORMED if P.get("ln_affine", True) else variants.ABLATION.plain)


def settings_of(task: str) -> tuple:
    return (*SHARED_SETTINGS, *tasks.get(task).settings)


label = settings_label  # a row as the tables and plots name it: 'defaults', or its changes ('hidden=64, lr=0.003')


def row_params(P, task: str, row: dict) -> Params:
    """One row's parameters: the chapter's, as chapters 4-5 name them for `task` (variants.task_params), with the
    row's changes on top."""
    return Params({**variants.task_params(P, task), **row})


_LAST_PLAN = [None, None]  # (the parameters last planned, as JSON; their plan): see check_rows


def check_rows(P) -> list[tuple[str, dict, Params]]:
    """[(task, row, its parameters)] for every row of every task, each checked by building the configs it would
    train, so that a bad row stops the chapter before anything is trained.  The chapter's check (page.configure)
    and its notebook's plan ask for the same parameters: the second asker gets the first's plan."""
    key = json.dumps(P, sort_keys=True, default=repr)
    if _LAST_PLAN[0] != key:
        _LAST_PLAN[:] = [key, _plan(P)]
    return _LAST_PLAN[1]


def _plan(P) -> list[tuple[str, dict, Params]]:
    if not any(P[name] for name in row_parameters().values()):
        raise ParameterError(f"{' and '.join(row_parameters().values())}: expected at least one row in all; each is []")
    plan = []
    for task, name in row_parameters().items():
        rows = P[name]
        for i, row in enumerate(rows):
            where = f"{name}[{i}]"  # each row is a dict: params.RULES checked that
            unknown = sorted(set(row) - set(settings_of(task)))
            if unknown:
                raise ParameterError(f"{where}: cannot change {unknown[0]!r}; a {task} row may change "
                                     f"{', '.join(settings_of(task))}")
            if not isinstance(row.get("ln_affine", True), bool):
                raise ParameterError(f"{where}: ln_affine must be true or false; got {row['ln_affine']!r}")
            if any(row == other for other in rows[:i]):
                raise ParameterError(f"{where}: {label(row)} is listed twice")
            plan.append((task, row, _checked(row_params(P, task, row), task, where)))
    return plan


def _checked(P: Params, task: str, where: str) -> Params:
    try:
        models = [variants.model_config(P, variants.task_config(P, task), v) for v in trained_variants(P)]
        variants.train_config(P)
    except (ValueError, TypeError) as exc:
        raise ParameterError(f"{where}: {exc}") from None
    limit = tasks.get(task).max_length(models[0].task)
    if limit is not None and max(P.eval_lengths) > limit:
        raise ParameterError(f"{where}: eval_lengths must be <= {limit} for this row's {task} task")
    return P


def stored_row(P: Params, task: str, row: dict, at, device="cpu") -> tuple[dict, dict] | None:
    """One row (chapter 11's parameters P) read from P.store_dir, for another chapter to show:
    (its row_record at the lengths `at`, training records {side: record}), or None where any of
    it is not stored.  Nothing is trained or evaluated."""
    P_row = _checked(row_params(P, task, row), task, f"row {label(row)}")
    found = stored_accuracy(P_row, task, device)
    if found is None:
        return None
    accuracy, training = found
    return row_record(task, row, P_row, accuracy, training, at), training


def stored_accuracy(P_row: Params, task: str, device="cpu") -> tuple[dict, dict] | None:
    """train_row's (accuracy, training) of one row's parameters (row_params), read from P_row.store_dir
    only; None where any of it is not stored.  Nothing is trained or evaluated."""
    try:
        with runs.stored_only():
            return train_row(P_row, task, torch.device(device))
    except store.StoreError:
        return None


def rows_of_model(P: Params, task: str, model: dict) -> list:
    """`task`'s rows (chapter 11's parameters P) whose model changes are exactly `model`, in the chapter's
    order: {"heads": 4, "layers": 2} gives the rows of chapter 10's deep model, {} the rows of the book's."""
    return [row for row in P[row_parameters()[task]] if model_changes(row) == model]


PENDING = "pending: not all of it committed yet (the scale page lists the GPU queue)"


def _paper_scale_found(P_paper: Params, at):
    """(task, row, its parameters, stored_row's (row_record, training records) or None where not committed)
    for each of the paper profile's rows, read from P_paper.store_dir."""
    for task, row, P_row in check_rows(P_paper):
        yield task, row, P_row, stored_row(P_paper, task, row, at, device="cuda")


def paper_scale_records(P_paper: Params, at) -> list:
    """The paper-profile rows (trained on a GPU), read once from P_paper.store_dir, for the page and its
    results.json: per row its task, label, changes and budget, and where committed all that row_record keeps
    at the lengths `at` (the paired difference, both variants' accuracy, the Baseline's distance to the
    paper's); difference None where the row is not committed.  Nothing is trained or evaluated."""
    return [{"task": task, "row": label(row), "changes": row, "n_seeds": P_row.n_seeds, "steps": P_row.steps,
             **(found[0] if found else {"difference": None})}
            for task, row, P_row, found in _paper_scale_found(P_paper, at)]


def paper_scale_sources(P_paper: Params) -> dict:
    """{"paper_scale/<task>/<row>/<side>": provenance} of the paper-profile rows committed, for the chapter's
    results.json (whose sources the summary counts training time by, per device)."""
    return {f"paper_scale/{task}/{label(row)}/{side}": record["provenance"]
            for task, row, _, found in _paper_scale_found(P_paper, P_paper.compared_lengths) if found
            for side, record in found[1].items()}


def budget(record: dict) -> str:
    """A row's seeds and steps, as the pages name a scale: '100 seeds x 10,000 steps'."""
    return f"{record['n_seeds']} seeds x {record['steps']:,} steps"


def train_row(P: Params, task: str, device) -> tuple[dict, dict]:
    """(accuracy {side: (seeds, lengths)}, training records {side: record}) of one row, its sides as PAIR names them."""
    trained = trained_variants(P)
    accuracy, training = variants.train_and_evaluate(P, variants.task_config(P, task), list(trained), ["fixed"], device)
    return ({side: accuracy[v] for side, v in zip(PAIR, trained)}, {side: training[v] for side, v in zip(PAIR, trained)})


def rms_distance(ours: dict, paper: dict) -> float | None:
    """Root mean square of ours - paper (percentage points) over the lengths both have; None if none."""
    common = [n for n in ours if n in paper]
    if not common:
        return None
    return math.sqrt(sum((ours[n] - paper[n]) ** 2 for n in common) / len(common))


def paper_row(task: str, variant: str) -> dict:
    """{N: the paper's accuracy (%)} of a variant, from Table 1 (argmax) or 2 (dictionary); {} for a task the paper
    does not report."""
    return {str(n): value for n, value in zip(paper.LENGTHS, paper_tasks.BY_NAME[task].accuracy.get(variant, []))}


def paper_gain(task: str, n: int) -> float | None:
    """The paper's +LN minus Baseline at N = n (points), or None where it reports no such length."""
    ln, base = (paper.column(paper_tasks.BY_NAME[task].accuracy, variant, n) for variant in (NORMED, BASE))
    return None if ln is None or base is None else ln - base


def row_record(task: str, row: dict, P: Params, accuracy: dict, training: dict, at) -> dict:
    """What results.json keeps of one row: its budget, both variants' mean accuracy (%) per
    length, the paired difference +LN - Baseline with its 95% interval and p at each N of
    `at`, the Baseline's RMS distance to the paper's Baseline, and each run's recorded training
    time (wall clock), the steps it timed, and device.
    Lengths are keyed as strings, as they read back from results.json."""
    base, ln = (100 * np.asarray(accuracy[v]) for v in PAIR)
    column = {str(n): j for j, n in enumerate(P.eval_lengths)}
    mean = {v: {n: float(a[:, j].mean()) for n, j in column.items()} for v, a in zip(PAIR, (base, ln))}
    return {
        "task": task, "row": label(row), "changes": row, "n_seeds": int(base.shape[0]), "steps": P.steps,
        "seed_group": P.seed_group, "accuracy": mean,
        "chance": 100 / variants.task_config(P, task).n_outputs,  # accuracy (%) of a uniform guess
        "difference": {str(n): paired_difference(base[:, column[str(n)]], ln[:, column[str(n)]])
                       for n in at if str(n) in column},
        "distance_to_paper": rms_distance(mean[BASE], paper_row(task, BASE)),
        "runs": {v: store.spec_hash(training[v]["spec"]) for v in PAIR},  # rows may share a run
        "training_s": {v: training[v]["provenance"]["wall_time_s"] for v in PAIR},
        # a run resumed from a checkpoint timed only the steps after it
        "timed_steps": {v: P.steps - training[v].get("resumed_from_step", 0) for v in PAIR},
        "trained_on": sorted({training[v]["provenance"]["device"] for v in PAIR}),
    }
