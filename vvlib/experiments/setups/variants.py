"""The training chapters' common flow: train each variant once, evaluate it under each
test-time temperature, on the same test sequences.

Chapter parameters map to configs here, so every training chapter reads the same names
(n_seeds, steps, batch_size, hidden, lr, ...) the same way.
"""

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch

from ... import tasks
from ...evaluate import EvalConfig
from ...model import ModelConfig
from .params import EVAL_FIELDS, MODEL_PARAMETERS, ROW_MODEL_FIELDS, Params
from ..storage.runs import TrainedRun, joined_record, stored_only
from ...tasks import TaskConfig
from ...train import TrainConfig

# A variant is a set of ModelConfig options; chapter 10's "deep_" variants also take the
# chapter's deep_heads and deep_layers (see model_config) and its deep_seed_chunk (train_configs).
VARIANT_OPTIONS = {
    "baseline": {"norm": "none"},
    "layernorm": {"norm": "layernorm"},
    "standardize": {"norm": "standardize"},
    "rescale": {"norm": "rescale"},
    "log_n": {"logit_scale": "log_n"},
    "log_n_layernorm": {"logit_scale": "log_n", "norm": "layernorm"},
    "deep_baseline": {"norm": "none"},
    "deep_layernorm": {"norm": "layernorm"},
}
LABELS = {"baseline": "Baseline", "layernorm": "+LN", "standardize": "+std",
          "adaptive_baseline": "Adaptive θ", "adaptive_layernorm": "Adaptive θ, +LN",
          "adaptive_standardize": "Adaptive θ, +std",
          "rescale": "Rescaled output", "log_n": "log N logits", "log_n_layernorm": "log N logits, +LN",
          "deep_baseline": "Deep", "deep_layernorm": "Deep, +LN"}  # one name per variant across the book

SHORT_LABELS = {"baseline": "Baseline", "layernorm": "+LN", "standardize": "+std"}  # for sentences and narrow tables


def short_label(variant: str) -> str:
    """A variant's name in a sentence: its short label, else its label."""
    return SHORT_LABELS.get(variant, LABELS.get(variant, variant))


@dataclass(frozen=True)
class Ablation:
    """Chapter 8's comparison (the paper's Tables 3 and 6): the Baseline, a norm without parameters and the
    same norm with learned ones; each against the Baseline, and the learned one against the plain one."""
    base: str
    plain: str
    learned: str

    @property
    def variants(self) -> tuple:
        return self.base, self.plain, self.learned


ABLATION = Ablation("baseline", "standardize", "layernorm")
PAIR = BASE, NORMED = ABLATION.base, ABLATION.learned  # the paper's comparison: the Baseline and +LN


def task_config(P, name: str) -> TaskConfig:
    """The task's own settings (tasks.Task.settings) from the chapter's parameters."""
    return TaskConfig(name, **{setting: P[setting] for setting in tasks.get(name).settings})


def task_params(P, task: str) -> Params:
    """One task's view of a two-task chapter's parameters: each per-task setting (a dict,
    params.PER_TASK) as that task's value, named as chapters 4 and 5 name theirs, so both train
    into the same store entries; with a curriculum_fraction, curriculum_steps is that fraction
    of the task's steps."""
    view = {name: value[task] for name, value in P.items() if isinstance(value, dict)}
    if "curriculum_fraction" in P:
        view["curriculum_steps"] = curriculum_steps(P, view["steps"])
    return Params({**P, **view})


def curriculum_steps(P, steps: int) -> int:
    """The steps over which the length cap grows in a run of `steps` steps: curriculum_fraction of them
    (chapter 9, whose main and longer runs each stretch the curriculum over their own steps); 0 (none) in
    a chapter without a curriculum."""
    return round(P.curriculum_fraction * steps) if "curriculum_fraction" in P else 0


# TrainConfig's fields by name: train_config sets those the parameters hold, the rest keep their defaults.
# Every training chapter's cell holds REQUIRED_TRAIN (a two-task chapter's per task, read through task_params).
REQUIRED_TRAIN = ("n_seeds", "steps", "batch_size", "lr", "weight_decay", "min_len", "max_len", "seed",
                  "checkpoint_every")
