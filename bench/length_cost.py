"""What a training step at 256 items costs against one at 16, on this machine (chapter 9's curriculum).

    python -m bench.length_cost                                  # both tasks, 4 seeds, medians of 3
    python -m bench.length_cost --json bench/length-cost-cpu.json

Chapter 9 trains on sequences whose length cap doubles from 16 to 256 items, so its late steps
decide how long it runs.  This times training steps of freshly initialised models (the book's
defaults, 4 seeds in one seed group, as chapter 9's longer runs on a CPU) with the cap held at
each of --lengths, and prints the seconds per step and their ratio to the first length.  Fresh
weights only: late in a dictionary run subnormal floats make steps slower still (bench/subnormal.py),
so a trained model's ratio can be larger.
"""

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

from vvlib.experiments.storage import store
from vvlib.model import ModelConfig
from vvlib.tasks import TaskConfig
from vvlib.train import TrainConfig, Trainer


def seconds_per_step(task: str, max_len: int, n_seeds: int, steps: int, repeats: int) -> float:
    """Median over `repeats` of the mean time of `steps` training steps (after one untimed) at cap `max_len`."""
    cfg = TrainConfig(n_seeds=n_seeds, steps=10**9, max_len=max_len, seed_group=4)
    trainer = Trainer(ModelConfig(task=TaskConfig(task)), cfg, "cpu")
    trainer.train_step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            trainer.train_step()
        times.append((time.perf_counter() - start) / steps)
    return statistics.median(times)


def measure(task: str, lengths: list, n_seeds: int, steps: int, repeats: int) -> list:
    times = {n: seconds_per_step(task, n, n_seeds, steps, repeats) for n in lengths}
    first = times[lengths[0]]
    return [{"task": task, "max_len": n, "n_seeds": n_seeds, "seed_group": 4, "ms_per_step": 1e3 * t,
             f"over_{lengths[0]}": t / first} for n, t in times.items()]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=["argmax", "dictionary"], choices=["argmax", "dictionary"])
    parser.add_argument("--lengths", type=int, nargs="+", default=[16, 256], help="caps timed; the first is the base")
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=10, help="steps timed per repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    if args.lengths[0] < 5 or sorted(args.lengths) != args.lengths:
        parser.error(f"--lengths must rise from at least 5 (the training's min_len); got {args.lengths}")
    rows = [row for task in args.tasks for row in measure(task, args.lengths, args.seeds, args.steps, args.repeats)]
    base = f"over_{args.lengths[0]}"
    print(f"{'task':<11} {'cap':>5} {'ms/step':>9} {base:>9}")
    for r in rows:
        print(f"{r['task']:<11} {r['max_len']:>5} {r['ms_per_step']:>9.1f} {r[base]:>8.1f}x")
    if args.json:
        device = {"device": store.device_name("cpu"), "torch": torch.__version__, "threads": torch.get_num_threads()}
        args.json.write_text(json.dumps({**device, "rows": rows}, indent=1) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
