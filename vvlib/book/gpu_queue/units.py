"""The paper profile cut into units that each fit one command on a lent GPU.

A unit is a training run with everything that reads its weights (its evaluations and its parts of the probes):
weights never leave the machine that made them.  Estimates come from speeds measured on the same kind of device
(the stores' records, else the committed GPU check's short runs), never from a guess.
"""

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

from ...train import TrainConfig
from ...experiments.storage import store
from ...experiments.storage.runs import WEIGHTS_FILE
from .plan import Job, evaluation_kind, training_kind

# a GPU command may run 10 minutes: two are kept for starting, copying back and an estimate that errs
UNIT_BUDGET_S = 8 * 60
RUNNING_ORDER = {"train": 0, "evaluate": 1, "probe": 2}  # a unit's jobs by their labels' first word


@dataclass
class Unit:
    jobs: list  # plan.Job, in the order they run

    def chapters(self) -> list:
        return list(dict.fromkeys(job.chapter for job in self.jobs))

    def label(self) -> str:
        trains = [job.label.removeprefix("train ") for job in self.jobs if job.steps]
        probes = list(dict.fromkeys(job.label for job in self.jobs if job.kind.endswith("probing")))  # a part per beta
        return "; ".join(trains + probes) or self.jobs[0].label

    def estimate_s(self, rates: dict) -> tuple[float, list]:
        """(seconds for the work left, measured kinds only; [kinds with work left and no speed yet])."""
        retrained, left = self.retrained(), {}
        for job in self.jobs:
            units = job.units if job.steps and job.path.parent in retrained else job.units - job.done_units()
            left[job.kind] = left.get(job.kind, 0.0) + units
        return seconds_for(left, rates)

    def retrained(self) -> set:
        """Run folders whose record is stored without their weights (a lent GPU brings back no
        weights) while a job of this unit still has to read them: that job trains the run again."""
        reading = {folder for job in self.jobs if job.units - job.done_units() > 0 for folder in job.reads}
        return {f for f in reading if (f / "run.json").exists() and not (f / WEIGHTS_FILE).exists()}

    def run(self):
        for job in self.jobs:
            job.compute()

    def begun(self) -> bool:
        """Not stored, but a run it trains holds a checkpoint, or weights a job still has to read: work that
        only this machine holds (a lent GPU's next command in the same session finds it; its next session
        starts from nothing)."""
        folders = {job.path.parent for job in self.jobs if job.steps}
        return not self.stored() and any(any(f.glob("checkpoint*.pt")) or (f / WEIGHTS_FILE).exists() for f in folders)

    def stored(self) -> bool:
        return all(job.path.exists() for job in self.jobs)

    def result_files(self) -> list:
        """The files its store entries consist of (records, tables), never weights or checkpoints (*.pt):
        what a lent GPU brings back of a unit."""
        folders = sorted({job.path.parent for job in self.jobs})
        return [path for folder in folders if folder.is_dir() for path in sorted(folder.iterdir())
                if path.is_file() and path.suffix != ".pt"]


def seconds_for(left: dict, rates: dict) -> tuple[float, list]:
    """(seconds for {kind: units left} at `rates`, [kinds with work left and no speed yet])."""
    timed = [kind for kind, units in left.items() if units > 0 and kind in rates]
    untimed = [kind for kind, units in left.items() if units > 0 and kind not in rates]
    return sum(left[kind] / rates[kind] for kind in timed), untimed


def units(jobs: list[Job]) -> list[Unit]:
    """The plan's jobs grouped by the run whose weights they read, in the plan's order.  Each job reads one
    run (probes are stored one part per run), so no unit waits on the training of two."""
    groups: dict = {}
    for job in jobs:
        (run,) = job.reads
        groups.setdefault(run, []).append(job)
    in_order = lambda group: sorted(group, key=lambda job: RUNNING_ORDER.get(job.label.split()[0], 1))
    return [Unit(in_order(group)) for group in groups.values()]


def measured_rates(store_dirs, device_type: str) -> dict:
    """{kind: units per second} from the training and evaluation records in `store_dirs` made on
    `device_type` ('cpu' or 'cuda'): total units over total wall time per kind. A long run trained with
    a step ladder (until 5bfc964) timed the ladder's evaluations too, so its training speed errs slow."""
    units, seconds = {}, {}
    for store_dir in store_dirs:
        for path in Path(store_dir).glob("*/*.json"):
            kind, size, wall = _record_size(path, device_type)
            if kind and wall:
                units[kind] = units.get(kind, 0.0) + size
                seconds[kind] = seconds.get(kind, 0.0) + wall
    return {kind: units[kind] / seconds[kind] for kind in units}


def overrun(paths) -> float:
    """The most a unit has run over its estimate: the largest measured over estimated minutes of the units in
    the committed queue records (bench/gpu-queue-*.json, paper_queue's queue.json) that ran whole in one
    command (a paused or resumed one's minutes are a part, and a restart's; a failed one's, up to its error),
    and never under 1.  A command after which nothing resumes a unit starts one only if its estimate times this
    fits."""
    ratios = [1.0]
    for path in paths:
        try:
            ratios += [u["minutes"] / u["estimated_min"] for u in json.loads(Path(path).read_text())["units"]
                       if u.get("estimated_min") and u.get("minutes") is not None
                       and not u.get("paused") and not u.get("resumed") and not u.get("error")]
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return max(ratios)


