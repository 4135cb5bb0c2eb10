"""Train once, probe many: cached training runs and evaluations in the results store.

    <store>/train-<hash>/run.json       what was trained, how, where, how long
    <store>/train-<hash>/weights.pt     final weights of all seeds
    <store>/train-<hash>/checkpoint.pt  only while training: resume point
    <store>/train-<hash>/retrained.json  a stored run trained again (its weights were not stored): was it the same?
    <store>/train-<hash>/eval-<hash>.json   per-seed accuracies for one EvalConfig
    <store>/<name>-<hash>/tables.json + *.csv   a chapter's probe tables (see cached_tables)

The hash covers every setting that changes the numbers, including the device type
(CPU and CUDA draw different random streams), so a cached result is only reused for
exactly the run that was asked for.

The JSON and CSV files are small and carry their provenance, so they can be committed
(results/book/ holds the published book's) without the weights: a chapter that only
needs them never loads or trains a model.  With VVLIB_STORED_ONLY=1 set, anything
missing from the store raises StoreError instead of being computed (how CI checks that
the published book comes from the committed results).

Under torchrun (vvlib/distributed.py) every rank runs the same code: training spreads the
seeds over the ranks; rank 0 decides what the store holds (distributed.agreed) and alone
writes to it (_publish); the others wait for its writes where they may read them.
"""

import contextlib
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ... import distributed, evaluate, train
from . import store
from ...model import ModelConfig, settings as model_settings
from ...train import TrainConfig


# Bump when a code change alters trained weights beyond what the configs describe, so that stored runs are not
# reused; per device type, so a change to GPU draws leaves every CPU result where it is.
ENGINE_VERSIONS = {
    "cpu": 3,  # 3: dictionary keys drawn by first-distinct draws (new random streams)
    "cuda": 4,  # 4: dictionary keys in a fixed number of kernels (draws.sample_distinct_fixed)
}


def training_spec(model_cfg: ModelConfig, train_cfg: TrainConfig, device) -> dict:
    return {
        "kind": "train",
        "format": store.STORE_FORMAT,
        "engine": ENGINE_VERSIONS[torch.device(device).type],
        "model": model_settings(model_cfg),
        "train": train.weight_settings(train_cfg),
        "device_type": torch.device(device).type,
    }


def run_dir(store_dir, model_cfg, train_cfg, device) -> Path:
    return Path(store_dir) / f"train-{store.spec_hash(training_spec(model_cfg, train_cfg, device))}"


def eval_spec(model_cfg, train_cfg, eval_cfg: evaluate.EvalConfig, device) -> dict:
    return {"kind": "eval", "train": training_spec(model_cfg, train_cfg, device),
            "eval": evaluate.settings(eval_cfg), "block": evaluate.EVAL_BLOCK}


def eval_path(store_dir, model_cfg, train_cfg, eval_cfg: evaluate.EvalConfig, device) -> Path:
    spec = eval_spec(model_cfg, train_cfg, eval_cfg, device)
    return run_dir(store_dir, model_cfg, train_cfg, device) / f"eval-{store.spec_hash(spec)}.json"


STORED_ONLY = "VVLIB_STORED_ONLY"
WEIGHTS_FILE = "weights.pt"  # a run's trained weights, in its folder beside run.json; never committed
RETRAINED_FILE = "retrained.json"  # written where a run with a stored record is trained again (retrained_note)


@contextlib.contextmanager
def stored_only(on: bool = True):
    """Inside, STORED_ONLY is set (on) or cleared (off), then restored: set, anything missing
    from the store raises StoreError instead of being computed.  Child processes (papermill's
    kernels) inherit it."""
    previous = os.environ.get(STORED_ONLY)
    os.environ[STORED_ONLY] = "1" if on else "0"
    try:
        yield
    finally:
        if previous is None:
            del os.environ[STORED_ONLY]
        else:
            os.environ[STORED_ONLY] = previous


def _may_compute(what: str, path: Path, store_dir):
    store.check_format(store_dir)
    if os.environ.get(STORED_ONLY, "") not in ("", "0"):
        raise store.StoreError(f"{what} is not in the results store ({path}) and {STORED_ONLY} is set: "
                               "run the chapter with the command in its page header to compute it")


def trained(store_dir, model_cfg: ModelConfig, train_cfg: TrainConfig, device, progress=True):
    """(weights, run record): loaded from the store, or trained (resuming) and stored.  A record committed
    without weights is trained again (the same weights on the same kind of CPU and threads); the record stays."""
    spec = training_spec(model_cfg, train_cfg, device)
    folder = run_dir(store_dir, model_cfg, train_cfg, device)
    weights_file = folder / WEIGHTS_FILE
    record, has_weights = distributed.agreed(lambda: (store.load_matching(folder / "run.json", spec),
                                                      weights_file.exists()))
    if record is not None and has_weights:
        try:
            weights = torch.load(weights_file, map_location=device, weights_only=True)
        except Exception as exc:
            raise store.StoreError(f"{weights_file} is unreadable ({exc}); move {folder} away to retrain") from exc
        return weights, record
    _may_compute("trained weights", weights_file, store_dir)
    return _train_and_store(model_cfg, train_cfg, device, folder, progress)


