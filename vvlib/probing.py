"""Looking inside trained models at long lengths (chapters 6 and 7).

A probe runs a trained ensemble on the very test sequences that `evaluate` scores
(same eval seed, same blocks, so every variant sees the same inputs) and keeps, per
seed and sequence, only what the chapters plot:

    output       O, the attention output            (S, B, D)
    normalized   what the readout sees: O, LN(O) or std(O)   (S, B, D)
    top_weights  the largest attention weights, sorted       (S, B, k)
    entropy      of the attention weights, in nats           (S, B)

With several heads or layers, these are the last layer's (top_weights and entropy: its
first head's); layer_frame summarizes every layer's attention, over all its heads.  The attention
weights themselves (S, B, N) are reduced chunk by chunk, so N = 2^14 costs time, not memory.
"""

import dataclasses
import math

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from .attention import EPS, beta_at_entropy, entropy, standardize
from . import evaluate, tasks
from .evaluate import EvalConfig, forward_in_chunks, test_block
from .model import ModelConfig, layer_prefix, n_seeds
from .task_base import EVAL_BLOCK

TOP_K = 16  # the paper's Figure 4 shows the 16 largest weights
BEFORE_NORM = "_before_norm"  # distribution_tables' slopes of a normed variant before its norm: '<variant>_before_norm'


@torch.inference_mode()
def probe_length(model_cfg: ModelConfig, params, cfg: EvalConfig, n: int, device="cpu", top_k=TOP_K,
                 max_items=2**18) -> dict:
    """The probe tensors above (on the CPU) for cfg.n_sequences test sequences of length n."""
    if top_k > n:
        raise ValueError(f"top_k ({top_k}) must be <= the sequence length ({n})")
    params = {k: v.detach().to(device) for k, v in params.items()}
    S, B, D = n_seeds(params), cfg.n_sequences, model_cfg.hidden
    out = {"output": torch.empty(S, B, D), "normalized": torch.empty(S, B, D),
           "top_weights": torch.empty(S, B, top_k), "entropy": torch.empty(S, B)}
    for block in range(math.ceil(B / EVAL_BLOCK)):
        batch = test_block(model_cfg, cfg, n, block, device)
        first = block * EVAL_BLOCK
        for seeds, rows, _, (_, inside) in forward_in_chunks(model_cfg, params, batch, cfg.temperature, max_items,
                                                            probe=True):
            rows = slice(first + rows.start, first + rows.stop)
            attn = inside["attention"]
            if attn.dim() == 4:  # several heads (chapter 10): the weights summaries follow the first
                attn = attn[:, :, 0]
            out["output"][seeds, rows] = inside["output"].cpu()
            out["normalized"][seeds, rows] = inside["normalized"].cpu()
            out["top_weights"][seeds, rows] = attn.topk(top_k, dim=-1).values.cpu()
            out["entropy"][seeds, rows] = entropy(attn).squeeze(-1).cpu()
    return out


def probe(model_cfg: ModelConfig, params, cfg: EvalConfig, device="cpu", top_k=TOP_K, progress=True) -> dict:
    """{N: probe_length(...)} for every length of cfg, with a progress bar over items."""
    bar = tqdm(total=cfg.n_sequences * sum(cfg.lengths), desc="probing", disable=not progress, unit="item",
               unit_scale=True)
    result = {}
    for n in cfg.lengths:
        result[n] = probe_length(model_cfg, params, cfg, n, device, top_k)
        bar.update(cfg.n_sequences * n)
    bar.close()
    return result


def sharpened(model_cfg: ModelConfig, params: dict, beta: float) -> dict:
    """The same models with every attention's logits multiplied by beta, a softmax temperature of 1/beta: each
    layer's W_K times beta, since a head's logits h . (q W_K^T) / sqrt(d) are linear in W_K (the key bias's
    share is the same for every item, so the softmax ignores it).  beta > 1 sharpens the attention, < 1
    spreads it; nothing else of the models changes."""
    if not (isinstance(beta, (int, float)) and beta > 0):
        raise ValueError(f"beta must be a number > 0; got {beta!r}")
    keys = {layer_prefix(layer) + "wk" for layer in range(model_cfg.layers)}
    return {k: v * beta if k in keys else v for k, v in params.items()}


