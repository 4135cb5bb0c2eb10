"""Chapter 5: the paper's Table 2, Baseline against +LN on dictionary lookup, and why its loss rises."""

from ...task_base import EVAL_BLOCK
from ..setups import probes
from ..setups.paper_tasks import DICTIONARY
from ..setups.params import require
from . import checks
from .declare import param, shared, shared_each, task_param
from .record import ACCURACY_METRICS, Chapter, accuracy_work
from .scales import BOOK_TRAINING, CI_LONG, CI_SEEDS, PAPER_SCALE_STORE, PAPER_TRAINING, task_scale

# The measured runs (why its loss rises): the longer training's first 4 seeds at the constant rate, both variants,
# then the Baseline with one change each that might stop the rise: the rate cut tenfold at step 2,000 (where the rise
# begins), AdamW's epsilon at 1e-5, each seed's gradient clipped to norm 1.0, a hundredfold weight decay.
BOOK_DYNAMICS = {"dynamics_rows": [{}, {"variant": "layernorm"}, {"lr_schedule": "drop", "drop_step": 2000},
                                   {"adam_eps": 1e-5}, {"grad_clip": 1.0}, {"weight_decay": 0.1}],
                 "dynamics_seeds": 4, "dynamics_every": 100}
CI_DYNAMICS = {"dynamics_rows": [{}, {"lr_schedule": "drop", "drop_step": 30}],
               "dynamics_seeds": 1, "dynamics_every": 10}
# The longer training evaluated again on more test sequences, to tell an easy test set from a hard one: in the
# book, its last run of 20 seeds on 1,024 sequences (its first 128 are the ones it is scored on); in ci, the
# second of CI_LONG's two runs.
BOOK_RECHECK = {"recheck_sequences": 1024, "recheck_from_seed": 60}
CI_RECHECK = {"recheck_sequences": 128, "recheck_from_seed": 1, "recheck_lengths": [256, 2048]}
# The longer training again on the counter stream, the arm a GPU can repeat on the same batches: in the book, 100
# seeds, the paper-scale runs' seeds 0-99 (25 runs of 4, both variants, each run one sitting on one CPU core, two
# runs at a time with `python -m vvlib paper --chapters 05 --profile book --unit K`; their records time them); in ci,
# one seed, to run the path.
BOOK_COUNTER = {"counter_seeds": 100}
CI_COUNTER = {"counter_seeds": 1}


def recheck_fits(P):
    """The second evaluation of the longer training (recheck_*): more test sequences than the first, whose
    blocks it begins with, at tested lengths, from a seed the longer training has."""
    if not P.recheck_sequences:
        return
    require(P.long_steps > 0, "recheck_sequences", "0 while long_steps is 0 (it evaluates the longer training again)",
            P.recheck_sequences)
    require(P.n_eval_sequences % EVAL_BLOCK == 0, "n_eval_sequences",
            f"a multiple of {EVAL_BLOCK} (the test blocks) when recheck_sequences is set", P.n_eval_sequences)
    require(P.recheck_sequences > P.n_eval_sequences and P.recheck_sequences % EVAL_BLOCK == 0, "recheck_sequences",
            f"0, or a multiple of {EVAL_BLOCK} above n_eval_sequences ({P.n_eval_sequences}), whose sequences it "
            f"begins with", P.recheck_sequences)
    require(P.recheck_from_seed < P.long_seeds, "recheck_from_seed", f"a seed below long_seeds ({P.long_seeds})",
            P.recheck_from_seed)
    require(set(P.recheck_lengths) <= set(P.eval_lengths), "recheck_lengths",
            f"lengths among eval_lengths ({P.eval_lengths})", P.recheck_lengths)


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
    param("ladder_steps", [500, 1000, 2000, 5000, 10000], "steps at which the longer training is also evaluated "
                                                          "(each at most long_steps)"),
    shared("ladder_lengths"),
    param("recheck_sequences", 0, "the longer training evaluated again on this many test sequences per length (0: "
                                  "not); the first n_eval_sequences are the ones scored above, so the others tell "
                                  "an easy test set from a hard one"),
    param("recheck_from_seed", 0, "that evaluation takes the runs of the longer training that hold this seed or "
                                  "later ones (those whose weights are at hand)"),
    param("recheck_lengths", [1024, 16384], "its test lengths N (each one of eval_lengths)"),
    param("counter_seeds", 0, "the longer training again on the counter stream (draws counter: the same batches "
                              "and test sequences on a CPU and a GPU) for its first counter_seeds seeds, in runs "
                              "of long_seed_group seeds (0: not)"),
    shared("dynamics_rows", "runs of the longer training measured along the way (the loss section): each a dict of "
                            "a variant (default baseline) and the TrainConfig fields it changes, e.g. "
                            "{\"lr_schedule\": \"drop\", \"drop_step\": 2000}; [] skips them"),
    *shared_each("dynamics_seeds", "dynamics_every", "device", "store_dir"),
    param("output_dir", "_output/05_dictionary_lookup", "results.json goes here (relative paths: from the "
                                                        "repository root)"),
    shared("paper_scale_dir"),
)

CHAPTER = Chapter(
    "05_dictionary_lookup", "Dictionary lookup: Baseline vs LayerNorm (Table 2)", ACCURACY_METRICS,
    accuracy_work(DICTIONARY), reproduces=DICTIONARY,
    # where adaptive temperature acts on its main runs: the heads' entropy per length
    probes=lambda P, device: [(DICTIONARY.name, probes.adaptive_reach(P, device, DICTIONARY.name))],
    profiles={
        "ci": {"n_seeds": CI_SEEDS, **task_scale(DICTIONARY, "ci"), **CI_LONG,
               **CI_DYNAMICS, **CI_RECHECK, **CI_COUNTER},
        # the longer training beside the main one at the paper's 10,000 steps (the task's record says how)
        "book": {**BOOK_TRAINING, **task_scale(DICTIONARY, "book"), **DICTIONARY.scales["book"]["long"],
                 **BOOK_DYNAMICS, **BOOK_RECHECK, **BOOK_COUNTER, "paper_scale_dir": PAPER_SCALE_STORE},
        "paper": {**PAPER_TRAINING, **task_scale(DICTIONARY, "paper")},
    },
    checks=(checks.keys_cover_lengths, checks.ladder_within_long_training, checks.measured_rows_fit(DICTIONARY.name),
            recheck_fits, counter_arm_fits, checks.paper_scale_store_exists),
    params=PARAMETERS,
    reader=('n_seeds', 'steps', 'lr', 'max_len', 'eval_lengths', 'long_steps'),
)
