"""How fast is the engine on this machine?  Prints training, evaluation and Monte Carlo
throughput with the figures they should be judged against.

    python -m bench.run                 # CPU, default sizes, medians of 3 repeats
    python -m bench.run --device cuda   # the same on a GPU
    python -m bench.run --quick         # fewer seeds and repeats: a smoke run

Training FLOPs are counted analytically (matrix products only: forward, plus twice that
for the backward pass) and compared with the fp32 matmul peak measured in the same run.
Evaluation memory is the peak resident memory of a fresh process that does only that
evaluation (on CUDA: torch's peak allocated memory).
"""

import argparse
import dataclasses
import json
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from vvlib import evaluate, graphdraw, montecarlo, rng
from vvlib.experiments.storage import store
from vvlib.model import ModelConfig, per_seed_loss
from vvlib.tasks import TaskConfig
from vvlib.train import TrainConfig, Trainer

TASKS = {"argmax": TaskConfig("argmax"), "dictionary": TaskConfig("dictionary")}
CPU_SEED_GROUP = 4  # the chapters' seed_group that the CPU rows also try (README: "Faster on a CPU")


def forward_flops_per_sequence(cfg: ModelConfig, n: int) -> int:
    """Multiply-adds x 2 of one sequence of n items through the model (matrix products only)."""
    D, F, C = cfg.hidden, cfg.in_features, cfg.task.n_outputs
    encoder = 2 * F * D + 2 * D * D * (cfg.encoder_layers - 1)
    readout = 2 * D * D * (cfg.readout_layers - 1) + 2 * D * C
    return (n + 1) * encoder + 3 * 2 * D * D + 2 * 2 * n * D + readout  # items + query; W_Q, W_K, W_V; logits, A h


def training_flops_per_step(cfg: ModelConfig, batch_size: int, n: int) -> int:
    return 3 * batch_size * forward_flops_per_sequence(cfg, n)


