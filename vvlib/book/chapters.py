"""The chapter registry and the runner that executes a chapter through papermill.

A chapter is a notebook under notebooks/ plus its named profiles.  Its parameters
(names, types, defaults, help) are read from the notebook itself.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from .. import distributed, model_files
from ..experiments.params import DEFAULT_PROFILE, ParameterError, Params, coerce, injected_names, read_parameters, resolve
from ..experiments import chapter_records as records, paper, sensitivity
from ..experiments.chapter_records import ChapterRecord
from ..experiments.paper_tasks import ARGMAX, DICTIONARY, NAMES
from ..experiments.store import REPO_ROOT
from . import checks

NOTEBOOKS = REPO_ROOT / "notebooks"


@dataclass(frozen=True)
class Chapter:
    """A chapter's record (experiments/chapter_records.py) as the book runs it: its notebook,
    its named profiles and the checks made before its kernel starts."""
    record: ChapterRecord
    profiles: dict = field(default_factory=dict)  # profile -> {parameter: value}
    in_book: bool = True  # False: runnable and tested, but not yet a page of the published book
    # checks that need more than each parameter's own range (several parameters, the machine, a
    # model's config.json), run on the resolved parameters before a kernel starts (checks.py); they
    # raise ParameterError
    checks: tuple[Callable[[Params], object], ...] = ()

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def title(self) -> str:
        return self.record.title

    @property
    def notebook(self) -> Path:
        return NOTEBOOKS / f"{self.name}.ipynb"

    def parameters(self):
        return read_parameters(self.notebook)

    def profile_names(self):
        return [DEFAULT_PROFILE, *self.profiles]

    def profile_or_default(self, profile: str) -> str:
        """Book builds ask every chapter for one profile; those without it (1-3 have no
        `book` or `paper`: they train nothing) run at their default."""
        return profile if profile in self.profile_names() else DEFAULT_PROFILE


# Chapters 6-8 load the models of chapters 4 and 5 from the results store, which only works
# when their training settings agree profile by profile: these are the shared values.
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
# Chapters 4-5's longer training beside the main one (the `long_*` parameters): in the book, the
# paper's own number of steps, its seeds stored as runs of 20 that each fit in one sitting (long_seeds grows
# as they are committed; the paper has 100).
BOOK_LONG_DICTIONARY = {"long_steps": DICTIONARY_STEPS["paper"], "long_seeds": 80, "long_seed_chunk": 20,
                        "long_seed_group": 4, "ladder_steps": [500, 1000, 2000, 5000, 10_000],
                        "ladder_lengths": [16, 256, 2048, 16384]}
# Argmax's 100,000 steps take most of an hour per variant and 4 seeds on 2 CPU cores (measured times in
# book/scale.md): runs of 4 seeds, added a sitting at a time (long_seeds grows as they are committed).
BOOK_LONG_ARGMAX = {"long_steps": ARGMAX_STEPS["paper"], "long_seeds": 12, "long_seed_chunk": 4, "long_seed_group": 4,
                    "ladder_steps": [500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000],
                    "ladder_lengths": [16, 256, 2048, 16384]}
# A smoke test of the same path: two runs of one seed each, joined.
CI_LONG = {"long_steps": 60, "long_seeds": 2, "long_seed_chunk": 1, "long_seed_group": 0,
           "ladder_steps": [20, 60], "ladder_lengths": [16, 256]}

# Chapter 5's measured runs (why its loss rises): the longer training's first 4 seeds at the constant rate, both
# variants, then the Baseline with one change each: the rate cut tenfold at step 2,000, where the rise begins;
# AdamW's epsilon at 1e-5, near the key table's median sqrt(v) there (3e-5 in the constant-rate run); each seed's
# gradient clipped to norm 1.0; a hundredfold weight decay, which pulls the weights that set the logits' scale
# back.  A smoke test of the same path in ci.
BOOK_DYNAMICS_DICTIONARY = {"dynamics_rows": [{}, {"variant": "layernorm"}, {"lr_schedule": "drop", "drop_step": 2000},
                                              {"adam_eps": 1e-5}, {"grad_clip": 1.0}, {"weight_decay": 0.1}],
                            "dynamics_seeds": 4, "dynamics_every": 100}
CI_DYNAMICS = {"dynamics_rows": [{}, {"lr_schedule": "drop", "drop_step": 30}], "dynamics_seeds": 1, "dynamics_every": 10}
# Chapter 5's longer training evaluated again on more test sequences, to tell an easy test set from a hard one: in
# the book, its last run of 20 seeds on 1,024 sequences (its first 128 are the ones it is scored on); in ci, the
# second of CI_LONG's two runs.
BOOK_RECHECK_DICTIONARY = {"recheck_sequences": 1024, "recheck_from_seed": 60}
CI_RECHECK = {"recheck_sequences": 128, "recheck_from_seed": 1, "recheck_lengths": [256, 2048]}
# Chapter 5's longer training again on the counter stream, the arm a GPU can repeat on the same batches: in the book,
# its first 8 seeds (two runs of 4, both variants; about 15-23 minutes of one CPU core per run); in ci, one seed, to
# run the path.
BOOK_COUNTER_DICTIONARY = {"counter_seeds": 8}
CI_COUNTER = {"counter_seeds": 1}


def per_task_long(task: str, long: dict) -> dict:
    """Chapter 8 names chapters 4-5's long_* settings per task (e.g. dictionary_long_steps)."""
    return {**{f"{task}_{k}": long[k] for k in ("long_steps", "long_seeds", "long_seed_chunk")},
            "long_seed_group": long["long_seed_group"]}


