"""What a training step does beyond plain AdamW, when asked: a learning-rate schedule and
gradient clipping, each seed on its own (chapter 11's second round; the paper names neither).

Seeds share no weights, so clipping works on each seed's gradient norm over all its weights,
as torch.nn.utils.clip_grad_norm_ would on that seed's model alone.  Both are tensor
operations with no host synchronisation, so a CUDA graph can record them.
"""

import math

import torch

SCHEDULES = ("constant", "cosine", "drop")
DROP_FACTOR = 0.1  # "drop": the rate times this from drop_step on (our choice: the usual tenfold step)


def learning_rate(lr: float, schedule: str, warmup_steps: int, steps: int, step: int, drop_step: int = 0) -> float:
    """The learning rate of the update that takes `step` (0-based) to step + 1: constant; or
    cosine: linear warmup from lr / warmup_steps to lr over warmup_steps, then half a cosine
    from lr down to 0 at `steps`; or drop: lr until drop_step, lr * DROP_FACTOR from there."""
    if schedule == "constant":
        return lr
    if schedule == "drop":
        return lr if step < drop_step else lr * DROP_FACTOR
    if step < warmup_steps:
        return lr * (step + 1) / warmup_steps
    progress = (step - warmup_steps) / max(1, steps - warmup_steps)
    return lr * 0.5 * (1.0 + math.cos(math.pi * progress))


def clip_per_seed(params, max_norm: float, eps: float = 1e-6):
    """Scale each seed's gradients (leading dim S of every weight) so that their norm over all
    the seed's weights is at most max_norm; returns the norms before clipping, (S,)."""
    grads = [p.grad for p in params if p.grad is not None]
    norms = torch.stack([g.pow(2).flatten(1).sum(1) for g in grads]).sum(0).sqrt()  # (S,)
    scale = (max_norm / (norms + eps)).clamp(max=1.0)
    for g in grads:
        g.mul_(scale.view(-1, *([1] * (g.dim() - 1))))
    return norms
