"""What one training step must compute and move, counted on any device, and the fastest step a GPU's
datasheet allows for it: is a speed target reachable at all?

    python -m bench.step_traffic --json bench/step-traffic-cpu.json
    python -m bench.step_traffic --kernels bench/gpu-check-<gpu>-<date>-kernels.json   # each op against its floor

The eager step at the paper's defaults (100 seeds, one group, counter stream), every aten call that
computes something (views only describe memory) counted by what it must read and write once: its
tensor arguments and its new outputs; an argument it writes in place is read and written; a gather
(`index`) reads the rows it returns, not its whole table; a new empty tensor costs nothing and a new
zero tensor its writing; adding a gather's gradient into a table reads and writes the rows it adds
to.  FLOPs are the matrix products' (2 M K N each).  Philox is counted as the fused kernel a GPU runs
(philox.KERNEL_SOURCE): one call writing its four words, reading nothing.

The floor of a step on a GPU adds up, kernel by kernel (they run one after another), the larger of its
FLOPs at the datasheet's fp32 rate and its bytes at the datasheet's memory bandwidth.  No real step
reaches it (launches, caches, tiles that read an operand more than once), so a target faster than the
floor cannot be met by this step as it is: only by one that moves fewer bytes (kernels fused) or
computes in another format (TF32).

With --kernels, a GPU check's kernels.json (bench.gpu_check: an eager step's device time per aten op, on
that GPU) is set beside the floors at the same seeds, per category (matrix products, AdamW, the rest):
which part falls furthest short of what the datasheet allows, the products' kernels or the elementwise
passes a fusion would remove.
"""

import argparse
import json
from collections import defaultdict
from pathlib import Path
from unittest import mock

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from bench.run import MATRIX_PRODUCTS, TASKS
from vvlib import philox
from vvlib.experiments.storage import store
from vvlib.model import ModelConfig
from vvlib.train import TrainConfig, Trainer

# datasheet peaks (NVIDIA): fp32 without tensor cores, and memory bandwidth; H100 SXM5 80 GB HBM3, H200 HBM3e
GPUS = {"NVIDIA H100 80GB HBM3": {"fp32_tflops": 67.0, "tb_per_s": 3.35},
        "NVIDIA H200": {"fp32_tflops": 67.0, "tb_per_s": 4.8}}
# issue 46's targets, 100 seeds, fp32, in the real loop: model-steps/s
TARGETS = {"argmax": 75_000, "dictionary": 30_000}
OPTIMIZER = {"_fused_adamw_"}
GATHERS = {"index", "gather", "index_select", "embedding"}  # read the rows they return, not the whole table
# arguments a schema marks as written that the step only reads: fused AdamW unscales its gradients in place
# only when given a gradient scale, which no training here gives
READ_ONLY = {("_fused_adamw_", "grads")}
EMPTY = {"empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided"}
FILLED = {"zeros", "zeros_like", "new_zeros", "full", "full_like", "new_full", "ones", "ones_like", "new_ones"}
# autograd adds a gather's gradient into zeros in place (_index_put_impl_); while a dispatch mode is active it
# calls the out-of-place index_put instead (PyTorch then treats every tensor as a subclass), so index_put is
# counted as the in-place kernel the step runs: it reads and writes the rows it adds to, not the whole table
SCATTER_ADDS = {"index_put", "index_put_", "_index_put_impl_"}


def _size(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def _tensors(tree) -> list:
    return [t for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor)]


def matrix_product_flops(args) -> int:
    """2 M K N (times the batch) of a matrix product: its last two arguments are the factors."""
    a, b = args[-2], args[-1]
    return 2 * a.numel() * b.shape[-1]


def traffic(func, args, kwargs, out) -> tuple[int, int]:
    """(bytes read, bytes written) by one aten call, by the rules in the module's docstring."""
    name = func.overloadpacket.__name__
    written_args = [arg for arg, spec in zip(args, func._schema.arguments)
                    if spec.alias_info is not None and spec.alias_info.is_write and (name, spec.name) not in READ_ONLY]
    written = _tensors(written_args)
    inputs = _tensors((args, kwargs))
    outputs = [t for t in _tensors(out) if not any(t.data_ptr() == w.data_ptr() for w in written)]
    if name in EMPTY:
        return 0, 0
    if name in FILLED:
        return 0, sum(map(_size, outputs))
    if name in SCATTER_ADDS:
        values = args[2]
        indices = sum(map(_size, _tensors(args[1])))
        return indices + 2 * _size(values), _size(values)
    if name in GATHERS:
        inputs = inputs[1:]  # the indices only; the table's rows read are the output's size
        return sum(map(_size, inputs)) + sum(map(_size, outputs)), sum(map(_size, outputs))
    read = sum(map(_size, inputs))
    return read, sum(map(_size, written)) + sum(map(_size, outputs))


