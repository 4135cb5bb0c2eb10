"""What a chapter is: its record (name, title, the keys its results.json promises, what it trains
and probes), its named profiles, and the checks between its parameters.  One `Chapter` per file of
this package, with its parameters (names, defaults, help: declare.py), from which its notebook's
`parameters` cell is written."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..setups.paper_tasks import PaperTask
from ..setups.params import DEFAULT_PROFILE, Param, Params
from ..storage.store import REPO_ROOT

NOTEBOOKS = REPO_ROOT / "notebooks"


@dataclass(frozen=True)
class Metrics:
    """The top-level keys under "metrics" in a chapter's results.json."""
    required: frozenset
    optional: frozenset = frozenset()  # written only at some settings (e.g. when a longer training ran)


def keys(required: str, optional: str = "") -> Metrics:
    return Metrics(frozenset(required.split()), frozenset(optional.split()))


PER_LENGTH = "accuracy accuracy_sem p_value n_seeds"  # report.per_length


@dataclass(frozen=True)
class Work:
    """What one chapter trains (and evaluates) through variants.py."""
    tasks: tuple
    variants: tuple
    temperatures: tuple = ("fixed",)  # the main runs' evaluations; () where the chapter only probes them
    long: bool = False  # the chapter's long_* parameters add a longer training (variants.long_training)


@dataclass(frozen=True)
class Chapter:
    name: str  # the notebook's stem and the results folder's name
    title: str
    metrics: Metrics
    work: Work | None = None  # None: trains nothing through variants.py
    # the probe tables it computes from trained models (defined beside the record): (P, device) -> [(task, Probe)]
    probes: Callable | None = field(default=None, compare=False)
    row_tasks: tuple = ()  # chapter 11: the tasks whose runs come from its own row parameters (sensitivity.check_rows)
    # parameters whose defaults it sets itself, unlike the other training chapters ("steps[argmax]": one task's value)
    own_values: frozenset = frozenset()
    reproduces: PaperTask | None = None  # the paper's accuracy table it reproduces (chapters 4-5)
    # the variants whose paper-scale runs (or probes) must all be committed before its page shows a task's
    # (book/paper_scale.py), the others joining them as the GPU queue commits them; (): every one it trains or probes
    paper_scale_needs: tuple = ()
    profiles: dict = field(default_factory=dict, compare=False)  # profile -> {parameter: value}
    # checks beyond each parameter's own range, run before a kernel starts (checks.run_all); they raise ParameterError
    checks: tuple[Callable[[Params], object], ...] = field(default=(), compare=False)
    in_book: bool = True  # False: runnable and tested, but not yet a page of the published book
    params: tuple[Param, ...] = field(default=(), compare=False)  # its parameters, in the order its cell lists them
    # the few parameters (at most six) a reader would change, shown first in its page's rerun block, the rest collapsed
    reader: tuple[str, ...] = ()

    @property
    def tasks(self) -> tuple:
        """The tasks whose models it trains or reuses."""
        return self.work.tasks if self.work else self.row_tasks

    @property
    def notebook(self) -> Path:
        return NOTEBOOKS / f"{self.name}.ipynb"

    def parameters(self) -> dict[str, Param]:
        return {p.name: p for p in self.params}

    def profile_names(self):
        return [DEFAULT_PROFILE, *self.profiles]

    def profile_or_default(self, profile: str) -> str:
        """Book builds ask every chapter for one profile; those without it (1 has no `book`,
        1-3 no `paper`: they train nothing) run at their default."""
        return profile if profile in self.profile_names() else DEFAULT_PROFILE


ACCURACY_METRICS = keys(PER_LENGTH, "scales long paper_scale adaptive_reach")


def accuracy_work(task: PaperTask) -> Work:
    """Chapters 4-5: the paper's Baseline and +LN on one task, scored with both temperatures, and a
    longer training beside the main one."""
    from ..setups.sensitivity import PAIR  # Baseline and +LN, the paper's comparison

    return Work((task.name,), PAIR, ("fixed", "adaptive"), long=True)