# Chapter 11 at the book's scale: ten seeds per variant and row (more where a row sets n_seeds) at chapters 4-5's
# book steps (book/scale.md gives the cost), every row of the notebook's own lists (all committed in results/book).
BOOK_SENSITIVITY = {**BOOK_TRAINING, "n_seeds": 10, "argmax_steps": ARGMAX_STEPS["book"],
                    "dictionary_steps": DICTIONARY_STEPS["book"]}


# Chapter 11 at the paper's scale (the GPU queue's second item, bench/README.md): dictionary lookup only, 100 seeds x
# 10,000 steps per variant and row: the constant rate (chapter 5's own paper-scale runs, shared through the store)
# and the settings the paper leaves unstated that decided the sign of +LN minus Baseline on the CPU.  The warm-up
# is a tenth of the steps, as in the book's row (our choice).
PAPER_SENSITIVITY = {**PAPER_TRAINING, "seed_group": 0, "dictionary_steps": DICTIONARY_STEPS["paper"],
                     "dictionary_eval_sequences": 1024, "argmax_rows": [],
                     "dictionary_rows": [{}, {"lr_schedule": "cosine"}, {"lr_schedule": "drop", "drop_step": 2000},
                                         {"lr_schedule": "cosine", "warmup_steps": 1000}, {"weight_decay": 0.1},
                                         {"grad_clip": 1.0}, {"dropout": 0.1}]}


# Chapters 8 and 9 train both tasks: their paper profile.
PAPER_BOTH_TASKS = {**PAPER_TRAINING, "argmax_steps": ARGMAX_STEPS["paper"], "dictionary_steps": DICTIONARY_STEPS["paper"],
                    "argmax_eval_sequences": 1024, "dictionary_eval_sequences": 1024}


def _probing_profiles(ci_sequences: int) -> dict:
    """Chapters 6 and 7 probe chapter 4's argmax models: its training settings, their own probe size."""
    return {"ci": {"n_seeds": CI_SEEDS, "steps": ARGMAX_STEPS["ci"], "n_probe_sequences": ci_sequences},
            "book": {**BOOK_TRAINING, "steps": ARGMAX_STEPS["book"]},
            "paper": {**PAPER_TRAINING, "steps": ARGMAX_STEPS["paper"], "n_probe_sequences": 1024}}


