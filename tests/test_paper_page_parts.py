"""Chapter 4's page once the GPU queue commits its counter-stream runs: argmax retrieval's paper profile
stores each variant's 100 seeds as two runs of 50 (seed_chunk), which the page reads joined.  The
records here are made up with the real store keys, so the page's paper-scale sections run on the CPU
before a GPU ever commits such runs (a joined record once had no spec, and the runs table needed one)."""

import matplotlib
import numpy as np
import pandas as pd
from IPython.display import Markdown

from vvlib.book import accuracy_page, runner
from vvlib.book.accuracy_page import AccuracyPage
from vvlib.experiments.chapters import ARGMAX_RETRIEVAL
from vvlib.experiments.setups import variants
from vvlib.experiments.storage import runs, store

matplotlib.use("Agg")
PROVENANCE = {"device": "NVIDIA H100 80GB HBM3", "torch": "2.11.0+cu130", "git_commit": "0" * 40,
              "created": "2026-11-27T00:00:00+00:00", "wall_time_s": 150.0}


def made_up_paper_store(folder, seed=0) -> dict:
    """Chapter 4's paper-profile runs and evaluations (both temperatures) as the queue would commit them, with
    made-up accuracies: {variant: (seeds, lengths) fixed-temperature accuracy}."""
    P = runner.resolved("04_argmax_retrieval", "paper", {"store_dir": str(folder)})
    task, rng, made = variants.task_config(P, "argmax"), np.random.default_rng(seed), {}
    for variant in ("baseline", "layernorm"):
        model_cfg, parts = variants.model_config(P, task, variant), []
        for train_cfg in variants.train_configs(P):
            run_dir = runs.run_dir(folder, model_cfg, train_cfg, "cuda")
            run_dir.mkdir(parents=True)
            n = train_cfg.n_seeds
            store.write_json(run_dir / "run.json", {
                "spec": runs.training_spec(model_cfg, train_cfg, "cuda"), "provenance": PROVENANCE,
                "model_steps_per_s": 40_000.0, "final_loss": [0.01] * n, "checkpoints": {"written": 0, "seconds": 0},
                "loss_history": [[step, [0.5 / step] * n] for step in (1_000, 100_000)]})
            for temperature in ("fixed", "adaptive"):
                cfg = variants.eval_config(P, temperature)
                accuracy = rng.uniform(0.1, 1.0, (n, len(cfg.lengths)))
                store.write_json(runs.eval_path(folder, model_cfg, train_cfg, cfg, "cuda"), {
                    "spec": runs.eval_spec(model_cfg, train_cfg, cfg, "cuda"), "provenance": PROVENANCE,
                    "accuracy": accuracy.tolist(), "correct_per_block": []})
                if temperature == "fixed":
                    parts.append(accuracy)
        made[variant] = np.concatenate(parts)
    return made


def test_the_page_reads_runs_stored_in_parts_as_one_ensemble_and_shows_every_paper_scale_section(tmp_path,
                                                                                                    monkeypatch):
    made = made_up_paper_store(tmp_path)
    draws, P, accuracy, records = runner.latest_paper_scale_runs("04_argmax_retrieval", "argmax", tmp_path)
    assert draws == "counter" and P.seed_chunk == 50 and len(variants.train_configs(P)) == 2
    assert all(np.array_equal(accuracy[v], made[v]) for v in made)
    assert [len(runs.run_records(records[v])) for v in made] == [2, 2]

    shown = []
    monkeypatch.setattr(accuracy_page, "display", lambda *objects: shown.extend(objects))
    page = AccuracyPage(ARGMAX_RETRIEVAL, {"profile": "ci", "paper_scale_dir": str(tmp_path)})
    page.answer()
    page.load_paper_scale()
    page.paper_scale_comparison(0)
    page.paper_scale_comparison(1)
    page.paper_scale_figure()
    said = " ".join(o.data for o in shown if isinstance(o, Markdown))
    assert "(100 seeds x 100,000 steps, GPU, counter stream)" in said and "Shown: the paper-scale runs on the" in said
    (table,) = [o for o in shown if isinstance(o, pd.DataFrame) and "seeds" in o.columns]
    assert list(table["seeds"]) == ["0..49", "50..99", "0..49", "50..99"]  # the runs table: one row per part
