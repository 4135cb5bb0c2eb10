"""Chapter 9: the paper's Tables 4 and 5, training on up to 256 items with a length curriculum."""

from ....experiments.setups import paper
from ....experiments.setups.paper_tasks import ARGMAX, DICTIONARY, NAMES
from ....experiments.setups.params import require
from ....experiments.setups.sensitivity import PAIR
from ....experiments.records import checks
from ....experiments.records.declare import each_task, param, shared, shared_each
from ....experiments.records.record import Chapter, Work, keys
from ....experiments.records.scales import BOOK_TRAINING, PAPER_BOTH_TASKS, PAPER_SCALE_STORE, per_task


def curriculum_start_within_training(P):
    require(P.min_len <= P.curriculum_start_len <= P.max_len, "curriculum_start_len",
            f"an int from min_len ({P.min_len}) to max_len ({P.max_len})",
            P.curriculum_start_len)


# The longer training's seeds, in runs of long_seed_chunk joined into long_seeds: ci's two runs of one seed, the
# book's runs of 4, each one sitting on 2 CPU cores (raise long_seeds by 4 to add a run; book/scale.md gives their
# times): dictionary lookup's four at the paper's 10,000 steps, argmax retrieval's at 10,000 steps, a tenth of the
# paper's.
CI_LONG_SEEDS = {"long_seeds": 2, "long_seed_chunk": 1}
BOOK_LONG = {ARGMAX: {"long_steps": 10_000, "long_seeds": 24, "long_seed_chunk": 4},
             DICTIONARY: {"long_steps": paper.STEPS[DICTIONARY.name], "long_seeds": 16, "long_seed_chunk": 4}}


# its parameters: the notebook's `parameters` cell is written from these (declare.py)
PARAMETERS = (
    shared("profile"),
    param("n_seeds", 4, "independent training runs per variant and task (the paper: 100)"),
    each_task("steps", "AdamW steps per run, per task (the paper: 100,000 and 10,000)",
              {ARGMAX: 1000, DICTIONARY: 600}),
    each_task("seed_chunk", "seeds per stored run, per task: 0 trains all n_seeds in one run; the paper profile "
                            "trains argmax's 20 at a time and dictionary's 10, so that each run fits a lent GPU's "
                            "commands"),
    each_task("long_steps", "a longer training of both variants beside the main one, its curriculum stretched over "
                            "it: AdamW steps per run, per task (the paper: 100,000 and 10,000); 0 skips a task's"),
    each_task("long_seeds", "seeds of the longer training, per task (the paper: 100)"),
    each_task("long_seed_chunk",
              "seeds per stored run of it, per task: several runs make up long_seeds, so that each fits in one sitting"),
    each_task("long_eval_sequences",
              "test sequences per length scoring the longer training, per task: 0 takes n_eval_sequences; more "
              "scores those same sequences first, then new ones", 0),
    shared("long_seed_group"),
    param("curriculum_fraction", 1.0, "share of the steps over which the length cap doubles up to max_len"),
    param("curriculum_start_len", 16, "the length cap at the first step"),
    *shared_each("batch_size", "hidden", "n_classes", "n_keys", "n_values", "min_len"),
    param("max_len", 256, "longest training sequence at the end of the curriculum (the paper: 256)"),
    *shared_each("lr", "weight_decay", "eval_lengths"),
    each_task("n_eval_sequences", "test sequences per length, per task"),
    shared("seed"),
    shared("eval_seed"),
    param("checkpoint_every", 100, "steps between checkpoints (an interrupted run resumes from the last)"),
    *shared_each("seed_group", "draws", "tf32", "device", "store_dir"),
    shared("paper_scale_dir", "a results store holding this chapter's runs at the paper profile (trained on a "
                              "GPU), each task's shown first where all its runs are in; \"\" leaves them out (the "
                              "book profile: results/paper)"),
    param("output_dir", "_output/09_longer_training", "results.json goes here (relative paths: from the repository "
                                                      "root)"),
)

CHAPTER = Chapter(
    "09_longer_training", "Training on longer sequences with a length curriculum (Tables 4 and 5)",
    keys("accuracy accuracy_sem p_value", "long paper_scale"), Work(NAMES, PAIR, long=True),
    # trains on sequences up to 256 items: fewer seeds and steps, more checkpoints than the shared defaults
    own_values=frozenset({"n_seeds", "max_len", "checkpoint_every", "steps[argmax]", "steps[dictionary]"}),
    profiles={
        "ci": {"n_seeds": 2, "checkpoint_every": 50, "long_seed_group": 0,
               **per_task({ARGMAX: {"steps": 150, "n_eval_sequences": 32, "long_steps": 0, "long_eval_sequences": 0,
                                    **CI_LONG_SEEDS},
                           DICTIONARY: {"steps": 100, "n_eval_sequences": 32, "long_steps": 40, "long_eval_sequences": 64,
                                        **CI_LONG_SEEDS}})},
        # The curriculum's late steps run on 256-item sequences (a CPU step there costs about 20x one at 16
        # items for argmax, 12x for dictionary: bench/length-cost-cpu.json), so fewer steps than chapters 4-5
        # at the same 20 seeds.  Beside them a longer training on fewer seeds (BOOK_LONG): dictionary lookup for
        # the paper's 10,000 steps, argmax retrieval for 10,000 too, a tenth of its paper's (its 100,000 on up to
        # 256 items would take days there).  Those few seeds are scored on the paper profile's 1,024 test
        # sequences per length (the main runs' are their first 256 for argmax, 128 for dictionary): on 128, a
        # seed's score at 70% accuracy has a binomial standard error of 4 points, which so few seeds do not
        # average away.
        "book": {**BOOK_TRAINING, "long_seed_group": 0, "paper_scale_dir": PAPER_SCALE_STORE,
                 **per_task({ARGMAX: {"steps": 1000, "n_eval_sequences": 256, "long_eval_sequences": 1024,
                                      **BOOK_LONG[ARGMAX]},
                             DICTIONARY: {"steps": 600, "n_eval_sequences": 128, "long_eval_sequences": 1024,
                                          **BOOK_LONG[DICTIONARY]}})},
        # 100 seeds to 256 items take over an hour per argmax variant on an H100 (`python -m vvlib paper --plan
        # --speeds-of cuda`): runs of a few seeds fit one GPU command each, and join into the 100 seeds.  Argmax
        # runs 20 seeds a run: the H200 check of 2026-11-27 trained 20 seeds in 4.1 min against 10 in 3.4
        # (bench/gpu-check-h200-2026-11-27-curriculum.json); dictionary stays at 10 (its first runs are committed so)
        "paper": {**PAPER_BOTH_TASKS, "seed_chunk": {ARGMAX.name: 20, DICTIONARY.name: 10}},
    },
    checks=(curriculum_start_within_training, checks.keys_cover_lengths, checks.paper_scale_store_exists),
    params=PARAMETERS,
    reader=('n_seeds', 'steps', 'long_steps', 'max_len', 'curriculum_fraction'),
)
