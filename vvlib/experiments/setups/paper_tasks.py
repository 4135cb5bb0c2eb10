"""The paper's two tasks as the book sees them: one record each, so that the chapters, the
summary and the plans loop over TASKS instead of naming a task.

The science layer's registry (vvlib.tasks) says how to sample and score a task; a record here
adds what the book needs around it: where the paper reports it, and the steps and test sequences
its runs take at each named scale (ci, book, paper), which every chapter that trains it reads.
"""

import sys
from dataclasses import dataclass, field

from ... import tasks
from . import paper


@dataclass(frozen=True, eq=False)  # one record per task: equal only to itself, and a dict key
class PaperTask:
    name: str  # the science registry's name (vvlib.tasks.get(name))
    title: str  # as the prose says it
    table: str  # that table's name in the paper
    accuracy: dict  # the paper's numbers (experiments/setups/paper.py)
    ablation_table: str  # +std against the Baseline (chapter 8)
    ablation: dict
    ln_beats_std: bool  # whether the paper claims +LN more accurate than +std here (Table 6 claims they are equal)
    longer_table: str  # trained on up to 256 items (chapter 9)
    longer: dict
    # its runs at each named scale (default, ci, book, paper): steps, test sequences per length, the longer
    # training's seeds, and at the book's scale its longer training (chapters 4-5's long_* parameters)
    scales: dict = field(default_factory=dict)


ARGMAX_NAME, DICTIONARY_NAME = "argmax", "dictionary"  # the science registry's names, quoted here once

ARGMAX = PaperTask(
    ARGMAX_NAME, "argmax retrieval", "Table 1", paper.TABLE1_ARGMAX,
    "Table 3", paper.TABLE3_ARGMAX_ABLATION, True, "Table 4", paper.TABLE4_ARGMAX_LONG,
    # ci, a smoke test: 32 test sequences a length (testing up to 16,384 items dominates its time)
    {"default": {"steps": 3000, "n_eval_sequences": 256, "long_seeds": 4, "long_seed_chunk": 4},
     "ci": {"steps": 1000, "n_eval_sequences": 32},
     # the longer training at the paper's 100,000 steps: runs of 4 seeds (most of an hour each on 2 CPU cores),
     # added a sitting at a time
     "book": {"steps": 4000, "n_eval_sequences": 256,
              "long": {"long_steps": paper.STEPS[ARGMAX_NAME], "long_seeds": 12, "long_seed_chunk": 4, "long_seed_group": 4}},
     # 100 seeds in one run: on the counter stream its 100,000 steps fit one unit at the GPU check's real-loop
     # speed, where two runs of 50 would train about a third slower per model-step (bench/README.md)
     "paper": {"steps": paper.STEPS[ARGMAX_NAME], "n_eval_sequences": 1024}})
# the dictionary task learns in fewer steps, and its evaluation costs more per sequence
DICTIONARY = PaperTask(
    DICTIONARY_NAME, "dictionary lookup", "Table 2", paper.TABLE2_DICTIONARY,
    "Table 6", paper.TABLE6_DICTIONARY_ABLATION, False, "Table 5", paper.TABLE5_DICTIONARY_LONG,
    {"default": {"steps": 1500, "n_eval_sequences": 128, "long_seeds": 20, "long_seed_chunk": 20},
     "ci": {"steps": 400, "n_eval_sequences": 64},
     # the longer training at the paper's 10,000 steps and, like the paper, 100 seeds, stored as runs of 20 that
     # each fit in one sitting on one CPU core a variant, the two variants side by side (their records time them)
     "book": {"steps": 1500, "n_eval_sequences": 128,
              "long": {"long_steps": paper.STEPS[DICTIONARY_NAME], "long_seeds": 100, "long_seed_chunk": 20,
                       "long_seed_group": 4}},
     "paper": {"steps": paper.STEPS[DICTIONARY_NAME], "n_eval_sequences": 1024}})

TASKS = (ARGMAX, DICTIONARY)
NAMES = tuple(t.name for t in TASKS)
BY_NAME = {t.name: t for t in TASKS}
# the package that builds every chapter's parameters and profiles from TASKS when it is imported
BUILT_FROM_TASKS = "vvlib.book.chapters"


def register(task: PaperTask):
    """Add a task to every chapter that trains each task (8-11; the summary reads the paper's two).  Its sampling and scoring class
    must be registered first (vvlib.tasks.register), and this must run before the chapters are imported: their
    per-task parameters and profiles are built from TASKS then."""
    global TASKS, NAMES
    if task.name in BY_NAME:
        raise ValueError(f"task {task.name!r} is registered already")
    tasks.get(task.name)  # raises, naming the registered tasks, where it has no class
    if BUILT_FROM_TASKS in sys.modules:
        raise RuntimeError(f"register {task.name!r} before importing {BUILT_FROM_TASKS}: its chapters' parameters "
                           "are built from TASKS when it is imported")
    TASKS, NAMES = (*TASKS, task), (*NAMES, task.name)
    BY_NAME[task.name] = task
