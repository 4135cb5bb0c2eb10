"""A training run's settings: TrainConfig's fields and the rules each field's values follow (a chapter's parameter
of the same name is checked by the same rule), which settings decide the trained weights, and the two that follow
from them (the seeds stepped together, the longest training sequence at a step)."""

import dataclasses
from dataclasses import dataclass

from . import draws as data_draws, optim
from .errors import check_fields, fraction, int_at_least, number_at_least, one_of, positive_number, true_or_false


@dataclass(frozen=True)
class TrainConfig:
    n_seeds: int = 4
    steps: int = 2000
    batch_size: int = 128
    lr: float = 1e-3  # AdamW (UNCONFIRMED: third-party reproductions of Velickovic et al.)
    weight_decay: float = 1e-3
    min_len: int = 5  # training set sizes ~ U{min_len .. max_len} (UNCONFIRMED)
    max_len: int = 16
    curriculum_steps: int = 0  # 0: no curriculum; else the cap grows to max_len over these steps
    curriculum_start_len: int = 16  # the cap at step 0 when a curriculum is used
    seed: int = 0  # names the init and data streams; seed index s uses (seed, s)
    first_seed: int = 0  # seed indices first_seed .. first_seed + n_seeds - 1
    checkpoint_every: int = 500  # checkpoints fall on multiples of this step ...
    checkpoint_gap_s: float = 120.0  # ... at least this many seconds apart (0: at every multiple)
    seed_group: int = 0  # seeds stepped together; 0: all of them (see vvlib/train.py's docstring)
    draws: str = "generators"  # the data's source: generators (per seed, as every committed run) or counter (draws.py)
    lr_schedule: str = "constant"  # constant; cosine: linear warmup over warmup_steps, then cosine to 0; drop (optim.py)
    warmup_steps: int = 0
    drop_step: int = 0  # lr_schedule "drop": the step from which the rate is lr * optim.DROP_FACTOR
    adam_eps: float = 1e-8  # AdamW's epsilon (torch's default; the paper names none)
    grad_clip: float = 0.0  # 0: none; else each seed's gradient norm is clipped to this (optim.clip_per_seed)
    dropout: float = 0.0  # the chance that an MLP's hidden activation is zeroed in a training step (dropout_masks)
    # float32 matrix products in TF32 on a CUDA GPU: faster, and a different run (bench/tf32_ab.py compares)
    tf32: bool = False

    def __post_init__(self):
        check_fields(self, FIELD_RULES)
        if self.min_len > self.max_len:
            raise ValueError(f"min_len ({self.min_len}) must be <= max_len ({self.max_len})")
        if self.curriculum_start_len < self.min_len:
            raise ValueError(f"curriculum_start_len must be >= min_len ({self.min_len}); got {self.curriculum_start_len}")
        if not self.warmup_steps <= self.steps:
            raise ValueError(f"warmup_steps must be an int from 0 to steps ({self.steps}); got {self.warmup_steps!r}")
        if self.lr_schedule == "drop" and not 1 <= self.drop_step < self.steps:
            raise ValueError(f"drop_step must be an int from 1 to steps - 1 ({self.steps - 1}) with lr_schedule "
                             f"'drop'; got {self.drop_step!r}")
        if self.lr_schedule != "drop" and self.drop_step != 0:
            raise ValueError(f"drop_step is read only with lr_schedule 'drop' (leave it 0); got {self.drop_step!r} "
                             f"with {self.lr_schedule!r}")


# Each field's own values (errors.py), for TrainConfig's check and a chapter's parameters of the same names.
FIELD_RULES = {
    "n_seeds": int_at_least(1), "steps": int_at_least(1), "batch_size": int_at_least(1),
    "lr": positive_number(), "weight_decay": number_at_least(0),
    "min_len": int_at_least(1), "max_len": int_at_least(1),
    "curriculum_steps": int_at_least(0), "curriculum_start_len": int_at_least(1),
    "seed": int_at_least(0), "first_seed": int_at_least(0), "checkpoint_every": int_at_least(1),
    "checkpoint_gap_s": number_at_least(0, " (0: a checkpoint at every multiple of checkpoint_every)"),
    "seed_group": int_at_least(0, " (0: all seeds at once)"),
    "draws": one_of(data_draws.DRAWS), "lr_schedule": one_of(optim.SCHEDULES),
    "warmup_steps": int_at_least(0), "drop_step": int_at_least(0),
    "adam_eps": positive_number(), "grad_clip": number_at_least(0, " (0: no clipping)"),
    "dropout": fraction(one_included=False, note=" (none)"),
    "tf32": true_or_false(),
}


def weight_settings(cfg: TrainConfig) -> dict:
    """The settings that decide the trained weights: all but checkpoint_every and
    checkpoint_gap_s, which only say how often progress is saved (so runs that differ in them
    share a store entry), with
    seed_group 0 wherever the seeds form one group (4 seeds in groups of 4 or of 8 train the
    same weights as 4 seeds at once, so they share the entry too).  Settings added later are
    left unsaid at their defaults (the generator draws, a constant learning rate, no clipping),
    so every run stored before them keeps its entry."""
    settings = dataclasses.asdict(cfg)
    del settings["checkpoint_every"], settings["checkpoint_gap_s"]
    for name, default in LATER_DEFAULTS.items():
        if settings[name] == default:
            del settings[name]
    if group_size(cfg) == cfg.n_seeds:
        settings["seed_group"] = 0
    return settings


LATER_DEFAULTS = {"draws": "generators", "lr_schedule": "constant", "warmup_steps": 0, "grad_clip": 0.0, "dropout": 0.0,
                  "drop_step": 0, "adam_eps": 1e-8, "tf32": False}


def group_size(cfg: TrainConfig) -> int:
    return min(cfg.seed_group or cfg.n_seeds, cfg.n_seeds)


def max_len_at(cfg: TrainConfig, step: int) -> int:
    """The longest training sequence at `step`: doubles in equal stages, then stays at max_len."""
    if cfg.curriculum_steps == 0 or cfg.curriculum_start_len >= cfg.max_len:
        return cfg.max_len
    doublings = 0
    while cfg.curriculum_start_len * 2**doublings < cfg.max_len:
        doublings += 1
    stage = min(doublings, step * (doublings + 1) // cfg.curriculum_steps)
    return min(cfg.max_len, cfg.curriculum_start_len * 2**stage)
