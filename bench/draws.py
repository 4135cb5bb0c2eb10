"""Does the counter stream slow training?  Generators against the counter stream, in one run.

    python -m bench.draws                          # CPU: the book's 20 seeds in groups of 4
    python -m bench.draws --device cuda --seeds 100 --seed-group 0
    python -m bench.draws --json bench/draws-cpu.json

For each task, times the draw alone and a whole training step with each source of data,
alternating the two sources repeat by repeat (the machine may be shared: drift hits both),
and prints the medians and their ratio.
"""

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

from bench.run import TASKS, _sync
from vvlib import rng
from vvlib.experiments.storage import store
from vvlib.model import ModelConfig
from vvlib.train import TrainConfig, Trainer

DRAWS = ("generators", "counter")


def seconds_per_call(run, steps, device) -> float:
    _sync(device)
    start = time.perf_counter()
    for _ in range(steps):
        run()
    _sync(device)
    return (time.perf_counter() - start) / steps


def measure(task, n_seeds, seed_group, device, steps, repeats) -> list[dict]:
    trainers = {d: Trainer(ModelConfig(task=task), TrainConfig(n_seeds=n_seeds, steps=10**9, seed_group=seed_group,
                                                               draws=d), device) for d in DRAWS}
    parts = {"draw": lambda t: t.draw(0), "training step": lambda t: t.train_step()}
    times = {(part, d): [] for part in parts for d in DRAWS}
    for trainer in trainers.values():  # warm-up: allocations, CUDA graphs recorded
        for run in parts.values():
            run(trainer)
    for _ in range(repeats):
        for part, run in parts.items():
            for d, trainer in trainers.items():
                times[(part, d)].append(seconds_per_call(lambda: run(trainer), steps, device))
    rows = []
    for part in parts:
        median = {d: statistics.median(times[(part, d)]) for d in DRAWS}
        rows.append({"task": task.name, "part": part, "n_seeds": n_seeds, "seed_group": seed_group,
                     **{f"{d}_ms": 1e3 * median[d] for d in DRAWS}, "counter_over_generators": median["counter"] /
                     median["generators"]})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--seeds", type=int, default=20, help="seeds in the ensemble")
    parser.add_argument("--seed-group", type=int, default=4, help="seeds per step (0: all at once)")
    parser.add_argument("--steps", type=int, default=5, help="calls timed per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    for name in ("seeds", "steps", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1; got {getattr(args, name)}")
    device = rng.resolve_device(args.device)
    rows = [row for task in TASKS.values()
            for row in measure(task, args.seeds, args.seed_group, device, args.steps, args.repeats)]
    print(f"device: {store.device_name(device)}, torch {torch.__version__}; medians of {args.repeats} repeats of "
          f"{args.steps} calls, the two sources alternating")
    print("task       | part          | generators (ms) | counter (ms) | counter / generators")
    for r in rows:
        print(f"{r['task']:<10} | {r['part']:<13} | {r['generators_ms']:15.2f} | {r['counter_ms']:12.2f} | "
              f"{r['counter_over_generators']:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"provenance": store.provenance(device), "rows": rows}, indent=1) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