def check_rates(paths, philox: str) -> dict:
    """{training kind: model-steps per second} from committed GPU checks (bench/gpu-check-<gpu>-loop.json and
    -curriculum.json): a row's steady rate where it has one, else its 300-step rate (which errs slow); a
    counter-stream row only with the Philox the runs will use (`philox`), a trial row never; the newest check's
    row stands."""
    best = {}  # kind -> (created, speed)
    for path in paths:
        try:
            record = json.loads(Path(path).read_text())
            created = record["provenance"]["created"]
            for row in record["rows"]:
                other_philox = row["draws"] == "counter" and row.get("philox", philox) != philox
                if "error" in row or "trial" in row or other_philox:
                    continue
                run = SimpleNamespace(draws=row["draws"], max_len=row.get("max_len", TrainConfig.max_len))
                kind = training_kind(row["task"], run, _shape(row))
                if created >= best.get(kind, ("",))[0]:
                    best[kind] = (created, row.get("steady_model_steps_per_s") or row["model_steps_per_s"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return {kind: speed for kind, (_, speed) in best.items()}


def with_scaled_rates(rates: dict, other: dict) -> tuple[dict, list]:
    """(rates, [kinds estimated]): `rates` (one kind of device) completed for the kinds another device timed
    (`other`) and it has not, where it timed the same runs at the paper's length and model (base_kind): that
    speed times the other device's ratio between the two (a GPU gains more from longer sequences, so this errs
    slow there)."""
    completed, estimated = dict(rates), []
    for kind in other:
        base = base_kind(kind)
        if kind not in rates and base != kind and base in rates and base in other:
            completed[kind] = rates[base] * (other[kind] / other[base])
            estimated.append(kind)
    return completed, estimated


def base_kind(kind: str) -> str:
    """The kind of the same runs at the paper's training length and model (plan.training_kind)."""
    return re.sub(r" to length \d+|, \d+ layers x \d+ heads", "", kind)


def _record_size(path: Path, device_type: str) -> tuple:
    """(kind, units, wall seconds) of a training run.json, an eval-*.json or a probe part's
    tables.json, else (None, 0, 0)."""
    if path.name != "run.json" and not path.name.startswith("eval-") and path.name != "tables.json":
        return None, 0, 0
    try:
        record = json.loads(path.read_text())
        spec, wall = record["spec"], record["provenance"]["wall_time_s"]
        if path.name == "tables.json":
            return _probe_size(path, record, device_type)
        train = spec if path.name == "run.json" else spec["train"]
        if train["device_type"] != device_type:
            return None, 0, 0
        task, t, model = train["model"]["task"]["name"], train["train"], _shape(train["model"])
        if path.name == "run.json":
            # a record leaves its draws unsaid at the default (train_config.LATER_DEFAULTS)
            run = SimpleNamespace(max_len=t["max_len"], draws=t.get("draws", TrainConfig.draws))
            # a run resumed from a checkpoint (a paused unit's) timed only the steps after it
            steps = t["steps"] - record.get("resumed_from_step", 0)
            return training_kind(task, run, model), t["n_seeds"] * steps, wall
        e = spec["eval"]
        wall = _without_training(record, path.parent / "run.json")
        return evaluation_kind(task, model), t["n_seeds"] * e["n_sequences"] * sum(e["lengths"]), wall
    except (OSError, ValueError, KeyError, TypeError):
        return None, 0, 0


def _shape(model: dict) -> SimpleNamespace:
    """A model spec's (or a check row's) attention layers and heads; a spec may leave them out at 1."""
    return SimpleNamespace(layers=model.get("layers", 1), heads=model.get("heads", 1))


def _probe_size(path: Path, record: dict, device_type: str) -> tuple:
    """(kind, items, wall seconds) of one run's part of a probe whose record says its size (probes
    stored before it did, or of several runs at once, are not timed)."""
    spec = record["spec"]
    if spec.get("kind") != "probe" or "size" not in record or len(spec["runs"]) != 1:
        return None, 0, 0
    (run,) = spec["runs"].values()
    if run["device_type"] != device_type:
        return None, 0, 0
    wall = _without_training(record, path.parent.with_name(f"train-{store.spec_hash(run)}") / "run.json")
    return f"{run['model']['task']['name']} probing", record["size"], wall


def _without_training(record: dict, run_record: Path) -> float:
    """A record's wall time less the training of the run it read, where it waited for that: an
    evaluation or probe that found no weights trained them first, and then the run's record was
    written after it started (each record's `created` is when it was written) and its training
    fits inside the record's wall time.  `created` keeps whole seconds, so a run written in the
    second its evaluation started can look written after that start: the fit tells them apart."""
    wall = record["provenance"]["wall_time_s"]
    if not run_record.exists() or "created" not in record["provenance"]:
        return wall
    trained = json.loads(run_record.read_text())["provenance"]
    started = datetime.fromisoformat(record["provenance"]["created"]) - timedelta(seconds=wall)
    waited = datetime.fromisoformat(trained["created"]) > started and trained["wall_time_s"] < wall
    return wall - trained["wall_time_s"] if waited else wall
