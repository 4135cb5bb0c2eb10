"""How long the book's written sentences run: the prose of book/*.md and of each notebook's markdown cells,
cut into sentences, with those over a reader's limit listed.

    python -m vvlib.book.sentences            # every page's words and share of long sentences; exit status 1 over a limit

Code, math blocks, tables, headings, HTML and directive lines are not prose and are left out; a list item is
a sentence of its own however it ends.  Generated text (the computed sentences a notebook prints) is not
counted here: it is written by vvlib's report functions.
"""

import json
import re
import sys
from pathlib import Path

LONG = 40  # words: a sentence over this is hard to read in one go
MOST_LONG = 0.02  # the share of a page's sentences that may run over LONG
WORDS_ALLOWED = {"intro.md": 500, "scale.md": 1500}  # a page's written prose at most; a chapter's, CHAPTER_WORDS
CHAPTER_WORDS = 3000
ABBREVIATION = re.compile(r"\b(e\.g|i\.e|etc|vs|cf|al|Fig)\.")  # a full stop that ends no sentence


def prose(markdown: str) -> str:
    """The markdown less what is not prose: fenced blocks, display math, table/heading/HTML/directive lines."""
    text = re.sub(r"^\s*(```|:::).*?^\s*\1\s*$", "", markdown, flags=re.S | re.M)
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)
    return re.sub(r"^\s*(?:[|#<]|:::|\(\w+\)=).*$", "", text, flags=re.M)


def sentences(markdown: str) -> list[str]:
    """The prose's sentences: paragraphs and list items, each cut after '.', '!' or '?' (or one closing a
    parenthesis) and a space, whatever follows (a generated sentence may open with a task's name or a number;
    a decimal point has no space after it); fragments under three words (a label, a lone link) are not
    sentences."""
    found = []
    for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+\.)\s)", prose(markdown)):
        text = re.sub(r"\s+", " ", re.sub(r"^\s*(?:[-*+]|\d+\.)\s+", "", block)).strip()
        text = ABBREVIATION.sub(r"\1", text)
        found += [s for s in re.split(r"(?:(?<=[.!?])|(?<=[.!?]\)))\s+", text) if len(s.split()) >= 3]
    return found


def long_sentences(markdown: str) -> list[str]:
    return [s for s in sentences(markdown) if len(s.split()) > LONG]


def words(markdown: str) -> int:
    """How many words the prose's sentences hold."""
    return sum(len(s.split()) for s in sentences(markdown))


def words_allowed(path: Path) -> int | None:
    """A page's word budget: a chapter notebook's CHAPTER_WORDS, a book page's from WORDS_ALLOWED; None if it has none."""
    return CHAPTER_WORDS if path.suffix == ".ipynb" else WORDS_ALLOWED.get(path.name)


def page_markdown(path: Path) -> str:
    """A page's written prose: a markdown file's text, or a notebook's markdown cells."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return path.read_text()


def pages(root: Path) -> list[Path]:
    return sorted((root / "book").glob("*.md")) + sorted((root / "notebooks").glob("*.ipynb"))


def main(root: Path = Path(__file__).resolve().parents[2]) -> int:
    over = 0
    for path in pages(root):
        text = page_markdown(path)
        every, long = sentences(text), long_sentences(text)
        share, allowed = len(long) / max(1, len(every)), words_allowed(path)
        over += share > MOST_LONG or (allowed is not None and words(text) > allowed)
        print(f"{path.relative_to(root)}: {words(text):,} words" + (f" (at most {allowed:,})" if allowed else "")
              + f", {len(every)} sentences, {len(long)} over {LONG} words ({share:.0%})")
        for sentence in long:
            print(f"    [{len(sentence.split())}] {sentence[:100]}…")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
