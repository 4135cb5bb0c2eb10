"""Does TF32 change what a run learns, and how much faster is it?  A paired comparison on a GPU.

    python -m bench.tf32_ab --out DIR                       # both tasks, 100 seeds x 2,000 steps each arm
    python -m bench.tf32_ab --out DIR --task dictionary --steps 10000

The same seeds, on the counter stream (the same batches in both arms), are trained twice with
the real loop (Trainer.run): float32 matrix products in full float32, then in TF32 (TrainConfig
tf32).  Both are scored on the same test sequences in full float32, so only the training
differs.  Per test length: each arm's mean accuracy and the paired difference TF32 - float32
over seeds with its 95% interval; per arm: the training's wall time and model-steps per second.
One JSON per task in DIR, written as soon as that task is done.  TF32 exists only on a CUDA GPU:
elsewhere the command stops with exit status 2 before training anything.

TF32 becomes a setting the chapters may use only if the differences are within what the seeds
already vary by; the JSON is the evidence either way (bench/README.md says where it is quoted).
"""

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from vvlib import evaluate, rng
from vvlib.experiments.storage import store
from vvlib.model import ModelConfig
from vvlib.stats import paired_difference
from vvlib.tasks import TaskConfig
from vvlib.train import TrainConfig, Trainer

LENGTHS = (16, 256, 1024, 16384)  # the training length, and 16, 64 and 1,024 times it


def compared(float32: np.ndarray, tf32: np.ndarray, lengths) -> dict:
    """{N: {"float32", "tf32" (mean accuracy, %), "diff", "low", "high", "p" (TF32 - float32, paired)}} from
    per-seed accuracies (seeds, lengths) in [0, 1] of the two arms."""
    return {str(n): {"float32": 100 * float(float32[:, j].mean()), "tf32": 100 * float(tf32[:, j].mean()),
                     **paired_difference(100 * float32[:, j], 100 * tf32[:, j])} for j, n in enumerate(lengths)}


def arm(model_cfg: ModelConfig, train_cfg: TrainConfig, eval_cfg, device) -> tuple[np.ndarray, dict]:
    """One arm: trained through the real loop, scored in full float32 ((seeds, lengths), timing)."""
    trainer = Trainer(model_cfg, train_cfg, device)
    torch.cuda.synchronize(device)
    start = time.perf_counter()
    weights = trainer.run(progress=False)
    torch.cuda.synchronize(device)
    seconds = time.perf_counter() - start
    accuracy = evaluate.accuracy(model_cfg, weights, eval_cfg, device, progress=False).cpu().numpy()
    speed = round(train_cfg.n_seeds * train_cfg.steps / seconds)
    return accuracy, {"seconds": round(seconds, 2), "model_steps_per_s": speed}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for tf32-ab-TASK.json")
    parser.add_argument("--task", choices=["argmax", "dictionary", "both"], default="both")
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--eval-sequences", type=int, default=256)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args(argv)
    device = rng.resolve_device(args.device)
    if device.type != "cuda":
        print(f"error: device: expected cuda (TF32 is a GPU format), got {device.type!r}", file=sys.stderr)
        return 2
    if args.seeds < 2 or args.steps < 1 or args.eval_sequences < 1:
        print("error: --seeds must be >= 2 (a paired interval), --steps and --eval-sequences >= 1", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for task in (["argmax", "dictionary"] if args.task == "both" else [args.task]):
        model_cfg = ModelConfig(task=TaskConfig(task))
        eval_cfg = evaluate.EvalConfig(lengths=LENGTHS, n_sequences=args.eval_sequences, draws="counter")
        base = TrainConfig(n_seeds=args.seeds, steps=args.steps, draws="counter", checkpoint_every=args.steps)
        full, full_time = arm(model_cfg, base, eval_cfg, device)
        fast, fast_time = arm(model_cfg, dataclasses.replace(base, tf32=True), eval_cfg, device)
        result = {"task": task, "device": torch.cuda.get_device_name(device), "torch": torch.__version__,
                  "commit": store.git_commit(), "seeds": args.seeds, "steps": args.steps,
                  "eval_sequences": args.eval_sequences, "float32": full_time, "tf32": fast_time,
                  "speed_up": round(full_time["seconds"] / fast_time["seconds"], 3),
                  "accuracy": compared(full, fast, LENGTHS)}
        (out / f"tf32-ab-{task}.json").write_text(json.dumps(result, indent=1))
        worst = max(result["accuracy"].values(), key=lambda r: abs(r["diff"]))
        print(f"{task}: TF32 {result['speed_up']:.2f}x the float32 loop's speed; largest paired difference "
              f"{worst['diff']:+.2f} points [{worst['low']:+.2f}, {worst['high']:+.2f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
