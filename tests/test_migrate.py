"""A store migration renames and rewrites specs, never numbers: a store aged back to the first
spec format comes out of `migrate` byte for byte as today's code writes it."""

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
import torch

from vvlib import evaluate
from vvlib.experiments.setups import migrate
from vvlib.experiments.storage import runs, store
from vvlib.book.chapters.c10_beyond import DEEPER
from vvlib.train import TrainConfig, Trainer

EVAL = evaluate.EvalConfig(lengths=(8, 32), n_sequences=24, seed=7)
ONE_GROUP = dict(n_seeds=2, steps=6, batch_size=16, checkpoint_every=2, checkpoint_gap_s=0, seed_group=4)  # 4 >= 2 seeds: one group


def format_1(spec):
    """A spec as the first store format wrote it: heads, layers and logit_scale left out at their
    defaults, seed_group left out where the seeds formed one group."""
    if isinstance(spec, dict) and spec.get("kind") == "train":
        old = {**spec, "format": 1, "model": dict(spec["model"]), "train": dict(spec["train"])}
        for name, default in {"heads": 1, "layers": 1, "logit_scale": "none"}.items():
            if old["model"][name] == default:
                del old["model"][name]
        if old["train"]["seed_group"] == 0:
            del old["train"]["seed_group"]
        return old
    if isinstance(spec, dict):
        return {k: format_1(v) for k, v in spec.items()}
    return [format_1(v) for v in spec] if isinstance(spec, list) else spec


def age(store_dir):
    """Rewrite a store of today's format as format 1 wrote it: specs, names and checkpoints."""
    for folder in sorted(store_dir.iterdir()):
        spec = None  # the spec that names the folder
        for path in folder.glob("*.json"):
            record = store.read_json(path)
            record["spec"] = format_1(record["spec"])
            path.unlink()
            if path.name in ("run.json", "tables.json"):
                store.write_json(path, record)
                spec = record["spec"]
            else:
                store.write_json(folder / f"{path.name.split('-')[0]}-{store.spec_hash(record['spec'])}.json", record)
                spec = spec or record["spec"]["train"]
        if (folder / "checkpoint.pt").exists():
            state = torch.load(folder / "checkpoint.pt", weights_only=False)
            old = format_1({"kind": "train", "engine": runs.ENGINE_VERSIONS["cpu"], "device_type": "cpu", **state["configs"]})
            state["configs"] = {"model": old["model"], "train": old["train"]}
            torch.save(state, folder / "checkpoint.pt")
            spec = spec or old
        folder.rename(store_dir / f"{folder.name.rsplit('-', 1)[0]}-{store.spec_hash(spec)}")


def snapshot(store_dir) -> dict:
    return {p.relative_to(store_dir): p.read_bytes() for p in sorted(store_dir.rglob("*"))
            if p.is_file() and p.suffix != ".pt"}


@pytest.fixture
def todays_store(small_argmax, tmp_path):
    """A finished run with an evaluation, a table folder naming it, and a run
    interrupted after its first checkpoint, written by today's code."""
    root = tmp_path / "store"
    done = TrainConfig(**ONE_GROUP)
    runs.TrainedRun(root, small_argmax, done, "cpu", progress=False).evaluated(EVAL)
    spec = {"kind": "probe", "runs": {"baseline": runs.training_spec(small_argmax, done, "cpu")}, "choices": {}}
    runs.cached_tables(root, "probe-test", spec, lambda: {"t": pd.DataFrame({"x": [1.5, 2.5]})})
    interrupted = TrainConfig(**{**ONE_GROUP, "seed": 1})
    folder = runs.run_dir(root, small_argmax, interrupted, "cpu")
    folder.mkdir()
    trainer = Trainer(small_argmax, interrupted, "cpu")
    with pytest.raises(KeyboardInterrupt):
        trainer.run(folder / "checkpoint.pt", progress=False,
                    on_step=lambda step: (_ for _ in ()).throw(KeyboardInterrupt) if step == 3 else None)
    return root, interrupted


