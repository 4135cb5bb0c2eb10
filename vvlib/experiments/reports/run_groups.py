"""Every committed training run, grouped for the scale page: what ran, at which scale, where, and
for how long, read from the run records themselves (run.json), so the page never retells a log.

A group is the runs of one task and configuration at one number of steps on one kind of device in
one store: its variants, its seeds per variant (each counted once), how many runs (a variant's seeds may be stored
as several runs), and their wall time as recorded (which includes whatever else shared the machine; a run
resumed in several sittings counts each, up to the checkpoint it resumed from).
"""

import json
from pathlib import Path

import pandas as pd

from ...model import ModelConfig
from ...train import TrainConfig
from .answers import device_kind
from ..setups.variants import LABELS, VARIANT_OPTIONS

# what tells a run's variant (its model settings), and what says only how many seeds and how they were stepped
VARIANT_FIELDS = {field for options in VARIANT_OPTIONS.values() for field in options}
NOT_A_SETTING = {"n_seeds", "first_seed", "seed_group", "steps", "task"}


def _defaults() -> dict:
    model, train = ModelConfig(), TrainConfig()
    return {**{k: getattr(model, k) for k in model.__dataclass_fields__}, **{k: getattr(train, k) for k in
                                                                             train.__dataclass_fields__}}


def _variant(model: dict) -> str:
    """The variant a run's model settings name (variants.VARIANT_OPTIONS): its options set as it says and every
    other variant setting at its default (log N logits with no norm are not the Baseline); 'other' for none."""
    default = ModelConfig()
    for name, options in VARIANT_OPTIONS.items():
        if all(model.get(k, getattr(default, k)) == options.get(k, getattr(default, k)) for k in VARIANT_FIELDS):
            return name
    return "other"


def committed_runs(store_dirs) -> list[dict]:
    """One row per run.json in the stores: store, task, variant, configuration (its settings that
    differ from the configs' defaults, variant and seeding aside), steps, seeds, device, wall time."""
    rows = []
    for store_dir in store_dirs:
        records = [json.loads(path.read_text()) for path in sorted(Path(store_dir).glob("train-*/run.json"))]
        rows += [{"store": Path(store_dir).name, **row} for row in committed_runs_of(records)]
    return rows


def committed_runs_of(records: list[dict]) -> list[dict]:
    """committed_runs' rows (without the store) of run records already read."""
    defaults, rows = _defaults(), []
    for record in records:
        model, train = record["spec"]["model"], record["spec"]["train"]
        settings = {**{k: v for k, v in model.items() if k not in VARIANT_FIELDS}, **train}
        changed = {k: v for k, v in settings.items() if k not in NOT_A_SETTING and defaults.get(k, v) != v
                   and not (k == "max_len" and v == TrainConfig.max_len)}
        first = train.get("first_seed", 0)
        rows.append({"task": model["task"]["name"], "variant": _variant(model),
                     "configuration": ", ".join(f"{k}={v}" for k, v in sorted(changed.items())) or "defaults",
                     "steps": train["steps"], "seeds": frozenset(range(first, first + train["n_seeds"])),
                     "device": device_kind(record["provenance"]["device"]),
                     "wall_min": training_seconds(record) / 60})
    return rows


def training_seconds(record: dict) -> float:
    """A run's recorded training time: its last sitting's and, for a resumed run, its earlier sittings' up to
    the checkpoint it resumed from (records written before 2026-11-29 time their last sitting only)."""
    return (record["provenance"]["wall_time_s"] or 0) + (record.get("earlier_sittings_s") or 0)


def groups(rows: list[dict]) -> pd.DataFrame:
    """The runs grouped (module docstring), largest scale first."""
    frame = pd.DataFrame(rows)
    keys = ["store", "task", "configuration", "steps", "device"]
    # a variant's seeds counted once however many runs hold them (chapters share seeds 0-9 under other groupings)
    per_variant = frame.groupby(keys + ["variant"], as_index=False).agg(
        seeds=("seeds", lambda s: len(frozenset().union(*s))), runs=("seeds", "size"), wall_min=("wall_min", "sum"))
    grouped = per_variant.groupby(keys, as_index=False).agg(
        variants=("variant", lambda v: ", ".join(LABELS.get(x, x) for x in v)), seeds=("seeds", "max"),
        runs=("runs", "sum"), wall_min=("wall_min", "sum"))
    return grouped.sort_values(["store", "task", "steps", "seeds"], ascending=[False, True, False, False])


def markdown(frame: pd.DataFrame) -> str:
    """The groups as one Markdown table per store, narrow enough for the page's column (seeds: per variant, the
    most any variant has), and the recorded hours per kind of device."""
    parts = []
    for store, part in frame.groupby("store", sort=False):
        lines = [f"`results/{store}`:", "", "| task | configuration | steps | seeds | variants | device | minutes |",
                 "|---|---|---|---|---|---|---|"]
        for g in part.itertuples():
            lines.append(f"| {g.task} | {g.configuration} | {g.steps:,} | "
                         f"{g.seeds} | {g.variants} | {g.device} | {g.wall_min:,.0f} |")
        parts.append("\n".join(lines))
    total = frame.groupby("device")["wall_min"].sum() / 60
    return "\n\n".join(parts) + (f"\n\n{len(frame)} groups, {int(frame['runs'].sum())} runs; recorded wall time of their "
                                  "training " + "; ".join(f"{h:.1f} h on the {device}" for device, h in total.items())
                                  + ".")


def run_table(store_dir: Path) -> str:
    """One row per run in a store, oldest first: what it trained, where, at which code, and how fast its real
    loop ran (a run resumed from a checkpoint times only the steps after it).  No date column: each record's
    provenance keeps when it was made, and the code column names the commit."""
    records = sorted((json.loads(p.read_text()) for p in Path(store_dir).glob("train-*/run.json")),
                     key=lambda r: r["provenance"]["created"])
    lines = ["| task | variant | configuration | seeds | steps | device | code | model-steps/s | "
             "training (min) | resumed from step |", "|---|---|---|---|---|---|---|---|---|---|"]
    for record, row in zip(records, committed_runs_of(records)):
        train = record["spec"]["train"]
        first = train.get("first_seed", 0)
        lines.append(f"| {row['task']} | {LABELS.get(row['variant'], row['variant'])} "
                     f"| {row['configuration']} | {first}-{first + train['n_seeds'] - 1} | {train['steps']:,} | "
                     f"{record['provenance']['device']} | {record['provenance']['git_commit'][:7]} | "
                     f"{record.get('model_steps_per_s', 0):,.0f} | {row['wall_min']:.1f} | "
                     f"{record.get('resumed_from_step') or ''} |")
    return "\n".join(lines)
