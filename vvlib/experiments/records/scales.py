"""The scales several chapters share, each written once: the ci smoke test, the published book's
scale and the paper's.  Chapters 6-10 load the models of chapters 4 and 5 from the results store,
which only works when their training settings agree profile by profile: each task's steps and test
sequences at each scale are its record's (paper_tasks.PaperTask.scales), and the chapters' profiles
take them from there.  A scale that one chapter alone uses is in that chapter's file."""

from ..setups import paper
from ..setups.paper_tasks import TASKS, PaperTask
from ..setups.params import PER_TASK

CI_SEEDS = 3
# The runs at every chapter's `paper` profile, trained on a GPU and committed (results/paper/README.md): the
# paper command stores them here and the book reads them from here, beside its own scales.
PAPER_SCALE_STORE = "results/paper"
# Runs at the paper's scale draw from the counter stream (a CPU can repeat any seed); chapters 4-5's first ones
# drew from per-seed generators and stay, read as the earlier, independent run (EARLIER_PAPER_RUN).
PAPER_TRAINING = {"n_seeds": paper.SEEDS, "checkpoint_every": 1000, "draws": "counter", "store_dir": PAPER_SCALE_STORE}
EARLIER_PAPER_RUN = {"draws": "generators", "seed_chunk": 0}  # each variant's 100 seeds in one run
# The published book's scale: chapters 4-8 in about two hours of 2 CPU cores, chapter 9 two more (book/scale.md says
# what that changes).  Its results are committed under BOOK_STORE and loaded, not recomputed.
BOOK_STORE = "results/book"
BOOK_TRAINING = {"n_seeds": 20, "store_dir": BOOK_STORE}
# Chapters 4-5's longer training beside the main one (the `long_*` parameters), as a smoke test: two runs of one
# seed each, joined.  The book's own is each task's record's (PaperTask.scales["book"]["long"]).
CI_LONG = {"long_steps": 60, "long_seeds": 2, "long_seed_chunk": 1, "long_seed_group": 0}


def probed_longer(task: PaperTask) -> dict:
    """The first two runs of `task`'s longer training at the book's scale (8 seeds, the paper's steps, on a CPU):
    those chapters 6 and 7 probe.  The store commits no weights, so probing a run means training it again (hours
    on a CPU: README.md gives the measured times), and the later runs are not probed."""
    return {**task.scales["book"]["long"], "long_seeds": 8}


def task_scale(task: PaperTask, scale: str) -> dict:
    """A one-task chapter's settings of `task` at a named scale: {"steps", "n_eval_sequences"}."""
    return {name: value for name, value in task.scales[scale].items() if name != "long"}


def per_task(values: dict) -> dict:
    """A two-task chapter's entries, a dict per task for each per-task setting (params.PER_TASK):
    {ARGMAX: {"steps": 150}, DICTIONARY: {"steps": 100}} -> {"steps": {"argmax": 150, "dictionary": 100}};
    a profile that names one task changes that task's value alone.  Settings that are not per task
    (long_seed_group) keep one value, and the tasks must agree on it."""
    named = {}
    for task, settings in values.items():
        for name, value in settings.items():
            if name in PER_TASK:
                named.setdefault(name, {})[task.name] = value
            elif named.setdefault(name, value) != value:
                raise ValueError(f"{name}: the tasks disagree ({named[name]!r} and {value!r}) on a shared setting")
    return named


def both_tasks(scale: str) -> dict:
    """Each task's steps and test sequences at `scale`, per task (a task whose record has no such scale keeps its
    defaults)."""
    return per_task({task: task_scale(task, scale) for task in TASKS if scale in task.scales})


# Chapters 8-10 train both tasks: their paper profile.
PAPER_BOTH_TASKS = {**PAPER_TRAINING, **both_tasks("paper")}


# A task's settings at a scale that name its stored runs (with the shared ones above): a chapter that probes
# another's models takes these, and its own test sequences.
RUN_SETTINGS = ("steps", "seed_chunk")


def probing_profiles(task: PaperTask, ci_sequences: int) -> dict:
    """Chapters 6 and 7 probe chapter 4's models: its training settings, their own probe size."""
    runs = {scale: {k: v for k, v in task.scales[scale].items() if k in RUN_SETTINGS} for scale in task.scales}
    return {"ci": {"n_seeds": CI_SEEDS, **runs["ci"], "n_probe_sequences": ci_sequences},
            "book": {**BOOK_TRAINING, **runs["book"], "paper_scale_dir": PAPER_SCALE_STORE},
            "paper": {**PAPER_TRAINING, **runs["paper"], "n_probe_sequences": 1024}}
