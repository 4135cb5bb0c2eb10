"""Train once, probe many: cached training runs and evaluations in the results store.

    <store>/train-<hash>/run.json       what was trained, how, where, how long
    <store>/train-<hash>/weights.pt     final weights of all seeds
    <store>/train-<hash>/checkpoint.pt  only while training: resume point
    <store>/train-<hash>/eval-<hash>.json   per-seed accuracies for one EvalConfig

The hash covers every setting that changes the numbers, including the device type
(CPU and CUDA draw different random streams), so a cached result is only reused for
exactly the run that was asked for.
"""

import dataclasses
import time
from pathlib import Path

import numpy as np
import torch

from . import evaluate, store, train
from .model import ModelConfig
from .train import TrainConfig


# Bump when a code change alters trained weights beyond what the configs describe
# (e.g. the optimizer implementation), so that older cached runs are not reused.
ENGINE_VERSION = 3  # 3: dictionary keys drawn by first-distinct draws (new random streams)


def training_spec(model_cfg: ModelConfig, train_cfg: TrainConfig, device) -> dict:
    return {
        "kind": "train",
        "format": store.STORE_FORMAT,
        "engine": ENGINE_VERSION,
        "model": dataclasses.asdict(model_cfg),
        "train": train.weight_settings(train_cfg),
        "device_type": torch.device(device).type,
    }


def run_dir(store_dir, model_cfg, train_cfg, device) -> Path:
    return Path(store_dir) / f"train-{store.spec_hash(training_spec(model_cfg, train_cfg, device))}"


def trained(store_dir, model_cfg: ModelConfig, train_cfg: TrainConfig, device, progress=True):
    """(weights, run record): loaded from the store, or trained (resuming) and stored."""
    spec = training_spec(model_cfg, train_cfg, device)
    folder = run_dir(store_dir, model_cfg, train_cfg, device)
    record = store.load_matching(folder / "run.json", spec)
    if record is not None:
        weights_file = folder / "weights.pt"
        try:
            weights = torch.load(weights_file, map_location=device, weights_only=True)
        except Exception as exc:
            raise store.StoreError(f"{weights_file} is unreadable ({exc}); move {folder} away to retrain") from exc
        return weights, record
    trainer = train.Trainer(model_cfg, train_cfg, device)
    trainer.resume(folder / "checkpoint.pt")
    start_step = trainer.step  # > 0 when an interrupted run resumes
    start = time.perf_counter()
    weights = trainer.run(folder / "checkpoint.pt", progress=progress)
    wall = time.perf_counter() - start
    store.save_torch(weights, folder / "weights.pt")
    steps_here = train_cfg.steps - start_step
    history = trainer.loss_history
    record = {
        "spec": spec,
        "provenance": store.provenance(device, wall),  # wall time of the steps run by this process
        "resumed_from_step": start_step,
        "model_steps_per_s": round(steps_here * train_cfg.n_seeds / wall, 1) if steps_here else None,
        "final_loss": history[-1][1] if history else None,
        "loss_history": history,
    }
    store.write_json(folder / "run.json", record)
    (folder / "checkpoint.pt").unlink(missing_ok=True)
    return weights, record


def evaluated(store_dir, model_cfg, train_cfg, weights, eval_cfg: evaluate.EvalConfig, device, progress=True):
    """Per-seed accuracy (seeds, lengths) as a numpy array, from the store or computed."""
    spec = {"kind": "eval", "train": training_spec(model_cfg, train_cfg, device),
            "eval": dataclasses.asdict(eval_cfg), "block": evaluate.EVAL_BLOCK}
    path = run_dir(store_dir, model_cfg, train_cfg, device) / f"eval-{store.spec_hash(spec)}.json"
    record = store.load_matching(path, spec)
    if record is None:
        start = time.perf_counter()
        acc = evaluate.accuracy(model_cfg, weights, eval_cfg, device, progress=progress)
        record = {"spec": spec, "provenance": store.provenance(device, time.perf_counter() - start),
                  "accuracy": acc.tolist()}
        store.write_json(path, record)
    return np.asarray(record["accuracy"], dtype=float)
