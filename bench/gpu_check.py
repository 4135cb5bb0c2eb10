"""The first command on a lent GPU: does the CUDA path work, and how fast is it?  About 3 minutes.

    python -m bench.gpu_check --out DIR                    # on the GPU: tests, step, real loop
    python -m bench.gpu_check --out DIR --device cpu --seeds 2 --steps 20 --no-tests   # a smoke run

Five parts, each written to DIR as JSON as soon as it is done (an interrupted check keeps what
it measured), and a short table printed last:

- tests.json: the device tests of the counter stream (both Philox), training, evaluation, capture safety,
  probing, the counter arm and the model's heads (pytest; on a GPU every test parametrized by device runs on
  CUDA too), with the slowest tests' seconds (where the check's own minute goes); several pytest processes
  share them (--test-processes, bench.device_tests), their counts added up;
- step.json: the training step alone at the paper's defaults (100 seeds, one group: replayed
  from a CUDA graph on a GPU), per task and source of data, the counter stream with the Philox the
  runs use (VVLIB_PHILOX: the fused kernel on a GPU, elementwise tensors on a CPU; the same bits,
  tests/test_philox_kernel.py, which the tests part runs on the GPU): ms per step, model-steps/s, and
  the kernels an eager step launches (aten calls that are not views; the same count on any device, and
  blind to the fused kernel, which is no aten call);
- loop.json: the real loop, a few hundred steps through the store's own path (runs.trained, as
  a unit trains), with one checkpoint forced half-way so that its cost is measured: model-steps/s
  from the run record, and the seconds the checkpoint took, per row of step.json, and
  last of all chapter 10's argmax model of several attention layers and heads (layers, heads), at
  the seeds of its paper-scale runs (deep_seed_chunk), whose runs no other row times, and with --trials, as
  a trial the plan does not read, at twice those seeds where --seeds allows (would runs of twice the seeds
  cost less?).
  Each row of the counter stream is timed twice, at `--steps` and at LONGER times as many: the steps the
  second run adds, over the seconds it adds (checkpoints left out), are the steady rate
  (steady_model_steps_per_s), free of the costs every run pays once (graph recordings, first calls),
  which weigh on a few hundred steps but not on a unit's tens of thousands;
- curriculum.json: chapter 9's paper-scale unit in miniature, per task: its own seeds (seed_chunk)
  and settings, the steps shortened with the curriculum's stages kept in proportion (16 up to 256
  items), through the same real loop: model-steps/s, its steady rate as above (each stage longer, the
  stages as many), and the unit's training minutes at that rate; with --trials, last, a trial: argmax
  retrieval's unit at twice its seeds, which the plan does not read (would runs of twice the seeds use the
  GPU better?)
  (committed, loop.json and curriculum.json time the runs of `python -m vvlib paper --plan --speeds-of
  cuda` that no unit has timed yet: units.check_rates);
- kernels.json: where the step's time goes, per task at the paper's defaults (counter stream, the
  Philox in use): a few eager steps under torch.profiler (a graph replays the same kernels), each aten
  op's calls and microseconds a step (on a GPU its kernels' time) and its share, the largest first, for
  the work on the speed targets: bench.step_traffic gives each op's floor under the same name; and
  which ops call aten::copy_, with its calls and time under each (`copies`: what a copy is for).

Each file carries the device, torch, git commit and the part's seconds, and each row its own `seconds`;
the last line printed says where the check's seconds went, part by part.  A GPU session commits them
under bench/ (bench/README.md says where the figures are quoted).  The two trials are off by default:
the H200 check of 2026-11-27 answered them for this engine (runs stay at 20 and 50 seeds: twice as many
would not fit a unit), and cost every check since 7.7 and 6.3 s of a lent GPU (that check's records).
"""

import argparse
import contextlib
import dataclasses
import os
import statistics
import tempfile
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity
from torch.utils._python_dispatch import TorchDispatchMode

from bench.device_tests import TEST_PROCESSES, TEST_THREADS, processes_for, run_tests
from bench.run import TASKS, _sync, own_time_us
from vvlib import philox, rng
from vvlib.book import runner
from vvlib.experiments.setups import variants
from vvlib.experiments.storage import runs, store
from vvlib.model import ModelConfig
from vvlib.train import TrainConfig, Trainer

DRAWS = ("generators", "counter")
LONGER = 3  # the second loop's length in first loops: their difference is the steady rate a unit runs at
PROFILED_STEPS, PROFILED_KERNELS = 10, 15  # kernels.json: steps under the profiler, kernels kept per task
# ops that only convert or copy: a copy_ is put down to the nearest enclosing op not among them
COPYING = {"aten::copy_", "aten::_to_copy", "aten::to", "aten::clone", "aten::contiguous"}


