"""No prose page types a measured figure by hand: the book's pages (book/*.md) and its notebooks' markdown say
what was measured in words and leave the figures to the cells and generated fragments that compute them.

A figure here is a decimal, a percentage, a p-value, a count of points, or "N times as ..."; maths, code and
link targets are left out.  A setting or a reference that reads like one (weight decay 0.1, a 95% interval,
Llama-3.2) is named in SETTINGS, so that each exception is one visible line."""

import re
from pathlib import Path

import pytest

from vvlib.book import sentences

ROOT = Path(__file__).resolve().parent.parent
PAGES = sentences.pages(ROOT)

FIGURE = re.compile(r"\b\d+(\.\d+)? (percentage )?points\b|\b\d+ times as\b|\bp\s?[=<]\s?0?\.\d+"
                    r"|\d+(\.\d+)?\s?%|(?<![\w.])[-+−]?\d+\.\d+(?![\w.])")
SETTINGS = [r"95% (\S+ )?(interval|band)", r"a 95%", r"(weight decay|dropout)( of)? 0\.1\b", r"norm 1\.0\b",
            r"close to 0\.05", r"Llama-3\.2", r"Python 3\.\d+", r"[Ss]ection 3\.2", r"Lemma 2\.1",
            r"arXiv:\d{4}\.\d{5}", r"appendix B\.3",
            r"exercises? \d+\.\d+(,? (and )?\d+\.\d+)*",  # an exercise's name (4.1), not a figure
            r"probability 0\.99", r"[Cc]hance is 50%"]  # a setting of an exercise; two classes' chance level


def clean(text: str) -> list[str]:
    """A text's paragraphs with maths, code, citations, link targets and tags taken out."""
    for pattern in (r"```.*?```", r"\$\$.*?\$\$", r"\$[^$]+\$", r"`[^`]+`", r"\{[a-z:]+\}`[^`]*`", r"\]\([^)]*\)",
                    r"<[^>]+>"):
        text = re.sub(pattern, " ", text, flags=re.S)
    return [re.sub(r"\s+", " ", paragraph) for paragraph in text.split("\n\n")]


def prose(page: Path) -> list[str]:
    """A prose page's paragraphs (a notebook's: its markdown cells'), cleaned."""
    return clean(sentences.page_markdown(page))


def hand_typed(paragraph: str) -> list[str]:
    """The figures of a paragraph that no SETTINGS pattern covers."""
    allowed = [m.span() for pattern in SETTINGS for m in re.finditer(pattern, paragraph, re.I)]
    return [m.group(0) for m in FIGURE.finditer(paragraph)
            if not any(start <= m.start() and m.end() <= end for start, end in allowed)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_prose_page_types_a_measured_figure(page):
    found = [(figure, paragraph[:120]) for paragraph in prose(page) for figure in hand_typed(paragraph)]
    assert not found, f"{page.name}: figures typed by hand (compute them in a cell, or name a setting in SETTINGS)"


def test_the_check_finds_measured_figures_and_passes_settings_maths_and_code_by():
    typed = ("+LN is ahead by 6.4 points (p = 0.011), at 36.7% against 38.9%; a step takes 20 times as long. "
             "We use weight decay 0.1, a 95% interval, clipping at norm 1.0, $\\sigma = 0.5$ and `lr 0.001`.")
    [paragraph] = clean(typed)
    assert hand_typed(paragraph) == ["6.4 points", "p = 0.011", "36.7%", "38.9%", "20 times as"]
