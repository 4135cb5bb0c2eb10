"""Chapter 4: the paper's Table 1, Baseline against +LN on argmax retrieval."""

from ..paper_tasks import ARGMAX
from . import checks
from .record import ACCURACY_METRICS, Chapter, accuracy_work
from .scales import ARGMAX_STEPS, BOOK_TRAINING, CI_LONG, CI_SEEDS, PAPER_SCALE_STORE, PAPER_TRAINING

# The longer training beside the main one (the `long_*` parameters), in the book: the paper's own 100,000 steps.
# They take most of an hour per variant and 4 seeds on 2 CPU cores (measured times in book/scale.md): runs of
# 4 seeds, added a sitting at a time (long_seeds grows as they are committed; the paper has 100).
BOOK_LONG = {"long_steps": ARGMAX_STEPS["paper"], "long_seeds": 12, "long_seed_chunk": 4, "long_seed_group": 4,
             "ladder_steps": [500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000],
             "ladder_lengths": [16, 256, 2048, 16384]}

CHAPTER = Chapter(
    "04_argmax_retrieval", "Argmax retrieval: Baseline vs LayerNorm (Table 1)", ACCURACY_METRICS,
    accuracy_work(ARGMAX), reproduces=ARGMAX,
    profiles={
        # A smoke test: minutes on 2 CPU cores; too small to judge the paper's claims.
        "ci": {"n_seeds": CI_SEEDS, "steps": ARGMAX_STEPS["ci"], "n_eval_sequences": 128, **CI_LONG},
        "book": {**BOOK_TRAINING, "steps": ARGMAX_STEPS["book"], "n_eval_sequences": 256, **BOOK_LONG,
                 "paper_scale_dir": PAPER_SCALE_STORE},
        # The paper's scale (100 seeds x 100,000 steps): wants a GPU.
        "paper": {**PAPER_TRAINING, "steps": ARGMAX_STEPS["paper"], "n_eval_sequences": 1024},
    },
    checks=(checks.ladder_within_long_training, checks.measured_rows_fit, checks.paper_scale_store_exists),
)