@torch.inference_mode()
def sharpness_frame(model_cfg: ModelConfig, params, cfg: EvalConfig, betas, label: str, device="cpu",
                    max_items=2**18) -> pd.DataFrame:
    """Each seed's accuracy and mean attention entropy (nats; the last layer's first head) at every length of
    cfg with its attention sharpened by each of `betas` (sharpened), both from one pass over the test sequences
    evaluate scores: one row per (variant `label`, seed, N, beta)."""
    params = {k: v.detach().to(device) for k, v in params.items()}
    S, rows = n_seeds(params), []
    for beta in betas:
        scaled = sharpened(model_cfg, params, beta)
        for n in cfg.lengths:
            correct, entropies = torch.zeros(S, dtype=torch.float64), torch.zeros(S, dtype=torch.float64)
            for block in range(math.ceil(cfg.n_sequences / EVAL_BLOCK)):
                batch = test_block(model_cfg, cfg, n, block, device)
                for seeds, _, part, (logits, inside) in forward_in_chunks(model_cfg, scaled, batch, cfg.temperature,
                                                                         max_items, probe=True):
                    attn = inside["attention"] if inside["attention"].dim() == 3 else inside["attention"][:, :, 0]
                    correct[seeds] += (logits.argmax(dim=-1) == part.target).sum(dim=1).double().cpu()
                    entropies[seeds] += entropy(attn).squeeze(-1).sum(dim=1).double().cpu()
            rows += [{"variant": label, "seed": s, "N": n, "beta": float(beta),
                      "accuracy": float(correct[s]) / cfg.n_sequences, "entropy": float(entropies[s]) / cfg.n_sequences}
                     for s in range(S)]
    return pd.DataFrame(rows)


LAYER_COLUMNS = ("entropy", "top1_weight", "on_answer")  # layer_frame's measures of each layer


def layer_measures(attn: torch.Tensor, answer: torch.Tensor) -> dict:
    """LAYER_COLUMNS of one layer's attention attn (S, B, H, N), each (S, B): a mean over the heads, per seed
    and sequence; answer (1, B, 1) is the position of the item that holds each sequence's answer."""
    return {"entropy": entropy(attn).squeeze(-1).mean(-1), "top1_weight": attn.amax(-1).mean(-1),
            "on_answer": (attn.argmax(-1) == answer).double().mean(-1)}


@torch.inference_mode()
def layer_frame(model_cfg: ModelConfig, params, cfg: EvalConfig, label: str, device="cpu", max_items=2**18) -> pd.DataFrame:
    """Each layer's attention, for models of several layers: per seed, length and layer, the entropy of its
    weights (nats), its largest weight, and on_answer, the share of heads and sequences whose largest weight is
    on the item that holds the answer (tasks' answer_position); each a mean over its heads and cfg's test
    sequences (the ones evaluate scores).  One row per (variant `label`, seed, N, layer), the first layer 0."""
    params = {k: v.detach().to(device) for k, v in params.items()}
    S, L, rows = n_seeds(params), model_cfg.layers, []
    task = tasks.get(model_cfg.task.name)
    for n in cfg.lengths:
        sums = {column: torch.zeros(S, L, dtype=torch.float64) for column in LAYER_COLUMNS}
        for block in range(math.ceil(cfg.n_sequences / EVAL_BLOCK)):
            batch = test_block(model_cfg, cfg, n, block, device)
            for seeds, _, part, (_, inside) in forward_in_chunks(model_cfg, params, batch, cfg.temperature, max_items,
                                                                probe=True):
                answer = task.answer_position(part).view(1, -1, 1)  # (1, B, 1): every seed and head
                for layer, attn in enumerate(inside["layer_attention"]):  # (S, B, H, N)
                    for column, value in layer_measures(attn, answer).items():
                        sums[column][seeds, layer] += value.sum(1).double().cpu()
        rows += [{"variant": label, "seed": s, "N": n, "layer": layer,
                  **{column: float(sums[column][s, layer]) / cfg.n_sequences for column in LAYER_COLUMNS}}
                 for s in range(S) for layer in range(L)]
    return pd.DataFrame(rows)


