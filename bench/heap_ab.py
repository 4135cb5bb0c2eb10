"""CPU scoring at long lengths with glibc's default heap and with large freed blocks kept in it.

    python -m bench.heap_ab                              # dictionary lookup, 2 seeds, 32 sequences, up to 16,384
    python -m bench.heap_ab --json bench/heap-ab-cpu.json

By default glibc returns every block over its mmap threshold to the system when it is freed, so an
evaluation that allocates the same large attention blocks length after length pays page faults for
them each time.  scripts/test.sh raises both thresholds (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_)
so the blocks stay in the heap.  This scores one untrained model in a fresh process under each
setting (glibc reads them at start), alternating the two repeat by repeat, and prints the medians of
the scoring's wall time, its system time, the peak memory and the ratio.  The accuracies must agree.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

KEPT = {"MALLOC_MMAP_THRESHOLD_": str(2**32), "MALLOC_TRIM_THRESHOLD_": str(2**32)}  # as scripts/test.sh sets


def score(task: str, n_seeds: int, n_sequences: int, longest: int) -> dict:
    """In this process: one evaluation of an untrained model on one thread, timed."""
    import torch

    from vvlib.evaluate import PAPER_LENGTHS, EvalConfig, accuracy
    from vvlib.model import ModelConfig, init_params
    from vvlib.tasks import TaskConfig

    torch.set_num_threads(1)
    cfg = ModelConfig(task=TaskConfig(task))
    params = init_params(cfg, list(range(n_seeds)))
    lengths = tuple(n for n in PAPER_LENGTHS if n <= longest)
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    found = accuracy(cfg, params, EvalConfig(lengths=lengths, n_sequences=n_sequences), progress=False)
    after = resource.getrusage(resource.RUSAGE_SELF)
    return {"seconds": time.perf_counter() - start, "system_s": after.ru_stime - before.ru_stime,
            "peak_mb": after.ru_maxrss / 1024, "accuracy": found.tolist()}


def in_fresh_process(kept: bool, args) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in KEPT} | (KEPT if kept else {})
    command = [sys.executable, "-m", "bench.heap_ab", "--child", "--task", args.task, "--seeds", str(args.seeds),
               "--sequences", str(args.sequences), "--longest", str(args.longest)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True,
                          cwd=Path(__file__).parent.parent)
    return json.loads(done.stdout)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="dictionary", choices=["argmax", "dictionary"])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--sequences", type=int, default=32, help="test sequences per length")
    parser.add_argument("--longest", type=int, default=16384, help="the longest test length")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(score(args.task, args.seeds, args.sequences, args.longest)))
        return
    started = time.perf_counter()
    runs = {kept: [] for kept in (False, True)}
    for _ in range(args.repeats):
        for kept in runs:
            runs[kept].append(in_fresh_process(kept, args))
    if any(r["accuracy"] != runs[False][0]["accuracy"] for r in runs[False] + runs[True]):
        raise SystemExit("the two heaps scored differently")
    rows = [{"heap": "kept" if kept else "default", **{key: statistics.median(r[key] for r in found)
                                                       for key in ("seconds", "system_s", "peak_mb")}}
            for kept, found in runs.items()]
    for r in rows:
        print(f"{r['heap']:>7} heap: {r['seconds']:6.2f} s scoring ({r['system_s']:.2f} s in the system), "
              f"peak {r['peak_mb']:.0f} MB")
    ratio = rows[0]["seconds"] / rows[1]["seconds"]
    print(f"default / kept: {ratio:.2f}x ({args.task}, {args.seeds} seeds, {args.sequences} sequences a length "
          f"up to {args.longest:,}, one thread, median of {args.repeats})")
    if args.json:
        from vvlib.experiments.storage import store

        setting = {k: getattr(args, k) for k in ("task", "seeds", "sequences", "longest", "repeats")}
        args.json.write_text(json.dumps({"provenance": store.provenance("cpu", time.perf_counter() - started),
                                         "setting": setting, "rows": rows, "default_over_kept": ratio},
                                        indent=1) + "\n")


if __name__ == "__main__":
    main()