TRAIN_FIELDS = tuple(field.name for field in dataclasses.fields(TrainConfig))


def train_config(P) -> TrainConfig:
    """The TrainConfig the parameters name.  Chapters without a curriculum (all but chapter 9)
    train at full length from step 0."""
    unread = [name for name in REQUIRED_TRAIN if name not in P or isinstance(P[name], dict)]
    if unread:  # missing, or one value per task: a two-task chapter's, to be read through task_params
        raise ValueError(f"training parameters {unread} missing or per task (read a task's through task_params)")
    read = [name for name in TRAIN_FIELDS if name in P]
    return TrainConfig(**{name: P[name] for name in read})


def seed_chunks(cfg: TrainConfig, chunk: int) -> list:
    """cfg's seeds as runs of at most `chunk` consecutive seeds each (one run where chunk is 0 or
    holds them all), so that each run fits one sitting: one command on a lent GPU, say.  A seed
    draws from the streams (seed, s) in whichever run holds it."""
    if not chunk or chunk >= cfg.n_seeds:
        return [cfg]
    last = cfg.first_seed + cfg.n_seeds
    return [dataclasses.replace(cfg, first_seed=first, n_seeds=min(chunk, last - first))
            for first in range(cfg.first_seed, last, chunk)]


def is_deep(variant: str) -> bool:
    """Chapter 10's variants of several attention layers and heads (deep_baseline, deep_layernorm)."""
    return variant.startswith("deep_")


def train_configs(P, variant: str = "") -> list:
    """A chapter's main runs of `variant`: train_config(P), cut into runs of seed_chunk seeds where the
    chapter sets one (chapter 9 at the paper's scale: 100 seeds on sequences up to 256 items take longer
    than one GPU command), or for a deep variant of deep_seed_chunk where chapter 10 sets that (its model
    of several attention layers and heads trains slower per step than the one-layer variants)."""
    deep = P.get("deep_seed_chunk", 0) if is_deep(variant) else 0
    return seed_chunks(train_config(P), deep or P.get("seed_chunk", 0))


def run_name(variant: str, temperature: str) -> str:
    """'baseline' with fixed temperature; 'adaptive_baseline' with adaptive temperature."""
    return variant if temperature == "fixed" else f"adaptive_{variant}"


def model_config(P, task: TaskConfig, variant: str) -> ModelConfig:
    if variant not in VARIANT_OPTIONS:
        raise ValueError(f"variant: expected one of {', '.join(VARIANT_OPTIONS)}; got {variant!r}")
    options = {name: P[name] for name in (*MODEL_PARAMETERS, *ROW_MODEL_FIELDS) if name in P}
    options.update(VARIANT_OPTIONS[variant])
    if options.get("norm", "none") == "none":  # a row's norm_layers moves +LN's norm: its Baseline has none to move
        options.pop("norm_layers", None)
    if is_deep(variant):  # chapter 10's deep_heads and deep_layers, over any heads and layers given
        options.update(heads=P.deep_heads, layers=P.deep_layers)
    return ModelConfig(task=task, **options)


def trained_models(P, task: TaskConfig, variants, device="cpu") -> dict:
    """{variant: [TrainedRun, ...]}: each variant's ensemble as its stored runs (train_configs, in seed
    order), loaded from P.store_dir or trained there when first needed (see runs.TrainedRun)."""
    return {v: [TrainedRun(P.store_dir, model_config(P, task, v), cfg, device) for cfg in train_configs(P, v)]
            for v in variants}


def eval_config(P, temperature="fixed", n_sequences=None, lengths=None) -> EvalConfig:
    """The test set and temperature; n_sequences and lengths replace the chapter's (probes)."""
    given = {field: P[name] for name, field in EVAL_FIELDS.items() if name in P}
    given.update({"lengths": tuple(lengths or given["lengths"]), "n_sequences": n_sequences or given["n_sequences"]})
    return EvalConfig(**given, temperature=temperature)


