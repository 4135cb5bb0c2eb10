"""Chapter 10's deep model (several heads) with a layer's heads sharing their products, against the code of
an earlier commit that ran them head by head, in one run: the CPU training step's time (the two alternating
repeat by repeat, each in a process of its own: the machine is shared, drift hits both) and what a step must
move at 50 seeds (bench.step_traffic's count, the seeds of chapter 10's paper-scale deep runs) with its
datasheet floor on each GPU.

    python -m bench.heads_ab --json bench/heads-ab-cpu.json      # against bb3af3a, the last head by head

The earlier vvlib/ and bench/ come from `git archive REV`; each arm's process imports them first, so the
same worker below times either code.  With one head the two compute the same bits
(tests/test_extensions.py); with several, the sums over heads run in another order.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from vvlib.experiments.storage import store

BEFORE = "bb3af3a"  # the last commit whose model ran a layer's heads one at a time
# task, attention layers, heads, seeds a step is timed at (a few: a CPU's caches hold them)
CASES = [("argmax", 2, 4, 8), ("dictionary", 2, 4, 8), ("argmax", 1, 1, 8)]
TRAFFIC_SEEDS = 50


def worker(task: str, layers: int, heads: int, n_seeds: int, steps: int) -> dict:
    """ms per training step (median of 3 timings of `steps`, after warm-up) and GB a step moves at
    TRAFFIC_SEEDS seeds, with whichever vvlib this process imported."""
    import time
    from unittest import mock

    import torch

    from bench.run import TASKS
    from bench.step_traffic import GPUS, StepTraffic, floor_ms
    from vvlib import philox
    from vvlib.model import ModelConfig
    from vvlib.train import TrainConfig, Trainer

    model = ModelConfig(task=TASKS[task], layers=layers, heads=heads)
    trainer = Trainer(model, TrainConfig(n_seeds=n_seeds, steps=10**9, draws="counter"), "cpu")
    for _ in range(2):
        trainer.train_step()
    times = []
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(steps):
            trainer.train_step()
        times.append((time.perf_counter() - start) / steps)
    # step_traffic.step_traffic as bb3af3a has it counts the default model only: its counting, here for `model`
    traced = Trainer(model, TrainConfig(n_seeds=TRAFFIC_SEEDS, steps=10**9, draws="counter"), "cpu", graph_step=False)
    traced.train_step()
    mode = StepTraffic()
    with mock.patch.object(philox, "philox_tensors", mode.fused_philox), mode:
        traced.train_step()
    return {"ms_per_step": 1e3 * statistics.median(times), "gbytes": sum(c[2] + c[3] for c in mode.calls) / 1e9,
            "calls": len(mode.calls), "floor_ms": {gpu: floor_ms(mode.calls, figures) for gpu, figures in GPUS.items()},
            "vvlib": str(Path(sys.modules["vvlib"].__file__).parent)}


def run_arm(tree: Path | None, case: tuple, steps: int) -> dict:
    """worker(case) in a fresh process that imports vvlib and bench from `tree` (None: this checkout)."""
    root = tree or store.REPO_ROOT
    code = f"import json, bench.heads_ab as h; print(json.dumps(h.worker(*{list(case)!r}, {steps})))"
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(root)})
    return json.loads(done.stdout.strip().splitlines()[-1])


def earlier_tree(rev: str, folder: Path | None = None) -> Path:
    """vvlib/ and bench/ as committed at `rev`, in `folder` (default: a new temporary one), with this
    bench/heads_ab.py beside them (its worker runs there)."""
    folder = Path(folder or tempfile.mkdtemp(prefix="heads_ab_"))
    archive = subprocess.run(["git", "archive", rev, "vvlib", "bench"], cwd=store.REPO_ROOT, capture_output=True,
                             check=True).stdout
    archive_path = folder / "tree.tar"
    archive_path.write_bytes(archive)
    with tarfile.open(archive_path) as tar:
        tar.extractall(folder, filter="data")
    (folder / "bench" / "heads_ab.py").write_text(Path(__file__).read_text())
    return folder


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help="the earlier commit (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="alternating timings per case and arm")
    parser.add_argument("--steps", type=int, default=3, help="steps per timing")
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.steps < 1:
        parser.error(f"--repeats and --steps must be >= 1; got {args.repeats} and {args.steps}")
    tree = earlier_tree(args.before)
    rows = []
    for case in CASES:
        arms = {"before": [], "after": []}
        for _ in range(args.repeats):
            arms["before"].append(run_arm(tree, case, args.steps))
            arms["after"].append(run_arm(None, case, args.steps))
        assert arms["before"][0]["vvlib"] != arms["after"][0]["vvlib"], "both arms imported the same vvlib"
        ms = {arm: statistics.median(r["ms_per_step"] for r in runs) for arm, runs in arms.items()}
        task, layers, heads, seeds = case
        rows.append({"task": task, "layers": layers, "heads": heads, "n_seeds": seeds,
                     "ms_before": round(ms["before"], 1), "ms_after": round(ms["after"], 1),
                     "after_over_before": round(ms["after"] / ms["before"], 3),
                     "traffic_seeds": TRAFFIC_SEEDS, "gbytes_before": round(arms["before"][0]["gbytes"], 3),
                     "gbytes_after": round(arms["after"][0]["gbytes"], 3),
                     "calls_before": arms["before"][0]["calls"], "calls_after": arms["after"][0]["calls"],
                     "floor_ms_before": {g: round(ms, 2) for g, ms in arms["before"][0]["floor_ms"].items()},
                     "floor_ms_after": {g: round(ms, 2) for g, ms in arms["after"][0]["floor_ms"].items()}})
        r = rows[-1]
        print(f"{task}, {layers} layers x {heads} heads, {seeds} seeds: {r['ms_before']} -> {r['ms_after']} ms a step "
              f"({r['after_over_before']}x); at {TRAFFIC_SEEDS} seeds {r['gbytes_before']} -> {r['gbytes_after']} GB "
              f"and {r['calls_before']} -> {r['calls_after']} calls a step", flush=True)
    if args.json:
        store.write_json(Path(args.json), {"provenance": store.provenance("cpu"), "before": args.before,
                                           "repeats": args.repeats, "steps": args.steps, "rows": rows})


if __name__ == "__main__":
    main()
