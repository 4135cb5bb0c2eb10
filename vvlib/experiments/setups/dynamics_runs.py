"""Training runs measured along the way (vvlib/dynamics.py), one stored table per run.

A measured run trains from scratch with the run's own settings and measures every `every`
steps; it keeps no weights, only the table (step, seed, training loss and each measure), in
<store>/dynamics-<hash>/.  It checkpoints with its measurements so far, so an interrupted run
resumes where it stopped and ends with the table an uninterrupted one gives.
"""

import dataclasses

import pandas as pd

from ... import dynamics, train
from ...model import ModelConfig
from ...train import TrainConfig
from ..storage import runs, store
from . import variants

PROBE_ROWS = 512  # sequences in the fixed probe batch
PROBE_SEED = 2468  # names its stream (apart from the training and test streams)
# what a measured row may set: its variant and the training settings it changes
CHANGES = {"variant", *(f.name for f in dataclasses.fields(TrainConfig))}


def spec(model_cfg: ModelConfig, train_cfg: TrainConfig, every: int, device) -> dict:
    return {"kind": "dynamics", "training": runs.training_spec(model_cfg, train_cfg, device), "every": every,
            "probe_rows": PROBE_ROWS, "probe_seed": PROBE_SEED}


def folder(store_dir, model_cfg: ModelConfig, train_cfg: TrainConfig, every: int, device):
    """Where a measured run keeps its table (and, while it trains, its checkpoint)."""
    return runs.tables_folder(store_dir, "dynamics", spec(model_cfg, train_cfg, every, device))


def lands_on_checkpoints(every, train_cfg: TrainConfig) -> bool:
    """Whether measuring every `every` steps fits the run: at most its steps, and a divisor of its
    checkpoint interval, so that a checkpoint always follows a measurement (a resumed run needs it)."""
    return isinstance(every, int) and 1 <= every <= train_cfg.steps and train_cfg.checkpoint_every % every == 0


def measured(store_dir, model_cfg: ModelConfig, train_cfg: TrainConfig, every: int, device, progress=True):
    """(the table, its provenance): one row per (step, seed) at every `every` steps, from the
    store or computed."""
    if not lands_on_checkpoints(every, train_cfg):
        raise ValueError(f"every must be an int from 1 to steps ({train_cfg.steps}) that divides checkpoint_every "
                         f"({train_cfg.checkpoint_every}); got {every!r}")
    where = folder(store_dir, model_cfg, train_cfg, every, device)
    tables = runs.cached_tables(store_dir, "dynamics", spec(model_cfg, train_cfg, every, device),
                                lambda: {"measures": _train_measured(model_cfg, train_cfg, every, device, where,
                                                                     progress)}, device)
    return with_loss_per_miss(tables["measures"]), store.read_json(where / "tables.json")["provenance"]


def measured_row(P, task, row: dict, device, progress=True):
    """measured() of one of a chapter's dynamics_rows (its parameters P, its task's config)."""
    model_cfg, train_cfg = row_configs(P, task, row)
    return measured(P.store_dir, model_cfg, train_cfg, P.dynamics_every, device, progress)


def row_folder(P, task, row: dict, device):
    """Where measured_row keeps the row's table."""
    model_cfg, train_cfg = row_configs(P, task, row)
    return folder(P.store_dir, model_cfg, train_cfg, P.dynamics_every, device)


def with_loss_per_miss(frame: pd.DataFrame) -> pd.DataFrame:
    """The table with loss_from_misses, the part of the probe loss that the sequences whose attention
    missed the answer contribute (probe_loss = (1 - missed) * loss_hit + loss_from_misses), and
    loss_missed, the mean probe loss of one such sequence (NaN where none missed)."""
    from_misses = frame["probe_loss"] - (1 - frame["missed"]) * frame["loss_hit"]
    per_miss = (from_misses / frame["missed"]).where(frame["missed"] > 0)
    return frame.assign(loss_from_misses=from_misses, loss_missed=per_miss)


def _train_measured(model_cfg, train_cfg, every, device, folder, progress) -> pd.DataFrame:
    trainer = train.Trainer(model_cfg, train_cfg, device)
    checkpoint, partial = folder / "checkpoint.pt", folder / "measures.partial.json"
    rows = []
    if trainer.resume(checkpoint) and partial.exists():  # the measurements the checkpoint had made
        rows = [r for r in store.read_json(partial)["rows"] if r["step"] <= trainer.step]
    batch = dynamics.probe_batch(model_cfg, train_cfg.max_len, PROBE_ROWS, PROBE_SEED, trainer.device)
    # at a checkpoint the last measurement was just taken, so a resumed run moves from the same weights
    previous = [_snapshot(g.params) for g in trainer.groups] if trainer.step else [None] * len(trainer.groups)

    def on_step(step):
        if step % every:
            return
        for i, g in enumerate(trainer.groups):
            found = dynamics.measure(model_cfg, g.params, g.optimizer, batch, previous[i])
            previous[i] = _snapshot(g.params)
            rows.extend({"step": step, "seed": int(seed), **{k: float(v[j]) for k, v in found.items()}}
                        for j, seed in enumerate(g.seeds.tolist()))
        if step % train_cfg.checkpoint_every == 0:  # before the trainer's checkpoint of this step
            store.write_json(partial, {"rows": rows})  # atomic

    trainer.run(checkpoint, progress=progress, on_step=on_step)
    table = pd.DataFrame(rows)
    losses = pd.DataFrame([{"step": step, "seed": train_cfg.first_seed + j, "train_loss": loss}
                           for step, per_seed in trainer.loss_history for j, loss in enumerate(per_seed)])
    return table.merge(losses, on=["step", "seed"], how="left")


def _snapshot(params: dict) -> dict:
    return {name: p.detach().clone() for name, p in params.items()}


def base_config(P) -> TrainConfig:
    """A measured run's settings before its row's changes: chapters 4-5's longer training (its
    steps and seed groups), on seeds 0 .. dynamics_seeds - 1."""
    return dataclasses.replace(variants.train_config(P), steps=P.long_steps, seed_group=P.long_seed_group,
                               n_seeds=P.dynamics_seeds, first_seed=0)


def row_train_config(P, row: dict) -> TrainConfig:
    """A measured row's training settings: the TrainConfig fields it changes over base_config(P).
    ValueError names what is wrong with the row, its variant included."""
    unknown = set(row) - CHANGES
    if unknown:
        raise ValueError(f"a measured row may set variant and TrainConfig fields; got {sorted(unknown)}")
    variant = row.get("variant", variants.BASE)
    if variant not in variants.VARIANT_OPTIONS:
        raise ValueError(f"variant: expected one of {', '.join(variants.VARIANT_OPTIONS)}; got {variant!r}")
    return dataclasses.replace(base_config(P), **{k: v for k, v in row.items() if k != "variant"})


def row_configs(P, task, row: dict):
    """(model config, train config) of a measured row (its variant defaults to the Baseline)."""
    return variants.model_config(P, task, row.get("variant", variants.BASE)), row_train_config(P, row)


def label(row: dict) -> str:
    """'Baseline' plus its changes, as the figure and the sentences name a row."""
    changes = ", ".join(f"{k}={v}" for k, v in row.items() if k != "variant")
    name = variants.LABELS[row.get("variant", variants.BASE)]
    return name + (f" ({changes})" if changes else "")
