"""Chapter 11, beyond the paper: when does the claim hold?  One unstated setting changed at a time."""

from ..setups import probes, sensitivity
from ..setups.paper_tasks import ARGMAX, DICTIONARY, NAMES
from ..setups.params import require
from .record import Chapter, keys
from .scales import BOOK_TRAINING, PAPER_TRAINING, per_task, task_scale

# At the book's scale: ten seeds per variant and row (more where a row sets n_seeds) at chapters 4-5's book steps
# (book/scale.md gives the cost), every row of the notebook's own lists (all committed in results/book).
BOOK = {**BOOK_TRAINING, "n_seeds": 10, **per_task({task: {"steps": task.scales["book"]["steps"]} for task in (ARGMAX, DICTIONARY)})}
# At the paper's scale (the GPU queue's second item, bench/README.md): dictionary lookup only, 100 seeds x 10,000
# steps per variant and row: the constant rate (chapter 5's own paper-scale runs, shared through the store) and the
# settings the paper leaves unstated that decided the sign of +LN minus Baseline on the CPU.  The warm-up is a tenth
# of the steps, as in the book's row (our choice).  The last three rows are chapter 10's deep model (4 heads x 2 layers),
# whose loss climbs at a constant rate: at the constant rate they are chapter 10's own runs (shared through the store),
# with a cosine decay they ask whether a decaying rate stops the climb, and stopped at step 2,600 (where the constant
# rate's mean loss is lowest) they show the model before it.
PAPER = {**PAPER_TRAINING, "seed_group": 0, **per_task({DICTIONARY: task_scale(DICTIONARY, "paper")}), "argmax_rows": [],
         "dictionary_rows": [{}, {"lr_schedule": "cosine"}, {"lr_schedule": "drop", "drop_step": 2000},
                             {"lr_schedule": "cosine", "warmup_steps": 1000}, {"weight_decay": 0.1},
                             {"grad_clip": 1.0}, {"dropout": 0.1},
                             {"heads": 4, "layers": 2}, {"heads": 4, "layers": 2, "lr_schedule": "cosine"},
                             {"heads": 4, "layers": 2, "steps": 2600}]}


def compared_lengths_tested(P):
    require(all(n in P.eval_lengths for n in P.compared_lengths), "compared_lengths",
            f"lengths among eval_lengths ({P.eval_lengths})", P.compared_lengths)


CHAPTER = Chapter(
    "11_sensitivity", "When does the claim hold? One unstated setting at a time", keys("rows closest paper_scale"),
    row_tasks=NAMES,
    # each layer's attention in the rows of a model of several layers (chapter 10 shows it beside their loss)
    probes=probes.layers,
    # ten seeds in groups of 4 (the fastest CPU path), and half chapter 4's argmax test sequences: the map has many rows
    own_values=frozenset({"n_seeds", "seed_group", "n_eval_sequences[argmax]"}),
    profiles={
        "ci": {"n_seeds": 2, "seed_group": 0, "eval_lengths": [16, 64, 256], "compared_lengths": [64, 256],
               **per_task({ARGMAX: {"steps": 60, "n_eval_sequences": 32}, DICTIONARY: {"steps": 40, "n_eval_sequences": 32}}),
               "argmax_rows": [{}, {"hidden": 32}, {"encode_query": False}],
               "dictionary_rows": [{}, {"key_dim": 16, "value_dim": 16}, {"n_seeds": 3}]},
        "book": BOOK,
        "paper": PAPER,
    },
    checks=(compared_lengths_tested, sensitivity.check_rows),
)
