"""Files written whole or not at all: a reader, or a run interrupted mid-write, sees the old
file or the new one, never half of one (checkpoints, weights, results)."""

import os
from pathlib import Path

import torch


def atomic_write(path: Path, write):
    """Call write(tmp_path), then move the file into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    os.replace(tmp, path)


def save_torch(obj, path: Path):
    atomic_write(path, lambda tmp: torch.save(obj, tmp))
