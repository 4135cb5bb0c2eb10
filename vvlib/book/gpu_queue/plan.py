"""What a training chapter will compute, before it runs: its training runs, evaluations and probe tables as store
entries, each with its size, and how far the store shows each has got.  It mirrors what each chapter's record asks
of variants.py; tests/test_plan.py checks it against the entries the published book's chapters load."""

import dataclasses
import functools
from pathlib import Path
from typing import Callable

import torch

from ... import rng
from ...train import TrainConfig
from .. import chapters
from ...experiments.setups import sensitivity, variants
from ...experiments.storage import runs
from ..chapters import Work

# What each chapter trains and probes, from its record (chapters/).
CHAPTER_WORK = {name: r.work for name, r in chapters.CHAPTERS.items() if r.work}
SENSITIVITY = chapters.SENSITIVITY.name  # its rows come from its own parameters (sensitivity.check_rows)
CHAPTER_PROBES = {name: r.probes for name, r in chapters.CHAPTERS.items() if r.probes}


@dataclasses.dataclass(frozen=True)
class Job:
    """One store entry a chapter computes.  units: model-steps for training, else seed x
    sequence x length items evaluated; kind: what its units are timed as."""
    chapter: str
    kind: str
    label: str
    path: Path  # exists once the job is done
    units: float
    steps: int = 0  # training: the run's steps (its checkpoint holds the step reached)
    n_seeds: int = 0
    reads: tuple = ()  # the run folders whose weights it needs (units.py keeps them in one unit)
    compute: Callable[[], object] | None = dataclasses.field(default=None, compare=False, repr=False)  # makes the entry

    def done_units(self) -> float:
        """How much of the job the store shows as done."""
        if self.path.exists():
            return self.units
        if self.steps:  # a training run
            return self.n_seeds * checkpoint_step(self.path.parent)
        return 0.0


def checkpoint_step(folder: Path) -> int:
    """The step of the furthest checkpoint in a run's folder (one per rank under torchrun), 0 if none."""
    steps = []
    for file in folder.glob("checkpoint*.pt"):
        try:
            steps.append(int(torch.load(file, map_location="cpu", weights_only=False, mmap=True)["step"]))
        except Exception:  # being written or replaced right now: the next look will read it
            continue
    return max(steps, default=0)


def training_kind(task: str, train_cfg, model=None) -> str:
    """Runs whose steps cost about the same: per task and source of data (the counter stream's draws
    are other kernels than the generators'), and apart when they train on longer sequences or a
    model with more attention layers or heads than the paper's one (`model`: its layers and heads)."""
    stream = f" ({train_cfg.draws} stream)" if train_cfg.draws != TrainConfig.draws else ""
    longer = f" to length {train_cfg.max_len}" if train_cfg.max_len > TrainConfig.max_len else ""
    return f"{task} training{stream}{longer}{model_shape(model)}"


def evaluation_kind(task: str, model=None) -> str:
    """Evaluations whose items cost about the same: per task, apart for a model with more attention
    layers or heads (each head of each layer passes over every item)."""
    return f"{task} evaluation{model_shape(model)}"


def model_shape(model) -> str:
    """', L layers x H heads' for a model (anything with .layers and .heads) other than the paper's
    one layer of one head, else ''."""
    if model is None or (model.layers, model.heads) == (1, 1):
        return ""
    return f", {model.layers} layers x {model.heads} heads"


def _items(eval_cfg, n_seeds: int) -> int:
    return n_seeds * eval_cfg.n_sequences * sum(eval_cfg.lengths)


def _run_jobs(chapter, P, task, variant, train_cfg, temperatures, device, tag="") -> list[Job]:
    """A training run and its evaluations under each temperature; `tag` tells
    apart runs of one chapter that differ in more than task and variant (chapter 11's rows)."""
    model_cfg = variants.model_config(P, variants.task_config(P, task), variant)
    folder = runs.run_dir(P.store_dir, model_cfg, train_cfg, device)
    seeds = f"seeds {train_cfg.first_seed}-{train_cfg.first_seed + train_cfg.n_seeds - 1}"
    name = f"{task} {variant}{tag}, {seeds} x {train_cfg.steps:,} steps"
    run = runs.TrainedRun(P.store_dir, model_cfg, train_cfg, device)
    jobs = [Job(chapter, training_kind(task, train_cfg, model_cfg), f"train {name}", folder / "run.json",
                train_cfg.n_seeds * train_cfg.steps, train_cfg.steps, train_cfg.n_seeds, reads=(folder,),
                compute=lambda: run.record)]
    for temperature in temperatures:
        cfg = variants.eval_config(P, temperature)
        jobs.append(Job(chapter, evaluation_kind(task, model_cfg), f"evaluate {name} ({temperature} temperature)",
                        runs.eval_path(P.store_dir, model_cfg, train_cfg, cfg, device), _items(cfg, train_cfg.n_seeds),
                        reads=(folder,), compute=functools.partial(run.evaluated, cfg)))
    return jobs