CHAPTERS = {
    c.name: c
    for c in [
        Chapter(
            records.PROOF,
            profiles={"ci": {"n_sequences": 2000, "lengths": [16, 128, 1024]}},
            checks=(checks.component_within_model,),
        ),
        Chapter(
            records.MONTE_CARLO,
            profiles={"ci": {"n_sequences": 1000, "lengths": [16, 64, 256, 1024, 4096],
                          "explore_lengths": [16, 256, 4096], "explore_scales": [1.0, 4.0], "explore_sequences": 256}},
            checks=(checks.components_within_model,),
        ),
        Chapter(
            records.PRETRAINED,
            profiles={"ci": {"n_sequences": 30, "lengths": [8, 32, 128, 512], "depth_lengths": [16, 64, 256],
                          "depth_sequences": 8}},
            checks=(lambda P: model_files.check(P.models, P.layer, P.lengths + P.depth_lengths, P.components, P.heads),),
        ),
        Chapter(
            records.ARGMAX_RETRIEVAL,
            profiles={
                # A smoke test: minutes on 2 CPU cores; too small to judge the paper's claims.
                "ci": {"n_seeds": CI_SEEDS, "steps": ARGMAX_STEPS["ci"], "n_eval_sequences": 128, **CI_LONG},
                "book": {**BOOK_TRAINING, "steps": ARGMAX_STEPS["book"], "n_eval_sequences": 256, **BOOK_LONG_ARGMAX,
                         "paper_scale_dir": PAPER_SCALE_STORE},
                # The paper's scale (100 seeds x 100,000 steps): wants a GPU.
                "paper": {**PAPER_TRAINING, "steps": ARGMAX_STEPS["paper"], "n_eval_sequences": 1024},
            },
            checks=(checks.ladder_within_long_training, checks.measured_rows_fit, checks.paper_scale_store_exists),
        ),
        Chapter(
            records.DICTIONARY_LOOKUP,
            profiles={
                "ci": {"n_seeds": CI_SEEDS, "steps": DICTIONARY_STEPS["ci"], "n_eval_sequences": 64, **CI_LONG,
                       **CI_DYNAMICS, **CI_RECHECK, **CI_COUNTER},
                "book": {**BOOK_TRAINING, "steps": DICTIONARY_STEPS["book"], "n_eval_sequences": 128,
                         **BOOK_LONG_DICTIONARY, **BOOK_DYNAMICS_DICTIONARY, **BOOK_RECHECK_DICTIONARY,
                         **BOOK_COUNTER_DICTIONARY, "paper_scale_dir": PAPER_SCALE_STORE},
                "paper": {**PAPER_TRAINING, "steps": DICTIONARY_STEPS["paper"], "n_eval_sequences": 1024},
            },
            checks=(checks.keys_cover_lengths, checks.ladder_within_long_training, checks.measured_rows_fit,
                    checks.recheck_fits, checks.counter_arm_fits, checks.paper_scale_store_exists),
        ),
        Chapter(
            records.DISTRIBUTION_SHIFT,
            profiles=_probing_profiles(ci_sequences=64),
            checks=(checks.training_length_is_tested, checks.distribution_lengths_tested, checks.components_within_hidden,
                    checks.shown_seed_exists),
        ),
        Chapter(
            records.DISPERSION,
            profiles=_probing_profiles(ci_sequences=32),
            checks=(checks.lengths_hold_top_k, checks.heatmap_lengths_tested, checks.examples_within_probes,
                    checks.shown_seed_exists),
        ),
        Chapter(
            records.ABLATIONS,
            profiles={
                "ci": {"n_seeds": CI_SEEDS, "argmax_steps": ARGMAX_STEPS["ci"], "dictionary_steps": DICTIONARY_STEPS["ci"],
                       "argmax_eval_sequences": 128, "dictionary_eval_sequences": 64,
                       **per_task_long(ARGMAX.name, CI_LONG), **per_task_long(DICTIONARY.name, CI_LONG)},
                "book": {**BOOK_TRAINING, "argmax_steps": ARGMAX_STEPS["book"],
                         "dictionary_steps": DICTIONARY_STEPS["book"],
                         "argmax_eval_sequences": 256, "dictionary_eval_sequences": 128,
                         # +std is trained for chapter 5's first run of 20 seeds only
                         **per_task_long(DICTIONARY.name, {**BOOK_LONG_DICTIONARY, "long_seeds": 20})},
                "paper": PAPER_BOTH_TASKS,
            },
            checks=(checks.keys_cover_lengths,),
        ),
        Chapter(
            records.LONGER_TRAINING,
            profiles={
                "ci": {"n_seeds": 2, "argmax_steps": 150, "dictionary_steps": 100,
                       "argmax_eval_sequences": 64, "dictionary_eval_sequences": 64, "checkpoint_every": 50},
                # The curriculum's late steps run on 256-item sequences (about 8x the cost of a
                # step at 16 items), so fewer steps than chapters 4-5 at the same 20 seeds.
                "book": {**BOOK_TRAINING, "argmax_steps": 1000, "dictionary_steps": 600,
                         "argmax_eval_sequences": 256, "dictionary_eval_sequences": 128},
                "paper": PAPER_BOTH_TASKS,
            },
            checks=(checks.curriculum_start_within_training, checks.keys_cover_lengths),
        ),
        Chapter(
            records.BEYOND,
            profiles={
                # ci shares chapter 8's ci runs (Baseline, +LN); short test lengths keep it to minutes
                "ci": {"n_seeds": CI_SEEDS, "argmax_steps": ARGMAX_STEPS["ci"], "dictionary_steps": DICTIONARY_STEPS["ci"],
                       "argmax_eval_sequences": 128, "dictionary_eval_sequences": 64,
                       "eval_lengths": [16, 128, 1024, 8192], "probe_sequences": 32,
                       "mc_lengths": [16, 256, 4096], "mc_sequences": 1024},
                "book": {**BOOK_TRAINING, "argmax_steps": ARGMAX_STEPS["book"],
                         "dictionary_steps": DICTIONARY_STEPS["book"],
                         "argmax_eval_sequences": 256, "dictionary_eval_sequences": 128},
                "paper": PAPER_BOTH_TASKS,
            },
            checks=(checks.keys_cover_lengths, checks.heads_divide_hidden, checks.training_length_is_tested),
        ),
        Chapter(
            records.SENSITIVITY,
            profiles={
                "ci": {"n_seeds": 2, "argmax_steps": 60, "dictionary_steps": 40, "seed_group": 0,
                       "eval_lengths": [16, 64, 256], "compared_lengths": [64, 256],
                       "argmax_eval_sequences": 32, "dictionary_eval_sequences": 32,
                       "argmax_rows": [{}, {"hidden": 32}, {"encode_query": False}],
                       "dictionary_rows": [{}, {"key_dim": 16, "value_dim": 16}, {"n_seeds": 3}]},
                "book": BOOK_SENSITIVITY,
                "paper": PAPER_SENSITIVITY,
            },
            checks=(checks.compared_lengths_tested, sensitivity.check_rows),
        ),
        Chapter(
            records.SUMMARY,
        ),
    ]
}