class KernelCount(TorchDispatchMode):
    """Counts the aten calls that compute something (views only describe memory): a device-free
    proxy for the kernels a step launches."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if not func.is_view:
            self.calls += 1
        return func(*args, **(kwargs or {}))


def eager_kernels(task: str, draws: str, n_seeds: int, device) -> int:
    trainer = Trainer(ModelConfig(task=TASKS[task]), TrainConfig(n_seeds=n_seeds, steps=10**9, draws=draws), device,
                      graph_step=False)
    trainer.train_step()  # AdamW's state is made at its first step
    with KernelCount() as count:
        trainer.train_step()
    return count.calls


@contextlib.contextmanager
def philox_chosen(name: str):
    """VVLIB_PHILOX set to `name` while the block runs (vvlib.philox reads it at each call)."""
    before = os.environ.get("VVLIB_PHILOX")
    os.environ["VVLIB_PHILOX"] = name
    try:
        yield
    finally:
        os.environ.pop("VVLIB_PHILOX") if before is None else os.environ.update(VVLIB_PHILOX=before)


def measured(what, row: dict) -> dict:
    """what() under the row's Philox, the row updated with its figures, or with the error that stopped it."""
    try:
        with philox_chosen(row["philox"]):
            return {**row, **what()}
    except Exception as exc:  # a failed measurement is a result too: the check goes on to the next
        return {**row, "error": f"{type(exc).__name__}: {exc}"[:2000]}


def time_step(task: str, draws: str, n_seeds: int, device, steps: int, repeats: int = 3) -> dict:
    """The training step at the defaults with all seeds in one group (graphed where supported)."""
    trainer = Trainer(ModelConfig(task=TASKS[task]), TrainConfig(n_seeds=n_seeds, steps=10**9, draws=draws), device)
    for _ in range(3):  # warm-up: allocations, the CUDA graph recorded
        trainer.train_step()
    times = []
    for _ in range(repeats):
        _sync(device)
        start = time.perf_counter()
        for _ in range(steps):
            trainer.train_step()
        _sync(device)
        times.append((time.perf_counter() - start) / steps)
    seconds = statistics.median(times)
    return {"graphed": trainer.graph_step, "ms_per_step": round(1e3 * seconds, 3),
            "model_steps_per_s": round(n_seeds / seconds, 1),
            "eager_kernels_per_step": eager_kernels(task, draws, n_seeds, device)}


def profile_step(task: str, n_seeds: int, device, steps: int = PROFILED_STEPS,
                 top: int = PROFILED_KERNELS) -> dict:
    """Where an eager counter-stream step's time goes: the `top` aten ops by their own time (on a GPU, the
    kernels each launched; a kernel no aten op launches, as the fused Philox's, is left out), each with its
    calls and microseconds a step and its share of the ops' time."""
    trainer = Trainer(ModelConfig(task=TASKS[task]), TrainConfig(n_seeds=n_seeds, steps=10**9, draws="counter"),
                      device, graph_step=False)
    for _ in range(2):  # warm-up: AdamW's state, lazily made kernels
        trainer.train_step()
    on_gpu = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    _sync(device)
    with torch.profiler.profile(activities=activities) as prof:
        for _ in range(steps):
            trainer.train_step()
        _sync(device)
    ops = [e for e in prof.key_averages() if e.key.startswith("aten::") and own_time_us(e, on_gpu) > 0]
    total = sum(own_time_us(e, on_gpu) for e in ops) or 1.0
    ranked = sorted(ops, key=lambda e: own_time_us(e, on_gpu), reverse=True)[:top]
    return {"steps": steps, "device_ms_per_step": round(total / steps / 1e3, 3),
            "kernels": [{"name": e.key, "calls_per_step": round(e.count / steps, 2),
                         "us_per_step": round(own_time_us(e, on_gpu) / steps, 1),
                         "share": round(own_time_us(e, on_gpu) / total, 4)} for e in ranked],
            "copies": copy_callers(prof.events(), steps, on_gpu)}