def test_an_aged_store_migrates_back_to_todays_bytes(todays_store, small_argmax):
    root, _ = todays_store
    today = snapshot(root)
    age(root)
    aged = snapshot(root)
    assert set(aged).isdisjoint(today)  # every name changed
    assert migrate.migrate(root, dry_run=True) and snapshot(root) == aged  # a dry run writes nothing
    moved = migrate.migrate(root)
    assert len(moved) == 3  # the two runs and the table folder
    assert snapshot(root) == today
    assert migrate.migrate(root) == []  # a migrated store stays as it is


def test_a_run_interrupted_before_the_migration_resumes_after_it(todays_store, small_argmax):
    root, interrupted = todays_store
    age(root)
    migrate.migrate(root)
    resumed = Trainer(small_argmax, interrupted, "cpu")
    assert resumed.resume(runs.run_dir(root, small_argmax, interrupted, "cpu") / "checkpoint.pt")
    assert resumed.step == 2
    whole = Trainer(small_argmax, interrupted, "cpu")
    a, b = resumed.run(progress=False), whole.run(progress=False)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_folder_whose_name_is_not_its_specs_hash_stops_the_migration_before_any_write(todays_store):
    root, _ = todays_store
    age(root)
    run = next(p for p in root.iterdir() if (p / "run.json").exists())
    run.rename(root / "train-0123456789abcdef")
    before = snapshot(root)
    with pytest.raises(store.StoreError, match="does not match its spec's hash"):
        migrate.migrate(root)
    assert snapshot(root) == before


def test_the_command_names_a_missing_store(tmp_path, capsys):
    from vvlib.__main__ import main

    assert main(["migrate-store", str(tmp_path / "nowhere")]) == 2
    assert "store_dir" in capsys.readouterr().err


# Every record committed under results/book when its specs were migrated to format 2, as a digest
# of everything but its spec (tests/data/book_numbers.json, written once from the store before
# the migration with `numbers_digest`).  Later results add records; none of these may change.
BOOK_NUMBERS = Path(__file__).parent / "data" / "book_numbers.json"


def numbers_digest(name: str, text: str) -> str:
    """A record's numbers, without the spec that names it (the part a migration rewrites)."""
    if name.endswith(".json"):
        payload = json.loads(text)
        payload.pop("spec", None)
        text = json.dumps(payload, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def rejoined_probes(store_dir: Path) -> dict:
    """{name: text} of the probe folders a migration split into per-run parts, put back together:
    each table's rows in the order of the variants, under one header, and tables.json with the
    whole probe's wall time."""
    order = list(DEEPER)  # the variants in the order every probe listed them
    groups = {}
    for record_path in sorted(store_dir.glob("probe-*/tables.json")):
        record = json.loads(record_path.read_text())
        if "split_from" in record["provenance"]:
            (variant,) = record["spec"]["runs"]
            groups.setdefault(record["provenance"]["split_from"]["folder"], []).append((order.index(variant), record_path))
    rejoined = {}
    for name, parts in groups.items():
        folders = [path.parent for _, path in sorted(parts)]
        record = json.loads((folders[0] / "tables.json").read_text())
        split = record["provenance"].pop("split_from")
        record["provenance"]["wall_time_s"] = split["wall_time_s"]
        rejoined[f"{name}/tables.json"] = json.dumps(record)
        for table in record["tables"]:
            texts = [(folder / f"{table}.csv").read_text() for folder in folders]
            rejoined[f"{name}/{table}.csv"] = texts[0] + "".join(t.split("\n", 1)[1] for t in texts[1:])
    return rejoined


def test_every_number_committed_before_the_migration_is_in_the_book_store():
    """Probes since split into per-run parts count once their parts are put back together, byte for byte."""
    store_dir = store.REPO_ROOT / "results" / "book"
    now = {numbers_digest(p.name, p.read_text()) for p in store_dir.rglob("*") if p.suffix in (".json", ".csv")}
    now |= {numbers_digest(name, text) for name, text in rejoined_probes(store_dir).items()}
    before = json.loads(BOOK_NUMBERS.read_text())
    assert len(before) == 99
    assert set(before) <= now
