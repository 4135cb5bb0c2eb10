"""How much of a counter-stream training step is Philox, counted in kernels (any device).

    python -m bench.philox_share --json bench/philox-share-cpu.json

The eager step at the paper's defaults (100 seeds, one group), its aten calls that compute
something (gpu_check.KernelCount: a device-free proxy for the kernels a GPU launches), and how many
of them the elementwise Philox makes (philox.philox_tensors, counted apart).  On a GPU each of those
is a kernel of its own even inside a CUDA graph; the fused Philox (VVLIB_PHILOX=fused) makes one
per call instead, which only a GPU can time (bench/gpu_check.py).
"""

import argparse
from pathlib import Path
from unittest import mock

from bench.gpu_check import KernelCount
from bench.run import TASKS
from vvlib import philox
from vvlib.experiments.storage import store
from vvlib.model import ModelConfig
from vvlib.train import TrainConfig, Trainer


def philox_share(task: str, n_seeds: int = 100) -> dict:
    """{kernels per step, Philox calls per step, kernels those calls make} for one eager step."""
    trainer = Trainer(ModelConfig(task=TASKS[task]), TrainConfig(n_seeds=n_seeds, steps=10**9, draws="counter"), "cpu",
                      graph_step=False)
    trainer.train_step()  # AdamW's state is made at its first step
    inside, original = {"calls": 0, "kernels": 0}, philox.philox_tensors

    def counted(counter, key):
        with KernelCount() as count:  # nested: the step's own count sees these calls too
            words = original(counter, key)
        inside["calls"] += 1
        inside["kernels"] += count.calls
        return words

    with mock.patch.object(philox, "philox_tensors", counted), KernelCount() as step:
        trainer.train_step()
    return {"task": task, "n_seeds": n_seeds, "kernels_per_step": step.calls, "philox_calls": inside["calls"],
            "philox_kernels": inside["kernels"]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args(argv)
    rows = [philox_share(task) for task in TASKS]
    for r in rows:
        print(f"{r['task']}: {r['kernels_per_step']} kernels a step, {r['philox_kernels']} of them in "
              f"{r['philox_calls']} Philox calls")
    if args.json:
        store.write_json(Path(args.json), {"provenance": store.provenance("cpu"), "rows": rows})


if __name__ == "__main__":
    main()
