"""Chapter 10: the paper's two open questions, answered with the paper's own yardsticks.

    mc_curves / mc_theory   the rescaled output against the plain one, on chapter 2's
                            random attention module, and against its large-N theory
    best_by_length          which variant is ahead at each length, and is it significantly
    output_slopes           how fast the per-component std of what the readout sees falls
                            with N in the trained models (probing, as in chapter 6)
"""

import dataclasses
import math

import numpy as np
import pandas as pd

from . import montecarlo as mc
from . import probing
from .stats import mean_and_sem, paired_ttest

OUTPUTS = {"plain": "plain attention output", "rescale": "rescaled output"}


def mc_curves(module: mc.RandomAttention, lengths, n_sequences: int, components, device="cpu",
              progress=True) -> pd.DataFrame:
    """std_curve of the plain and the rescaled output of the same random module (i.i.d. tokens,
    fixed query): one row per (output, N, component), with column `setting` naming the output."""
    frames = []
    for output, label in OUTPUTS.items():
        tables = mc.Tables(dataclasses.replace(module, output=output), device)
        curve = mc.std_curve(tables, mc.Setting(), lengths, n_sequences, module.seed, components, progress)
        frames.append(curve.assign(setting=label, output=output))
    return pd.concat(frames, ignore_index=True)


def mc_slopes(curves: pd.DataFrame) -> pd.DataFrame:
    """Log-log slope of each component's std against N, with its 95% interval, per output."""
    rows = []
    for output, part in curves.groupby("output", sort=False):
        for component, fit in mc.slope_of(part).items():
            rows.append({"output": output, "component": component, **fit})
    return pd.DataFrame(rows)


def mc_theory(module: mc.RandomAttention, curves: pd.DataFrame, device="cpu") -> pd.DataFrame:
    """The rescaled output's Monte Carlo mean / sqrt(N) and variance beside the delta-method
    limits (montecarlo.rescaled_limits), one row per (N, component)."""
    tables = mc.Tables(dataclasses.replace(module, output="rescale"), device)
    limits = {k: v.cpu().numpy() for k, v in mc.rescaled_limits(tables).items()}
    part = curves[curves["output"] == "rescale"]
    rows = []
    for _, r in part.iterrows():
        n, d = int(r["N"]), int(r["component"])
        rows.append({"N": n, "component": d, "mean / sqrt(N)": r["mean"] / math.sqrt(n),
                     "theory: drift": float(limits["drift"][d]), "variance": r["std"] ** 2,
                     "theory: limiting variance": float(limits["variance"][d])})
    return pd.DataFrame(rows)


def best_by_length(accuracy: dict, lengths, labels: dict) -> pd.DataFrame:
    """Per length, the variant with the highest mean accuracy, the runner-up, and the paired
    t-test between them (seeds are paired: same seed index, same data and test sequences).
    accuracy: {variant: (seeds, lengths) array of fractions}."""
    rows = []
    for j, n in enumerate(lengths):
        means = {v: mean_and_sem(100 * np.asarray(a)[:, j])[0] for v, a in accuracy.items()}
        first, second = sorted(means, key=means.get, reverse=True)[:2]
        p = paired_ttest(100 * np.asarray(accuracy[first])[:, j], 100 * np.asarray(accuracy[second])[:, j])
        rows.append({"N": int(n), "best": first, "best (%)": means[first], "runner-up": second,
                     "runner-up (%)": means[second], "p": p, "label": labels[first]})
    return pd.DataFrame(rows)


def output_slopes(runs: dict, eval_cfg, reference: int, device="cpu", progress=True) -> pd.DataFrame:
    """Per variant and seed, the median over components of the log-log slope of a component's
    std across test sequences against N >= reference, measured on what the readout sees.
    runs: {variant: runs.TrainedRun}."""
    rows = []
    lengths = [n for n in eval_cfg.lengths if n >= reference]
    for variant, run in runs.items():
        by_length = probing.probe(run.model_cfg, run.weights, eval_cfg, device, progress=progress)
        slopes = probing.component_slopes(by_length, lengths, key="normalized")
        rows += [{"variant": variant, "seed": s, "slope": float(v)} for s, v in enumerate(slopes)]
    return pd.DataFrame(rows)


def slope_summary(frame: pd.DataFrame) -> dict:
    """{variant: mean slope over seeds}."""
    return {v: float(part["slope"].mean()) for v, part in frame.groupby("variant", sort=False)}


def mean_slope(curves_slopes: pd.DataFrame) -> dict:
    """{output: mean over the followed components of the Monte Carlo slope}."""
    return {o: float(part["slope"].mean()) for o, part in curves_slopes.groupby("output", sort=False)}