def _task_jobs(chapter, P, task, work: Work, device, tag="") -> list[Job]:
    """A task's runs and their evaluations; where the chapter has a longer training, its runs, and those again on
    the counter stream (counter_seeds, fixed temperature) where asked for."""
    arms = [(P, variants.train_configs(P, variant), variant, work.temperatures, tag) for variant in work.variants]
    if work.long and P.long_steps:
        longer, counter = variants.long_eval_params(P), variants.counter_arm(P)
        arms += [(longer, variants.long_train_configs(P), variant, work.temperatures, "") for variant in work.variants]
        arms += [(counter, variants.long_train_configs(counter), variant, ["fixed"], "") for variant in work.variants
                 if counter is not None]
    return [job for P_arm, configs, variant, temperatures, label in arms for train_cfg in configs
            for job in _run_jobs(chapter, P_arm, task, variant, train_cfg, temperatures, device, tag=label)]


def chapter_jobs(chapter: str, P, device: torch.device | None = None) -> list[Job]:
    """The store entries chapter `chapter` computes with parameters P (chapters.resolved), on P.device
    or on `device` (e.g. cuda, to name a GPU's entries on a machine without one: nothing runs)."""
    if chapter not in (*CHAPTER_WORK, SENSITIVITY):
        raise ValueError(f"chapter: {chapter!r} trains nothing; chapters that train: "
                         f"{', '.join([*CHAPTER_WORK, SENSITIVITY])}")
    device = device or rng.resolve_device(P.device)
    if chapter == SENSITIVITY:
        return [job for task, row, P_row in sensitivity.check_rows(P)
                for job in _task_jobs(chapter, P_row, task, Work((task,), sensitivity.trained_variants(P_row)), device,
                                      f" ({sensitivity.label(row)})")] + _probe_jobs(chapter, P, device)
    work = CHAPTER_WORK[chapter]
    one_task = len(work.tasks) == 1  # a two-task chapter's parameters are read per task
    return [job for task in work.tasks
            for job in _task_jobs(chapter, P if one_task else variants.task_params(P, task), task, work, device)
            ] + _probe_jobs(chapter, P, device)


def chapter_entries(chapter: str, P) -> frozenset:
    """Every store entry chapter `chapter` computes or reads with parameters P: its jobs' entries and the
    runs its probes read (empty for a chapter that trains nothing).  Two chapters whose entries meet must
    not run at the same time: each would train what the other is training."""
    if chapter not in (*CHAPTER_WORK, SENSITIVITY):
        return frozenset()
    return frozenset(path for job in chapter_jobs(chapter, P) for path in (job.path, *job.reads))


def _probe_jobs(chapter, P, device) -> list[Job]:
    """One job per probe part: each reads the weights of one run (probes.py)."""
    return [Job(chapter, f"{task} probing", f"probe {probe.name} ({task} {part.variant})",
                part.folder(P.store_dir) / "tables.json", part.items,
                reads=(runs.run_dir(part.run.store_dir, part.run.model_cfg, part.run.train_cfg, part.run.device),),
                compute=functools.partial(part.tables, P.store_dir, device))
            for task, probe in CHAPTER_PROBES.get(chapter, lambda *_: [])(P, device) for part in probe.parts]


def unique(jobs: list[Job]) -> list[Job]:
    """Each store entry once, where the chapter that first computes it asks for it (chapters 6-8
    and 10 reuse chapters 4 and 5's runs)."""
    seen, kept = set(), []
    for job in jobs:
        if job.path not in seen:
            seen.add(job.path)
            kept.append(job)
    return kept


def progress(jobs: list[Job]) -> tuple[dict, dict]:
    """({kind: units done}, {kind: units planned}) over `jobs`, as the store shows them now."""
    done, total = {}, {}
    for job in jobs:
        total[job.kind] = total.get(job.kind, 0.0) + job.units
        done[job.kind] = done.get(job.kind, 0.0) + job.done_units()
    return done, total
