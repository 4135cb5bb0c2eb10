"""The training chapters' default parameters, each value written once.

Papermill reads a chapter's parameters only from literals in its notebook's `parameters` cell,
so chapters 4-10 all spell out `lr`, `hidden`, `steps` and the rest.  Their values are defined
here instead: a parameter that is a field of a config (TrainConfig.lr, ModelConfig.hidden, ...)
takes that field's default, the others the tables below.  `python -m vvlib sync-defaults`
writes them into the cells; tests/test_shared_settings.py fails when a cell holds another value.
"""

import dataclasses

from ..evaluate import EvalConfig
from ..experiments.chapters import TRAINING, get_chapter
from ..experiments.paper_tasks import TASKS
from ..experiments.params import plain_name, write_cell_values
from ..experiments.variants import EVAL_FIELDS, TRAIN_FIELDS
from ..model import ModelConfig
from ..tasks import TaskConfig
from ..train import TrainConfig


def _field_defaults(config) -> dict:
    return {f.name: f.default for f in dataclasses.fields(config) if f.default is not dataclasses.MISSING}


_TRAIN, _MODEL, _TASK, _EVAL = map(_field_defaults, (TrainConfig, ModelConfig, TaskConfig, EvalConfig))

# Shared by both tasks.  A chapter's models are found in the store only when its settings equal
# those of the chapter that trained them, which these shared values guarantee by default.
TRAINING_DEFAULTS = {
    **{name: _TRAIN[TRAIN_FIELDS[name]] for name in ("batch_size", "lr", "weight_decay", "min_train_len", "max_train_len",
                                                     "seed", "checkpoint_every", "seed_group", "draws")},
    **{name: _MODEL[name] for name in ("hidden", "encoder_layers", "readout_layers", "key_dim", "value_dim",
                                       "encode_query")},
    **{name: _TASK[name] for name in ("n_classes", "n_keys", "n_values")},
    "eval_lengths": list(_EVAL[EVAL_FIELDS["eval_lengths"]]), "eval_seed": _EVAL[EVAL_FIELDS["eval_seed"]],
    # a few minutes of 2 CPU cores per chapter; the profiles set the published and the paper's scale
    "n_seeds": 8,
    "store_dir": "results/store",
    "long_steps": 0,  # no longer training unless asked for
    "long_seed_group": 4,  # 4 seeds per batch trains faster on a CPU
    "ladder_lengths": [16, 256, 2048, 16384],
    "recheck_sequences": 0,  # the longer training's second evaluation: none unless a profile asks
    "recheck_from_seed": 0,
    "recheck_lengths": [1024, 16384],  # the paper's 2^10 and 2^14
    "counter_seeds": 0,  # the longer training again on the counter stream: none unless a profile asks
    "paper_scale_dir": "",  # chapters 4-5's paper-scale section: off unless a profile names a store
    "dynamics_rows": [],  # chapters 4-5's measured runs: none unless a profile asks
    "dynamics_seeds": 4,
    "dynamics_every": 100,
}

# What differs between the tasks.  A one-task chapter names these as written; chapters 8-10
# name them per task (argmax_steps, argmax_eval_sequences: params.PER_TASK_NAMES).
TASK_DEFAULTS = {t.name: {"n_eval_sequences": _EVAL[EVAL_FIELDS["n_eval_sequences"]], **t.defaults} for t in TASKS}

# The chapters that train or reuse models, with their tasks (their records say which).
TRAINING_CHAPTERS = {name: r.tasks for name, r in TRAINING.items()}


def default_of(chapter: str, name: str):
    """The default this module defines for a chapter's parameter, or KeyError if it defines none."""
    if name in TRAINING[chapter].own_values:  # the chapter sets it itself (its record says why)
        raise KeyError(name)
    tasks = TRAINING_CHAPTERS[chapter]
    if len(tasks) == 1:
        return {**TRAINING_DEFAULTS, **TASK_DEFAULTS[tasks[0]]}[name]
    task = name.partition("_")[0]
    if task in tasks and plain_name(name) != name:  # argmax_steps: argmax's steps
        return {**TRAINING_DEFAULTS, **TASK_DEFAULTS[task]}[plain_name(name)]
    return TRAINING_DEFAULTS[name]


def expected_cell_values(chapter: str) -> dict:
    """{name: value} for each parameter of the chapter's cell that this module defines."""
    expected = {}
    for name in get_chapter(chapter).parameters():
        try:
            expected[name] = default_of(chapter, name)
        except KeyError:
            pass  # the chapter's own parameter
    return expected


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b  # 1 == 1.0, but a cell's 1 would be read as an int


def differences() -> list[tuple[str, str, object, object]]:
    """(chapter, name, value in the cell, value defined here) wherever the two differ."""
    found = []
    for chapter in TRAINING_CHAPTERS:
        cell = get_chapter(chapter).parameters()
        found += [(chapter, name, cell[name].default, value)
                  for name, value in expected_cell_values(chapter).items() if not _same(cell[name].default, value)]
    return found


def sync() -> list[tuple[str, str, object, object]]:
    """Write the defined values into every cell that differs; returns what was changed."""
    changed = differences()
    for chapter in {c for c, *_ in changed}:
        write_cell_values(get_chapter(chapter).notebook, {name: new for c, name, _, new in changed if c == chapter})
    return changed
