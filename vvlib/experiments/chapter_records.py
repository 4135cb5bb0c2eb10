"""One record per chapter: its name and title, the keys its results.json promises, what it
trains through variants.py, the probe tables it computes, and the parameters it sets for itself.

Every other table of chapters is derived from these records: the plan (plan.py), the shared
defaults (book/defaults.py), the book's registry with its profiles (book/chapters.py) and the
summary's sources.  A chapter's name is written here and nowhere else in vvlib; adding a
chapter is a record here, a notebook, its profiles in book/chapters.py and a line in _toc.yml.
"""

from dataclasses import dataclass, field
from typing import Callable

from . import probes, variants
from .paper_tasks import ARGMAX, DICTIONARY, NAMES, PaperTask
from .sensitivity import PAIR  # Baseline and +LN, the paper's comparison


@dataclass(frozen=True)
class Metrics:
    """The top-level keys under "metrics" in a chapter's results.json."""
    required: frozenset
    optional: frozenset = frozenset()  # written only at some settings (e.g. when a longer training ran)


def keys(required: str, optional: str = "") -> Metrics:
    return Metrics(frozenset(required.split()), frozenset(optional.split()))


@dataclass(frozen=True)
class Work:
    """What one chapter trains (and evaluates) through variants.py."""
    tasks: tuple
    variants: tuple
    temperatures: tuple = ("fixed",)  # the main runs' evaluations; () where the chapter only probes them
    long: bool = False  # the chapter's long_* parameters add a longer training (variants.long_training)


@dataclass(frozen=True)
class ChapterRecord:
    name: str  # the notebook's stem and the results folder's name
    title: str
    metrics: Metrics
    work: Work | None = None  # None: trains nothing through variants.py
    # the probe tables it computes from trained models (experiments/probes.py): (P, device) -> [(task, Probe)]
    probes: Callable | None = field(default=None, compare=False)
    row_tasks: tuple = ()  # chapter 11: the tasks whose runs come from its own row parameters (sensitivity.check_rows)
    own_values: frozenset = frozenset()  # parameters whose values it sets itself, not book/defaults.py
    reproduces: PaperTask | None = None  # the paper's accuracy table it reproduces (chapters 4-5)

    @property
    def tasks(self) -> tuple:
        """The tasks whose models it trains or reuses."""
        return self.work.tasks if self.work else self.row_tasks


PER_LENGTH = "accuracy accuracy_sem p_value n_seeds"  # report.per_length


def _accuracy_chapter(name: str, title: str, task: PaperTask) -> ChapterRecord:
    return ChapterRecord(name, title, keys(PER_LENGTH, "long ladder paper_scale dynamics recheck"),
                         Work((task.name,), PAIR, ("fixed", "adaptive"), long=True), reproduces=task)


DEEPER = ("baseline", "layernorm", "rescale", "log_n", "log_n_layernorm", "deep_baseline", "deep_layernorm")

PROOF = ChapterRecord("01_vanishing_variance_proof", "Proposition 1 and its proof, step by step, with numbers",
                      keys("sigma2 delta limit_mean variance_slope chain cross_term_step_fails_at bounds_hold "
                           "sharp_constant n_times_variance"))
MONTE_CARLO = ChapterRecord("02_monte_carlo", "Monte Carlo: the variance law, an exact check, and broken assumptions",
                            keys("loglog_slope slope_ci std_by_length slope_by_feature std_by_length_by_setting "
                                 "broken_assumptions exact_check global"))
PRETRAINED = ChapterRecord("03_pretrained_transformer",
                           "Real pretrained transformers: Figure 1 on all-MiniLM-L6-v2 and SmolLM2-135M", keys("models"))
ARGMAX_RETRIEVAL = _accuracy_chapter("04_argmax_retrieval", "Argmax retrieval: Baseline vs LayerNorm (Table 1)", ARGMAX)
DICTIONARY_LOOKUP = _accuracy_chapter("05_dictionary_lookup", "Dictionary lookup: Baseline vs LayerNorm (Table 2)",
                                      DICTIONARY)
