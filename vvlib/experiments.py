"""The training chapters' common flow: train each variant once, evaluate it under each
test-time temperature, on the same test sequences.

Chapter parameters map to configs here, so every training chapter reads the same names
(n_seeds, steps, batch_size, hidden, lr, ...) the same way.
"""

from .evaluate import EvalConfig
from .model import ModelConfig
from .runs import evaluated, trained
from .tasks import TaskConfig
from .train import TrainConfig

NORM_OF = {"baseline": "none", "layernorm": "layernorm", "standardize": "standardize"}
LABELS = {"baseline": "Baseline", "layernorm": "Baseline (+ LN)", "standardize": "Baseline (+ std.)",
          "adaptive_baseline": "Adaptive θ", "adaptive_layernorm": "Adaptive θ (+ LN)",
          "adaptive_standardize": "Adaptive θ (+ std.)"}


def task_config(P, name: str) -> TaskConfig:
    if name == "argmax":
        return TaskConfig("argmax", n_classes=P.n_classes)
    return TaskConfig("dictionary", n_keys=P.n_keys, n_values=P.n_values)


def train_config(P) -> TrainConfig:
    return TrainConfig(n_seeds=P.n_seeds, steps=P.steps, batch_size=P.batch_size, lr=P.lr,
                       weight_decay=P.weight_decay, min_len=P.min_train_len, max_len=P.max_train_len,
                       seed=P.seed, checkpoint_every=P.checkpoint_every)


def run_name(variant: str, temperature: str) -> str:
    """'baseline' with fixed temperature; 'adaptive_baseline' with adaptive temperature."""
    return variant if temperature == "fixed" else f"adaptive_{variant}"


def train_and_evaluate(P, task: TaskConfig, variants, temperatures=("fixed",), device="cpu"):
    """Per-seed accuracies {run name: (seeds, lengths)} and training records {variant: record}.

    Each variant is trained once (or loaded from P.store_dir); adaptive temperature is a
    test-time change, so it re-evaluates the same trained weights."""
    train_cfg = train_config(P)
    accuracy, training = {}, {}
    for variant in variants:
        model_cfg = ModelConfig(task=task, hidden=P.hidden, norm=NORM_OF[variant])
        weights, training[variant] = trained(P.store_dir, model_cfg, train_cfg, device)
        for temperature in temperatures:
            eval_cfg = EvalConfig(lengths=tuple(P.eval_lengths), n_sequences=P.n_eval_sequences,
                                  seed=P.eval_seed, temperature=temperature)
            accuracy[run_name(variant, temperature)] = evaluated(P.store_dir, model_cfg, train_cfg, weights,
                                                                 eval_cfg, device)
    return accuracy, training
