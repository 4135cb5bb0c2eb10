"""The current figures of bench/README.md, rendered from the newest committed records.

    python -m bench.current            # print the tables
    python -m bench.current --write    # put them into bench/README.md between its markers

A figure in bench/README.md is never typed: it is read here from a JSON record that a benchmark wrote
(each record names its device, torch and git commit), and tests/test_bench.py fails when the README's
block differs from what this module renders (the markers are vvlib.book.generated's).
"""

import argparse
import json
import sys
from pathlib import Path

from vvlib.book import generated

BENCH = Path(__file__).parent
README = BENCH / "README.md"
BLOCK = "current figures"  # the name of the README's generated block (vvlib.book.generated)
# The step every paper-scale run takes on a GPU: 100 seeds of the one-layer model, the counter stream drawn by the
# fused Philox kernel, the whole step replayed from a CUDA graph.
DEFAULT_STEP = {"draws": "counter", "philox": "fused", "n_seeds": 100}


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def newest(records: list[dict]) -> dict:
    return max(records, key=lambda r: r["provenance"]["created"])


def is_default_step(row: dict) -> bool:
    return all(row.get(k) == v for k, v in DEFAULT_STEP.items()) and "layers" not in row


def gpu_checks(bench: Path) -> dict[str, dict]:
    """The newest check per GPU: {device: {"step": record, "loop": record, "file": stem}}."""
    by_device: dict[str, list] = {}
    for path in bench.glob("gpu-check-*-step.json"):
        step = load(path)
        loop_path = path.with_name(path.name.replace("-step.json", "-loop.json"))
        entry = {"step": step, "loop": load(loop_path) if loop_path.exists() else None,
                 "file": path.name.removesuffix("-step.json")}
        by_device.setdefault(step["provenance"]["device"], []).append(entry)
    return {device: max(entries, key=lambda e: e["step"]["provenance"]["created"])
            for device, entries in sorted(by_device.items())}


def loop_rate(loop: dict | None, task: str) -> str:
    """The real training loop's rate at the default step: its steady rate (a long run, checkpoints and
    start-up spread thin) where the check measured one, else the 300-step rate without checkpoints."""
    rows = [r for r in (loop or {}).get("rows", []) if r["task"] == task and is_default_step(r)]
    if not rows:
        return "not measured"
    row = rows[-1]
    if "steady_model_steps_per_s" in row:
        return f"{row['steady_model_steps_per_s']:,.0f} (steady, {row['long_steps']} steps)"
    return f"{row['model_steps_per_s_without_checkpoints']:,.0f} (300 steps)"


