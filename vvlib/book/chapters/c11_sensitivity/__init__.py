"""Chapter 11, beyond the paper: when does the claim hold?  One unstated setting changed at a time."""

from ....experiments.setups import probes, sensitivity
from ....experiments.setups.paper_tasks import ARGMAX, DICTIONARY, NAMES, TASKS
from ....experiments.setups.params import Param, require
from ....experiments.records.declare import each_task, param, shared, shared_each
from ....experiments.records.record import Chapter, keys
from ....experiments.records.scales import BOOK_TRAINING, PAPER_TRAINING, per_task, task_scale

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


# the settings changed one at a time on both tasks: the first rows of each task's list
BOTH_TASKS_ROWS = [
    {},
    {"min_len": 1},
    {"min_len": 12},
    {"hidden": 64},
    {"hidden": 256},
    {"encoder_layers": 1},
    {"encoder_layers": 3},
    {"readout_layers": 1},
    {"readout_layers": 3},
    {"lr": 0.0003},
    {"lr": 0.003},
    {"weight_decay": 0.0},
    {"weight_decay": 0.01},
    {"batch_size": 32},
    {"batch_size": 512},
]

# each task's own rows: the settings above, then the rows that only it runs
ARGMAX_ROWS = [
    *BOTH_TASKS_ROWS,
    {"n_classes": 100},
    {"encode_query": False},
    {"ln_affine": False},
    {"n_seeds": 20},
    {"lr_schedule": "cosine", "warmup_steps": 400},
    {"grad_clip": 1.0},
    {"dropout": 0.1},
    {"attention": "torch"},
    {"grad_clip": 1.0, "n_seeds": 20},
]
DICTIONARY_ROWS = [
    *BOTH_TASKS_ROWS,
    {"encode_query": False},
    {"key_dim": 16, "value_dim": 16},
    {"key_dim": 256, "value_dim": 256},
    {"ln_affine": False},
    {"n_seeds": 20},
    {"min_len": 1, "n_seeds": 20},
    {"ln_affine": False, "n_seeds": 20},
    {"key_dim": 256, "value_dim": 256, "n_seeds": 20},
    {"steps": 10000, "lr_schedule": "cosine"},
    {"lr_schedule": "cosine", "warmup_steps": 150},
    {"grad_clip": 1.0},
    {"attention": "torch"},
    {"query_table": True},
    {"dropout": 0.1},
    {"lr_schedule": "cosine", "warmup_steps": 150, "lr": 0.0003},
    {"grad_clip": 1.0, "lr": 0.0003},
    {"attention": "torch", "lr": 0.0003},
    {"dropout": 0.1, "lr": 0.0003},
    {"query_table": True, "lr": 0.0003},
    {"steps": 10000, "lr_schedule": "drop", "drop_step": 2000},
    {"steps": 10000, "weight_decay": 0.1},
    {"grad_clip": 1.0, "n_seeds": 20},
    {"dropout": 0.1, "n_seeds": 20},
    {"steps": 10000, "weight_decay": 0.1, "n_seeds": 20},
    {"heads": 4, "layers": 2, "steps": 10000, "n_seeds": 8},
    {"heads": 4, "layers": 2, "steps": 10000, "lr_schedule": "cosine", "n_seeds": 8},
    {"heads": 4, "layers": 2, "steps": 2600, "n_seeds": 8},
    {"heads": 4, "layers": 2, "norm_layers": "last", "steps": 10000, "n_seeds": 8},
    {"heads": 4, "layers": 2, "norm_layers": "last", "steps": 10000, "lr_schedule": "cosine", "n_seeds": 8},
]
# each task's own list and what it holds (a task registered beside these two runs BOTH_TASKS_ROWS)
OWN_ROWS = {
    ARGMAX: (ARGMAX_ROWS,
             "argmax configurations: each a dict of settings changed from the values above ({}: none; ln_affine "
             "False: the +LN side without its learned scale and shift, i.e. +std; n_seeds: more seeds for a "
             "borderline row; the last five: the second round, as for dictionary lookup, its clipping row borderline "
             "at 10 seeds and again with 20)"),
    DICTIONARY: (DICTIONARY_ROWS,
                 "dictionary configurations, likewise (then four borderline rows, p near 0.05, again with 20 seeds; then "
                 "the second round: settings the paper does not name, alone and each with lr 0.0003; then two more "
                 "changes that stop chapter 5's loss rise, at the paper's 10,000 steps; then three later rows borderline "
                 "at 10 seeds, again with 20; then chapter 10's deep model, 4 heads x 2 layers, on 8 seeds: 10,000 steps "
                 "at a constant and a cosine rate, does a decaying rate stop its loss climb?, and the constant rate "
                 "stopped at step 2,600, before the climb; then +LN's norm after its last layer only, at both rates: is "
                 "the first layer's norm what sets the deep +LN apart?)"),
}


def rows_param(task) -> Param:
    """A task's list of rows (its name: params.row_parameters)."""
    rows, help_text = OWN_ROWS.get(task, (BOTH_TASKS_ROWS, f"{task.name} configurations, as for argmax retrieval"))
    return param(f"{task.name}_rows", rows, help_text)


def layer_probes(P, device) -> list:
    """Chapter 11's probes: [(task, probes.layer_probe(...))] for each row of a model of several layers (chapter 10's
    deep model), in the chapter's order."""
    return [(task, probe) for task, row, P_row in sensitivity.check_rows(P)
            for probe in [probes.layer_probe(P_row, task, device)] if probe is not None]


# its parameters: the notebook's `parameters` cell is written from these (declare.py)
PARAMETERS = (
    shared("profile", "named parameter set: default (these values), ci (a few minutes on 2 CPU cores) or book (the "
                      "published page: every row below at the book's scale, all committed in results/book); a -p "
                      "value wins over the profile"),
    param("n_seeds", 10, "seeds per variant and row; Baseline and +LN share them"),
    each_task("steps", "AdamW steps of a row that does not set steps, per task"),
    shared("batch_size"),
    shared("hidden"),
    param("encoder_layers", 2, "Linear layers of the item encoder"),
    param("readout_layers", 2, "Linear layers of the readout MLP"),
    param("encode_query", True, "the query through the item encoder (our choice); False: its features go straight "
                                "to W_Q"),
    *shared_each("n_classes", "n_keys", "n_values"),
    param("key_dim", 64, "dictionary: size of a key embedding"),
    param("value_dim", 64, "dictionary: size of a value embedding"),
    *shared_each("min_len", "max_len", "lr", "weight_decay"),
    *(rows_param(task) for task in TASKS),
    shared("eval_lengths"),
    param("compared_lengths", [1024, 16384], "lengths at which each row's +LN minus Baseline is reported"),
    each_task("n_eval_sequences", "test sequences per length, per task", 128),
    *shared_each("seed", "eval_seed", "checkpoint_every"),
    param("seed_group", 4, "seeds trained in one batch (4 trains fastest on a CPU; recorded in each run's "
                           "settings)"),
    *shared_each("draws", "tf32", "device", "store_dir"),
    param("output_dir", "_output/11_sensitivity", "results.json goes here (relative paths: from the repository "
                                                  "root)"),
)

CHAPTER = Chapter(
    "11_sensitivity", "When does the claim hold? One unstated setting at a time", keys("rows closest paper_scale"),
    row_tasks=NAMES,
    # each layer's attention in the rows of a model of several layers (chapter 10 shows it beside their loss)
    probes=layer_probes,
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
    params=PARAMETERS,
    reader=('n_seeds', 'steps', 'argmax_rows', 'dictionary_rows', 'compared_lengths', 'lr'),
)