def category_of(op: str) -> str:
    """The category of an aten op's calls (matrix products, AdamW or other), from its profiler name ("aten::bmm")."""
    name = op.removeprefix("aten::")
    return "matrix products" if op in MATRIX_PRODUCTS else "AdamW" if name in OPTIMIZER else "other"


class StepTraffic(TorchDispatchMode):
    """Every call: (category: matrix products, AdamW, Philox or other; aten name; bytes read; bytes
    written; FLOPs)."""

    def __init__(self):
        super().__init__()
        self.calls = []
        self.inside_philox = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func.is_view or self.inside_philox:
            return out
        name = func.overloadpacket.__name__
        category = category_of(f"aten::{name}")
        product = category == "matrix products"
        read, written = traffic(func, args, kwargs or {}, out)
        self.calls.append((category, name, read, written, matrix_product_flops(args) if product else 0))
        return out

    def fused_philox(self, counter, key):
        """philox.philox_tensors counted as the one kernel a GPU runs: its four words written."""
        self.inside_philox += 1
        try:
            words = original_philox(counter, key)
        finally:
            self.inside_philox -= 1
        self.calls.append(("Philox (fused)", "philox", 0, sum(map(_size, words)), 0))
        return words


original_philox = philox.philox_tensors


def step_traffic(task: str, n_seeds: int = 100) -> list:
    """StepTraffic's calls of one eager counter-stream step of `task` at the paper's defaults."""
    trainer = Trainer(ModelConfig(task=TASKS[task]), TrainConfig(n_seeds=n_seeds, steps=10**9, draws="counter"), "cpu",
                      graph_step=False)
    trainer.train_step()  # AdamW's state is made at its first step
    mode = StepTraffic()
    with mock.patch.object(philox, "philox_tensors", mode.fused_philox), mode:
        trainer.train_step()
    return mode.calls


def floor_ms(calls, gpu: dict) -> float:
    """The datasheet's fastest run of `calls` one after another: each at its FLOPs at the fp32 peak or its
    bytes at the bandwidth, whichever is slower."""
    return sum(max(flops / (gpu["fp32_tflops"] * 1e12), (read + written) / (gpu["tb_per_s"] * 1e12))
               for _, _, read, written, flops in calls) * 1e3


def measured_steps(paths) -> dict:
    """{(device, task): ms a graphed step took} of the committed GPU checks' step.json rows at the paper's
    defaults (100 seeds, counter stream, fused Philox); the newest check of a device wins."""
    records = sorted((json.loads(Path(p).read_text()) for p in paths), key=lambda r: r["provenance"]["created"])
    return {(record["provenance"]["device"], row["task"]): row["ms_per_step"] for record in records
            for row in record["rows"]
            if (row.get("draws"), row.get("philox"), row.get("n_seeds")) == ("counter", "fused", 100)
            and "ms_per_step" in row}


def by_category(calls) -> dict:
    """{category: calls, bytes read, bytes written, GB moved, FLOPs}."""
    rows = defaultdict(lambda: {"calls": 0, "read": 0, "written": 0, "flops": 0})
    for category, _, read, written, flops in calls:
        row = rows[category]
        row["calls"] += 1
        row["read"] += read
        row["written"] += written
        row["flops"] += flops
    return {c: {**r, "gbytes": round((r["read"] + r["written"]) / 1e9, 3)} for c, r in rows.items()}


def summary(task: str, calls: list, n_seeds: int, measured: dict) -> dict:
    """The step's totals, the calls that move the most, and per GPU its floor, the target's step time and
    the measured one."""
    # what would be left if every other kernel were fused into the matrix products and AdamW
    kept = [call for call in calls if call[0] in ("matrix products", "AdamW")]
    heaviest = sorted(calls, key=lambda call: -(call[2] + call[3]))[:8]
    gpus = {name: {"floor_ms": round(floor_ms(calls, gpu), 3), "floor_ms_others_fused": round(floor_ms(kept, gpu), 3),
                   "target_ms": round(n_seeds / TARGETS[task] * 1e3, 3), "measured_ms": measured.get((name, task))}
            for name, gpu in GPUS.items()}
    return {"task": task, "n_seeds": n_seeds, "gbytes": round(sum(c[2] + c[3] for c in calls) / 1e9, 3),
            "gflop": round(sum(c[4] for c in calls) / 1e9, 2), "by_category": by_category(calls),
            "heaviest": [{"category": c, "call": name, "gbytes": round((read + written) / 1e9, 3)}
                         for c, name, read, written, _ in heaviest],
            "gpus": gpus}


