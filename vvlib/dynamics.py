"""What a training run does to its models over time, measured every few steps (chapter 5 asks
why the dictionary loss rises again after about 2,000 steps at a constant learning rate).

`measure` returns, per seed (S,):
    probe_loss   cross-entropy on a fixed batch of the longest training length, and loss_hit the
                 same over the sequences whose largest attention weight is on the answer (so the
                 misses' share of the loss is probe_loss - (1 - missed) * loss_hit)
    missed       share of that batch whose largest attention weight is not on the item that
                 holds the answer (the model looked in the wrong place)
    margin       log A_answer - log max_{other} A: the answer's attention logit minus the largest
                 other one (mean over the batch; a weight below the float32 floor counts as the
                 floor, so margins cap near 87)
    grad_norm    the norm of the gradient of the step just taken, over all weights
    weight_norm  the norm of all weights, and key_norm that of the key embeddings alone (dictionary)
    moved        how far the weights moved since the last measurement, relative to their norm
    adam_root    the median over the network's weights (all but the embedding tables) of AdamW's
                 bias-corrected sqrt(v): the size of a gradient entry AdamW divides by, to set
                 against its epsilon; adam_root_keys the same over the key embeddings (dictionary),
                 most of whose rows are absent from a given batch
and, for a model of several layers, each layer's attention on the probe batch (probing.layer_measures,
means over its heads and the batch): entropy_layer1, top1_weight_layer1, on_answer_layer1, ..._layer2, ...
(the first layer is 1); and qk_grad_layer1, ...: the norm of the step's gradient over the layer's query and
key weights (those that set where it attends, apart from the encoder that all layers share), and qk_norm_layer1,
... the norm of those weights.  With several heads, loss_hit, missed and margin read the last layer's first head.
Nothing here changes the weights or draws from the training streams, so a measured run trains
to the same weights as an unmeasured one.
"""

import math

import torch

from . import probing, rng, tasks
from .model import ModelConfig, forward, layer_prefix, n_seeds
from .optim import per_seed_norm
from .task_base import Batch

MEASURES = ("probe_loss", "loss_hit", "missed", "margin", "grad_norm", "weight_norm", "key_norm", "moved", "adam_root",
            "adam_root_keys")
TABLES = ("emb_key", "emb_value", "emb_query")  # a task's embedding tables, apart from the network
QK_COLUMNS = ("qk_grad", "qk_norm")  # per layer of a model of several layers: see query_key_state
FLOOR = torch.finfo(torch.float32).tiny
MARGIN_CAP = -math.log(FLOOR)  # the largest margin a float32 attention weight can show (about 87.3)


def attending_below(length: int) -> float:
    """The attention entropy below which the book says a layer attends: half of ln N, where uniform weights over
    `length` items give ln N.  Our choice, the paper gives none: halfway between uniform weights and all on one."""
    return math.log(length) / 2


def measure_names(model_cfg: ModelConfig) -> tuple:
    """The measures `measure` returns for this model: MEASURES, then each layer's where it has several."""
    if model_cfg.layers == 1:
        return MEASURES
    return MEASURES + tuple(f"{column}_layer{k}" for k in range(1, model_cfg.layers + 1)
                            for column in (*probing.LAYER_COLUMNS, *QK_COLUMNS))


def probe_batch(model_cfg: ModelConfig, length: int, rows: int, seed: int, device) -> Batch:
    """A fixed batch of `rows` sequences of `length` items from its own stream, shared by all seeds."""
    return tasks.sample(model_cfg.task, rng.generator(device, seed, "dynamics", model_cfg.task.name, length),
                        rows, length, device)


