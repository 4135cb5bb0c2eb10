"""The ensemble's seeds in groups (TrainConfig.seed_group): each group's weights, its own AdamW
and its data source; and the joins that give a checkpoint one layout however the seeds are
grouped, so a run resumes under any grouping of the same seeds."""

from dataclasses import dataclass

import torch

from . import draws as data_draws, rng
from .draws import CounterDraws
from .model import init_params

COUNTER_STREAM = "train-data"  # with the run's seed (and a generator's seed index), names the training data


@dataclass
class SeedGroup:
    """Some consecutive seeds of the ensemble: their weights (S_g, ...), their own AdamW
    and their data: a generator per seed, or (counter draws) the seed indices, drawn at the
    step that `step` holds (a tensor, so that a recorded CUDA graph reads the current step)."""
    params: dict
    optimizer: torch.optim.Optimizer
    generators: list
    seeds: torch.Tensor
    counter_key: tuple | None = None

    def source(self, step: torch.Tensor):
        """Where this step's batch comes from (train.batch_up_to's `source`)."""
        if self.counter_key is None:
            return self.generators
        return CounterDraws(self.counter_key, step, self.seeds, step.device)


def make_groups(model_cfg, cfg, size: int, device, lr, capturable: bool) -> list[SeedGroup]:
    """cfg's seeds in consecutive groups of `size`; `lr` a float, or the schedule's tensor that
    every group's AdamW reads; capturable: AdamW keeps its step count on the GPU, which
    recording a whole step in a CUDA graph needs."""
    seeds = list(range(cfg.first_seed, cfg.first_seed + cfg.n_seeds))
    return [_group(model_cfg, cfg, seeds[i:i + size], device, lr, capturable) for i in range(0, len(seeds), size)]


def _group(model_cfg, cfg, seeds: list, device, lr, capturable: bool) -> SeedGroup:
    params = init_params(model_cfg, seeds, cfg.seed, device)
    for p in params.values():
        p.requires_grad_(True)
    # fused: one kernel per step instead of a dozen passes over every weight (1.5x faster for the dictionary)
    optimizer = torch.optim.AdamW(params.values(), lr=lr, weight_decay=cfg.weight_decay, eps=cfg.adam_eps, fused=True,
                                  capturable=capturable)
    lanes = torch.tensor(seeds, device=device)
    if cfg.draws == "counter":
        return SeedGroup(params, optimizer, [], lanes, data_draws.counter_key(cfg.seed, COUNTER_STREAM))
    generators = [rng.generator(device, cfg.seed, COUNTER_STREAM, s) for s in seeds]
    return SeedGroup(params, optimizer, generators, lanes)


def generators(groups: list[SeedGroup]) -> list:
    """Every seed's data generator, in seed order (none with counter draws)."""
    return [g for group in groups for g in group.generators]


def joined_weights(groups: list[SeedGroup]) -> dict:
    """All seeds' weights, {name: (S, ...)}."""
    return {k: torch.cat([g.params[k].detach() for g in groups]) for k in groups[0].params}


def load_weights(groups: list[SeedGroup], params: dict):
    """Copy all seeds' weights {name: (S, ...)} into the groups, in seed order."""
    start = 0
    with torch.no_grad():
        for group in groups:
            size = len(group.seeds)
            for name, value in params.items():
                group.params[name].copy_(value[start:start + size])
            start += size


def joined_optimizer_state(groups: list[SeedGroup]) -> dict:
    """The groups' AdamW states joined into the state_dict of one AdamW over all seeds."""
    names, first = list(groups[0].params), groups[0].optimizer
    state = {}
    for i, name in enumerate(names):
        parts = [g.optimizer.state[g.params[name]] for g in groups]
        if parts[0]:  # empty before the first step
            state[i] = {k: v.clone() if k == "step" else torch.cat([p[k] for p in parts])
                        for k, v in parts[0].items()}
    return {"state": state, "param_groups": first.state_dict()["param_groups"]}


def load_optimizer_state(groups: list[SeedGroup], state: dict, lr):
    """joined_optimizer_state's dict split back into the groups' AdamW."""
    start = 0
    for group in groups:
        size = len(group.seeds)
        rows = {i: {k: v.clone() if k == "step" else v[start:start + size].clone() for k, v in st.items()}
                for i, st in state["state"].items()}
        group.optimizer.load_state_dict({"state": rows, "param_groups": state["param_groups"]})
        for param_group in group.optimizer.param_groups:  # the schedule's own tensor, not the checkpoint's copy
            param_group["lr"] = lr
        start += size
