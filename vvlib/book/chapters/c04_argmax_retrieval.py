"""Chapter 4: the paper's Table 1, Baseline against +LN on argmax retrieval."""

from ...experiments.setups.paper_tasks import ARGMAX
from ...experiments.records import checks
from ...experiments.records.declare import param, shared, shared_each, task_param
from ...experiments.records.record import ACCURACY_METRICS, Chapter, accuracy_work
from ...experiments.records.scales import (BOOK_TRAINING, CI_LONG, CI_SEEDS, PAPER_SCALE_STORE, PAPER_TRAINING,
                                           task_scale)

# its parameters: the notebook's `parameters` cell is written from these (declare.py)
PARAMETERS = (
    shared("profile"),
    shared("n_seeds"),
    shared("steps", "AdamW steps per run (the paper: 100,000)"),
    shared("seed_chunk", "seeds per stored run: 0 trains all n_seeds in one run (as the paper profile does); k "
                         "trains k at a time, e.g. so that each run fits one command on a lent GPU"),
    shared("batch_size"),
    shared("hidden"),
    shared("n_classes", "classes an item can carry (chance accuracy is 1/n_classes)"),
    *shared_each("min_len", "max_len", "lr", "weight_decay", "eval_lengths"),
    task_param(ARGMAX, "n_eval_sequences", "test sequences per length, the same ones for every variant and seed"),
    *shared_each("seed", "eval_seed", "checkpoint_every", "seed_group", "draws", "tf32"),
    shared("long_steps", "a longer training of both variants beside the main one: AdamW steps per run (the paper: "
                         "100,000); 0 skips it"),
    shared("long_seeds", "seeds of the longer training (the paper: 100)"),
    shared("long_seed_chunk", "seeds per stored run of the longer training: several runs make up long_seeds, so "
                              "that each fits in one sitting"),
    shared("long_seed_group"),
    *shared_each("device", "store_dir"),
    param("output_dir", "_output/04_argmax_retrieval", "results.json goes here (relative paths: from the "
                                                       "repository root)"),
    shared("paper_scale_dir"),
)

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
    checks=(checks.paper_scale_store_exists,),
    params=PARAMETERS,
    reader=('n_seeds', 'steps', 'lr', 'max_len', 'eval_lengths', 'long_steps'),
)