def _publish(write):
    """write() on rank 0 only (everywhere outside torchrun), then wait for it on every rank."""
    if distributed.is_writer():
        write()
    distributed.barrier()


def _train(model_cfg, train_cfg, device, checkpoint: Path, progress):
    """(all seeds' weights, loss history, the step training started from, {checkpoints written,
    seconds spent writing them} and the seconds earlier sittings trained, each None under torchrun),
    resuming from `checkpoint`: in this process, or with the seeds spread over torchrun's ranks."""
    if distributed.spreads(train_cfg):
        return *distributed.train_spread(model_cfg, train_cfg, device, checkpoint, progress), None, None
    trainer = train.Trainer(model_cfg, train_cfg, device)
    trainer.resume(checkpoint)
    # under torchrun without spreading, every rank trains the whole run: all resume from the same
    # checkpoint before rank 0 (alone) writes the next one
    distributed.barrier()
    start_step = trainer.step  # > 0 when an interrupted run resumes
    weights = trainer.run(checkpoint if distributed.is_writer() else None, progress=progress)
    return (weights, trainer.loss_history, start_step, {"written": trainer.saves, "seconds": round(trainer.saving_s, 2)},
            trainer.earlier_s)


def _train_and_store(model_cfg, train_cfg, device, folder: Path, progress):
    """Train (resuming from folder's checkpoint); store the weights and run.json where they are not
    stored yet (a stored record is never rewritten).  Returns (weights, record)."""
    spec = training_spec(model_cfg, train_cfg, device)
    start, commit = time.perf_counter(), store.git_commit()
    weights, history, start_step, saving, earlier_s = _train(model_cfg, train_cfg, device, folder / "checkpoint.pt",
                                                             progress)
    wall = time.perf_counter() - start
    record = distributed.agreed(lambda: store.load_matching(folder / "run.json", spec))
    if record is None:
        steps_here = train_cfg.steps - start_step
        record = {
            "spec": spec,
            "provenance": store.provenance(device, wall, commit),  # wall time of the steps run by this process
            "resumed_from_step": start_step,
            # seconds the earlier sittings of a resumed run trained, up to its checkpoint (None: not known)
            "earlier_sittings_s": None if earlier_s is None else round(earlier_s, 2),
            # the real loop's speed: every step this process ran over its wall time, checkpoints included
            "model_steps_per_s": round(steps_here * train_cfg.n_seeds / wall, 1) if steps_here else None,
            "checkpoints": saving,
            "final_loss": history[-1][1] if history else None,
            "loss_history": history,
        }
        if distributed.spreads(train_cfg):
            record["ranks"] = distributed.rank_and_size()[1]
        _publish(lambda: store.write_json(folder / "run.json", record))
    else:  # the record stays; say whether this training repeated it
        note = retrained_note(record, history, device, wall, commit)
        _publish(lambda: store.write_json(folder / RETRAINED_FILE, note))

    def finish():
        if not (folder / WEIGHTS_FILE).exists():
            store.save_torch(weights, folder / WEIGHTS_FILE)
        (folder / "checkpoint.pt").unlink(missing_ok=True)

    _publish(finish)
    return weights, record


def retrained_note(record: dict, history, device, wall: float, commit) -> dict:
    """What training a stored run again says of the first training: whether every logged loss of every seed is the
    record's, bit for bit.  A lent GPU brings back no weights, so an evaluation or probe added later trains its run
    again and reads those weights: they are the ones the record and its evaluations describe only where this holds
    (the same computation on another kind of GPU, or CPU, or thread count, may round differently)."""
    history = [[step, list(losses)] for step, losses in history]  # as the record holds it, read back from JSON
    return {"provenance": store.provenance(device, wall, commit), "same_loss_history": history == record["loss_history"],
            "final_loss": history[-1][1] if history else None, "recorded_provenance": record["provenance"]}


def joined_history(records: list) -> list:
    """One loss history [(step, [loss per seed])] from runs of consecutive seeds (a chapter's seeds
    stored as several runs): their seeds side by side, step by step."""
    histories = [r["loss_history"] for r in records]
    steps = [step for step, _ in histories[0]]
    if any([step for step, _ in h] != steps for h in histories):
        raise ValueError("runs logged their losses at different steps; they cannot be joined")
    return [(step, [loss for h in histories for loss in h[i][1]]) for i, step in enumerate(steps)]


def joined_record(records: list) -> dict:
    """One training record for runs of consecutive seeds: a single run's own record; for several,
    the first's provenance with every run's wall time summed, the loss history of all their seeds,
    and `parts`, the runs' records (each with its spec; the joined record has none of its own)."""
    if len(records) == 1:
        return records[0]
    first = records[0]["provenance"]
    return {"provenance": {**first, "wall_time_s": sum(r["provenance"]["wall_time_s"] or 0 for r in records)},
            "loss_history": joined_history(records), "parts": records}


def run_records(record: dict) -> list:
    """The records of the runs behind a training record: joined_record's parts, or the record itself."""
    return record.get("parts", [record])