def global_moments(x: torch.Tensor):
    """Per vector, over its D features: the global mean and the global variance (1/D, as in the paper)."""
    return x.mean(dim=-1), x.var(dim=-1, unbiased=False)


def component_std(x: torch.Tensor) -> torch.Tensor:
    """Standard deviation of every component across sequences: (S, B, D) -> (S, D)."""
    return x.std(dim=1)


def loglog_slope(lengths, values) -> np.ndarray:
    """Least-squares slope of log(values) against log(N), along the last axis of `values`
    (..., len(lengths)); one slope per leading index."""
    x = np.log(np.asarray(lengths, dtype=float))
    y = np.log(np.asarray(values, dtype=float))
    x = x - x.mean()
    return ((y - y.mean(axis=-1, keepdims=True)) * x).sum(axis=-1) / (x * x).sum()


def global_frame(probes: dict, reference: int, key="normalized") -> pd.DataFrame:
    """Figure 3's numbers, one row per (variant, seed, N): the global mean and variance of
    `key` averaged over test sequences, and both put on the scale of the training length
    `reference`: the drift of the mean, (mean - mean at reference) / sqrt(variance at
    reference), and the variance / variance at reference.

    probes: {variant: {N: probe_length(...)}}.
    """
    rows = []
    for variant, by_length in probes.items():
        ref_mean, ref_var = (m.mean(dim=1) for m in global_moments(by_length[reference][key]))  # (S,)
        for n, probe_n in by_length.items():
            mean, var = (m.mean(dim=1) for m in global_moments(probe_n[key]))
            for s in range(len(mean)):
                rows.append({"variant": variant, "seed": s, "N": n, "global_mean": float(mean[s]),
                             "global_variance": float(var[s]),
                             "mean_drift": float((mean[s] - ref_mean[s]) / ref_var[s].sqrt()),
                             "relative_variance": float(var[s] / ref_var[s])})
    return pd.DataFrame(rows)


# norm_frame's columns beyond (variant, seed, N); named in the stored table's spec, so new columns get a new entry
NORM_COLUMNS = ("input_std", "epsilon_share", "gain_rms", "bias_rms", "global_variance", "gain_energy", "fixed_share")


def norm_frame(probes: dict, params: dict, model_cfg: ModelConfig) -> pd.DataFrame:
    """What a layer norm does to the attention output, one row per (seed, N), for the +LN models of
    `probes` {variant: {N: probe_length(...)}} (their last layer's norm; `params` their weights): the
    spread of its input O over the features (std_d O, mean over test sequences), the share eps takes of
    the divisor std_d O + eps (0: the norm standardizes fully; 1: eps swamps the spread and the norm
    passes O on nearly as it is, scaled by 1/eps), the root mean square of the learned gain and bias
    over the features, the global variance of what the readout sees (global_frame's), and two numbers on
    the standardized output z (mean 0, variance ~1 over the features for every sequence):
    gain_energy, mean_d (g_d z_d)^2 (mean over test sequences): the global variance of LN(O) = g z + b
    where b is 0 and g z averages 0 over the features; gain_rms^2 where z spreads its unit energy evenly
    over the features, less where it puts it on features of small gain; and fixed_share, the
    share of z's energy that its mean over the test sequences holds (1: z is the same vector for every
    sequence)."""
    prefix = layer_prefix(model_cfg.layers - 1)
    gain, bias = (params[prefix + name].detach().cpu() for name in ("ln.gamma", "ln.beta"))  # (S, D)
    gain_rms, bias_rms = gain.pow(2).mean(dim=-1).sqrt(), bias.pow(2).mean(dim=-1).sqrt()
    rows = []
    for variant, by_length in probes.items():
        for n, probe_n in by_length.items():
            spread = probe_n["output"].std(dim=-1, unbiased=False)  # (S, B), as attention.standardize
            share = (EPS / (spread + EPS)).mean(dim=1)
            readout = global_moments(probe_n["normalized"])[1].mean(dim=1)
            z = standardize(probe_n["output"])  # (S, B, D)
            gain_energy = (gain[:, None] * z).pow(2).mean(dim=(1, 2))
            fixed_share = z.mean(dim=1).pow(2).mean(dim=-1) / z.pow(2).mean(dim=(1, 2))
            per_seed = dict(zip(NORM_COLUMNS, (spread.mean(dim=1), share, gain_rms, bias_rms, readout, gain_energy,
                                               fixed_share)))
            rows += [{"variant": variant, "seed": s, "N": n, **{q: float(v[s]) for q, v in per_seed.items()}}
                     for s in range(len(share))]
    return pd.DataFrame(rows)