def gpu_table(bench: Path = BENCH) -> str:
    """Per GPU and task: the graphed step, the real loop, and the step's share of its datasheet floor
    (bench.step_traffic: the bytes and FLOPs a step must move at the datasheet's bandwidth and fp32 rate)."""
    traffic = {r["task"]: r for r in load(bench / "step-traffic-cpu.json")["rows"]}
    lines = ["| GPU | task | step (ms) | model-steps/s, graphed step | model-steps/s, real loop | datasheet floor (ms) "
             "| step at % of floor | floor, elementwise fused (ms) | record |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for device, check in gpu_checks(bench).items():
        for row in (r for r in check["step"]["rows"] if is_default_step(r)):
            floor = traffic[row["task"]]["gpus"][device]
            lines.append(f"| {device} | {row['task']} | {row['ms_per_step']:.2f} | {row['model_steps_per_s']:,.0f} | "
                         f"{loop_rate(check['loop'], row['task'])} | {floor['floor_ms']:.2f} | "
                         f"{100 * floor['floor_ms'] / row['ms_per_step']:.0f}% | {floor['floor_ms_others_fused']:.2f} | "
                         f"`{check['file']}` ({check['step']['provenance']['git_commit'][:7]}) |")
    return "\n".join(lines)


def cpu_table(bench: Path = BENCH) -> str:
    """The newest `bench.run` record: training rates at 100 seeds (one batch, and seed groups of 4) against the
    fp32 matmul peak measured in the same run, evaluation at N = 2^14, and the Monte Carlo."""
    run = newest([load(p) for p in bench.glob("run-cpu-*.json")])
    train = {(r["task"], r["mode"]): r for r in run["training"]}
    peak = run["matmul_peak_gflop_per_s"]
    lines = [f"{run['provenance']['cpu']}, {run['provenance']['device'].split('(')[-1].rstrip(')')}, "
             f"torch {run['provenance']['torch']}, at {run['provenance']['git_commit'][:7]}; "
             f"fp32 matmul peak {peak:.0f} GFLOP/s in the same run.", "",
             "| task | model-steps/s, 100 seeds in one batch | in groups of 4 | groups of 4, % of matmul peak "
             "| evaluation items/s at N = 2^14 | evaluation peak memory |",
             "| --- | --- | --- | --- | --- | --- |"]
    evaluation = {r["task"]: r for r in run["evaluation"] if r["N"] == 2 ** 14}
    for task in ("argmax", "dictionary"):
        one = train[(task, "ensemble, 100 seeds")]
        groups = train[(task, "ensemble, 100 seeds in groups of 4")]
        lines.append(f"| {task} | {one['model_steps_per_s']:.0f} | {groups['model_steps_per_s']:.0f} | "
                     f"{100 * groups['of_peak']:.0f}% | {evaluation[task]['items_per_s']:,.0f} | "
                     f"{evaluation[task]['peak_gib']:.2f} GiB |")
    mc = run["monte_carlo"]
    lines += ["", f"Monte Carlo (chapter 2), N = {mc['N']:,}, {mc['sequences']:,} sequences: "
                  f"{mc['sequence_items_per_s'] / 1e6:.1f} M sequence-items/s."]
    return "\n".join(lines)


def per_row(rows: list[dict], label, key: str) -> str:
    """Each row's ratio, named: "argmax 1.02, dictionary 1.03"."""
    return ", ".join(f"{label(r)} {r[key]:.2f}" for r in rows)


def accuracy_gap(record: dict) -> str:
    return (f"speed-up {record['speed_up']:.2f}; largest accuracy difference "
            f"{max(abs(a['diff']) for a in record['accuracy'].values()):.2f} points")


# The one-question benchmarks: what each answers, the command that measures it, and its headline from its record.
QUESTIONS = [
    ("draws-cpu.json", "the counter stream against per-seed generators: time of a whole training step",
     "python -m bench.draws", lambda d: "counter / generators: " + per_row(
         [r for r in d["rows"] if r["part"] == "training step"], lambda r: r["task"], "counter_over_generators")),
    ("philox-ab-cpu.json", "the capture-safe Philox against the one before it: step time", "python -m bench.philox_ab",
     lambda d: "after / before: " + per_row(d["rows"], lambda r: f"{r['task']} {r['n_seeds']} seeds",
                                                    "after_over_before")),
    ("heads-ab-cpu.json", "a layer's heads sharing their products against head by head: step time",
     "python -m bench.heads_ab", lambda d: "after / before: " + per_row(
         d["rows"], lambda r: f"{r['task']} {r['layers']}x{r['heads']}", "after_over_before")),
    ("subnormal-cpu.json", "dictionary steps with float32 subnormals kept against flushed: step time",
     "python -m bench.subnormal", lambda d: "kept / flushed: " + per_row(
         d["rows"], lambda r: f"from step {r['step']:,}", "kept_over_flushed")),
    ("heap-ab-cpu.json", "scoring up to 16,384 items with glibc's large freed blocks returned against kept in the heap",
     "python -m bench.heap_ab", lambda d: f"default / kept: {d['default_over_kept']:.2f}x"),
    ("length-cost-cpu.json", "a step at chapter 9's 256 items against one at 16", "python -m bench.length_cost",
     lambda d: "256 / 16 items: " + per_row([r for r in d["rows"] if r["max_len"] == 256], lambda r: r["task"],
                                            "over_16")),
    ("tf32-ab-h100-argmax.json", "TF32 against fp32 products on an H100, argmax, 100 seeds paired",
     "python -m bench.tf32_ab", accuracy_gap),
    ("tf32-ab-h100-dictionary.json", "the same on dictionary lookup", "python -m bench.tf32_ab", accuracy_gap),
]


def questions_table(bench: Path = BENCH) -> str:
    lines = ["| question | command | record | figure |", "| --- | --- | --- | --- |"]
    for name, question, command, headline in QUESTIONS:
        lines.append(f"| {question} | `{command}` | `{name}` | {headline(load(bench / name))} |")
    return "\n".join(lines)


def block(bench: Path = BENCH) -> str:
    """Everything between the README's markers."""
    return "\n\n".join(["### GPUs: the paper-scale step (100 seeds, counter stream, whole step graphed)",
                        gpu_table(bench), "### CPU: `python -m bench.run`", cpu_table(bench),
                        "### One question each", questions_table(bench)])


def written(readme_text: str, bench: Path = BENCH) -> str:
    """The README's text with its block rendered anew; a README without both markers is refused."""
    return generated.replaced(readme_text, BLOCK, block(bench), str(README))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite bench/README.md's generated block")
    args = parser.parse_args(argv)
    if args.write:
        README.write_text(written(README.read_text()))
    else:
        print(block())
    return 0


if __name__ == "__main__":
    sys.exit(main())