def train_and_evaluate(P, task: TaskConfig, variants, temperatures=("fixed",), device="cpu"):
    """Per-seed accuracies {run name: (seeds, lengths)} and training records {variant: record}, each
    variant's runs (train_configs) joined along the seeds (runs.joined_record).

    Adaptive temperature is a test-time change, so it re-evaluates the same trained weights."""
    accuracy, training = {}, {}
    for variant in variants:
        model_cfg = model_config(P, task, variant)
        parts = [TrainedRun(P.store_dir, model_cfg, cfg, device) for cfg in train_configs(P, variant)]
        for temperature in temperatures:
            cfg = eval_config(P, temperature)
            accuracy[run_name(variant, temperature)] = np.concatenate([run.evaluated(cfg) for run in parts])
        training[variant] = joined_record([run.record for run in parts])
    return accuracy, training


def stored_train_and_evaluate(P, task: TaskConfig, variants, temperatures, device_type: str):
    """train_and_evaluate's (accuracy, training) for runs made elsewhere (e.g. the paper's scale,
    trained on a GPU), read from P.store_dir only: device_type names their store entries, and a
    missing entry raises StoreError; nothing is trained or evaluated here."""
    with stored_only():
        return train_and_evaluate(P, task, variants, temperatures, torch.device(device_type))


def long_train_configs(P) -> list:
    """The longer training (the `long_*` parameters of chapters 4-5, 8 and 9) as stored runs of at most
    long_seed_chunk consecutive seeds each, so that one run fits in one sitting.  Seed s
    has the same streams in whichever run it falls, and with seed groups that divide the
    chunk each group computes exactly what it would in one run of all the seeds.  Chapter 9's
    curriculum stretches over the longer runs' own steps."""
    base = dataclasses.replace(train_config(P), steps=P.long_steps, seed_group=P.long_seed_group, first_seed=0,
                               n_seeds=P.long_seeds, curriculum_steps=curriculum_steps(P, P.long_steps))
    return seed_chunks(base, P.long_seed_chunk)


def long_eval_params(P):
    """P as the longer training is evaluated: on long_eval_sequences test sequences per length where the
    chapter sets it (chapter 9), else on n_eval_sequences.  A larger set begins with the smaller one's
    sequences (the same blocks of the same streams), so it adds sequences and changes none."""
    n_sequences = P.get("long_eval_sequences")
    return Params({**P, "n_eval_sequences": n_sequences}) if n_sequences else P


def counter_arm(P):
    """The longer training again with draws counter (chapters 4-5's counter_seeds), the stream that gives
    a CPU and a GPU the same batches and test sequences: its parameters P, the first counter_seeds
    seeds in runs of long_seed_group each (so the arm grows a group at a time, and two processes can
    train different groups; one run where long_seed_group is 0); None where counter_seeds is 0."""
    if not P.get("counter_seeds"):
        return None
    return Params({**P, "draws": "counter", "long_seeds": P.counter_seeds,
                   "long_seed_chunk": P.long_seed_group or P.counter_seeds})


def long_training(P, task: TaskConfig, variants, temperatures=("fixed",), device="cpu"):
    """The longer training of each variant, its runs joined along the seeds:
    (accuracy {run name: (seeds, eval_lengths)}, training records {variant: [one record per run]}), each run evaluated at every test length
    under each temperature on long_eval_params(P)'s test sequences."""
    accuracy, training = {}, {}
    P = long_eval_params(P)
    for variant in variants:
        model_cfg = model_config(P, task, variant)
        parts = [TrainedRun(P.store_dir, model_cfg, train_cfg, device) for train_cfg in long_train_configs(P)]
        scored = [{t: run.evaluated(eval_config(P, t)) for t in temperatures} for run in parts]  # run by run
        for t in temperatures:
            accuracy[run_name(variant, t)] = np.concatenate([part[t] for part in scored])
        training[variant] = [run.record for run in parts]
    return accuracy, training
