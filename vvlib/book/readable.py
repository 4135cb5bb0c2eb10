"""What a reader should never see in a built page, checked over a whole book.

    python -m vvlib.book.readable _build/html    # exit status 1 and every problem listed, or 0

A table cell cut short with "…" or a row of "..." (pandas cuts long cells and long tables by
default), "\\_" outside math (TeX that was not typeset), a Python list's or dict's repr in a table
cell, a figure drawn by a cell with no "Figure." caption after it (before the next figure), a caption
sentence over sentences.LONG words, more than sentences.MOST_LONG of the prose's
sentences (written and generated) over sentences.LONG words.  The
browser test checks the quick (ci) build; .ci/run checks the published one with this, since only
its tables hold every committed row.
"""

import argparse
import html
import re
import sys
from pathlib import Path

from . import sentences


def problems(page: str) -> list[str]:
    """The problems of one page's HTML (an interval of numbers such as [-4.0, -1.2] in a cell is fine)."""
    found = []
    for cell in re.findall(r"<td[^>]*>(.*?)</td>", page, flags=re.S):
        text = re.sub(r"<[^>]+>", "", cell).strip()
        if text.endswith(("…", "...")):
            found.append(f"cut short: {text[-60:]!r}")
        if re.search(r"\[['\"{]|\{'", text) or re.fullmatch(r"\[[^\]]*[A-Za-z][^\]]*\]", text):
            found.append(f"a Python list in a table cell: {text[:60]!r}")
    prose = re.sub(r'<(script|style|pre)\b.*?</\1>|<span class="math[^"]*">.*?</span>|<div class="math[^"]*">.*?</div>',
                   "", page, flags=re.S)
    found += [f"TeX outside math: {m!r}" for m in re.findall(r".{0,30}\\_.{0,30}", re.sub(r"<[^>]+>", "", prose))]
    return found + uncaptioned(page) + long_captions(page) + long_prose(page)


def article_prose(page: str) -> str:
    """A built page's prose, written and generated: its article's text less code, outputs in <pre>, tables, math,
    headings and collapsed (<details>) blocks, math as one word; each paragraph, list item and caption a block of
    its own."""
    found = re.search(r"<article\b[^>]*>(.*)</article>", page, flags=re.S)
    text = found.group(1) if found else page
    text = re.sub(r"<(script|style|pre|table|details|h[1-6])\b.*?</\1>", "", text, flags=re.S)
    text = re.sub(r'<(span|div) class="math[^"]*">.*?</\1>', "M", text, flags=re.S)  # a symbol: one word
    text = re.sub(r"</?(?:p|li|div|dd|dt|figcaption|blockquote|section)\b[^>]*>", "\n\n", text)
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def long_prose(page: str) -> list[str]:
    """One problem where more than sentences.MOST_LONG of the page's prose sentences run over sentences.LONG words,
    naming the longest."""
    said = sentences.sentences(article_prose(page))
    long = sorted((s for s in said if len(s.split()) > sentences.LONG), key=lambda s: -len(s.split()))
    if len(long) <= sentences.MOST_LONG * len(said):
        return []
    return [f"{len(long)} of {len(said)} prose sentences over {sentences.LONG} words, the longest "
            f"({len(long[0].split())} words): {long[0][:60]!r}"]


def long_captions(page: str) -> list[str]:
    """The sentences of the page's "Figure." captions that run over sentences.LONG words."""
    captions = re.findall(r"<strong>Figure(?: [\w.]+)?\.</strong>(.*?)</p>", page, flags=re.S)
    said = [html.unescape(re.sub(r"<[^>]+>", " ", caption)) for caption in captions]
    return [f"a long caption sentence: {s[:60]!r}" for text in said for s in sentences.sentences(text)
            if len(s.split()) > sentences.LONG]


def uncaptioned(page: str) -> list[str]:
    """The figures a cell drew (an image outside a <figure>, which carries its own caption) with no "Figure."
    between them and the next image."""
    images = list(re.finditer(r"<img\b[^>]*>", page))
    found = []
    for image, following in zip(images, [*images[1:], None]):
        if "<figure" in page[max(0, image.start() - 300):image.start()]:
            continue
        after = re.sub(r"<[^>]+>", " ", page[image.end():following.start() if following else len(page)])
        if not re.search(r"Figure(?: [\w.]+)?\.", after):
            src = re.search(r'src="([^"]*)"', image.group(0))
            found.append(f"a figure without its caption: {src.group(1) if src else image.group(0)[:60]}")
    return found


def book_problems(html: Path) -> dict:
    """{page: its problems} for every page of the book's own (book/) of a built _build/html."""
    pages = sorted((Path(html) / "book").rglob("*.html"))
    if not pages:
        raise FileNotFoundError(f"no pages under {Path(html) / 'book'}: build the book first (bash scripts/book.sh)")
    return {str(page.relative_to(html)): found for page in pages if (found := problems(page.read_text()))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", nargs="?", default="_build/html", help="a built book's HTML (default: _build/html)")
    try:
        found = book_problems(Path(parser.parse_args(argv).html))
    except FileNotFoundError as exc:
        parser.error(str(exc))
    for page, listed in found.items():
        print(f"{page}: " + "; ".join(listed[:5]) + (f" (and {len(listed) - 5} more)" if len(listed) > 5 else ""))
    print(f"readable: {len(found)} page(s) with problems" if found else "readable: every page")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
