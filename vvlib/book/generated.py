"""A block of a Markdown doc rendered from records: the text between two markers, written anew by code,
so that a doc's figures are read from the JSON that holds them, never typed.

    python -m vvlib.book.generated          # say which blocks are stale
    python -m vvlib.book.generated --write  # render them anew (results/paper/README.md's table of runs)

The notebooks' `parameters` cells are generated the same way, from each chapter's declared parameters.
"""

import argparse
import json
import sys
from pathlib import Path

from .chapters import CHAPTERS
from ..experiments.records.declare import cell_source
from ..experiments.reports import run_groups
from ..experiments.storage.store import REPO_ROOT


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}: generated from the records; do not edit by hand -->", f"<!-- end of {name} -->"


def replaced(text: str, name: str, block: str, where: str = "the doc") -> str:
    """`text` with the block called `name` rendered anew; a doc without both markers is refused."""
    begin, end = markers(name)
    if begin not in text or end not in text:
        raise ValueError(f"{where}: the markers of the generated block {name!r} are missing")
    head, rest = text.split(begin, 1)
    return f"{head}{begin}\n\n{block}\n\n{end}{rest.split(end, 1)[1]}"


PAPER_STORE = REPO_ROOT / "results" / "paper"
# every generated block of the vvlib docs: (file, block name, the function that renders it)
BLOCKS = [(PAPER_STORE / "README.md", "runs", lambda: run_groups.run_table(PAPER_STORE))]


def stale(blocks=BLOCKS) -> list[Path]:
    """The docs whose blocks differ from what their records give now."""
    return [path for path, name, render in blocks
            if replaced(path.read_text(), name, render(), str(path)) != path.read_text()]


def _parameters_cell(notebook: dict) -> dict:
    return next(c for c in notebook["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))


def stale_cells(chapters=CHAPTERS) -> list:
    """The chapters whose notebook's `parameters` cell is not what their declared parameters give."""
    return [chapter for chapter in chapters.values()
            if "".join(_parameters_cell(json.loads(chapter.notebook.read_text()))["source"]) != cell_source(chapter.params)]


def write_cell(chapter):
    notebook = json.loads(chapter.notebook.read_text())
    lines = cell_source(chapter.params).split("\n")
    _parameters_cell(notebook)["source"] = [line + "\n" for line in lines[:-1]] + lines[-1:]
    chapter.notebook.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="render every stale block anew")
    args = parser.parse_args(argv)
    for path in stale():
        if args.write:
            name, render = next((n, r) for p, n, r in BLOCKS if p == path)
            path.write_text(replaced(path.read_text(), name, render(), str(path)))
        print(f"{'rewrote' if args.write else 'stale'}: {path.relative_to(REPO_ROOT)}")
    for chapter in stale_cells():
        if args.write:
            write_cell(chapter)
        print(f"{'rewrote' if args.write else 'stale'}: the parameters cell of {chapter.notebook.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
