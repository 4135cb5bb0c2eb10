"""Every chapter of the book, one file each: its record, its profiles (ci, book, paper), the checks
between its parameters that only it makes, and the scales and paper numbers it uses.

record.py says what a chapter is; scales.py holds the scales several chapters share (the book's seeds
and steps, the paper's); checks.py the checks several chapters make.  Adding a chapter is a file here
(cNN_name.py, defining CHAPTER), its notebook, its line in _toc.yml and its row in the README's table of
chapters (tests/test_pages.py holds them together).
"""

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
from .summary_page import CHAPTER as SUMMARY
from .record import Chapter, Work
from ..setups.params import ParameterError

SUMMARY_FILE = "summary_page"


def _chapter_files() -> list[str]:
    """This package's chapter files in the book's order of execution: cNN_*.py by number, then the summary,
    which reads the others' results."""
    return sorted(p.stem for p in Path(__file__).parent.glob("c[0-9][0-9]_*.py")) + [SUMMARY_FILE]


# every file's CHAPTER: a new chapter is a new file here (and its notebook, and its line in _toc.yml)
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
                         f"not in vvlib/experiments/chapters/{chapter_file(chapter)} {sorted(unknown)}")


def chapter_file(chapter: str) -> str:
    """The file of this package that defines a chapter ('c07_dispersion.py', 'summary_page.py')."""
    return f"{SUMMARY_FILE}.py" if chapter == SUMMARY.name else f"c{chapter}.py"
