"""Rewrite a results store in today's spec format, once, without changing a number.

Every stored record names the settings it was made with (its `spec`), and its file or folder
is named by a hash of that spec.  When the form of specs changes (a new config field, or a
field once left out at its default), `python -m vvlib migrate-store DIR` reads each training
spec back into configs, fills the fields it lacks with today's defaults (an option added
without changing old behaviour defaults to what old runs did), writes today's spec and renames
the file or folder by the new hash.  Accuracies, ladders, tables, weights and checkpoints are
carried over as they are, so an interrupted run resumes after the migration.
"""

from pathlib import Path

import torch

from . import runs, store
from ..model import ModelConfig
from ..tasks import TaskConfig
from ..train import TrainConfig

FORMAT_1 = 1  # specs left out heads, layers and logit_scale at their defaults, and seed_group for one group


def todays_training_spec(spec: dict) -> dict:
    """A stored training spec, of any format, as today's code writes it (its engine kept:
    a run of an older engine stays apart from today's runs)."""
    model = dict(spec["model"])
    model_cfg = ModelConfig(task=TaskConfig(**model.pop("task")), **model)
    today = runs.training_spec(model_cfg, TrainConfig(**spec["train"]), spec["device_type"])
    return {**today, "engine": spec["engine"]}


def todays_spec(spec):
    """Any stored spec with each training spec inside it (a run's, an evaluation's `train`,
    a probe's `runs`) made today's."""
    if isinstance(spec, dict) and spec.get("kind") == "train":
        return todays_training_spec(spec)
    if isinstance(spec, dict):
        return {k: todays_spec(v) for k, v in spec.items()}
    if isinstance(spec, list):
        return [todays_spec(v) for v in spec]
    return spec


def _named_by(path: Path, spec: dict, suffix: str = "") -> str:
    """The hash part of a record's name, checked against its spec (else it is not ours to rename)."""
    prefix, _, rest = path.name.partition("-")
    digest = rest[: -len(suffix)] if suffix else rest
    if not rest.endswith(suffix) or digest != store.spec_hash(spec):
        raise store.StoreError(f"{path}: its name does not match its spec's hash; not migrating this store")
    return prefix


def _checkpoint_spec(folder: Path, checkpoint: dict) -> dict:
    """A run folder holding only a checkpoint: its spec, from the configs the checkpoint keeps,
    in the format, on the device type and of the engine whose hash names the folder."""
    for spec_format in (FORMAT_1, store.STORE_FORMAT):
        for device_type in ("cpu", "cuda"):
            for engine in range(1, max(runs.ENGINE_VERSIONS.values()) + 1):
                spec = {"kind": "train", "format": spec_format, "engine": engine, **checkpoint["configs"],
                        "device_type": device_type}
                if f"train-{store.spec_hash(spec)}" == folder.name:
                    return spec
    raise store.StoreError(f"{folder}: cannot tell which settings its checkpoint was written for")


def _records(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json") if p.name != "run.json")


def _run_spec(folder: Path) -> dict:
    """The training spec of a run folder, from run.json, an evaluation or its checkpoint."""
    if (folder / "run.json").exists():
        return store.read_json(folder / "run.json")["spec"]
    for path in _records(folder):
        return store.read_json(path)["spec"]["train"]
    checkpoint = folder / "checkpoint.pt"
    if checkpoint.exists():
        return _checkpoint_spec(folder, torch.load(checkpoint, map_location="cpu", weights_only=False, mmap=True))
    raise store.StoreError(f"{folder}: no record or checkpoint says what it holds")


def _migrate_run(folder: Path, dry_run: bool) -> Path:
    old = _run_spec(folder)
    _named_by(folder, old)
    new = todays_training_spec(old)
    target = folder.with_name(f"train-{store.spec_hash(new)}")
    renamed = {}  # eval-*, ladder-* and ladder-*.partial records: {path: (new path, new record)}
    for path in _records(folder):
        record = store.read_json(path)
        suffix = ".partial.json" if path.name.endswith(".partial.json") else ".json"
        prefix = _named_by(path, record["spec"], suffix)
        record["spec"] = todays_spec(record["spec"])
        renamed[path] = (path.with_name(f"{prefix}-{store.spec_hash(record['spec'])}{suffix}"), record)
    if target == folder or dry_run:
        return target
    if target.exists():
        raise store.StoreError(f"{folder} would become {target}, which exists; not migrating")
    for path, (new_path, record) in renamed.items():
        store.write_json(new_path, record)
        path.unlink()
    if (folder / "run.json").exists():
        record = store.read_json(folder / "run.json")
        store.write_json(folder / "run.json", {**record, "spec": new})
    checkpoint = folder / "checkpoint.pt"
    if checkpoint.exists():
        state = torch.load(checkpoint, weights_only=False)
        state["configs"] = {"model": new["model"], "train": new["train"]}
        store.save_torch(state, checkpoint)
    folder.rename(target)  # last (an interrupted migration of a committed store: `git checkout` it and rerun)
    return target


def _migrate_tables(folder: Path, dry_run: bool) -> Path:
    """A folder of cached tables (e.g. probe-distribution-<hash>): its spec names the runs."""
    record = store.read_json(folder / "tables.json")
    prefix = folder.name[: -len(store.spec_hash(record["spec"])) - 1]
    if folder.name != f"{prefix}-{store.spec_hash(record['spec'])}":
        raise store.StoreError(f"{folder}: its name does not match its spec's hash; not migrating this store")
    record["spec"] = todays_spec(record["spec"])
    target = folder.with_name(f"{prefix}-{store.spec_hash(record['spec'])}")
    if target == folder or dry_run:
        return target
    if target.exists():
        raise store.StoreError(f"{folder} would become {target}, which exists; not migrating")
    store.write_json(folder / "tables.json", record)
    folder.rename(target)
    return target


def migrate(store_dir, dry_run: bool = False) -> list[tuple[Path, Path]]:
    """[(old, new)] for every run and table folder of the store that today's specs rename;
    `dry_run` only lists them.  Every folder is checked before any is written."""
    if not Path(store_dir).is_dir():
        raise store.StoreError(f"{store_dir} is not a results store (no such folder)")
    folders = sorted(p for p in Path(store_dir).iterdir() if p.is_dir())
    steps = {f: _migrate_run for f in folders if f.name.startswith("train-")}
    steps |= {f: _migrate_tables for f in folders if f not in steps and (f / "tables.json").exists()}
    plan = {folder: step(folder, dry_run=True) for folder, step in steps.items()}
    if not dry_run:
        plan = {folder: step(folder, dry_run=False) for folder, step in steps.items()}
    return [(old, new) for old, new in plan.items() if old != new]
