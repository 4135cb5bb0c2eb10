"""Chapter 10, beyond the paper: a variance-preserving output, length-aware logits, depth and heads."""

from .... import beyond
from ....experiments.setups import probes, variants
from ....experiments.setups.paper_tasks import ARGMAX, DICTIONARY, NAMES
from ....experiments.setups.params import require
from ....experiments.records import checks
from ....experiments.records.declare import each_task, param, shared, shared_each
from ....experiments.records.record import PER_LENGTH, Chapter, Work, keys
from ....experiments.records.scales import BOOK_TRAINING, CI_SEEDS, PAPER_BOTH_TASKS, PAPER_SCALE_STORE, both_tasks

ONE_LAYER = ("baseline", "layernorm", "rescale", "log_n", "log_n_layernorm")  # the paper's two and three new outputs
DEEP = ("deep_baseline", "deep_layernorm")  # Baseline and +LN with several heads and layers
DEEPER = ONE_LAYER + DEEP
# the comparisons the page makes, each (claimed, other): a new variant against the one it changes
PAIRS = (("layernorm", "baseline"), ("rescale", "baseline"), ("rescale", "layernorm"), ("log_n", "baseline"),
         ("log_n_layernorm", "layernorm"), ("log_n_layernorm", "log_n"), ("deep_layernorm", "deep_baseline"))


def pairs_in(variants_in) -> list:
    """The page's pairs both of whose variants are among `variants_in` (at the paper's scale: those committed so far),
    so a pair is compared as soon as its two runs are in, not only once the whole chapter is."""
    return [pair for pair in PAIRS if set(pair) <= set(variants_in)]


def labels(P) -> dict:
    """The variants' display names, the deep ones with this run's heads and layers."""
    return {**variants.LABELS, "deep_baseline": f"Deep, H={P.deep_heads} L={P.deep_layers}",
            "deep_layernorm": f"Deep, H={P.deep_heads} L={P.deep_layers}, +LN"}


def heads_divide_hidden(P):
    require(P.hidden % P.deep_heads == 0, "deep_heads", f"a divisor of hidden ({P.hidden})", P.deep_heads)


def slopes_probe(P, P_task, task: str, trained: list, device) -> probes.Probe:
    """Chapter 10: per variant, how the attention output's components shrink with N beyond the
    training length.  P: the chapter's parameters; P_task: one task's view of them."""
    models = variants.trained_models(P_task, variants.task_config(P_task, task), trained, device)
    cfg = variants.eval_config(P, n_sequences=P.probe_sequences)

    def tables_of(variant, run, first):
        return {"slopes": beyond.output_slopes({variant: run}, cfg, P.max_len, device)}

    return probes.parts("probe-slopes", models, cfg, dict(reference=P.max_len, key="normalized"), tables_of)


# its parameters: the notebook's `parameters` cell is written from these (declare.py)
PARAMETERS = (
    shared("profile"),
    shared("n_seeds", "independent training runs per variant and task (the paper: 100)"),
    each_task("steps", "AdamW steps per run, per task (chapters 4 and 5's defaults, so their models are reused)"),
    each_task("seed_chunk", "seeds per stored run, per task, 0: all in one (chapters 4 and 5's)"),
    each_task("deep_seed_chunk", "seeds per stored run of the deep variants, per task (0: as seed_chunk); the paper "
                                 "profile stores argmax's in runs of 50, so that each fits one command on a lent "
                                 "GPU", 0),
    shared("batch_size"),
    shared("hidden"),
    param("deep_heads", 4, "H of the deep variants (section 3); must divide hidden"),
    param("deep_layers", 2, "L of the deep variants (section 3)"),
    *shared_each("n_classes", "n_keys", "n_values", "min_len", "max_len", "lr", "weight_decay", "eval_lengths"),
    each_task("n_eval_sequences"),
    param("probe_sequences", 64, "test sequences per length for the trained models' variance slopes"),
    param("mc_d_model", 64, "Monte Carlo (section 1): width D of the random module"),
    param("mc_vocab_size", 32, "Monte Carlo: size of the finite vocabulary"),
    param("mc_lengths", [16, 64, 256, 1024, 4096, 16384], "Monte Carlo: sequence lengths N"),
    param("mc_sequences", 8192, "Monte Carlo: sequences per length"),
    param("mc_components", [0, 1, 2, 3], "Monte Carlo: output components followed"),
    shared("seed", "training seed; seed index s draws from the streams (seed, s); also draws the random module"),
    *shared_each("eval_seed", "checkpoint_every", "seed_group", "draws", "tf32", "device", "store_dir"),
    shared("paper_scale_dir", "a results store holding this chapter's runs and slope probes at the paper profile "
                              "(trained on a GPU): each task's variants shown first once its Baseline and +LN are "
                              "in (the rest as they land), the slopes beside this page's; \"\" leaves them out "
                              "(the book profile: results/paper)"),
    param("output_dir", "_output/10_beyond", "results.json goes here (relative paths: from the repository root)"),
)

CHAPTER = Chapter(
    "10_beyond", "Beyond the paper: a variance-preserving output, length-aware logits, depth and heads",
    keys(f"{PER_LENGTH} variance_slope mc_slope best", "paper_scale"), Work(NAMES, DEEPER),
    # at the paper's scale a task's variants are shown once its Baseline and +LN (chapters 4-5's runs) are committed,
    # each other variant beside them as the GPU queue commits it; which is best is said of those in, the rest named
    paper_scale_needs=("baseline", "layernorm"),
    probes=lambda P, device: [(task, slopes_probe(P, variants.task_params(P, task), task, list(DEEPER), device))
                              for task in NAMES],
    profiles={
        # ci shares chapter 8's ci runs (Baseline, +LN); short test lengths keep it to minutes
        "ci": {"n_seeds": CI_SEEDS, **both_tasks("ci"), "eval_lengths": [16, 128, 1024, 8192], "probe_sequences": 32,
               "mc_lengths": [16, 256, 4096], "mc_sequences": 1024},
        "book": {**BOOK_TRAINING, **both_tasks("book"), "paper_scale_dir": PAPER_SCALE_STORE},
        # the deep model's 100 argmax seeds x 100,000 steps would take more than a unit: runs of 50
        "paper": {**PAPER_BOTH_TASKS, "deep_seed_chunk": {ARGMAX.name: 50, DICTIONARY.name: 0}},
    },
    checks=(checks.keys_cover_lengths, heads_divide_hidden, checks.training_length_is_tested,
            checks.paper_scale_store_exists),
    params=PARAMETERS,
    reader=('n_seeds', 'steps', 'deep_heads', 'deep_layers', 'lr', 'eval_lengths'),
)