def component_values(probes: dict, components, seed: int, lengths, key="normalized") -> pd.DataFrame:
    """Figure 2's numbers: the value of each of `components` on every test sequence, for one
    seed, at `lengths`; one row per (variant, N, component, sequence)."""
    frames = []
    for variant, by_length in probes.items():
        for n in lengths:
            values = by_length[n][key][seed][:, list(components)].numpy()  # (B, len(components))
            frame = pd.DataFrame(values, columns=list(components)).melt(var_name="component", value_name="value")
            frames.append(frame.assign(variant=variant, N=n))
    return pd.concat(frames, ignore_index=True)


def component_histograms(probes: dict, components, seed: int, bins: int, key="normalized") -> pd.DataFrame:
    """Chapter 6's slider: for one seed, the distribution over test sequences of each of
    `components` at every N, as a density histogram on `bins` equal bins spanning that
    component's range over all N (shared, so moving N shows the squeeze, not a rescaled
    axis).  One row per (variant, component, N, bin): left, right, density."""
    frames = []
    for variant, by_length in probes.items():
        for d in components:
            values = {n: by_length[n][key][seed][:, d].double().numpy() for n in by_length}
            low = min(v.min() for v in values.values())
            high = max(max(v.max() for v in values.values()), low + 1e-9)  # a constant component: one thin range
            edges = np.linspace(low, high, bins + 1)
            for n, v in values.items():
                density, _ = np.histogram(v, bins=edges, density=True)
                frames.append(pd.DataFrame({"variant": variant, "component": d, "N": n, "left": edges[:-1],
                                            "right": edges[1:], "density": density}))
    return pd.concat(frames, ignore_index=True)


def component_slopes(by_length: dict, lengths, key="normalized") -> np.ndarray:
    """Per seed, the median over the D components of the log-log slope of each component's
    standard deviation (across test sequences) against N, over `lengths`."""
    std = torch.stack([component_std(by_length[n][key]) for n in lengths], dim=-1)  # (S, D, lengths)
    return np.median(loglog_slope(lengths, std.numpy()), axis=1)


def attention_frame(probes: dict) -> pd.DataFrame:
    """Figure 4's summaries, one row per (run, seed, N): the largest attention weight and
    the entropy of the attention (nats), each averaged over test sequences."""
    rows = []
    for run, by_length in probes.items():
        for n, probe_n in by_length.items():
            top1, ent = probe_n["top_weights"][..., 0].mean(dim=1), probe_n["entropy"].mean(dim=1)
            rows += [{"variant": run, "seed": s, "N": n, "top1_weight": float(top1[s]), "entropy": float(ent[s])}
                     for s in range(len(top1))]
    return pd.DataFrame(rows)


def adaptive_frame(model_cfg: ModelConfig, params, cfg: EvalConfig, label: str, device="cpu") -> pd.DataFrame:
    """Where adaptive temperature acts, one row per (seed, N) of models trained with the fixed temperature: the
    attention's mean entropy (nats) at that temperature, the share of test sequences whose head the rule
    sharpens (inverse temperature above 1), the mean inverse temperature it sets, and the same models' accuracy
    at each temperature on the same test sequences (so that what the rule changes is read on these weights)."""
    by_length = probe(model_cfg, params, cfg, device)
    accuracy = {t: evaluate.accuracy(model_cfg, params, dataclasses.replace(cfg, temperature=t), device)
                for t in ("fixed", "adaptive")}
    rows = []
    for j, (n, probe_n) in enumerate(by_length.items()):
        h = probe_n["entropy"]
        beta = beta_at_entropy(h)
        rows += [{"variant": label, "seed": s, "N": n, "entropy": float(h[s].mean()),
                  "sharpened": float((beta[s] > 1).double().mean()), "beta": float(beta[s].mean()),
                  **{f"accuracy_{t}": float(a[s, j]) for t, a in accuracy.items()}}
                 for s in range(h.shape[0])]
    return pd.DataFrame(rows)