def copy_callers(events, steps: int, on_gpu: bool) -> list[dict]:
    """Who calls aten::copy_ in a profile's events: per nearest enclosing op that does more than copy
    (COPYING; '(none)' at the top level), the copies' calls and own microseconds a step, the largest first.
    The H200's first profile had 16 copies a step take 9% of argmax's step; this says what they are for."""
    found = {}
    for event in events:
        if event.name != "aten::copy_":
            continue
        caller = event.cpu_parent
        while caller is not None and caller.name in COPYING:
            caller = caller.cpu_parent
        name = caller.name if caller is not None else "(none)"
        calls, us = found.get(name, (0, 0.0))
        found[name] = (calls + 1, us + own_time_us(event, on_gpu))
    ranked = sorted(found.items(), key=lambda item: item[1][1], reverse=True)
    return [{"caller": name, "calls_per_step": round(calls / steps, 2), "us_per_step": round(us / steps, 1)}
            for name, (calls, us) in ranked]


def time_loop(task: str, draws: str, n_seeds: int, device, steps: int, model: ModelConfig | None = None) -> dict:
    """`steps` steps through runs.trained into a scratch store, one checkpoint forced half-way (`model`:
    the task's default model unless given); on the counter stream, then LONGER times as many for the
    steady rate (the generators' runs are all committed: no estimate reads theirs, so the GPU's seconds
    are not spent on it)."""
    model = model or ModelConfig(task=TASKS[task])
    lengths = (steps, LONGER * steps) if draws == "counter" else (steps,)
    short, *long = (trained(model, TrainConfig(n_seeds=n_seeds, steps=n, draws=draws, checkpoint_gap_s=0,
                                               checkpoint_every=max(1, n // 2)), device) for n in lengths)
    saving = short["checkpoints"]
    row = {"steps": steps, "model_steps_per_s": short["model_steps_per_s"],
           "wall_s": short["provenance"]["wall_time_s"], "checkpoints": saving["written"],
           "checkpoint_s": saving["seconds"],
           "model_steps_per_s_without_checkpoints": round(n_seeds * steps / loop_seconds(short), 1)}
    if long:
        row |= {"long_steps": lengths[1], "steady_model_steps_per_s": steady_rate(
            n_seeds, (steps, loop_seconds(short)), (lengths[1], loop_seconds(long[0])))}
    return row


def trained(model: ModelConfig, cfg: TrainConfig, device) -> dict:
    """The run record of `cfg` trained through the store's own path into a scratch store."""
    with tempfile.TemporaryDirectory() as scratch:
        return runs.trained(scratch, model, cfg, device, progress=False)[1]


def loop_seconds(record: dict) -> float:
    """A run's wall time less its checkpoints' (their seconds vary from one to the next; they are timed apart)."""
    return record["provenance"]["wall_time_s"] - record["checkpoints"]["seconds"]


def steady_rate(n_seeds: int, short: tuple[int, float], long: tuple[int, float]) -> float | None:
    """Model-steps/s of the steps a longer run adds, from (steps, seconds) of two runs that pay the same
    fixed costs (graph recordings, first calls, setting up): what a unit's many steps run at.  A few
    hundred steps alone err slow (chapter 5's units trained at 14,450 model-steps/s where the first check's
    300-step loop gave 6,071).  None where the difference is too small to be timed."""
    extra_steps, extra_s = long[0] - short[0], long[1] - short[1]
    return round(n_seeds * extra_steps / extra_s, 1) if extra_steps > 0 and extra_s > 0 else None


def chapter9_unit(task: str) -> TrainConfig:
    """The training config of chapter 9's first paper-scale unit for `task`."""
    P = variants.task_params(runner.resolved("09_longer_training", "paper"), task)
    return variants.train_configs(P)[0]


def deep_run(task: str) -> tuple[ModelConfig, int]:
    """Chapter 10's model of several attention layers and heads at its paper profile (its deep_baseline), and
    the seeds each of its stored runs holds there (deep_seed_chunk)."""
    P = variants.task_params(runner.resolved("10_beyond", "paper"), task)
    model = variants.model_config(P, variants.task_config(P, task), "deep_baseline")
    return model, variants.train_configs(P, "deep_baseline")[0].n_seeds


def time_curriculum(task: str, device, steps: int, n_seeds: int) -> dict:
    """chapter9_unit at `n_seeds` seeds a run, shortened to `steps` with its curriculum's stages in proportion,
    through runs.trained; then LONGER times as many (the same stages, each longer), for the steady rate the
    unit's minutes are told by."""
    unit = dataclasses.replace(chapter9_unit(task), n_seeds=n_seeds)
    short, long = (trained(ModelConfig(task=TASKS[task]), dataclasses.replace(
        unit, steps=n, checkpoint_every=n, curriculum_steps=round(n * unit.curriculum_steps / unit.steps)), device)
        for n in (steps, LONGER * steps))
    steady = steady_rate(n_seeds, (steps, loop_seconds(short)), (LONGER * steps, loop_seconds(long)))
    return {"task": task, "draws": unit.draws, "n_seeds": n_seeds, "steps": steps, "max_len": unit.max_len,
            "unit_steps": unit.steps, "model_steps_per_s": short["model_steps_per_s"], "long_steps": LONGER * steps,
            "steady_model_steps_per_s": steady,
            "unit_training_min": round(n_seeds * unit.steps / (steady or short["model_steps_per_s"]) / 60, 1)}


def write(out: Path, name: str, rows: list, device):
    """A part's rows, each with its own `seconds`; the part's wall time is theirs added up (what the check's
    minutes went to, part by part: the rows the queue's estimates read, and what may be left out)."""
    figures = {"provenance": store.provenance(device, round(sum(r["seconds"] for r in rows), 2)), "rows": rows}
    store.write_json(out / f"{name}.json", figures)


def timed(what, row: dict) -> dict:
    """measured(what, row) with the seconds it took."""
    started = time.perf_counter()
    return measured(what, row) | {"seconds": round(time.perf_counter() - started, 2)}


def steady(row: dict) -> str:
    """A row's steady rate as the table shows it ('-': not timed)."""
    return f"{row['steady_model_steps_per_s']:,.0f}" if row.get("steady_model_steps_per_s") else "-"


def table(steps: list, loops: list, tests: dict | None) -> str:
    lines = [f"{'task':<11}{'draws':<11}{'philox':<8}{'seeds':>6}{'step ms':>9}{'steps/s':>10}{'kernels':>9}"
             f"{'loop steps/s':>14}{'steady':>9}{'ckpt s':>8}"]
    loop_of = {(l["task"], l["draws"], l["philox"], l["n_seeds"]): l for l in loops if "layers" not in l}
    for s in steps:
        l = loop_of.get((s["task"], s["draws"], s["philox"], s["n_seeds"]), {})
        head = f"{s['task']:<11}{s['draws']:<11}{s['philox']:<8}{s['n_seeds']:>6}"
        if "error" in s or "error" in l:
            lines.append(f"{head}  failed: {(s.get('error') or l['error'])[:80]}")
            continue
        loop = f"{l['model_steps_per_s']:>14,.0f}{steady(l):>9}{l['checkpoint_s']:>8.1f}" if l else ""
        lines.append(f"{head}{s['ms_per_step']:>9.2f}{s['model_steps_per_s']:>10,.0f}{s['eager_kernels_per_step']:>9}"
                     + loop)
    for l in (l for l in loops if "layers" in l):  # a deeper model: the loop alone
        shape = (f"{l['task']}, {l['layers']} layers x {l['heads']} heads, {l['draws']}, {l['philox']}, "
                 f"{l['n_seeds']} seeds")
        lines.append(f"{shape}: loop " + (f"failed: {l['error'][:80]}" if "error" in l
                                          else f"{l['model_steps_per_s']:,.0f} model-steps/s, steady {steady(l)}"))
    if tests is not None:
        lines.append(f"tests: {tests['summary']} (exit {tests['exit_status']}, {tests['seconds']} s, "
                     f"{tests['processes']} process{'es' if tests['processes'] > 1 else ''})")
    return "\n".join(lines)


def seconds_line(parts: dict, whole: float) -> str:
    """Where the check's seconds went, part by part; the rest is what no part timed (imports, writing the JSON)."""
    spent = {name: sum(r["seconds"] for r in rows) for name, rows in parts.items() if rows}
    return ("seconds: " + ", ".join(f"{name} {s:.0f}" for name, s in spent.items())
            + f", the rest {whole - sum(spent.values()):.0f}; the check {whole:.0f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for tests.json, step.json and loop.json")
    parser.add_argument("--device", default="cuda", choices=("cpu", "cuda"))
    parser.add_argument("--seeds", type=int, default=100, help="seeds in the ensemble (the paper's: 100)")
    parser.add_argument("--steps", type=int, default=300, help="steps of the real loop (the step is timed over a "
                        "tenth of them, three times)")
    parser.add_argument("--no-tests", action="store_true", help="skip the pytest part")
    parser.add_argument("--trials", action="store_true", help="also time chapter 9's argmax unit and chapter 10's "
                        "deep model at twice the seeds their runs hold (questions the plan does not read; answered "
                        "on 2026-11-27: bench/README.md)")
    parser.add_argument("--tests-timeout", type=float, default=120.0, help="seconds the tests may take")
    parser.add_argument("--test-processes", type=int, default=processes_for(os.cpu_count() or 1),
                        help=f"pytest processes sharing the tests (default {TEST_PROCESSES}, at most cores / "
                             f"{TEST_THREADS})")
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.steps < 2 or args.test_processes < 1:
        parser.error(f"--seeds and --test-processes must be >= 1 and --steps >= 2; got {args.seeds}, "
                     f"{args.test_processes} and {args.steps}")
    device = rng.resolve_device(args.device)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    checked = time.perf_counter()
    tests = None
    if not args.no_tests:
        tests = run_tests(args.tests_timeout, args.test_processes)
        store.write_json(out / "tests.json", {"provenance": store.provenance(device, tests["seconds"]), "rows": tests})
        print(f"tests: {tests['summary']}", flush=True)
    steps, loops = [], []
    timed_steps = max(1, args.steps // 10)

    def step_and_loop(task: str, draws: str, philox_name: str):
        row = {"task": task, "draws": draws, "philox": philox_name, "n_seeds": args.seeds}
        steps.append(timed(lambda: time_step(task, draws, args.seeds, device, timed_steps), row))
        write(out, "step", steps, device)
        loops.append(timed(lambda: time_loop(task, draws, args.seeds, device, args.steps), row))
        write(out, "loop", loops, device)
        print(" ".join(f"{k}={v}" for k, v in loops[-1].items()), flush=True)

    # the Philox every run still to train uses (a CPU has only the tensors'); the generators' rows carry the
    # setting in force too, which their draws never read
    philox_used = philox.implementation() if device.type == "cuda" else "tensors"
    for task in TASKS:
        for draws in DRAWS:
            step_and_loop(task, draws, philox_used)
    curricula = []

    def curriculum(task: str, n_seeds: int, trial: str = ""):
        row = {"task": task, "philox": philox_used} | ({"trial": trial} if trial else {})
        curricula.append(timed(lambda: time_curriculum(task, device, args.steps, n_seeds), row))
        write(out, "curriculum", curricula, device)
        c = curricula[-1]
        print(f"chapter 9 {task} unit ({n_seeds} seeds to 256 items): " + (f"failed: {c['error'][:80]}" if "error" in c
              else f"{c['model_steps_per_s']:,.0f} model-steps/s, steady {steady(c)}, {c['unit_training_min']} min "
                   "of training"), flush=True)

    for task in TASKS:
        curriculum(task, min(chapter9_unit(task).n_seeds, args.seeds))
    # chapter 10's deeper argmax model through the same loop: each of its layers passes over every item
    deep, chunk = deep_run("argmax")

    def deep_loop(n_seeds: int, trial: str = ""):
        row = {"task": "argmax", "draws": "counter", "philox": philox_used, "n_seeds": n_seeds, "layers": deep.layers,
               "heads": deep.heads} | ({"trial": trial} if trial else {})
        loops.append(timed(lambda: time_loop("argmax", "counter", n_seeds, device, args.steps, deep), row))
        write(out, "loop", loops, device)

    deep_loop(min(chunk, args.seeds))  # at the seeds of its paper-scale runs, which the plan times by this row
    if args.trials:  # questions the plan does not read: would runs of twice the seeds train in less than twice the time?
        doubled = min(2 * chapter9_unit("argmax").n_seeds, args.seeds)
        curriculum("argmax", doubled, f"{doubled} seeds a run, against the paper profile's seed_chunk")
        if 2 * chunk <= args.seeds:
            deep_loop(2 * chunk, f"{2 * chunk} seeds a run, against the paper profile's deep_seed_chunk")
    profiles = []
    for task in TASKS:  # eager steps: nothing recorded, so safe after everything else
        row = {"task": task, "draws": "counter", "philox": philox_used, "n_seeds": args.seeds}
        profiles.append(timed(lambda: profile_step(task, args.seeds, device), row))
        write(out, "kernels", profiles, device)
    for p in profiles:
        top = ", ".join(f"{k['name'][:40]} {100 * k['share']:.0f}%" for k in p.get("kernels", [])[:3])
        print(f"{p['task']}: eager step {p.get('device_ms_per_step', '-')} ms of device time; "
              + (f"failed: {p['error'][:80]}" if "error" in p else top))
        copies = ", ".join(f"{c['caller']} {c['calls_per_step']:g} ({c['us_per_step']:g} us)"
                           for c in p.get("copies", [])[:3])
        if copies:
            print(f"    copy_ a step, by caller: {copies}")
    parts = {"tests": [tests] if tests else [], "step": steps, "loop": loops, "curriculum": curricula,
             "kernels": profiles}
    print(f"\n{store.device_name(device)}, torch {torch.__version__}, commit {store.git_commit()}")
    print(table(steps, loops, tests))
    print(seconds_line(parts, time.perf_counter() - checked))


if __name__ == "__main__":
    main()
