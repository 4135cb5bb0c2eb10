"""The paper profile cut into units that each fit one command on a lent GPU.

A unit is a training run with everything that reads its weights: its evaluations and its parts
of the probes (probes.py stores a probe one part per run). Weights never leave the machine that
made them, so a job that read several runs would put all of them in one unit; units() still
joins them if one does. A unit leaves only small result files in the store; run again after an
interruption, it loads what is stored and resumes the rest.

Estimates come from speeds measured on the same kind of device: the training and evaluation
records already in the stores given (their wall time and size), and for a kind of training no
record has timed there, the committed GPU check's short runs of it; never from a guess. A kind of
work with no measurement yet is "not yet timed".
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
from .plan import Job, evaluation_kind, on_default_stream, training_kind

# a GPU command may run 10 minutes: two are kept for starting, copying back and an estimate that errs
UNIT_BUDGET_S = 8 * 60


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
        seconds, untimed = 0.0, []
        retrained = self.retrained()
        for job in self.jobs:
            left = job.units if job.steps and job.path.parent in retrained else job.units - job.done_units()
            if left <= 0:
                continue
            if job.kind in rates:
                seconds += left / rates[job.kind]
            elif job.kind not in untimed:
                untimed.append(job.kind)
        return seconds, untimed

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


def units(jobs: list[Job]) -> list[Unit]:
    """The plan's jobs grouped so that every job shares a unit with the runs it reads (a job
    reading runs of two units joins them into one), in the plan's order."""
    owner: dict = {}  # run folder -> index of its unit in `groups`
    groups: list = []
    for job in jobs:
        joined = sorted({owner[f] for f in job.reads if f in owner})
        if not joined:
            groups.append([job])
            target = len(groups) - 1
        else:
            target = joined[0]
            for other in joined[1:]:
                groups[target] += groups[other]
                groups[other] = []
                owner.update({f: target for f, i in owner.items() if i == other})
            groups[target].append(job)
        owner.update({f: target for f in job.reads})
    return [Unit(_in_running_order(group)) for group in groups if group]


def _in_running_order(group: list) -> list:
    """Training first, then evaluations, then probes."""
    rank = {"train": 0, "evaluate": 1, "probe": 2}
    return sorted(group, key=lambda job: rank.get(job.label.split()[0], 1))


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


def run_seeds(jobs) -> dict:
    """{training kind: the seeds each of its runs holds} for the kinds whose training jobs all hold the same
    number (100 in one run; chapter 9's and chapter 10's chunks), which check_rates prefers a row at."""
    seeds = {}
    for job in jobs:
        if job.steps:
            seeds.setdefault(job.kind, set()).add(job.n_seeds)
    return {kind: held.pop() for kind, held in seeds.items() if len(held) == 1}


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


def check_rates(paths, philox: str, seeds: dict | None = None) -> dict:
    """{training kind: model-steps per second} from committed GPU checks (bench/gpu-check-<gpu>-loop.json and
    -curriculum.json, bench.gpu_check's): the path a unit trains by.  A row's steady rate where it has one
    (what the steps of a longer run add); else its 300-step rate, which carries the graph recordings and the
    forced checkpoint a unit amortizes, so a unit errs slow against it.  A counter-stream row counts only with
    the Philox the runs will use (`philox`).  A model-step costs less in a run of more seeds, so a row timed at
    the seeds the kind's runs hold (`seeds`: run_seeds of the plan) outranks the kind's other rows, a trial
    among them (a check's trial times a chunk of seeds before the profile takes it); a trial at other seeds
    never counts.  Within a rank the newest check's row stands."""
    best = {}  # kind -> (at the runs' seeds, created, speed)
    for path in paths:
        try:
            record = json.loads(Path(path).read_text())
            created = record["provenance"]["created"]
            for row in record["rows"]:
                other_philox = row["draws"] == "counter" and row.get("philox", philox) != philox
                if "error" in row or other_philox:
                    continue
                run = SimpleNamespace(draws=row["draws"], max_len=row.get("max_len", TrainConfig.max_len))
                kind = training_kind(row["task"], run, _shape(row))
                at_seeds = (seeds or {}).get(kind) == row["n_seeds"]
                if "trial" in row and not at_seeds:
                    continue
                if (at_seeds, created) >= best.get(kind, (False, ""))[:2]:
                    best[kind] = (at_seeds, created, row.get("steady_model_steps_per_s") or row["model_steps_per_s"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return {kind: speed for kind, (_, _, speed) in best.items()}


def with_scaled_rates(rates: dict, other: dict, kinds=None) -> tuple[dict, list]:
    """(rates, [kinds estimated]): `rates` (one kind of device) completed for `kinds` (default: those
    `other` has timed) it has not timed, from another device's rates `other`: the speed of the same runs
    at the paper's length and model (base_kind) times that device's ratio between the two.  A run to
    length 256 on a GPU is estimated as the GPU's 16-item speed times the CPU's speed to 256 over its
    speed at 16 items (the same curriculum, measured on the CPU), a model of two layers of four heads
    likewise; where the other device timed the pair only on the other source of data (the generators),
    that pair's ratio.  A GPU gains more than a CPU from longer sequences (larger matrix products), so
    such an estimate errs slow there; how it bears the extra heads is unknown until it times them."""
    completed, estimated = dict(rates), []
    for kind in (other if kinds is None else kinds):
        base = base_kind(kind)
        if kind in rates or base == kind or base not in rates:
            continue
        ratio = _ratio(other, kind, base) or _ratio(other, on_default_stream(kind), on_default_stream(base))
        if ratio:
            completed[kind] = rates[base] * ratio
            estimated.append(kind)
    return completed, estimated


def base_kind(kind: str) -> str:
    """The kind of the same runs at the paper's training length and model (plan.training_kind)."""
    return re.sub(r" to length \d+|, \d+ layers x \d+ heads", "", kind)


def _ratio(rates: dict, kind: str, base: str) -> float | None:
    return rates[kind] / rates[base] if kind in rates and base in rates else None


def with_other_task(rates: dict, kinds) -> tuple[dict, list]:
    """(rates, [kinds estimated]): each probing kind of `kinds` not yet timed, given another task's
    probing speed times the ratio of the two tasks' evaluation speeds, where those are timed: a probe
    runs a model over test sequences as an evaluation does, and keeps more of what it computes, so the
    other task's probing over evaluation ratio carries that extra cost over."""
    completed, estimated = dict(rates), []
    probed = [k.removesuffix(" probing") for k in rates if k.endswith(" probing")]
    others = [task for task in probed if f"{task} evaluation" in rates]  # tasks with both speeds timed
    for kind in kinds:
        task = kind.removesuffix(" probing")
        if kind in rates or task == kind or f"{task} evaluation" not in rates or not others:
            continue
        other = others[0]
        completed[kind] = rates[f"{other} probing"] * rates[f"{task} evaluation"] / rates[f"{other} evaluation"]
        estimated.append(kind)
    return completed, estimated


def with_other_stream(rates: dict, kinds) -> tuple[dict, list]:
    """(rates, [kinds estimated]): each of `kinds` not yet timed on one source of data (a run on the
    counter stream, say) given the speed of the same runs on the generators, where that is timed.
    The counter stream's step measured faster on a GPU than the generators' (bench/README.md), so
    such an estimate errs slow there until a run of its own is committed."""
    completed, estimated = dict(rates), []
    for kind in kinds:
        default = on_default_stream(kind)
        if kind not in rates and default != kind and default in rates:
            completed[kind] = rates[default]
            estimated.append(kind)
    return completed, estimated


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
