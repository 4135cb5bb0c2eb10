"""Chapter 5: the paper's Table 2, Baseline against +LN on dictionary lookup."""

from .... import probing
from ....experiments.setups import probes, variants
from ....experiments.setups.paper_tasks import DICTIONARY
from ....experiments.setups.params import require
from ....experiments.records import checks
from ....experiments.records.declare import param, shared, shared_each, task_param
from ....experiments.records.record import ACCURACY_METRICS, Chapter, accuracy_work
from ....experiments.records.scales import (BOOK_TRAINING, CI_LONG, CI_SEEDS, PAPER_SCALE_STORE, PAPER_TRAINING,
                                           task_scale)

# The longer training again on the counter stream, the arm a GPU can repeat on the same batches: in the book, 100
# seeds, the paper-scale runs' seeds 0-99 (25 runs of 4, both variants, each run one sitting on one CPU core, two
# runs at a time with `python -m vvlib paper --chapters 05 --profile book --unit K`; their records time them); in ci,
# one seed, to run the path.
BOOK_COUNTER = {"counter_seeds": 100}
CI_COUNTER = {"counter_seeds": 1}


def counter_arm_fits(P):
    """The counter-stream arm (counter_seeds): the longer training again, on the other stream, in runs of
    long_seed_group seeds each (variants.counter_arm)."""
    if not P.get("counter_seeds"):
        return
    require(P.long_steps > 0, "counter_seeds", "0 while long_steps is 0 (it trains the longer training again)",
            P.counter_seeds)
    require(P.draws == "generators", "counter_seeds", "0 when draws is already counter (the arm is the longer "
            "training on the other stream)", P.counter_seeds)
    require(P.counter_seeds % (P.long_seed_group or P.counter_seeds) == 0, "counter_seeds",
            f"a multiple of long_seed_group ({P.long_seed_group}), one stored run per group", P.counter_seeds)


def adaptive_probe(P, device, task: str) -> probes.Probe:
    """Chapters 4-5's main runs (n_seeds x steps): where adaptive temperature acts, per seed and length, and
    what it changes in those models' accuracy (probing.adaptive_frame), on the very test sequences the
    chapter scores."""
    models = variants.trained_models(P, variants.task_config(P, task), probes.PAIR, device)
    cfg = variants.eval_config(P)

    def tables_of(variant, run, first):
        return {"adaptive": probing.adaptive_frame(run.model_cfg, run.weights, cfg, variant, device)}

    # a probe pass and an evaluation at each temperature
    return probes.parts("probe-adaptive", models, cfg, dict(temperatures=list(probes.TEMPERATURES)), tables_of,
                  passes=1 + len(probes.TEMPERATURES))


# its parameters: the notebook's `parameters` cell is written from these (declare.py)
PARAMETERS = (
    shared("profile"),
    shared("n_seeds"),
    task_param(DICTIONARY, "steps", "AdamW steps per run (the paper: 10,000)"),
    shared("seed_chunk", "seeds per stored run: 0 trains all n_seeds in one run (as every profile does here); runs "
                         "of fewer seeds join into the same accuracies"),
    shared("batch_size"),
    shared("hidden"),
    shared("n_keys", "key classes C_K (the paper: 16384); test lengths may not exceed it"),
    shared("n_values", "value classes C_V (the paper: 64; chance accuracy is 1/n_values)"),
    *shared_each("min_len", "max_len", "lr", "weight_decay", "eval_lengths"),
    task_param(DICTIONARY, "n_eval_sequences", "test sequences per length, the same ones for every variant and seed"),
    *shared_each("seed", "eval_seed", "checkpoint_every", "seed_group", "draws", "tf32"),
    shared("long_steps", "a longer training of both variants beside the main one: AdamW steps per run (the paper: "
                         "10,000); 0 skips it"),
    task_param(DICTIONARY, "long_seeds", "seeds of the longer training (the paper: 100)"),
    task_param(DICTIONARY, "long_seed_chunk", "seeds per stored run of the longer training: several runs make up long_seeds, so "
                                 "that each fits in one sitting"),
    shared("long_seed_group"),
    param("counter_seeds", 0, "the longer training again on the counter stream (draws counter: the same batches "
                              "and test sequences on a CPU and a GPU) for its first counter_seeds seeds, in runs "
                              "of long_seed_group seeds (0: not)"),
    *shared_each("device", "store_dir"),
    param("output_dir", "_output/05_dictionary_lookup", "results.json goes here (relative paths: from the "
                                                        "repository root)"),
    shared("paper_scale_dir"),
)

CHAPTER = Chapter(
    "05_dictionary_lookup", "Dictionary lookup: Baseline vs LayerNorm (Table 2)", ACCURACY_METRICS,
    accuracy_work(DICTIONARY), reproduces=DICTIONARY,
    # where adaptive temperature acts on its main runs: the heads' entropy per length
    probes=lambda P, device: [(DICTIONARY.name, adaptive_probe(P, device, DICTIONARY.name))],
    profiles={
        "ci": {"n_seeds": CI_SEEDS, **task_scale(DICTIONARY, "ci"), **CI_LONG,
               **CI_COUNTER},
        # the longer training beside the main one at the paper's 10,000 steps (the task's record says how)
        "book": {**BOOK_TRAINING, **task_scale(DICTIONARY, "book"), **DICTIONARY.scales["book"]["long"],
                 **BOOK_COUNTER, "paper_scale_dir": PAPER_SCALE_STORE},
        "paper": {**PAPER_TRAINING, **task_scale(DICTIONARY, "paper")},
    },
    checks=(checks.keys_cover_lengths, counter_arm_fits, checks.paper_scale_store_exists),
    params=PARAMETERS,
    reader=('n_seeds', 'steps', 'lr', 'max_len', 'eval_lengths', 'long_steps'),
)
