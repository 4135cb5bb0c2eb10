"""Build the Jupyter Book: execute every chapter into book/chapters/, then Sphinx.

The book is built with notebook execution off (papermill already ran the chapters)
and with warnings as errors, so a broken page fails the build instead of shipping.
"""

import shutil
import subprocess
import sys
from pathlib import Path

from .chapters import CHAPTERS, run_chapter
from .params import DEFAULT_PROFILE
from .store import REPO_ROOT

BOOK_FILES = ("_config.yml", "_toc.yml", "book")


def hide_plumbing(notebook: Path):
    """Tag the parameters cell and papermill's injected cell `remove-cell`: the page
    shows the resolved values in its own table instead."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if {"parameters", "injected-parameters"} & set(tags) and "remove-cell" not in tags:
            tags.append("remove-cell")
    nbformat.write(nb, notebook)


def execute_chapters(root: Path, profile: str = DEFAULT_PROFILE, output_root: Path | None = None, progress=True):
    """Run every chapter at `profile`; executed notebooks land in root/book/chapters/."""
    output_root = Path(output_root or REPO_ROOT / "_output")
    for name in CHAPTERS:
        notebook = run_chapter(name, profile, output_dir=output_root / name,
                               notebook_out=Path(root) / "book" / "chapters" / f"{name}.ipynb", progress=progress)
        hide_plumbing(notebook)


def build_html(root: Path) -> Path:
    """jupyter-book build of `root` (holding _config.yml, _toc.yml, book/); returns index.html."""
    root = Path(root)
    command = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(root), "-W", "--keep-going"]
    subprocess.run(command, check=True)
    return root / "_build" / "html" / "index.html"


def copy_sources(dest: Path):
    """The book's sources (config, toc, prose) in another folder, e.g. to build a test copy."""
    dest = Path(dest)
    for name in BOOK_FILES:
        src = REPO_ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("chapters", "_build"), dirs_exist_ok=True)
        else:
            shutil.copy2(src, dest / name)


def build_book(profile: str = DEFAULT_PROFILE) -> Path:
    execute_chapters(REPO_ROOT, profile)
    return build_html(REPO_ROOT)