def get_chapter(name: str) -> Chapter:
    if name not in CHAPTERS:
        raise ParameterError(f"unknown chapter {name!r}; chapters: {', '.join(CHAPTERS)}")
    return CHAPTERS[name]


def parse_overrides(chapter: Chapter, pairs) -> dict:
    """[(name, text), ...] from the command line -> typed values, names checked."""
    spec = chapter.parameters()
    values = {}
    for name, text in pairs:
        if name not in spec:
            raise ParameterError(f"unknown parameter {name!r} for {chapter.name}; valid parameters: {', '.join(spec)}")
        values[name] = coerce(spec[name], text)
    return values


def checked_parameters(name: str, profile: str = DEFAULT_PROFILE, overrides: dict | None = None,
                       output_dir: Path | None = None) -> dict:
    """What papermill will inject: the profile and the overrides, with relative *_dir paths
    made absolute (the kernel runs in the repository root).  Raises ParameterError for any
    bad chapter, profile, name or value, so nothing runs."""
    overrides = dict(overrides or {})
    if output_dir is not None:
        overrides["output_dir"] = str(output_dir)
    given = {k: str(Path(v).resolve()) if k.endswith("_dir") and v else v for k, v in overrides.items()}
    P, chapter = resolved(name, profile, given), get_chapter(name)  # raises on anything bad
    checks.run_all(chapter.checks, P)
    return {"profile": profile, **given}


def configure(chapter_name: str, namespace: dict) -> Params:
    """In a chapter notebook: resolve its parameters (cell + profile + papermill
    injections) and check them all.  Values that differ from the cell's literal
    defaults also count as explicit, so interactive edits are respected."""
    chapter = get_chapter(chapter_name)
    spec = chapter.parameters()
    values = {name: namespace[name] for name in spec if name in namespace}
    explicit = injected_names() | {n for n, v in values.items() if v != spec[n].default}
    P = Params(resolve(spec, chapter.profiles, values, explicit))
    checks.run_all(chapter.checks, P)  # as `vvlib run` does before the kernel, for plain papermill
    pd.set_option("display.max_colwidth", None)  # every table cell whole: pandas' default cuts at 50 with "…"
    return P


