"""Chapter 4: the paper's Table 1, Baseline against +LN on argmax retrieval."""

from ..setups.paper_tasks import ARGMAX
from . import checks
from .record import ACCURACY_METRICS, Chapter, accuracy_work
from .scales import BOOK_TRAINING, CI_LONG, CI_SEEDS, PAPER_SCALE_STORE, PAPER_TRAINING, task_scale

CHAPTER = Chapter(
    "04_argmax_retrieval", "Argmax retrieval: Baseline vs LayerNorm (Table 1)", ACCURACY_METRICS,
    accuracy_work(ARGMAX), reproduces=ARGMAX,
    profiles={
        # A smoke test: minutes on 2 CPU cores; too small to judge the paper's claims.
        "ci": {"n_seeds": CI_SEEDS, **task_scale(ARGMAX, "ci"), **CI_LONG},
        # the longer training beside the main one at the paper's 100,000 steps (the task's record says how)
        "book": {**BOOK_TRAINING, **task_scale(ARGMAX, "book"), **ARGMAX.scales["book"]["long"],
                 "paper_scale_dir": PAPER_SCALE_STORE},
        # The paper's scale (100 seeds x 100,000 steps): wants a GPU.
        "paper": {**PAPER_TRAINING, **task_scale(ARGMAX, "paper")},
    },
    checks=(checks.ladder_within_long_training, checks.measured_rows_fit(ARGMAX.name), checks.paper_scale_store_exists),
)
