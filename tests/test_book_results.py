"""The committed results of the published book (results/book/) are intact: every record
parses, sits under the hash of the settings it claims, and says where it was computed.

That they are the results the chapters ask for is checked by building the book with
`python -m vvlib book --profile book --stored-only` (.ci/run), which fails on any missing
or mismatched record instead of recomputing it."""

import json

import pytest

from vvlib.book import paper_scale
from vvlib.experiments.storage import store
from vvlib.book.chapters import CHAPTERS
from vvlib.experiments.records.scales import BOOK_STORE, PAPER_SCALE_STORE

BOOK = store.REPO_ROOT / BOOK_STORE
PAPER_SCALE = store.REPO_ROOT / PAPER_SCALE_STORE  # chapters 4-5 at the paper profile, trained on a GPU
RECORDS = sorted(p for folder in (BOOK, PAPER_SCALE) if folder.exists() for p in folder.glob("*/*.json"))
# the entries of investigations the book no longer shows: kept as committed, read by no chapter (archived.json)
ARCHIVED = {BOOK / entry for found in json.loads((BOOK / "archived.json").read_text())["investigations"].values()
            for entry in found["entries"]}


def test_results_are_committed_for_every_training_chapter():
    assert any(p.name == "run.json" for p in RECORDS)
    assert [c for c in CHAPTERS.values() if c.profiles.get("book", {}).get("store_dir") == BOOK_STORE]


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: str(p.relative_to(store.REPO_ROOT)))
def test_record_matches_its_name_and_has_provenance(path):
    record = json.loads(path.read_text())
    digest = store.spec_hash(record["spec"])
    if path.name == "run.json":
        assert path.parent.name == f"train-{digest}"
    elif path.name == "tables.json":
        assert path.parent.name.endswith(f"-{digest}")
        assert all((path.parent / f"{t}.csv").exists() for t in record["tables"])
    elif path.name.startswith("ladder-"):  # an archived step ladder (docs/investigations.md)
        assert path.name == f"ladder-{digest}.json" and path in ARCHIVED
        assert record["spec"]["train"] == json.loads((path.parent / "run.json").read_text())["spec"]
    else:
        assert path.name == f"eval-{digest}.json"
        assert record["spec"]["train"] == json.loads((path.parent / "run.json").read_text())["spec"]
        assert len(record["accuracy"]) == record["spec"]["train"]["train"]["n_seeds"]
    provenance = record["provenance"]
    assert {"device", "torch", "git_commit", "created", "wall_time_s"} <= set(provenance)
    assert "+dirty" not in provenance["git_commit"], "published results must come from committed code"


def book_results(monkeypatch, chapter: str, task: str, long=False):
    """(parameters, what the chapter computes) at the book profile, from the committed records
    only: train_and_evaluate's (accuracy, training), or long_training's (accuracy, {}, training)."""
    from vvlib.experiments.setups import variants
    from vvlib.book import runner
    from vvlib.experiments.storage.runs import STORED_ONLY

    monkeypatch.setenv(STORED_ONLY, "1")  # read the committed records; never train
    P = runner.resolved(chapter, "book", {"store_dir": str(BOOK)})
    compute = variants.long_training if long else variants.train_and_evaluate
    return P, compute(P, variants.task_config(P, task), ["baseline", "layernorm"], ["fixed", "adaptive"], "cpu")


@pytest.mark.parametrize("path", [p for p in RECORDS if p.name == "run.json" and p not in ARCHIVED],
                         ids=lambda p: str(p.parent.relative_to(store.REPO_ROOT)))
def test_todays_code_names_every_committed_run_as_it_was_stored(path):
    """Rebuild each committed run's configs from its stored settings: the code must compute the
    very spec (and so the folder) the run is stored under, or a refactor has silently stranded
    it (the book would retrain it, or fail with --stored-only)."""
    from vvlib.model import ModelConfig
    from vvlib.experiments.storage.runs import run_dir, training_spec
    from vvlib.tasks import TaskConfig
    from vvlib.train import TrainConfig

    spec = json.loads(path.read_text())["spec"]
    model = ModelConfig(**{**spec["model"], "task": TaskConfig(**spec["model"]["task"])})
    train = TrainConfig(**spec["train"])
    assert training_spec(model, train, spec["device_type"]) == spec
    assert run_dir(path.parent.parent, model, train, spec["device_type"]) == path.parent


def test_the_argmax_training_loss_does_not_rise_as_chapter_5_says(monkeypatch):
    """Chapter 5: argmax retrieval's training loss, at the constant rate, is lowest near the end of its
    100,000 steps (the last 5%), on the CPU's longer training and at the paper's scale alike."""
    import numpy as np


    _, (_, runs) = book_results(monkeypatch, "04_argmax_retrieval", "argmax", long=True)
    P, _, paper_runs = paper_scale.accuracy_runs("04_argmax_retrieval", "argmax", PAPER_SCALE)
    histories = [r["loss_history"] for rs in runs.values() for r in rs] + [r["loss_history"] for r in paper_runs.values()]
    assert len(histories) == 3 * 2 + 2  # the CPU's runs of 4 seeds, and the GPU's of 100
    for history in histories:
        means = [np.mean(losses) for _, losses in history]
        assert history[int(np.argmin(means))][0] >= 0.95 * P.steps
