"""Run chapters 8-11's pages, as their notebooks call them, with a third task registered before the chapters are
imported (tests/argmin_task.py), at a few steps on a tiny model; print what each chapter's record and results.json
hold of it, as JSON.  tests/test_chapter_files.py runs this in a process of its own: registering a task is
only possible before the chapters are imported.  Usage: python tests/third_task_chapters.py OUT_DIR"""

import json
import sys
from pathlib import Path

import matplotlib

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests import argmin_task  # noqa: E402

matplotlib.use("Agg")
argmin_task.register_class()
from vvlib.experiments.setups import paper_tasks  # noqa: E402

paper_tasks.register(argmin_task.record({"default": {"steps": 30, "n_eval_sequences": 32}}))

from vvlib.book.chapters.c08_ablations.ablation_page import AblationPage  # noqa: E402  (after the registration: see above)
from vvlib.book.chapters.c10_beyond.beyond_page import BeyondPage  # noqa: E402
from vvlib.book.chapters.c09_longer_training.longer_page import LongerTrainingPage  # noqa: E402
from vvlib.book.chapters.c11_sensitivity.sensitivity_page import SensitivityPage  # noqa: E402
from vvlib.book import chapters  # noqa: E402

OUT = Path(sys.argv[1])
NAMES = paper_tasks.NAMES


def each(value) -> dict:
    return {task: value for task in NAMES}


TINY = {"profile": "ci", "store_dir": str(OUT / "store"), "hidden": 8, "eval_lengths": [16, 64], "n_seeds": 2,
        "steps": each(5), "n_eval_sequences": each(8), "n_keys": 64, "n_values": 8}
LONGER = {"long_steps": {**each(0), argmin_task.NAME: 5}, "long_seeds": each(2), "long_seed_chunk": each(1)}
PAGES = [  # each notebook's calls, in its order
    (AblationPage, "train train_longer answer tables sentences longer scale write", LONGER),
    (LongerTrainingPage, "train train_longer answer rerun_table losses tables scale write",
     {**LONGER, "max_len": 32, "checkpoint_every": 5}),
    (BeyondPage, "train answer rerun_table random_module rescaled_mean one_layer deep paper_losses deep_attention "
                 "slopes says best_variants scale write", {}),
    (SensitivityPage, "train paper_scale_answer answer training_time row_tables argmax_cost closest_to_paper write",
     {**{f"{task}_rows": [{}] for task in NAMES}, "argmin_rows": [{}, {"hidden": 4}], "compared_lengths": [64],
      "seed_group": 0}),
]


def run(page_class, calls: str, more: dict) -> dict:
    """One page, its cell's defaults with the tiny settings over them (as papermill injects them); what it wrote."""
    record = chapters.get_chapter(page_class.chapter)
    spec = record.parameters()
    given = {**TINY, **more, "output_dir": str(OUT / record.name)}
    page = page_class({**{n: p.default for n, p in spec.items()}, **{k: v for k, v in given.items() if k in spec}})
    for call in calls.split():
        getattr(page, call)()
    results = json.loads((OUT / record.name / "results.json").read_text())
    return {"tasks": list(record.tasks), "default_steps": spec["steps"].default.get(argmin_task.NAME),
            "metrics": results["metrics"]}


print("RESULT " + json.dumps({cls.chapter: run(cls, calls, more) for cls, calls, more in PAGES}))