def evaluated(store_dir, model_cfg, train_cfg, weights, eval_cfg: evaluate.EvalConfig, device, progress=True):
    """Per-seed accuracy (seeds, lengths) as a numpy array, from the store or computed.

    `weights` may be a function returning them, called only when they are needed."""
    spec = eval_spec(model_cfg, train_cfg, eval_cfg, device)
    path = eval_path(store_dir, model_cfg, train_cfg, eval_cfg, device)
    record = distributed.agreed(lambda: store.load_matching(path, spec))
    if record is None:
        _may_compute("this evaluation", path, store_dir)
        weights = weights() if callable(weights) else weights  # (may train them: not the evaluation's time)
        start = time.perf_counter()
        correct = _block_correct(model_cfg, weights, eval_cfg, device, progress)
        record = {"spec": spec, "provenance": store.provenance(device, time.perf_counter() - start),
                  "accuracy": (correct.sum(-1).double() / eval_cfg.n_sequences).tolist(),
                  # per block of test sequences (evaluate.block_correct): how much the test set moves a mean
                  "correct_per_block": correct.tolist()}
        _publish(lambda: store.write_json(path, record))
    return np.asarray(record["accuracy"], dtype=float)


def _block_correct(model_cfg, weights, eval_cfg, device, progress):
    """evaluate.block_correct, or under torchrun each rank's consecutive share of the seeds, joined
    (a seed's answers do not depend on the seeds evaluated beside it)."""
    if not distributed.launched():
        return evaluate.block_correct(model_cfg, weights, eval_cfg, device, progress=progress)
    rank, size = distributed.rank_and_size()
    begin, end = distributed.share_bounds(next(iter(weights.values())).shape[0], rank, size)
    blocks = -(-eval_cfg.n_sequences // evaluate.EVAL_BLOCK)
    mine = (evaluate.block_correct(model_cfg, {k: v[begin:end] for k, v in weights.items()}, eval_cfg, device,
                                   progress=progress and rank == 0) if end > begin
            else torch.zeros(0, len(eval_cfg.lengths), blocks, dtype=torch.long))
    return torch.cat(distributed.gather(mine.cpu()))


class TrainedRun:
    """One trained ensemble, touched only as far as asked: `record` reads run.json (training
    only if the run is not stored), `weights` loads or trains them on first use."""

    def __init__(self, store_dir, model_cfg: ModelConfig, train_cfg: TrainConfig, device, progress=True):
        self.store_dir, self.model_cfg, self.train_cfg = store_dir, model_cfg, train_cfg
        self.device, self.progress = device, progress
        self.spec = training_spec(model_cfg, train_cfg, device)
        self._weights = self._record = None

    def _train_or_load(self):
        self._weights, self._record = trained(self.store_dir, self.model_cfg, self.train_cfg, self.device,
                                              self.progress)

    @property
    def record(self) -> dict:
        if self._record is None:
            folder = run_dir(self.store_dir, self.model_cfg, self.train_cfg, self.device)
            self._record = distributed.agreed(lambda: store.load_matching(folder / "run.json", self.spec))
            if self._record is None:
                self._train_or_load()
        return self._record

    @property
    def weights(self) -> dict:
        if self._weights is None:
            self._train_or_load()
        return self._weights

    def evaluated(self, eval_cfg: evaluate.EvalConfig) -> np.ndarray:
        return evaluated(self.store_dir, self.model_cfg, self.train_cfg, lambda: self.weights, eval_cfg,
                         self.device, self.progress)


def tables_folder(store_dir, name: str, spec: dict) -> Path:
    """Where cached_tables keeps the tables `name` made with `spec`."""
    return Path(store_dir) / f"{name}-{store.spec_hash(spec)}"


def cached_tables(store_dir, name: str, spec: dict, compute, device="cpu", size: float | None = None) -> dict:
    """{table name: DataFrame}: read from <store>/<name>-<hash>/ when made with `spec`, else compute()d and stored as
    CSV, tables.json last (no half-result).  size: the work it was (a probe's items), for units.measured_rates."""
    folder = tables_folder(store_dir, name, spec)
    index = distributed.agreed(lambda: store.load_matching(folder / "tables.json", spec))
    if index is not None:
        try:
            return {t: pd.read_csv(folder / f"{t}.csv") for t in index["tables"]}
        except (OSError, ValueError, KeyError) as exc:
            raise store.StoreError(f"{folder} holds unreadable tables ({exc}); move it away to recompute") from exc
    _may_compute(f"the tables {name}", folder, store_dir)
    start = time.perf_counter()
    tables = compute()

    def write():
        if folder.exists():  # leftovers of an interrupted write
            shutil.rmtree(folder)
        for t, frame in tables.items():
            store.atomic_write(folder / f"{t}.csv", lambda tmp, frame=frame: frame.to_csv(tmp, index=False))
        sized = {} if size is None else {"size": size}
        store.write_json(folder / "tables.json", {"spec": spec, "provenance": store.provenance(
            device, time.perf_counter() - start), "tables": list(tables), **sized})

    _publish(write)
    return tables