@torch.no_grad()
def retrieval(model_cfg: ModelConfig, params: dict, batch: Batch) -> dict:
    """probe_loss, loss_hit, missed and margin on `batch`, each (S,)."""
    out, inside = forward(model_cfg, params, batch, probe=True)
    target = batch.target.unsqueeze(0).expand(out.shape[0], -1)
    loss = torch.nn.functional.cross_entropy(out.flatten(0, 1), target.flatten(), reduction="none")
    first_head = inside["attention"] if model_cfg.heads == 1 else inside["attention"][:, :, 0]
    log_attn = first_head.clamp_min(FLOOR).log()  # (S, B, N): the last layer's first head
    answer = tasks.get(model_cfg.task.name).answer_position(batch).unsqueeze(0).expand_as(log_attn[..., 0])
    at_answer = log_attn.gather(-1, answer.unsqueeze(-1)).squeeze(-1)
    others = log_attn.scatter(-1, answer.unsqueeze(-1), float("-inf")).amax(-1)
    loss, hit = loss.view(out.shape[:2]), (log_attn.argmax(-1) == answer).float()
    found = {"probe_loss": loss.mean(1), "loss_hit": (loss * hit).sum(1) / hit.sum(1).clamp_min(1),
             "missed": 1 - hit.mean(1), "margin": (at_answer - others).mean(1)}
    if model_cfg.layers > 1:
        for k, attn in enumerate(inside["layer_attention"], start=1):  # (S, B, H, N)
            for column, value in probing.layer_measures(attn, answer[:1].unsqueeze(-1)).items():
                found[f"{column}_layer{k}"] = value.mean(1)
    return found


@torch.no_grad()
def optimizer_state(params: dict, optimizer: torch.optim.Optimizer, previous: dict | None) -> dict:
    """grad_norm, weight_norm, key_norm, moved, adam_root and adam_root_keys, each (S,); `previous`:
    the weights at the last measurement (moved is 0 without them)."""
    names = list(params)
    grads = [params[n].grad if params[n].grad is not None else torch.zeros_like(params[n]) for n in names]
    weights = [params[n] for n in names]
    weight_norm = per_seed_norm(weights)
    step = per_seed_norm([params[n] - previous[n] for n in names]) if previous else torch.zeros_like(weight_norm)
    moved = step / weight_norm
    missing = torch.full_like(weight_norm, float("nan"))
    network = [params[n] for n in names if n not in TABLES]
    keys = [params["emb_key"]] if "emb_key" in params else []
    return {"grad_norm": per_seed_norm(grads), "weight_norm": weight_norm,
            "key_norm": per_seed_norm(keys) if keys else missing, "moved": moved,
            "adam_root": _median_root(network, optimizer, missing),
            "adam_root_keys": _median_root(keys, optimizer, missing)}


@torch.no_grad()
def query_key_state(model_cfg: ModelConfig, params: dict) -> dict:
    """qk_grad_layerK and qk_norm_layerK for each layer K (from 1), each (S,): the norm of the last step's gradient
    over the layer's query and key weights (and their biases, where the block has them), and of those weights."""
    found = {}
    for layer in range(model_cfg.layers):
        weights = [params[name] for name in (layer_prefix(layer) + n for n in ("wq", "wk", "bq", "bk")) if name in params]
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in weights]
        found |= {f"qk_grad_layer{layer + 1}": per_seed_norm(grads), f"qk_norm_layer{layer + 1}": per_seed_norm(weights)}
    return found


def _median_root(weights: list, optimizer, missing) -> torch.Tensor:
    """Per seed, the median over `weights` of AdamW's bias-corrected sqrt(v); `missing` before the first step."""
    beta2, roots = optimizer.param_groups[0]["betas"][1], []
    for p in weights:
        state = optimizer.state.get(p, {})
        if "exp_avg_sq" in state:
            roots.append((state["exp_avg_sq"] / (1 - beta2 ** float(state["step"]))).sqrt().flatten(1))
    return torch.cat(roots, 1).median(1).values if roots else missing


def measure(model_cfg: ModelConfig, params: dict, optimizer, batch: Batch, previous: dict | None) -> dict:
    """Every measure of measure_names(model_cfg) for one seed group, {name: (S,) CPU tensor}."""
    found = {**retrieval(model_cfg, params, batch), **optimizer_state(params, optimizer, previous)}
    if model_cfg.layers > 1:
        found |= query_key_state(model_cfg, params)
    assert all(v.shape == (n_seeds(params),) for v in found.values())
    return {name: found[name].cpu() for name in measure_names(model_cfg)}
