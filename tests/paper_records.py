"""Made-up paper-scale records under the real store keys, as the GPU queue would commit them to
results/paper: so that every page's paper-scale sections run on the CPU before a GPU ever commits
such runs.  The numbers are random; only the keys, shapes and provenance are real."""

import numpy as np
import pandas as pd

from vvlib.book import runner
from vvlib.book.chapters import get_chapter
from vvlib.experiments.setups import probes, variants
from vvlib.experiments.storage import runs, store

GPU = "NVIDIA H100 80GB HBM3"
PROVENANCE = {"device": GPU, "torch": "2.11.0+cu130", "git_commit": "0" * 40,
              "created": "2026-11-27T00:00:00+00:00", "wall_time_s": 150.0}


def write_run(folder, run_cfgs) -> None:
    """One run's record (model_cfg, train_cfg), trained on the GPU, unless already written."""
    model_cfg, train_cfg = run_cfgs
    path = runs.run_dir(folder, model_cfg, train_cfg, "cuda") / "run.json"
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    n = train_cfg.n_seeds
    store.write_json(path, {"spec": runs.training_spec(model_cfg, train_cfg, "cuda"), "provenance": PROVENANCE,
                            "model_steps_per_s": 40_000.0, "final_loss": [0.01] * n,
                            "checkpoints": {"written": 0, "seconds": 0},
                            "loss_history": [[step, [0.5 / step] * n] for step in (1_000, train_cfg.steps)]})


def made_up_runs(folder, name: str, tasks=None, seed=0) -> dict:
    """Chapter `name`'s runs at its paper profile (of `tasks`, default all of the chapter's) and their
    evaluations at the chapter's temperatures, with made-up accuracies: {(task, run name): (seeds, lengths)
    accuracy, every stored run of it joined in seed order}."""
    work = get_chapter(name).work
    P, rng, made = runner.resolved(name, "paper", {"store_dir": str(folder)}), np.random.default_rng(seed), {}
    for task in tasks or work.tasks:
        P_task = variants.task_params(P, task)
        task_cfg = variants.task_config(P_task, task)
        for variant in work.variants:
            model_cfg = variants.model_config(P_task, task_cfg, variant)
            for train_cfg in variants.train_configs(P_task, variant):
                write_run(folder, (model_cfg, train_cfg))
                for temperature in work.temperatures:
                    cfg = variants.eval_config(P_task, temperature)
                    accuracy = rng.uniform(0.1, 1.0, (train_cfg.n_seeds, len(cfg.lengths)))
                    store.write_json(runs.eval_path(folder, model_cfg, train_cfg, cfg, "cuda"), {
                        "spec": runs.eval_spec(model_cfg, train_cfg, cfg, "cuda"), "provenance": PROVENANCE,
                        "accuracy": accuracy.tolist(), "correct_per_block": []})
                    key = (task, variants.run_name(variant, temperature))
                    made[key] = accuracy if key not in made else np.concatenate([made[key], accuracy])
    return made


def made_up_rows(variant: str, seeds, lengths, rng) -> list:
    """One made-up row per seed and length of chapters 6 and 7's tables (the columns probing writes)."""
    return [{"variant": variant, "seed": s, "N": n, "global_mean": rng.normal(), "global_variance": rng.uniform(0.5, 2),
             "mean_drift": rng.normal(0, 0.1), "relative_variance": rng.uniform(0.2, 1.2),
             "top1_weight": rng.uniform(0.01, 1), "entropy": rng.uniform(0, np.log(n))} for s in seeds for n in lengths]


def made_up_probe_store(folder, name: str, variants_probed=probes.PAIR, seed=0) -> pd.DataFrame:
    """Chapter `name`'s probe (06_distribution_shift or 07_dispersion) at its paper profile: each probed run's
    record and each part's tables.json and table, for the parts of `variants_probed` only.  Returns the
    joined table, as the chapter reads it."""
    P = runner.resolved(name, "paper", {"store_dir": str(folder)})
    (_, probe), *_ = get_chapter(name).probes(P, "cuda")
    table = {"06_distribution_shift": "global", "07_dispersion": "attention"}[name]
    rng, frames = np.random.default_rng(seed), []
    for part in (p for p in probe.parts if p.variant in variants_probed):
        write_run(folder, (part.run.model_cfg, part.run.train_cfg))
        n, first = part.run.train_cfg.n_seeds, part.run.train_cfg.first_seed
        named = [part.variant] if table == "global" else [part.variant, f"adaptive_{part.variant}"]
        frame = pd.DataFrame([row for v in named for row in made_up_rows(v, range(first, first + n),
                                                                            P.eval_lengths, rng)])
        tables = part.folder(folder)
        tables.mkdir(parents=True)
        frame.to_csv(tables / f"{table}.csv", index=False)
        kept = [table]
        if table == "global":  # chapter 6's probe keeps each seed's component slope too (the summary reads it)
            sloped = [part.variant] + (["layernorm_before_norm"] if part.variant == "layernorm" else [])
            pd.DataFrame([{"variant": v, "seed": s, "slope": -0.5 + 0.3 * rng.random()} for v in sloped
                          for s in range(first, first + n)]).to_csv(tables / "slopes.csv", index=False)
            kept.append("slopes")
        store.write_json(tables / "tables.json", {"spec": part.spec, "provenance": PROVENANCE, "tables": kept})
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
