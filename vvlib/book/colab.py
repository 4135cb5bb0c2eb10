"""Google Colab: the first cell of every chapter notebook, which installs the project when the chapter was opened
in Colab (a launch button) and does nothing anywhere else, and the profile a chapter runs at there.

The cell is written from one template with the repository of _config.yml (`repository: url:`), since a
notebook opened in Colab cannot tell where it came from: `sync_notebooks()` rewrites it after that url changes.
"""

import json
from pathlib import Path

from ..experiments.storage.store import REPO_ROOT

TAG = "colab-install"  # with remove-cell: the book hides it

TEMPLATE = '''# Opened in Google Colab: install this project, work from its folder (elsewhere this cell does nothing).
import sys

if "google.colab" in sys.modules:
    import os
    import subprocess

    REPOSITORY = "{url}"  # _config.yml's repository url, written by vvlib.book.colab.sync_notebooks
    if not REPOSITORY:
        raise RuntimeError("this copy does not name its GitHub repository: set REPOSITORY to its url")
    if not os.path.exists("vv"):
        subprocess.run(["git", "clone", "--depth", "1", REPOSITORY, "vv"], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-r", "vv/requirements.txt", "-e", "vv"], check=True)
    os.chdir("vv")
    sys.path.insert(0, os.getcwd())
    import torch

    COLAB_PROFILE = "paper" if torch.cuda.is_available() else "ci"  # page.configure runs the chapter at it'''


def configured_url(root: Path = REPO_ROOT, field: str = "url") -> str:
    """_config.yml's `repository: url:` (or another field of it, e.g. "branch"), or "" where it names none."""
    import yaml

    config = yaml.safe_load((Path(root) / "_config.yml").read_text()) or {}
    return str((config.get("repository") or {}).get(field) or "")


def install_source(url: str) -> str:
    return TEMPLATE.replace("{url}", url)


def colab_profile(chapter, namespace: dict, injected: set) -> str | None:
    """In Colab, where nothing was injected for `profile`: ci on a CPU, paper with a GPU (each chapter's own
    default where it lacks that profile).  Elsewhere None: the notebook's cell and papermill decide."""
    wanted = namespace.get("COLAB_PROFILE")
    if wanted is None or "profile" in injected or namespace.get("profile") != chapter.parameters()["profile"].default:
        return None
    return chapter.profile_or_default(wanted)


def sync_notebooks(url: str | None = None, folder: Path = REPO_ROOT / "notebooks") -> list:
    """Put the install cell, for `url` (default: the configured one), first in every chapter notebook: its first
    code cell, under the title, before the parameters cell papermill injects after."""
    import uuid

    source = install_source(configured_url() if url is None else url)
    changed = []
    for path in sorted(Path(folder).glob("*.ipynb")):
        nb = json.loads(path.read_text())
        cells = [c for c in nb["cells"] if TAG not in c["metadata"].get("tags", [])]
        old = next((c for c in nb["cells"] if TAG in c["metadata"].get("tags", [])), None)
        lines = source.split("\n")
        cell = {"cell_type": "code", "execution_count": None, "id": old["id"] if old else uuid.uuid4().hex[:8],
                "metadata": {"tags": ["remove-cell", TAG]}, "outputs": [],
                "source": [line + "\n" for line in lines[:-1]] + [lines[-1]]}
        at = 1 if cells and cells[0]["cell_type"] == "markdown" else 0
        if old == cell and nb["cells"][at] is old:
            continue
        nb["cells"] = [*cells[:at], cell, *cells[at:]]
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        changed.append(path.name)
    return changed
