"""How long would a training chapter's `paper` profile take on this machine?

    python -m bench.paper_scale --device cuda                  # chapter 4 (argmax)
    python -m bench.paper_scale --device cuda --task dictionary --steps 200
    python -m bench.paper_scale --device cuda --tf32           # TF32 matrix products
    python -m bench.paper_scale --device cuda --eager-step     # only the draws replayed from CUDA graphs
    python -m bench.paper_scale --device cuda --eager-draws    # nothing replayed from CUDA graphs

Trains the paper profile's ensemble (100 seeds, the chapter's model and batch) for a sample
of --steps steps, times one evaluation at the paper's 11 lengths, and extrapolates to the
whole profile: two trained variants (Baseline, +LN) for all their steps, each evaluated with
fixed and adaptive temperature.  The extrapolation is labelled as one: run the chapter with
`--profile paper` for the real wall time.
"""

import argparse
import json
import time

import torch

from bench.run import _sync, training_flops_per_step
from vvlib import evaluate, rng
from vvlib.book.runner import get_chapter
from vvlib.model import ModelConfig
from vvlib.tasks import TaskConfig
from vvlib.train import TrainConfig, Trainer

CHAPTERS = {"argmax": "04_argmax_retrieval", "dictionary": "05_dictionary_lookup"}
VARIANTS, TEMPERATURES = 2, 2  # Baseline and +LN; fixed and adaptive temperature


def timed(run, device) -> float:
    _sync(device)
    start = time.perf_counter()
    run()
    _sync(device)
    return time.perf_counter() - start


def measure(task_name: str, device, sample_steps: int, eval_sequences: int | None, graph_draws=None,
            graph_step=None, tf32=False) -> dict:
    profile = get_chapter(CHAPTERS[task_name]).profiles["paper"]
    cfg = ModelConfig(task=TaskConfig(task_name))
    train_cfg = TrainConfig(n_seeds=profile["n_seeds"], steps=10**9, tf32=tf32)
    trainer = Trainer(cfg, train_cfg, device, graph_draws, graph_step)
    timed(lambda: [trainer.train_step() for _ in range(5)], device)  # warm-up: allocations, kernel caches
    step_s = timed(lambda: [trainer.train_step() for _ in range(sample_steps)], device) / sample_steps
    n_sequences = eval_sequences or profile["n_eval_sequences"]
    eval_cfg = evaluate.EvalConfig(lengths=evaluate.PAPER_LENGTHS, n_sequences=n_sequences)
    eval_s = timed(lambda: evaluate.accuracy(cfg, trainer.weights(), eval_cfg, device, progress=False), device)
    flops = training_flops_per_step(cfg, trainer.cfg.batch_size, trainer.cfg.max_len) * profile["n_seeds"]
    return {
        "chapter": CHAPTERS[task_name], "graph_draws": trainer.graph_draws, "graph_step": trainer.graph_step,
        "seeds": profile["n_seeds"], "steps": profile["steps"],
        "sample_steps": sample_steps, "step_ms": 1e3 * step_s, "model_steps_per_s": profile["n_seeds"] / step_s,
        "training_gflop_per_s": flops / step_s / 1e9, "eval_sequences": n_sequences, "eval_s": eval_s,
        "estimated_training_s": VARIANTS * profile["steps"] * step_s,
        "estimated_eval_s": VARIANTS * TEMPERATURES * eval_s * profile["n_eval_sequences"] / n_sequences,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--task", default="argmax", choices=list(CHAPTERS))
    parser.add_argument("--steps", type=int, default=300, help="training steps timed (after 5 warm-up steps)")
    parser.add_argument("--eval-sequences", type=int, default=None,
                        help="test sequences per length for the timed evaluation (default: the profile's; "
                             "the estimate scales it to the profile's)")
    parser.add_argument("--tf32", action="store_true", help="let float32 matrix products use TF32 (CUDA)")
    parser.add_argument("--eager-draws", action="store_true",
                        help="draw each batch eagerly and step eagerly: no CUDA graph (for comparison)")
    parser.add_argument("--eager-step", action="store_true",
                        help="replay only the draws from a CUDA graph, not the whole step (the default: for comparison)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps must be >= 1; got {args.steps}")
    device = rng.resolve_device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = args.tf32  # the evaluation's; the training's follow its TrainConfig
    name = torch.cuda.get_device_name() if device.type == "cuda" else "cpu"
    result = {"device": name, "torch": torch.__version__, "tf32": args.tf32,
              **measure(args.task, device, args.steps, args.eval_sequences, False if args.eager_draws else None,
                        False if args.eager_step or args.eager_draws else None, args.tf32)}
    replayed = ("whole step replayed from CUDA graphs" if result["graph_step"] else
                "draws replayed from CUDA graphs" if result["graph_draws"] else "eager")
    print(f"device: {device} ({name}), torch {torch.__version__}, TF32 {'on' if args.tf32 else 'off'}, {replayed}")
    total = result["estimated_training_s"] + result["estimated_eval_s"]
    print(f"{result['chapter']}, paper profile: {result['seeds']} seeds x {result['steps']:,} steps per variant\n"
          f"  training step ({result['sample_steps']} timed): {result['step_ms']:.2f} ms = "
          f"{result['model_steps_per_s']:,.0f} model-steps/s, {result['training_gflop_per_s']:,.0f} GFLOP/s\n"
          f"  one evaluation, 11 lengths x {result['eval_sequences']} sequences: {result['eval_s']:.1f} s\n"
          f"  estimate for the profile ({VARIANTS} variants; {VARIANTS * TEMPERATURES} evaluations): "
          f"training {result['estimated_training_s'] / 60:.0f} min + evaluation "
          f"{result['estimated_eval_s'] / 60:.1f} min = {total / 60:.0f} min (extrapolated, not run)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
