"""Why late dictionary steps are slow on a CPU: subnormal floats, kept and flushed to zero, in one run.

    python -m bench.subnormal                                # 4 seeds, timed at steps 0 and 4,000
    python -m bench.subnormal --json bench/subnormal-cpu.json

At the constant rate the dictionary model's attention logits keep growing after step 2,000
(chapter 5), and softmax weights far below the largest fall into float32's subnormal range, which
x86 CPUs compute slowly.  This trains the dictionary Baseline (the book's defaults, seed groups of
4) to each step of --at, then times training steps from there with subnormals kept (as in every run
of the book) and flushed to zero (torch.set_flush_denormal), alternating the two repeat by repeat,
and prints the medians and their ratio.  Timing only: flushing changes the numbers, so no run of
the book uses it.
"""

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import torch

from vvlib.experiments.storage import store
from vvlib.model import ModelConfig
from vvlib.tasks import TaskConfig
from vvlib.train import TrainConfig, Trainer


def seconds_per_step(model_cfg, cfg, checkpoint: Path, flush: bool, steps: int) -> float:
    """From `checkpoint` (or the start, if there is none), the mean time of `steps` training steps
    after one untimed, with subnormals flushed or kept; flushing is switched off again after."""
    torch.set_flush_denormal(flush)
    try:
        trainer = Trainer(model_cfg, cfg, "cpu")
        trainer.resume(checkpoint)
        trainer.train_step()
        start = time.perf_counter()
        for _ in range(steps):
            trainer.train_step()
        return (time.perf_counter() - start) / steps
    finally:
        torch.set_flush_denormal(False)


def measure(at: int, n_seeds: int, steps: int, repeats: int, folder: Path) -> dict:
    model_cfg = ModelConfig(task=TaskConfig("dictionary"))
    cfg = TrainConfig(n_seeds=n_seeds, steps=max(at, 1), seed_group=4, checkpoint_every=max(at, 1))
    checkpoint = folder / f"checkpoint-{at}.pt"
    if at:
        Trainer(model_cfg, cfg, "cpu").run(checkpoint, progress=True)
    times = {flush: [] for flush in (False, True)}
    for _ in range(repeats):
        for flush in times:
            times[flush].append(seconds_per_step(model_cfg, cfg, checkpoint, flush, steps))
    kept, flushed = (statistics.median(times[flush]) for flush in (False, True))
    return {"task": "dictionary", "n_seeds": n_seeds, "seed_group": 4, "step": at, "kept_ms": 1e3 * kept,
            "flushed_ms": 1e3 * flushed, "kept_over_flushed": kept / flushed}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at", type=int, nargs="+", default=[0, 4000], help="steps at which to time")
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=10, help="timed steps per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        rows = [measure(at, args.seeds, args.steps, args.repeats, Path(folder)) for at in args.at]
    for r in rows:
        print(f"step {r['step']:>6,}: {r['kept_ms']:7.1f} ms per step with subnormals kept, "
              f"{r['flushed_ms']:7.1f} flushed to zero ({r['kept_over_flushed']:.2f}x), {r['n_seeds']} seeds")
    if args.json:
        args.json.write_text(json.dumps({"provenance": store.provenance("cpu", time.perf_counter() - started),
                                         "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
