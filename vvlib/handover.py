"""A run that takes another run over at a step: what it carries (the weights, AdamW's moments, the data streams,
or the weights of one part of the model) and the Baseline's run it takes over.  TrainConfig's start_from_step,
handover, handover_warmup_steps and handover_data name it; Trainer.take_over runs it."""

import dataclasses

import torch

from .model import QUERY_KEY_WEIGHTS, ModelConfig, layer_of, weight_part


# TrainConfig.handover: what start_from carries over besides the data: all of it, the weights or the moments only, or
# only the weights of one part of the model, AdamW afresh: {handover: whether it carries the weight of that name}
# (model.weight_part; an attention layer's, model.layer_of: the first, or those after it; of the first, those that set
# its logits, model.QUERY_KEY_WEIGHTS, or the others)
def _first_layer(name: str) -> bool:
    return weight_part(name) == "attention" and layer_of(name) == 0


PART_HANDOVERS = {"input weights": lambda name: weight_part(name) == "input",
                  "attention weights": lambda name: weight_part(name) == "attention",
                  "first layer weights": _first_layer,
                  "first layer query and key weights": lambda name: _first_layer(name) and name in QUERY_KEY_WEIGHTS,
                  "first layer value weights": lambda name: _first_layer(name) and name not in QUERY_KEY_WEIGHTS,
                  "later layer weights": lambda name: weight_part(name) == "attention" and not _first_layer(name),
                  "readout weights": lambda name: weight_part(name) == "readout"}
# the weights with AdamW's running mean square gradient (and its step count), its running mean gradient afresh: which
# of the two moments the weights need beside them
SECOND_MOMENTS = "weights and second moments"
# all of it with AdamW's running mean gradients negated: its first steps as large as the Baseline's AdamW would take
# them, each weight's the other way: whether the first moments matter by their values or by the size of the steps
NEGATED_FIRST_MOMENTS = "all, first moments negated"
# the handovers of the weights and AdamW's state whose first moments change on the way: {handover: the change}
FIRST_MOMENTS_CHANGED = {SECOND_MOMENTS: torch.Tensor.zero_, NEGATED_FIRST_MOMENTS: torch.Tensor.neg_}
HANDOVERS = ("all", "weights", "moments", *FIRST_MOMENTS_CHANGED, *PART_HANDOVERS)


def baseline_of(model_cfg: ModelConfig) -> ModelConfig:
    """The model whose run a run with start_from_step takes over: the same model without its norm."""
    return dataclasses.replace(model_cfg, norm="none", norm_layers="all")


# TrainConfig's fields that name a handover; a run without one has each at its default
HANDOVER_FIELDS = ("start_from_step", "handover", "handover_warmup_steps", "handover_data")


def source_config(cfg):
    """The settings (a TrainConfig) of the Baseline's run that a run with cfg takes over: cfg's own, from its
    initialization (each of HANDOVER_FIELDS at its default)."""
    return dataclasses.replace(cfg, **{field.name: field.default for field in dataclasses.fields(cfg)
                                       if field.name in HANDOVER_FIELDS})


def check_start(model_cfg: ModelConfig, cfg):
    """ValueError where cfg.start_from_step would hand a run to the model it came from (one without a norm)."""
    if cfg.start_from_step and model_cfg.norm == "none":
        raise ValueError(f"start_from_step ({cfg.start_from_step}) hands a Baseline's run to a model with a norm; "
                         f"this model has norm 'none', so it would take over its own run")


def carry_over(target, source):
    """Carry `target` (a Trainer) on from `source` where it stands (the same seeds, groups and training settings,
    another model): each weight the target shares with it takes its value and its AdamW moments, or only one of the
    two (cfg.handover: the other stays as the target has it, its initial value or fresh moments), or the values with
    AdamW's second moments and step count (its first moments zero), or all of it with the first moments negated,
    or only the values of the weights of one part of the model; a weight the source lacks (a norm's gain and
    shift) keeps its initial value and fresh moments.  The step and the loss log are the source's, and so are the
    data streams, so that the next batch is the one the source would draw next, unless cfg.handover_data is fresh
    (the target's own streams, seed_groups.data_stream, go on from where they start)."""
    same_settings = source_config(source.cfg) == source_config(target.cfg)
    if not same_settings or [g.seeds.tolist() for g in source.groups] != [g.seeds.tolist() for g in target.groups]:
        raise ValueError("start_from needs a source run with the same training settings and seed groups")
    part = target.cfg.handover
    moments = part in ("all", "moments", *FIRST_MOMENTS_CHANGED)
    takes_weight = lambda name: (part in ("all", "weights", *FIRST_MOMENTS_CHANGED)
                                 or part in PART_HANDOVERS and PART_HANDOVERS[part](name))
    with torch.no_grad():
        for mine, theirs in zip(target.groups, source.groups):
            for name, p in theirs.params.items():
                if takes_weight(name):
                    mine.params[name].copy_(p)
                if moments:
                    state = {k: v.clone() for k, v in theirs.optimizer.state[p].items()}
                    # (zeroed with the step count carried, so no bias correction inflates them)
                    if part in FIRST_MOMENTS_CHANGED:
                        FIRST_MOMENTS_CHANGED[part](state["exp_avg"])
                    mine.optimizer.state[mine.params[name]] = state
            if target.cfg.handover_data == "carried":
                for gen, other in zip(mine.generators, theirs.generators):
                    gen.set_state(other.get_state())
    target.step, target.loss_history = source.step, list(source.loss_history)
    target.loss_window, target.window_steps = source.loss_window.clone(), source.window_steps
    target.graphed, target._counter_batch = [None] * len(target.groups), None