# What chapters 6 and 7 show, as small tables: the store keeps these, the probes are too big to keep.

def probe_spec(runs: dict, cfg: EvalConfig, **choices) -> dict:
    """The settings that fix a chapter's probe tables: the trained runs, the test sequences
    and the chapter's own choices (components, shown seed, ...)."""
    return {"kind": "probe", "runs": {name: run.spec for name, run in runs.items()},
            "eval": evaluate.settings(cfg), "block": EVAL_BLOCK, "top_k": TOP_K,
            "choices": choices}


def distribution_tables(probes: dict, components, shown_seed: int | None, distribution_lengths, reference: int,
                        histogram_bins: int = 40) -> dict:
    """Chapter 6 (Figures 2-3) from {variant: probe(...)}: `values` (Figure 2's panels),
    `histograms` (the slider's views, component_histograms), `component_std` (the shown
    seed's components at every N), `slopes` (per seed, the median log-log slope of a
    component's std over N >= reference, also before the norm: variant suffix
    '_before_norm') and `global` (Figure 3, global_frame).  shown_seed None (the probed models
    are some of an ensemble's seeds, and another part holds the shown one): the first three
    are left out."""
    lengths = list(next(iter(probes.values())))
    ood = [n for n in lengths if n >= reference]
    std_rows, slope_rows = [], []
    for variant, by_length in probes.items():
        for n in lengths if shown_seed is not None else ():
            std = component_std(by_length[n]["normalized"])[shown_seed, list(components)]
            std_rows += [{"variant": variant, "N": n, "component": d, "std": float(v)} for d, v in zip(components, std)]
        keys = [("normalized", variant)]
        first = by_length[lengths[0]]
        if not torch.equal(first["output"], first["normalized"]):  # before/after differ only with a norm
            keys.append(("output", variant + BEFORE_NORM))
        for key, name in keys:
            slope_rows += [{"variant": name, "seed": s, "slope": float(v)}
                           for s, v in enumerate(component_slopes(by_length, ood, key=key))]
    shown = {} if shown_seed is None else {
        "values": component_values(probes, components, shown_seed, distribution_lengths),
        "histograms": component_histograms(probes, components, shown_seed, histogram_bins),
        "component_std": pd.DataFrame(std_rows)}
    return {**shown, "slopes": pd.DataFrame(slope_rows), "global": global_frame(probes, reference)}


def dispersion_tables(probes: dict, shown_seed: int | None, n_examples: int, heatmap_lengths, heatmap_runs) -> dict:
    """Chapter 7 (Figure 4) from {run: probe(...)}: `attention` (attention_frame) and
    `heatmaps`, the sorted top weights of the first n_examples test sequences of the shown
    seed, one row per (run, N, example, rank), for heatmap_runs at heatmap_lengths (left out
    where shown_seed is None: another part of the ensemble holds the shown seed)."""
    if shown_seed is None:
        return {"attention": attention_frame(probes)}
    rows = []
    for run in heatmap_runs:
        for n in heatmap_lengths:
            top = probes[run][n]["top_weights"][shown_seed, :n_examples]
            rows += [{"variant": run, "N": n, "example": e, "rank": k, "weight": float(top[e, k])}
                     for e in range(top.shape[0]) for k in range(top.shape[1])]
    return {"attention": attention_frame(probes), "heatmaps": pd.DataFrame(rows)}


def heatmap_arrays(frame: pd.DataFrame) -> dict:
    """dispersion_tables' `heatmaps` back to {run: {N: array (examples, rank)}}."""
    return {run: {n: part.pivot(index="example", columns="rank", values="weight").to_numpy()
                  for n, part in by_run.groupby("N", sort=False)}
            for run, by_run in frame.groupby("variant", sort=False)}