def gpu_of(record: dict) -> dict:
    """The datasheet figures of the GPU a check's record was measured on."""
    device = record["provenance"]["device"]
    if device not in GPUS:
        raise ValueError(f"kernels: measured on {device!r}; the floors know {', '.join(GPUS)}")
    return GPUS[device]


def against_kernels(record: dict, traffic=step_traffic) -> list:
    """Per row of a check's kernels.json (a task, its seeds): per category of step_traffic's (the matrix
    products, AdamW, the rest), its floor on that GPU at those seeds (`traffic`: step_traffic) beside the
    device time the profile measured, and the floor's share of it (1: at the datasheet's bound).  Measured
    by category, not op by op: the profiler gives a kernel's time to the op that launched it (relu's to
    clamp_min, a zero table's to fill_), where the step's traffic names the op its caller asked for.  The
    profile keeps its largest ops only: the rest's time is the step's total less the products' and AdamW's
    (a product or AdamW outside the largest would count there); the fused Philox, launched by no aten op,
    is in neither."""
    gpu, rows = gpu_of(record), []
    for row in record["rows"]:
        if "error" in row:
            continue
        calls = traffic(row["task"], row["n_seeds"])
        measured = {"matrix products": 0.0, "AdamW": 0.0}
        for kernel in row["kernels"]:
            category = category_of(kernel["name"])
            if category in measured:
                measured[category] += kernel["us_per_step"]
        measured["other"] = row["device_ms_per_step"] * 1e3 - sum(measured.values())
        parts = []
        for category, us in measured.items():
            mine = [c for c in calls if c[0] == category]
            floor_us = floor_ms(mine, gpu) * 1e3
            parts.append({"category": category, "us_measured": round(us, 1), "us_floor": round(floor_us, 1),
                          "of_floor": round(floor_us / us, 3) if us > 0 else None})
        rows.append({"task": row["task"], "n_seeds": row["n_seeds"], "parts": parts})
    return rows


def print_against_kernels(rows: list, device: str):
    print(f"an eager step's device time on {device} against the datasheet's floor (1 = at the floor)")
    for r in rows:
        print(f"{r['task']} at {r['n_seeds']} seeds:")
        for part in r["parts"]:
            share = "-" if part["of_floor"] is None else f"{part['of_floor']:.2f}"
            print(f"    {part['category']:<16}{part['us_measured']:>10.1f} us measured "
                  f"{part['us_floor']:>9.1f} us floor   {share} of it")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the rows here")
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--kernels", help="a GPU check's kernels.json: its measured time by category against the "
                        "floors (instead of the rows)")
    args = parser.parse_args(argv)
    if args.kernels:
        try:
            record = json.loads(Path(args.kernels).read_text())
            gpu_of(record)
        except (OSError, ValueError, KeyError) as exc:
            parser.error(f"--kernels: {exc}")
        rows = against_kernels(record)
        print_against_kernels(rows, record["provenance"]["device"])
        if args.json:
            store.write_json(Path(args.json), {"provenance": store.provenance("cpu"), "kernels": args.kernels,
                                               "device": record["provenance"]["device"], "rows": rows})
        return
    measured = measured_steps(Path(__file__).parent.glob("gpu-check-*-step.json"))
    rows = [summary(task, step_traffic(task, args.seeds), args.seeds, measured) for task in TASKS]
    for r in rows:
        print(f"{r['task']}: {r['gbytes']} GB moved, {r['gflop']} GFLOP a step at {r['n_seeds']} seeds")
        for c, part in r["by_category"].items():
            print(f"    {c:16s} {part['calls']:4d} calls {part['gbytes']:7.3f} GB {part['flops'] / 1e9:7.2f} GFLOP")
        print("    moving the most: " + ", ".join(f"{h['call']} {h['gbytes']} GB" for h in r["heaviest"]))
        for gpu, g in r["gpus"].items():
            print(f"    {gpu}: floor {g['floor_ms']} ms ({g['floor_ms_others_fused']} with the rest fused), "
                  f"target {g['target_ms']} ms, measured {g['measured_ms']} ms")
    if args.json:
        store.write_json(Path(args.json), {"provenance": store.provenance("cpu"), "gpus": GPUS, "targets": TARGETS,
                                           "rows": rows})


if __name__ == "__main__":
    main()
