"""Every chapter of the book in one place each: a module (cNN_name.py) or a folder (cNN_name/) whose CHAPTER is
its record, beside its page code and its own reports.  Chapters 4 and 5 share accuracy_page.py (chapter 5's own
report beside its record); the summary is summary/.  A new chapter also needs its notebook, its line in
_toc.yml and its README row (tests/test_pages.py)."""

import importlib
from pathlib import Path

from .c01_vanishing_variance_proof import CHAPTER as PROOF  # the chapters other modules name
from .c02_monte_carlo import CHAPTER as MONTE_CARLO
from .c03_pretrained_transformer import CHAPTER as PRETRAINED
from .c04_argmax_retrieval import CHAPTER as ARGMAX_RETRIEVAL
from .c05_dictionary_lookup import CHAPTER as DICTIONARY_LOOKUP
from .c06_distribution_shift import CHAPTER as DISTRIBUTION_SHIFT
from .c07_dispersion import CHAPTER as DISPERSION
from .c08_ablations import CHAPTER as ABLATIONS
from .c09_longer_training import CHAPTER as LONGER_TRAINING
from .c10_beyond import CHAPTER as BEYOND
from .c11_sensitivity import CHAPTER as SENSITIVITY
from . import summary
from .summary import CHAPTER as SUMMARY
from ...experiments.records.record import Chapter, Work
from ...experiments.setups.params import ParameterError

SUMMARY_FILE = summary.__name__.rpartition(".")[2]  # its folder
HERE = Path(__file__).parent


def _chapter_files() -> list[str]:
    """This package's chapters in the book's order of execution: cNN_* (modules and folders) by number,
    then the summary, which reads the others' results."""
    return sorted(p.stem for p in HERE.glob("c[0-9][0-9]_*") if p.suffix == ".py" or p.is_dir()) + [SUMMARY_FILE]


# every chapter's CHAPTER: a new chapter is a new module or folder here (and its notebook, and its line in _toc.yml)
CHAPTERS = {c.name: c for c in (importlib.import_module(f"{__name__}.{stem}").CHAPTER for stem in _chapter_files())}
TRAINING = {name: c for name, c in CHAPTERS.items() if c.tasks}  # the chapters that train or reuse models
BY_TASK = {c.reproduces.name: c for c in CHAPTERS.values() if c.reproduces}  # a task's accuracy chapter


def get_chapter(name: str) -> Chapter:
    if name not in CHAPTERS:
        raise ParameterError(f"unknown chapter {name!r}; chapters: {', '.join(CHAPTERS)}")
    return CHAPTERS[name]


def check_metrics(chapter: str, metrics: dict):
    """Raise ValueError naming the keys `metrics` lacks or should not have.  report.write_results
    calls it before writing, so a chapter cannot drift from what the summary and the tests read."""
    promised, found = get_chapter(chapter).metrics, set(metrics)
    missing, unknown = promised.required - found, found - promised.required - promised.optional
    if missing or unknown:
        raise ValueError(f"{chapter}'s metrics: missing {sorted(missing)}, "
                         f"not in vvlib/book/chapters/{chapter_file(chapter)} {sorted(unknown)}")


def chapter_file(chapter: str) -> str:
    """Where a chapter's record is, in this package ('c04_argmax_retrieval.py', 'c07_dispersion/__init__.py')."""
    stem = SUMMARY_FILE if chapter == SUMMARY.name else f"c{chapter}"
    return f"{stem}.py" if (HERE / f"{stem}.py").exists() else f"{stem}/__init__.py"
