"""The paper's two tasks as the book sees them: one record each, so that the chapters, the
summary and the plans loop over TASKS instead of naming a task.

The science layer's registry (vvlib.tasks) says how to sample and score a task; a record here
adds what the book needs around it: where the paper reports it, and the notebook defaults
that differ between tasks (the chapter that reproduces its table names it: chapters/).
"""

from dataclasses import dataclass, field

from . import paper


@dataclass(frozen=True)
class PaperTask:
    name: str  # the science registry's name (vvlib.tasks.get(name))
    title: str  # as the prose says it
    table: str  # that table's name in the paper
    accuracy: dict  # the paper's numbers (experiments/paper.py)
    ablation_table: str  # +std against the Baseline (chapter 8)
    ablation: dict
    ln_beats_std: bool  # whether the paper claims +LN more accurate than +std here (Table 6 claims they are equal)
    longer_table: str  # trained on up to 256 items (chapter 9)
    longer: dict
    defaults: dict = field(default_factory=dict)  # notebook defaults that differ between tasks (book/defaults.py)


ARGMAX = PaperTask(
    "argmax", "argmax retrieval", "Table 1", paper.TABLE1_ARGMAX,
    "Table 3", paper.TABLE3_ARGMAX_ABLATION, True, "Table 4", paper.TABLE4_ARGMAX_LONG,
    {"steps": 3000, "long_seeds": 4, "long_seed_chunk": 4,  # test sequences: EvalConfig's default
     "ladder_steps": [500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000]})
# the dictionary task learns in fewer steps, and its evaluation costs more per sequence
DICTIONARY = PaperTask(
    "dictionary", "dictionary lookup", "Table 2", paper.TABLE2_DICTIONARY,
    "Table 6", paper.TABLE6_DICTIONARY_ABLATION, False, "Table 5", paper.TABLE5_DICTIONARY_LONG,
    {"steps": 1500, "n_eval_sequences": 128, "long_seeds": 20, "long_seed_chunk": 20,
     "ladder_steps": [500, 1000, 2000, 5000, 10_000]})

TASKS = (ARGMAX, DICTIONARY)
NAMES = tuple(t.name for t in TASKS)
BY_NAME = {t.name: t for t in TASKS}
