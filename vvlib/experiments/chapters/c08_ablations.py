"""Chapter 8: the paper's Tables 3 and 6, standardization without parameters against layer normalization."""

from ..paper_tasks import ARGMAX, DICTIONARY, NAMES
from . import c05_dictionary_lookup, checks
from .record import Chapter, Work, keys
from .scales import ARGMAX_STEPS, BOOK_TRAINING, CI_LONG, CI_SEEDS, DICTIONARY_STEPS, PAPER_BOTH_TASKS


def per_task_long(task: str, long: dict) -> dict:
    """This chapter names chapters 4-5's long_* settings per task (e.g. dictionary_long_steps)."""
    return {**{f"{task}_{k}": long[k] for k in ("long_steps", "long_seeds", "long_seed_chunk")},
            "long_seed_group": long["long_seed_group"]}


CHAPTER = Chapter(
    "08_ablations", "Ablations: standardization vs layer normalization (Tables 3 and 6)",
    keys("relative_gain p_value_ln_vs_std p_value_vs_baseline accuracy ln_minus_std long"),
    Work(NAMES, ("baseline", "standardize", "layernorm"), long=True),
    profiles={
        "ci": {"n_seeds": CI_SEEDS, "argmax_steps": ARGMAX_STEPS["ci"], "dictionary_steps": DICTIONARY_STEPS["ci"],
               "argmax_eval_sequences": 128, "dictionary_eval_sequences": 64,
               **per_task_long(ARGMAX.name, CI_LONG), **per_task_long(DICTIONARY.name, CI_LONG)},
        "book": {**BOOK_TRAINING, "argmax_steps": ARGMAX_STEPS["book"], "dictionary_steps": DICTIONARY_STEPS["book"],
                 "argmax_eval_sequences": 256, "dictionary_eval_sequences": 128,
                 # +std is trained for chapter 5's first run of 20 seeds only
                 **per_task_long(DICTIONARY.name, {**c05_dictionary_lookup.BOOK_LONG, "long_seeds": 20})},
        "paper": PAPER_BOTH_TASKS,
    },
    checks=(checks.keys_cover_lengths,),
)
