import json
import os
import time

import numpy as np
import pytest
import torch

from vvlib.experiments.reports import run_groups
from vvlib.experiments.storage import runs, store
from vvlib.evaluate import EvalConfig
from vvlib.train import TrainConfig


def test_write_then_load_matching_and_nan_becomes_null(tmp_path):
    path = tmp_path / "r.json"
    store.write_json(path, {"spec": {"a": 1}, "p": float("nan")})
    assert store.load_matching(path, {"a": 1})["p"] is None
    assert store.load_matching(tmp_path / "absent.json", {"a": 1}) is None
    assert not list(tmp_path.glob("*.tmp"))


def test_corrupt_or_mismatched_file_is_reported_and_left_alone(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{"spec": {"a": 1}, "value": 3')  # truncated
    with pytest.raises(store.StoreError, match="corrupt"):
        store.load_matching(path, {"a": 1})
    assert path.read_text() == '{"spec": {"a": 1}, "value": 3'
    store.write_json(path, {"spec": {"a": 1}})
    with pytest.raises(store.StoreError, match="other settings"):
        store.load_matching(path, {"a": 2})


def test_a_store_of_the_first_spec_format_names_the_commit_that_migrates_it(tmp_path):
    store.write_json(tmp_path / "train-0123456789abcdef" / "run.json", {"spec": {"kind": "train", "format": 1}})
    with pytest.raises(store.StoreError, match=f"spec format 1.*commit {store.MIGRATED_AT}.*migrate-store"):
        runs.cached_tables(tmp_path, "probe", {"a": 1}, lambda: {})


def test_spec_hash_ignores_key_order():
    assert store.spec_hash({"a": 1, "b": [1, 2]}) == store.spec_hash({"b": [1, 2], "a": 1})
    assert store.spec_hash({"a": 1}) != store.spec_hash({"a": 2})


def test_trained_run_is_stored_once_and_reloaded_identically(small_argmax, tmp_path):
    cfg = TrainConfig(n_seeds=2, steps=5, batch_size=8)
    weights, record = runs.trained(tmp_path, small_argmax, cfg, "cpu", progress=False)
    folder = runs.run_dir(tmp_path, small_argmax, cfg, "cpu")
    assert (folder / "weights.pt").exists() and not (folder / "checkpoint.pt").exists()
    assert record["provenance"]["torch"] == torch.__version__
    again, record2 = runs.trained(tmp_path, small_argmax, cfg, "cpu", progress=False)
    assert all(torch.equal(weights[k], again[k]) for k in weights)
    assert record2["provenance"]["created"] == record["provenance"]["created"]  # loaded, not retrained

    eval_cfg = EvalConfig(lengths=(4, 32), n_sequences=20)
    acc = runs.evaluated(tmp_path, small_argmax, cfg, weights, eval_cfg, "cpu", progress=False)
    assert acc.shape == (2, 2) and ((0 <= acc) & (acc <= 1)).all()
    stored = list(folder.glob("eval-*.json"))
    assert len(stored) == 1
    # the cached evaluation is what is returned the second time, even if the weights were lost
    assert np.array_equal(runs.evaluated(tmp_path, small_argmax, cfg, None, eval_cfg, "cpu"), acc)


def test_stored_run_resumes_from_its_checkpoint_and_times_only_its_own_steps(small_argmax, tmp_path):
    from vvlib.train import Trainer, train

    cfg = TrainConfig(n_seeds=2, steps=10, batch_size=8, checkpoint_every=3, checkpoint_gap_s=0)
    before = time.perf_counter()
    partial = Trainer(small_argmax, cfg)
    built = time.perf_counter()
    for _ in range(6):
        partial.train_step()
    stepped = time.perf_counter()
    partial.save(runs.run_dir(tmp_path, small_argmax, cfg, "cpu") / "checkpoint.pt")  # as if interrupted at step 6
    saved = time.perf_counter()
    weights, record = runs.trained(tmp_path, small_argmax, cfg, "cpu", progress=False)
    straight, _ = train(small_argmax, cfg, progress=False)
    assert all(torch.equal(weights[k], straight[k]) for k in weights)
    assert record["resumed_from_step"] == 6
    wall, rate = record["provenance"]["wall_time_s"], record["model_steps_per_s"]  # both rounded
    assert abs(rate - 4 * 2 / wall) < abs(rate - 10 * 2 / wall)  # 4 steps x 2 seeds were timed, not 10 x 2
    # the first sitting's seconds, kept by its checkpoint: its 6 steps at least, its whole life at most
    assert stepped - built - 0.01 <= record["earlier_sittings_s"] <= saved - before + 0.01
    assert run_groups.training_seconds(record) == wall + record["earlier_sittings_s"]


def test_checkpoint_cadence_does_not_split_the_store(small_argmax, tmp_path):
    """Chapters that save progress at different intervals still share one trained run."""
    a = TrainConfig(n_seeds=2, steps=6, checkpoint_every=2)
    b = TrainConfig(n_seeds=2, steps=6, checkpoint_every=5, checkpoint_gap_s=0)
    assert runs.run_dir(tmp_path, small_argmax, a, "cpu") == runs.run_dir(tmp_path, small_argmax, b, "cpu")
    assert runs.run_dir(tmp_path, small_argmax, a, "cpu") != runs.run_dir(tmp_path, small_argmax,
                                                                            TrainConfig(n_seeds=2, steps=7), "cpu")


def test_a_committed_run_without_weights_serves_its_results_and_retrains_identically(small_argmax, tmp_path):
    """results/book/ is committed without weights: records and evaluations come from JSON,
    and asking for the weights retrains them, bit for bit."""
    cfg = TrainConfig(n_seeds=2, steps=4, batch_size=8)
    eval_cfg = EvalConfig(lengths=(4, 16), n_sequences=10)
    first = runs.TrainedRun(tmp_path, small_argmax, cfg, "cpu", progress=False)
    acc = first.evaluated(eval_cfg)
    weights = first.weights
    folder = runs.run_dir(tmp_path, small_argmax, cfg, "cpu")
    (folder / "weights.pt").unlink()

    lazy = runs.TrainedRun(tmp_path, small_argmax, cfg, "cpu", progress=False)
    assert np.array_equal(lazy.evaluated(eval_cfg), acc)
    assert lazy.record["provenance"] == first.record["provenance"]
    assert lazy._weights is None and not (folder / "weights.pt").exists()  # nothing was trained for that
    assert not (folder / runs.RETRAINED_FILE).exists()
    assert all(torch.equal(weights[k], lazy.weights[k]) for k in weights)
    note = json.loads((folder / runs.RETRAINED_FILE).read_text())  # the second training says it repeated the first
    assert note["same_loss_history"] is True and note["final_loss"] == first.record["final_loss"]
    assert note["recorded_provenance"] == first.record["provenance"]
    assert json.loads((folder / "run.json").read_text())["provenance"] == first.record["provenance"]  # kept as it was


def test_stored_only_mode_refuses_to_compute(small_argmax, tmp_path, monkeypatch):
    cfg = TrainConfig(n_seeds=1, steps=2, batch_size=4)
    eval_cfg = EvalConfig(lengths=(4,), n_sequences=4)
    runs.TrainedRun(tmp_path, small_argmax, cfg, "cpu", progress=False).evaluated(eval_cfg)
    monkeypatch.setenv(runs.STORED_ONLY, "1")
    stored = runs.TrainedRun(tmp_path, small_argmax, cfg, "cpu", progress=False)
    assert stored.evaluated(eval_cfg).shape == (1, 1)  # stored: fine
    with pytest.raises(store.StoreError, match="VVLIB_STORED_ONLY"):
        stored.evaluated(EvalConfig(lengths=(8,), n_sequences=4))
    with pytest.raises(store.StoreError, match="VVLIB_STORED_ONLY"):
        runs.TrainedRun(tmp_path, small_argmax, TrainConfig(n_seeds=1, steps=3, batch_size=4), "cpu").record
    with pytest.raises(store.StoreError, match="VVLIB_STORED_ONLY"):
        runs.cached_tables(tmp_path, "probe", {"a": 1}, lambda: {})


def test_runs_made_elsewhere_are_read_from_the_store_and_never_computed(small_argmax, tmp_path, monkeypatch):
    """variants.stored_train_and_evaluate (chapters 4-5's paper-scale section) reads what another
    device stored under its own device type, and refuses to train what is missing."""
    from vvlib.experiments.setups import variants
    from vvlib.experiments.setups.params import Params

    monkeypatch.delenv(runs.STORED_ONLY, raising=False)
    P = Params(n_seeds=2, steps=3, batch_size=4, lr=1e-3, weight_decay=0.0, min_len=2, max_len=4,
               seed=0, checkpoint_every=10, hidden=16, eval_lengths=[4, 8], n_eval_sequences=6, eval_seed=1,
               store_dir=str(tmp_path))
    computed, _ = variants.train_and_evaluate(P, small_argmax.task, ["baseline"], ["fixed"], "cpu")
    cpu_dir = runs.run_dir(tmp_path, variants.model_config(P, small_argmax.task, "baseline"),
                           variants.train_config(P), "cpu")
    loaded, records = variants.stored_train_and_evaluate(P, small_argmax.task, ["baseline"], ["fixed"], "cpu")
    assert np.array_equal(loaded["baseline"], computed["baseline"])
    assert records["baseline"]["spec"]["device_type"] == "cpu" and cpu_dir.is_dir()
    with pytest.raises(store.StoreError, match="VVLIB_STORED_ONLY"):
        variants.stored_train_and_evaluate(P, small_argmax.task, ["layernorm"], ["fixed"], "cpu")
    with pytest.raises(store.StoreError, match="VVLIB_STORED_ONLY"):  # nothing stored under cuda's names
        variants.stored_train_and_evaluate(P, small_argmax.task, ["baseline"], ["fixed"], "cuda")
    assert runs.STORED_ONLY not in os.environ