def _sync(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def median_seconds(run, repeats: int, device) -> float:
    """Median wall time of `run()` over `repeats` calls (after one warm-up call)."""
    run()
    _sync(device)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        _sync(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def matmul_peak(device, size=2048, repeats=5) -> float:
    a, b = (torch.randn(size, size, device=device) for _ in range(2))
    return 2 * size**3 / median_seconds(lambda: a @ b, repeats, device)


def ensemble_step_time(task, n_seeds, device, steps, repeats, seed_group=0, graph_draws=None,
                       draws="generators") -> float:
    """Seconds per training step of an ensemble of n_seeds models, stepped in groups of
    seed_group seeds (0: all at once), with the draws replayed from CUDA graphs or not
    (None: wherever supported, as in the chapters), drawn from generators or the counter stream."""
    cfg = TrainConfig(n_seeds=n_seeds, steps=10**9, seed_group=seed_group, draws=draws)
    trainer = Trainer(ModelConfig(task=task), cfg, device, graph_draws)
    return median_seconds(lambda: [trainer.train_step() for _ in range(steps)], repeats, device) / steps


def per_seed_loop_step_time(task, n_seeds, device, steps, repeats) -> float:
    """Seconds per round of a plain loop that steps n_seeds single models one after another."""
    trainers = [Trainer(ModelConfig(task=task), TrainConfig(n_seeds=1, steps=10**9, first_seed=s), device)
                for s in range(n_seeds)]
    return median_seconds(lambda: [t.train_step() for _ in range(steps) for t in trainers], repeats, device) / steps


def whole_ensemble(task, n_seeds, device):
    """A trainer holding all n_seeds in one group, and a function that runs one forward and
    backward pass of it on a fixed batch."""
    trainer = Trainer(ModelConfig(task=task), TrainConfig(n_seeds=n_seeds, steps=10**9), device)
    group, batch = trainer.groups[0], trainer.draw()

    def forward_backward():
        group.optimizer.zero_grad(set_to_none=True)
        per_seed_loss(trainer.model_cfg, group.params, batch).sum().backward()

    return trainer, forward_backward


EAGER_DRAW = "data (eager, not in the total)"  # a comparison, not a part of the step
COUNTER_DRAW = "data (counter stream, not in the total)"  # the same batch's law from the counter stream


def next_step_draws(trainer):
    """A draw of the next step's batch at each call: a counter-stream trainer draws a step's batch once and
    keeps it for the step's seed groups, so drawing again at the same step would time a lookup (the run of
    2026-11-29 at 05935f4 timed that: 0.012 ms)."""
    def draw():
        trainer.step += 1
        return trainer.draw()
    return draw


def step_parts(task, n_seeds, device, steps, repeats) -> dict:
    """Seconds per step of an n_seeds ensemble spent drawing the batch (one generator per seed),
    in the forward and backward pass, and in the AdamW update: where a step's time goes."""
    trainer, forward_backward = whole_ensemble(task, n_seeds, device)
    forward_backward()  # the update needs gradients
    counter = next_step_draws(Trainer(trainer.model_cfg, dataclasses.replace(trainer.cfg, draws="counter"), device))
    parts = {"data": trainer.draw, COUNTER_DRAW: counter}
    if trainer.graph_draws:  # also the eager draws the graphs replace, for comparison
        eager = Trainer(trainer.model_cfg, trainer.cfg, device, graph_draws=False)
        parts = {"data (CUDA graph)": trainer.draw, EAGER_DRAW: eager.draw, COUNTER_DRAW: counter}
    parts |= {"forward + backward": forward_backward, "AdamW update": trainer.groups[0].optimizer.step}
    return {name: median_seconds(lambda: [run() for _ in range(steps)], repeats, device) / steps
            for name, run in parts.items()}


MATRIX_PRODUCTS = {"aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm"}


def own_time_us(event, on_cuda: bool) -> float:
    """An op's own time in a profile's key_averages, in microseconds: its kernels' on a GPU, else the CPU's."""
    return event.self_device_time_total if on_cuda else event.self_cpu_time_total


def matrix_product_share(task, n_seeds, device, steps) -> dict:
    """Profile `steps` forward + backward passes of an n_seeds ensemble: the share of their
    time spent inside matrix-product kernels, and the FLOP rate those kernels reach at the
    model's own shapes (which may be far from the rate at 2048 x 2048).  Together they bound
    what removing every other cost could give."""
    _, forward_backward = whole_ensemble(task, n_seeds, device)
    forward_backward()  # warm-up, outside the profile
    with torch.profiler.profile(with_flops=True) as prof:
        for _ in range(steps):
            forward_backward()
        _sync(device)
    events = prof.key_averages()
    on_cuda = torch.device(device).type == "cuda"
    total = sum(own_time_us(e, on_cuda) for e in events)
    products = [e for e in events if e.key in MATRIX_PRODUCTS]
    product_time = sum(own_time_us(e, on_cuda) for e in products)
    return {"share": product_time / total, "gflop_per_s": sum(e.flops for e in products) / product_time / 1e3}


def bench_matrix_products(device, n_seeds, steps):
    return [{"task": name, **matrix_product_share(task, n_seeds, device, steps)} for name, task in TASKS.items()]


def bench_step_parts(device, n_seeds, steps, repeats):
    rows = []
    for name, task in TASKS.items():
        parts = step_parts(task, n_seeds, device, steps, repeats)
        total = sum(t for part, t in parts.items() if part not in (EAGER_DRAW, COUNTER_DRAW))
        rows += [{"task": name, "part": part, "ms_per_step": 1e3 * t, "share": t / total} for part, t in parts.items()]
    return rows


def bench_training(device, seed_counts, loop_seeds, steps, repeats, peak):
    rows = []
    for name, task in TASKS.items():
        cfg = ModelConfig(task=task)
        flops = training_flops_per_step(cfg, TrainConfig.batch_size, TrainConfig.max_len)
        loop = per_seed_loop_step_time(task, loop_seeds, device, steps, repeats)
        loop_rate = loop_seeds / loop
        rows.append({"task": name, "mode": f"per-seed loop ({loop_seeds} models)", "model_steps_per_s": loop_rate,
                     "gflop_per_s": loop_rate * flops / 1e9, "vs_loop": 1.0, "of_peak": loop_rate * flops / peak})
        for s in seed_counts:
            modes = [(f"ensemble, {s} seed{'s' if s > 1 else ''}", 0, None, "generators")]  # (label, group, graphs, draws)
            cpu_groups = torch.device(device).type == "cpu" and CPU_SEED_GROUP < s
            if cpu_groups:
                modes.append((f"ensemble, {s} seeds in groups of {CPU_SEED_GROUP}", CPU_SEED_GROUP, None, "generators"))
            if s == seed_counts[-1]:  # the counter stream beside the generators, in the same run
                modes.append((f"ensemble, {s} seeds, counter draws", 0, None, "counter"))
                if cpu_groups:
                    modes.append((f"ensemble, {s} seeds in groups of {CPU_SEED_GROUP}, counter draws", CPU_SEED_GROUP,
                                  None, "counter"))
            if graphdraw.supported(task, TrainConfig.max_len, torch.device(device)) and s == seed_counts[-1]:
                modes.append((f"ensemble, {s} seeds, eager draws (no CUDA graph)", 0, False, "generators"))
            for mode, size, graph_draws, draws in modes:
                rate = s / ensemble_step_time(task, s, device, steps, repeats, size, graph_draws, draws)
                rows.append({"task": name, "mode": mode, "model_steps_per_s": rate, "gflop_per_s": rate * flops / 1e9,
                             "vs_loop": rate / loop_rate, "of_peak": rate * flops / peak})
    return rows


def eval_child(task_name, n, n_seeds, n_sequences, device):
    """Run in a fresh process: one evaluation at length n; prints its time and peak memory."""
    task = TASKS[task_name]
    cfg = ModelConfig(task=task)
    params = Trainer(cfg, TrainConfig(n_seeds=n_seeds, steps=1), device).weights()
    eval_cfg = evaluate.EvalConfig(lengths=(n,), n_sequences=n_sequences)
    start = time.perf_counter()  # one timed run, no warm-up: a warm-up would count in the peak memory anyway
    evaluate.accuracy(cfg, params, eval_cfg, device, progress=False)
    _sync(device)
    seconds = time.perf_counter() - start
    if torch.device(device).type == "cuda":
        peak = torch.cuda.max_memory_allocated()
    else:
        peak = peak_resident_bytes()
    print(json.dumps({"seconds": seconds, "peak_bytes": peak}))


def peak_resident_bytes() -> int:
    """This process's peak resident memory.  Linux's VmHWM belongs to the address space, so
    it starts afresh at exec; ru_maxrss would carry over the parent's peak."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux, bytes on macOS: a fallback


def bench_evaluation(device, n_seeds, n_sequences):
    rows = []
    for name in TASKS:
        for n in (2**10, 2**14):
            out = subprocess.run([sys.executable, "-m", "bench.run", "--eval-child", name, str(n), str(n_seeds),
                                  str(n_sequences), "--device", str(device)], capture_output=True, text=True, check=True)
            result = json.loads(out.stdout.strip().splitlines()[-1])
            items = n_seeds * n_sequences * n
            rows.append({"task": name, "N": n, "seeds x sequences": f"{n_seeds} x {n_sequences}",
                         "items_per_s": items / result["seconds"], "peak_gib": result["peak_bytes"] / 2**30})
    return rows


def bench_monte_carlo(device, n_sequences, repeats):
    tables = montecarlo.Tables(montecarlo.RandomAttention(), device)
    n = 2**14
    seconds = median_seconds(lambda: montecarlo.output_moments(tables, montecarlo.Setting(), n, n_sequences),
                             repeats, device)
    return {"N": n, "sequences": n_sequences, "sequence_items_per_s": n_sequences * n / seconds}


def table(rows, columns):
    widths = {c: max(len(c), *(len(_fmt(r[c])) for r in rows)) for c in columns}
    lines = [" | ".join(c.ljust(widths[c]) for c in columns), "-|-".join("-" * widths[c] for c in columns)]
    lines += [" | ".join(_fmt(r[c]).ljust(widths[c]) for c in columns) for r in rows]
    return "\n".join(lines)


def _fmt(value):
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


# (seed counts of the training table, repeats, steps per repeat, evaluation sequences, Monte Carlo sequences)
SIZES = {"full": ([1, 8, 20, 32, 100], 3, 5, 256, 2048), "quick": ([1, 8], 1, 2, 64, 256)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--quick", action="store_true", help="fewer seeds and repeats (a smoke run)")
    parser.add_argument("--json", help="also write every figure, with the device, torch and commit, to this file")
    parser.add_argument("--eval-child", nargs=4, metavar=("TASK", "N", "SEEDS", "SEQUENCES"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    device = rng.resolve_device(args.device)
    if args.eval_child:
        task, n, seeds, sequences = args.eval_child
        return eval_child(task, int(n), int(seeds), int(sequences), device)
    seed_counts, repeats, steps, eval_sequences, mc_sequences = SIZES["quick" if args.quick else "full"]
    print(f"device: {device}, torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{platform.processor() or platform.machine()}")
    # the machine may be shared: measure the peak several times and judge against the best
    peaks = [matmul_peak(device) for _ in range(3)]
    peak = max(peaks)
    print(f"fp32 matmul peak (2048 x 2048; best of 3 medians of 5): {peak / 1e9:.0f} GFLOP/s "
          f"(the three: {', '.join(f'{p / 1e9:.0f}' for p in peaks)})\n")
    figures = {"provenance": store.provenance(device), "quick": args.quick, "matmul_peak_gflop_per_s": peak / 1e9}
    print("training (hidden 128, batch 128, sequences padded to 16 items; median of", repeats, "repeats):")
    figures["training"] = bench_training(device, seed_counts, 8, steps, repeats, peak)
    print(table(figures["training"], ["task", "mode", "model_steps_per_s", "gflop_per_s", "vs_loop", "of_peak"]))
    print(f"\nwhere a step of the {seed_counts[-1]}-seed ensemble goes (parts timed apart; median of", repeats, "repeats):")
    figures["step_parts"] = [{"n_seeds": seed_counts[-1], **row}
                             for row in bench_step_parts(device, seed_counts[-1], steps, repeats)]
    print(table(figures["step_parts"], ["task", "part", "ms_per_step", "share"]))
    print(f"\ninside forward + backward of the {seed_counts[-1]}-seed ensemble (torch.profiler, {steps} steps):")
    figures["matrix_products"] = bench_matrix_products(device, seed_counts[-1], steps)
    print(table(figures["matrix_products"], ["task", "share", "gflop_per_s"]))
    print("\nevaluation (a fresh process each; peak = its resident memory):")
    figures["evaluation"] = bench_evaluation(device, 8, eval_sequences)
    print(table(figures["evaluation"], ["task", "N", "seeds x sequences", "items_per_s", "peak_gib"]))
    figures["monte_carlo"] = mc = bench_monte_carlo(device, mc_sequences, repeats)
    print(f"\nMonte Carlo (chapter 2), N = {mc['N']}, {mc['sequences']} sequences: "
          f"{mc['sequence_items_per_s'] / 1e6:.1f} M sequence-items/s")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