def resolved(name: str, profile: str = DEFAULT_PROFILE, overrides: dict | None = None):
    """The parameters a chapter runs with at `profile` (e.g. to train its runs from a script,
    into the same store entries the chapter will read)."""
    chapter = get_chapter(name)
    spec = chapter.parameters()
    given = {"profile": profile, **(overrides or {})}
    return Params(resolve(spec, chapter.profiles, {**{n: p.default for n, p in spec.items()}, **given},
                          explicit=set(given) - {"profile"}))


def paper_scale_pending(P) -> str:
    """The opening of a chapter whose paper-scale results are not committed yet: the scale its
    numbers come from, beside the paper's, and why its verdicts are provisional."""
    tasks = [task for task in NAMES if f"{task}_steps" in P]
    steps = (f"{P['steps']:,} steps" if "steps" in P else
             " and ".join(f"{P[f'{t}_steps']:,}{' steps' if i == 0 else ''} ({t})" for i, t in enumerate(tasks)))
    longer = [f"{P[f'{t}_long_seeds']} seeds x {P[f'{t}_long_steps']:,} steps ({t})" for t in tasks
              if P.get(f"{t}_long_steps")]
    steps += f", and a longer training of {' and '.join(longer)}" if longer else ""
    return (f"**No paper-scale results for this chapter yet.** Everything below comes from {P['n_seeds']} seeds "
            f"per variant trained for {steps} (the paper: {PAPER_TRAINING['n_seeds']} seeds, "
            f"{ARGMAX_STEPS['paper']:,} steps for argmax retrieval and {DICTIONARY_STEPS['paper']:,} for dictionary "
            f"lookup). Too few steps can reverse a verdict: chapter 4 shows +LN's effect on argmax retrieval change "
            f"sign along training. Read the verdicts below as provisional until this chapter runs at its `paper` "
            f"profile.")


def paper_scale_runs(name: str, task: str, store_dir, draws: str = EARLIER_PAPER_RUN["draws"]):
    """Chapter `name`'s Baseline and +LN at its `paper` profile with `draws` (default: the earlier
    run, EARLIER_PAPER_RUN), trained on a GPU and read from store_dir (results/paper in the book),
    never trained here: (parameters, per-seed accuracy {run name: (seeds, lengths)} with fixed and
    adaptive temperature, {variant: run record}).  StoreError where they are not committed."""
    from ..experiments import variants

    P = resolved(name, "paper", {"store_dir": str(store_dir), "draws": draws})
    accuracy, records = variants.stored_train_and_evaluate(P, variants.task_config(P, task), ["baseline", "layernorm"],
                                                           ["fixed", "adaptive"], "cuda")
    return P, accuracy, records


def latest_paper_scale_runs(name: str, task: str, store_dir):
    """paper_scale_runs of the paper profile's own stream (PAPER_TRAINING's draws) where committed,
    else of the earlier run: (its draws, paper_scale_runs' three)."""
    from ..experiments.store import StoreError

    for draws in dict.fromkeys((PAPER_TRAINING["draws"], EARLIER_PAPER_RUN["draws"])):
        try:
            return draws, *paper_scale_runs(name, task, store_dir, draws)
        except StoreError:
            if draws == EARLIER_PAPER_RUN["draws"]:
                raise


def run_chapter(name: str, profile: str = DEFAULT_PROFILE, overrides: dict | None = None,
                output_dir: Path | None = None, notebook_out: Path | None = None, progress=True) -> Path:
    """Execute a chapter with papermill; returns the executed notebook's path.

    All parameters are checked before the kernel starts, so a bad value writes nothing.
    """
    import tempfile

    import papermill

    chapter = get_chapter(name)
    if distributed.env_rank() > 0:  # under torchrun, rank 0 alone keeps the executed notebook and results.json
        output_dir, notebook_out = Path(tempfile.mkdtemp(prefix=f"vvlib-rank{distributed.env_rank()}-")), None
    given = checked_parameters(name, profile, overrides, output_dir)
    out_dir = Path(given["output_dir"]) if "output_dir" in given else REPO_ROOT / chapter.parameters()["output_dir"].default
    notebook_out = Path(notebook_out or out_dir / f"{name}.ipynb")
    notebook_out.parent.mkdir(parents=True, exist_ok=True)
    papermill.execute_notebook(
        str(chapter.notebook), str(notebook_out), parameters=given, cwd=str(REPO_ROOT),
        progress_bar=progress, kernel_name="python3",
    )
    return notebook_out