# chapters 6-7 probe chapter 4's models: their work trains nothing new, their probes are planned
DISTRIBUTION_SHIFT = ChapterRecord(
    "06_distribution_shift", "Distribution shift of the attention output (Figures 2 and 3)",
    keys("global_mean global_variance global_mean_drift relative_global_variance component_std component_std_slope "
         "component_std_slope_sem p_value_relative_global_variance p_value_mean_drift"),
    Work((ARGMAX.name,), PAIR, ()), probes=lambda P, device: [(ARGMAX.name, probes.distribution(P, device))])
DISPERSION = ChapterRecord(
    "07_dispersion", "Dispersion of the attention weights (Figure 4)",
    keys("top1_weight entropy p_value_top1_weight p_value_entropy"),
    Work((ARGMAX.name,), PAIR, ()), probes=lambda P, device: [(ARGMAX.name, probes.dispersion(P, device))])
ABLATIONS = ChapterRecord(
    "08_ablations", "Ablations: standardization vs layer normalization (Tables 3 and 6)",
    keys("relative_gain p_value_ln_vs_std p_value_vs_baseline accuracy ln_minus_std long"),
    Work(NAMES, ("baseline", "standardize", "layernorm"), long=True))
# trains on sequences up to 256 items: fewer seeds and steps, more checkpoints than the shared defaults
LONGER_TRAINING = ChapterRecord(
    "09_longer_training", "Training on longer sequences with a length curriculum (Tables 4 and 5)",
    keys("accuracy accuracy_sem p_value"), Work(NAMES, PAIR),
    own_values=frozenset({"n_seeds", "max_train_len", "checkpoint_every", "argmax_steps", "dictionary_steps"}))
BEYOND = ChapterRecord(
    "10_beyond", "Beyond the paper: a variance-preserving output, length-aware logits, depth and heads",
    keys(f"{PER_LENGTH} variance_slope mc_slope best"), Work(NAMES, DEEPER),
    probes=lambda P, device: [(task, probes.slopes(P, variants.task_params(P, task), task, list(DEEPER), device))
                              for task in NAMES])
# ten seeds in groups of 4 (the fastest CPU path), and half chapter 4's argmax test sequences: the map has many rows
SENSITIVITY = ChapterRecord(
    "11_sensitivity", "When does the claim hold? One unstated setting at a time", keys("rows closest"),
    row_tasks=NAMES, own_values=frozenset({"n_seeds", "seed_group", "argmax_eval_sequences"}))
SUMMARY = ChapterRecord("summary", "Summary: the paper's claims against our numbers",
                        keys("claims component_slope_with_ln ln_minus_std_dictionary sensitivity sources"))

RECORDS = {r.name: r for r in (PROOF, MONTE_CARLO, PRETRAINED, ARGMAX_RETRIEVAL, DICTIONARY_LOOKUP, DISTRIBUTION_SHIFT,
                               DISPERSION, ABLATIONS, LONGER_TRAINING, BEYOND, SENSITIVITY, SUMMARY)}
TRAINING = {name: r for name, r in RECORDS.items() if r.tasks}  # the chapters that train or reuse models
BY_TASK = {r.reproduces.name: r for r in RECORDS.values() if r.reproduces}  # a task's accuracy chapter


def get(name: str) -> ChapterRecord:
    if name not in RECORDS:
        raise ValueError(f"chapter: expected one of {', '.join(RECORDS)}; got {name!r}")
    return RECORDS[name]


def check_metrics(chapter: str, metrics: dict):
    """Raise ValueError naming the keys `metrics` lacks or should not have.  report.write_results
    calls it before writing, so a chapter cannot drift from what the summary and the tests read."""
    promised, found = get(chapter).metrics, set(metrics)
    missing, unknown = promised.required - found, found - promised.required - promised.optional
    if missing or unknown:
        raise ValueError(f"{chapter}'s metrics: missing {sorted(missing)}, "
                         f"not in vvlib/experiments/chapter_records.py {sorted(unknown)}")
