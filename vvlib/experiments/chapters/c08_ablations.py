"""Chapter 8: the paper's Tables 3 and 6, standardization without parameters against layer normalization."""

from ..setups.paper_tasks import ARGMAX, DICTIONARY, NAMES
from . import checks
from .record import Chapter, Work, keys
from .scales import (BOOK_TRAINING, CI_LONG, CI_SEEDS, PAPER_BOTH_TASKS, PAPER_SCALE_STORE, both_tasks, longer,
                     per_task)

CHAPTER = Chapter(
    "08_ablations", "Ablations: standardization vs layer normalization (Tables 3 and 6)",
    keys("relative_gain p_value_ln_vs_std p_value_vs_baseline accuracy ln_minus_std long", "paper_scale"),
    Work(NAMES, ("baseline", "standardize", "layernorm"), long=True),
    # at the paper's scale a task is shown once its Baseline and +std are committed (+std against the Baseline is a
    # claim of its own in Tables 3 and 6); +LN, chapters 4-5's runs, joins them when the GPU queue has committed it
    paper_scale_needs=("baseline", "standardize"),
    profiles={
        "ci": {"n_seeds": CI_SEEDS, **both_tasks("ci"), **per_task({ARGMAX: longer(CI_LONG), DICTIONARY: longer(CI_LONG)})},
        "book": {**BOOK_TRAINING, **both_tasks("book"),
                 # +std is trained for chapter 5's first run of 20 seeds only
                 **per_task({DICTIONARY: {**longer(DICTIONARY.scales["book"]["long"]), "long_seeds": 20}}),
                 "paper_scale_dir": PAPER_SCALE_STORE},
        "paper": PAPER_BOTH_TASKS,
    },
    checks=(checks.keys_cover_lengths, checks.paper_scale_store_exists),
)
