"""Philox as it is against Philox at an earlier commit, in one process: the CPU training step with
counter draws, alternating the two implementations repeat by repeat (the machine is shared: drift
hits both), and the kernels an eager step launches with each.

    python -m bench.philox_ab                       # against 2d222de (before the capture-safe rewrite)
    python -m bench.philox_ab --before REV --json bench/philox-ab-cpu.json

The earlier vvlib/philox.py is read with `git show REV:vvlib/philox.py`; both give the same bits
(checked before anything is timed), so only time and kernel counts differ.
"""

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from bench.gpu_check import KernelCount
from bench.run import TASKS
from vvlib import philox
from vvlib.experiments.storage import store
from vvlib.model import ModelConfig
from vvlib.train import TrainConfig, Trainer

CASES = [("argmax", 20, 4), ("dictionary", 20, 4), ("argmax", 100, 0)]  # task, seeds, seed_group


def earlier_philox(rev: str):
    """The philox function of vvlib/philox.py at git revision `rev`."""
    source = subprocess.run(["git", "show", f"{rev}:vvlib/philox.py"], cwd=store.REPO_ROOT, capture_output=True,
                            text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "philox_earlier.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("philox_earlier", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.philox


def measure(task, n_seeds, seed_group, implementations: dict, steps: int, repeats: int) -> dict:
    trainer = Trainer(ModelConfig(task=TASKS[task]), TrainConfig(n_seeds=n_seeds, steps=10**9, draws="counter",
                                                                 seed_group=seed_group))
    trainer.train_step()
    kernels, times = {}, {name: [] for name in implementations}
    for name, f in implementations.items():
        philox.philox = f
        with KernelCount() as count:
            trainer.train_step()
        kernels[name] = count.calls
    for _ in range(repeats):
        for name, f in implementations.items():
            philox.philox = f
            start = time.perf_counter()
            for _ in range(steps):
                trainer.train_step()
            times[name].append((time.perf_counter() - start) / steps)
    median = {name: statistics.median(t) for name, t in times.items()}
    before, after = implementations
    return {"task": task, "n_seeds": n_seeds, "seed_group": seed_group,
            **{f"{name}_ms": round(1e3 * median[name], 1) for name in implementations},
            "after_over_before": round(median[after] / median[before], 3),
            **{f"{name}_kernels": kernels[name] for name in implementations}}


def same_bits(before, after) -> bool:
    blocks, lanes = torch.arange(4096), torch.arange(7).view(-1, 1)
    return all(torch.equal(a, b) for a, b in zip(before((blocks, 3, lanes, 2), (11, 13)),
                                                 after((blocks, 3, lanes, 2), (11, 13))))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="2d222de", help="the git revision to compare against")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)
    current = philox.philox
    implementations = {"before": earlier_philox(args.before), "after": current}
    if not same_bits(*implementations.values()):
        sys.exit(f"Philox at {args.before} and now give different bits: not the same stream, nothing to compare")
    started = time.perf_counter()
    try:
        rows = [measure(*case, implementations, args.steps, args.repeats) for case in CASES]
    finally:
        philox.philox = current
    for row in rows:
        print(row)
    if args.json:
        store.write_json(Path(args.json), {"before": args.before, "threads": torch.get_num_threads(), "rows": rows,
                                           "provenance": store.provenance("cpu", time.perf_counter() - started)})


if __name__ == "__main__":
    main()
