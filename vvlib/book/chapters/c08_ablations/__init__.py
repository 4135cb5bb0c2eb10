"""Chapter 8: the paper's Tables 3 and 6, standardization without parameters against layer normalization."""

from ....experiments.setups.paper_tasks import ARGMAX, DICTIONARY, NAMES
from ....experiments.setups.variants import ABLATION
from ....experiments.records import checks
from ....experiments.records.declare import each_task, param, shared, shared_each
from ....experiments.records.record import Chapter, Work, keys
from ....experiments.records.scales import (BOOK_TRAINING, CI_LONG, CI_SEEDS, PAPER_BOTH_TASKS, PAPER_SCALE_STORE,
                                            both_tasks, per_task)

# its parameters: the notebook's `parameters` cell is written from these (declare.py)
PARAMETERS = (
    shared("profile"),
    shared("n_seeds", "independent training runs per variant and task (the paper: 100)"),
    each_task("steps", "AdamW steps per run, per task (chapters 4 and 5's defaults, so their models are reused)"),
    each_task("seed_chunk", "seeds per stored run, per task, 0: all in one (chapters 4 and 5's)"),
    each_task("long_steps", "a longer training of the three variants beside the main one: AdamW steps per run, per "
                            "task (chapters 4-5's long_steps, so their Baseline and +LN runs are reused; the paper: "
                            "100,000 and 10,000); 0 skips a task's"),
    each_task("long_seeds", "seeds of the longer training, per task (chapters 4-5's long_seeds)"),
    each_task("long_seed_chunk", "seeds per stored run of it, per task (chapters 4-5's long_seed_chunk)"),
    shared("long_seed_group", "seed_group of the longer training (chapters 4-5's long_seed_group)"),
    *shared_each("batch_size", "hidden", "n_classes", "n_keys", "n_values", "min_len", "max_len", "lr", "weight_decay",
                 "eval_lengths"),
    each_task("n_eval_sequences"),
    *shared_each("seed", "eval_seed", "checkpoint_every", "seed_group", "draws", "tf32", "device", "store_dir"),
    shared("paper_scale_dir", "a results store holding this chapter's runs at the paper profile (trained on a "
                              "GPU), each task's shown first once its Baseline and +std are in (+LN beside them "
                              "where it is); \"\" leaves them out (the book profile: results/paper)"),
    param("output_dir", "_output/08_ablations", "results.json goes here (relative paths: from the repository root)"),
)

CHAPTER = Chapter(
    "08_ablations", "Ablations: standardization vs layer normalization (Tables 3 and 6)",
    keys("relative_gain p_value_ln_vs_std p_value_vs_baseline accuracy ln_minus_std long", "paper_scale"),
    Work(NAMES, ABLATION.variants, long=True),
    # at the paper's scale a task is shown once its Baseline and +std are committed (+std against the Baseline is a
    # claim of its own in Tables 3 and 6); +LN, chapters 4-5's runs, joins them when the GPU queue has committed it
    paper_scale_needs=(ABLATION.base, ABLATION.plain),
    profiles={
        "ci": {"n_seeds": CI_SEEDS, **both_tasks("ci"), **per_task({ARGMAX: CI_LONG, DICTIONARY: CI_LONG})},
        "book": {**BOOK_TRAINING, **both_tasks("book"),
                 # +std is trained for chapter 5's first run of 20 seeds only
                 **per_task({DICTIONARY: {**DICTIONARY.scales["book"]["long"], "long_seeds": 20}}),
                 "paper_scale_dir": PAPER_SCALE_STORE},
        "paper": PAPER_BOTH_TASKS,
    },
    checks=(checks.keys_cover_lengths, checks.paper_scale_store_exists),
    params=PARAMETERS,
    reader=('n_seeds', 'steps', 'long_steps', 'lr', 'max_len', 'eval_lengths'),
)
