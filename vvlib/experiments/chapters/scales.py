"""The scales several chapters share, each written once: the ci smoke test, the published book's
scale and the paper's.  Chapters 6-10 load the models of chapters 4 and 5 from the results store,
which only works when their training settings agree profile by profile: these are those values.
A scale that one chapter alone uses is in that chapter's file."""

from .. import paper
from ..paper_tasks import ARGMAX, DICTIONARY

CI_SEEDS = 3
ARGMAX_STEPS = {"ci": 1000, "book": 4000, "paper": paper.STEPS[ARGMAX.name]}
DICTIONARY_STEPS = {"ci": 400, "book": 1500, "paper": paper.STEPS[DICTIONARY.name]}
# New runs at the paper's scale draw from the counter stream (draws.py): a CUDA graph records it, and a CPU can
# repeat any seed of it.  Chapters 4-5's first paper-scale runs (results/paper/) drew from per-seed generators:
# they stay, read as the earlier, independent run (EARLIER_PAPER_RUN).
PAPER_TRAINING = {"n_seeds": paper.SEEDS, "checkpoint_every": 1000, "draws": "counter"}
EARLIER_PAPER_RUN = {"draws": "generators"}
# The published book's scale: chapters 4-8 in about two hours of 2 CPU cores, chapter 9 two more (book/scale.md says
# what that changes).  Its results are committed under BOOK_STORE and loaded, not recomputed.
BOOK_STORE = "results/book"
BOOK_TRAINING = {"n_seeds": 20, "store_dir": BOOK_STORE}
# Chapters 4-5's runs at their `paper` profile, trained on a GPU and committed (results/paper/README.md):
# the book shows them beside its own scales.
PAPER_SCALE_STORE = "results/paper"
# Chapters 4-5's longer training beside the main one (the `long_*` parameters), as a smoke test: two runs of one
# seed each, joined.  The book's own are in c04 and c05 (chapter 8 reuses chapter 5's).
CI_LONG = {"long_steps": 60, "long_seeds": 2, "long_seed_chunk": 1, "long_seed_group": 0,
           "ladder_steps": [20, 60], "ladder_lengths": [16, 256]}
# Chapters 8-10 train both tasks: their paper profile.
PAPER_BOTH_TASKS = {**PAPER_TRAINING, "argmax_steps": ARGMAX_STEPS["paper"], "dictionary_steps": DICTIONARY_STEPS["paper"],
                    "argmax_eval_sequences": 1024, "dictionary_eval_sequences": 1024}


def probing_profiles(ci_sequences: int) -> dict:
    """Chapters 6 and 7 probe chapter 4's argmax models: its training settings, their own probe size."""
    return {"ci": {"n_seeds": CI_SEEDS, "steps": ARGMAX_STEPS["ci"], "n_probe_sequences": ci_sequences},
            "book": {**BOOK_TRAINING, "steps": ARGMAX_STEPS["book"]},
            "paper": {**PAPER_TRAINING, "steps": ARGMAX_STEPS["paper"], "n_probe_sequences": 1024}}
