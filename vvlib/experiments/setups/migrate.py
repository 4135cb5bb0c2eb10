"""Rewrite a results store in today's spec format, once, without changing a number.

Every stored record names the settings it was made with (its `spec`), and its file or folder
is named by a hash of that spec.  When the form of specs changes (a new config field, or a
field once left out at its default), `python -m vvlib migrate-store DIR` reads each training
spec back into configs, fills the fields it lacks with today's defaults (an option added
without changing old behaviour defaults to what old runs did), writes today's spec and renames
the file or folder by the new hash.  Accuracies, tables, weights and checkpoints are
carried over as they are, so an interrupted run resumes after the migration.  A probe stored
whole for several runs is split into its per-run parts (probes.py), each holding its run's rows,
and a sharpness test stored with all its betas into one part per beta.
"""

import shutil
from pathlib import Path

import pandas as pd
import torch

from . import probes
from ..storage import runs, store
from ...model import ModelConfig
from ...tasks import TaskConfig
from ...train import TrainConfig

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


def _migrate_run(folder: Path, dry_run: bool) -> list[Path]:
    old = _run_spec(folder)
    _named_by(folder, old)
    new = todays_training_spec(old)
    target = folder.with_name(f"train-{store.spec_hash(new)}")
    renamed = {}  # eval-* records (and an archived ladder-*): {path: (new path, new record)}
    for path in _records(folder):
        record = store.read_json(path)
        prefix = _named_by(path, record["spec"], ".json")
        record["spec"] = todays_spec(record["spec"])
        renamed[path] = (path.with_name(f"{prefix}-{store.spec_hash(record['spec'])}.json"), record)
    if target == folder or dry_run:
        return [target]
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
    return [target]


def _migrate_tables(folder: Path, dry_run: bool) -> list[Path]:
    """A folder of cached tables (e.g. probe-distribution-<hash>): its spec names the runs.  A
    probe of several runs, as stored before probes were kept one part per run (probes.py), is
    split into one folder per run."""
    record = store.read_json(folder / "tables.json")
    prefix = folder.name[: -len(store.spec_hash(record["spec"])) - 1]
    if folder.name != f"{prefix}-{store.spec_hash(record['spec'])}":
        raise store.StoreError(f"{folder}: its name does not match its spec's hash; not migrating this store")
    record["spec"] = todays_spec(record["spec"])
    if len(record["spec"].get("runs", {})) > 1:
        return _split_probe(folder, prefix, record, dry_run)
    if "betas" in record["spec"].get("choices", {}):
        return _split_betas(folder, prefix, record, dry_run)
    target = folder.with_name(f"{prefix}-{store.spec_hash(record['spec'])}")
    if target == folder or dry_run:
        return [target]
    if target.exists():
        raise store.StoreError(f"{folder} would become {target}, which exists; not migrating")
    store.write_json(folder / "tables.json", record)
    folder.rename(target)
    return [target]


def _split_probe(folder: Path, prefix: str, record: dict, dry_run: bool) -> list[Path]:
    """One folder per probed run, each with that run's rows of every table (probes.row_labels) and
    a spec naming that run alone."""
    spec = record["spec"]
    parts = {variant: {**spec, "runs": {variant: run_spec}} for variant, run_spec in spec["runs"].items()}
    rows_of = lambda frame, variant: frame["variant"].isin(probes.row_labels(variant))
    return _split(folder, prefix, record, parts, rows_of, dry_run)


def _split_betas(folder: Path, prefix: str, record: dict, dry_run: bool) -> list[Path]:
    """A sharpness test stored with all its betas in one folder, as before probes.sharpness kept one part per
    beta: one folder per beta, each with that beta's rows and a spec naming that beta alone."""
    spec = record["spec"]
    others = {k: v for k, v in spec["choices"].items() if k != "betas"}
    parts = {float(beta): {**spec, "choices": {**others, **probes.sharpness_split(beta)}}
             for beta in spec["choices"]["betas"]}
    return _split(folder, prefix, record, parts, lambda frame, beta: frame["beta"] == beta, dry_run)


def _split(folder: Path, prefix: str, record: dict, parts: dict, rows_of, dry_run: bool) -> list[Path]:
    """`folder` split into one folder per part {key: its spec}, each holding the rows rows_of(frame, key) selects
    of every table; the wall time and the size (where recorded) are shared equally between them."""
    targets = {key: folder.with_name(f"{prefix}-{store.spec_hash(part_spec)}") for key, part_spec in parts.items()}
    if dry_run:
        return list(targets.values())
    if any(target.exists() for target in targets.values()):
        raise store.StoreError(f"{folder} would be split into folders that exist; not migrating")
    frames = {t: pd.read_csv(folder / f"{t}.csv") for t in record["tables"]}
    whole = record["provenance"]["wall_time_s"]
    provenance = {**record["provenance"], "wall_time_s": whole / len(parts),
                  "split_from": {"folder": folder.name, "wall_time_s": whole}}
    sized = {"size": record["size"] // len(parts)} if "size" in record else {}
    for key, target in targets.items():
        for t, frame in frames.items():
            rows = frame[rows_of(frame, key)]
            store.atomic_write(target / f"{t}.csv", lambda tmp, rows=rows: rows.to_csv(tmp, index=False))
        store.write_json(target / "tables.json", {"spec": parts[key], "provenance": provenance,
                                                   "tables": record["tables"], **sized})
    shutil.rmtree(folder)  # last (an interrupted migration of a committed store: `git checkout` it and rerun)
    return list(targets.values())


def migrate(store_dir, dry_run: bool = False) -> list[tuple[Path, Path]]:
    """[(old, new)] for every run and table folder of the store that today's specs rename (a
    probe split into parts: one pair per part); `dry_run` only lists them.  Every folder is
    checked before any is written."""
    if not Path(store_dir).is_dir():
        raise store.StoreError(f"{store_dir} is not a results store (no such folder)")
    folders = sorted(p for p in Path(store_dir).iterdir() if p.is_dir())
    steps = {f: _migrate_run for f in folders if f.name.startswith("train-")}
    steps |= {f: _migrate_tables for f in folders if f not in steps and (f / "tables.json").exists()}
    plan = {folder: step(folder, dry_run=True) for folder, step in steps.items()}
    if not dry_run:
        plan = {folder: step(folder, dry_run=False) for folder, step in steps.items()}
    return [(old, new) for old, targets in plan.items() for new in targets if new != old]
