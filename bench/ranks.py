"""One process against torchrun ranks: model-steps/s of the same training run on this machine.

    .venv/bin/python -m bench.ranks                      # argmax, 8 seeds, 200 steps, 2 ranks
    .venv/bin/python -m bench.ranks --task dictionary --ranks 2

The single process uses as many threads as there are ranks (all the cores the ranks share);
each rank uses one.  Both train the same seeds (vvlib.distributed: whole seed groups per rank),
timed from the first step to the last, with no store, checkpoint or evaluation.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from vvlib.experiments.storage.store import REPO_ROOT

WORKER = """
import sys, time
import torch
from vvlib import distributed
from vvlib.model import ModelConfig
from vvlib.tasks import TaskConfig
from vvlib.train import Trainer, TrainConfig

task, seeds, steps, group = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
model = ModelConfig(task=TaskConfig(task))
cfg = TrainConfig(n_seeds=seeds, steps=steps, seed_group=group)
start = time.perf_counter()
if distributed.launched():
    distributed.train_spread(model, cfg, "cpu", None, progress=False)
else:
    Trainer(model, cfg, "cpu").run(progress=False)
if distributed.env_rank() == 0:
    print(f"{seeds * steps / (time.perf_counter() - start):.1f}")
"""


def model_steps_per_s(args, ranks: int) -> float:
    env = {**os.environ, "OMP_NUM_THREADS": str(1 if ranks > 1 else args.ranks), "PYTHONPATH": str(REPO_ROOT)}
    launcher = ([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(ranks)]
                if ranks > 1 else [sys.executable])
    command = [*launcher, str(_worker_file()), args.task, str(args.seeds), str(args.steps), str(args.seed_group)]
    out = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO_ROOT, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _worker_file():
    path = Path(tempfile.gettempdir()) / "vvlib_bench_ranks_worker.py"
    path.write_text(textwrap.dedent(WORKER))
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="argmax", choices=["argmax", "dictionary"])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed-group", type=int, default=4, help="seeds stepped together (as the book's runs)")
    parser.add_argument("--ranks", type=int, default=2)
    args = parser.parse_args()
    one = model_steps_per_s(args, 1)
    spread = model_steps_per_s(args, args.ranks)
    print(f"| task | seeds | mode | model-steps/s | vs one process |\n| --- | --- | --- | --- | --- |\n"
          f"| {args.task} | {args.seeds} | one process, {args.ranks} threads | {one:.0f} | 1 |\n"
          f"| {args.task} | {args.seeds} | {args.ranks} ranks (gloo), 1 thread each | {spread:.0f} | {spread / one:.2f} |")


if __name__ == "__main__":
    main()
