"""The knobs turned on an attention head: the paper's two, and chapter 10's two.

1. What happens to the attention output O before the readout MLP (`norm`):
     none         the Baseline
     standardize  (o - mean_d o) / (std_d o + eps), no parameters  (paper, section 3.2)
     layernorm    gamma * standardize(o) + beta, gamma and beta learned  (paper, section 2)
     rescale      chapter 10's variance-preserving output: sum_n (A_n - 1/N) v_n / ||A - 1/N||_2,
                  the attention output minus the plain average of the values, divided by
                  the length of the centred weights (see centred_mix)
   The paper adds eps to the standard deviation, not inside the square root as
   torch.nn.LayerNorm does; we follow the paper.  The two agree to ~eps/std.

2. The softmax temperature (`temperature`):
     fixed     softmax(logits)
     adaptive  Velickovic et al. (2024): beta = max(p(H), 1) where H is the entropy
               (nats) of softmax(logits) and p a quartic fitted by the authors; heads
               with H <= 0.5 are left alone.  Output softmax(beta * logits).
               Used only at test time, on models trained with `fixed`.

3. Chapter 10's length-aware logits (`logit_scale`):
     none      the paper's logits
     log_n     Scalable-Softmax (Nakanishi, 2025): logits times s * ln N, N the number of
               items in the sequence, s a learned scalar per head
"""

from dataclasses import dataclass
from typing import Callable

import torch

LOGIT_SCALES = ("none", "log_n")
TEMPERATURES = ("fixed", "adaptive")
EPS = 1e-5
# Velickovic et al.'s published fit of 1/theta against entropy, highest degree first.
ADAPTIVE_POLY = (-0.037, 0.481, -2.3, 4.917, -1.791)
ADAPTIVE_MIN_ENTROPY = 0.5


def standardize(o: torch.Tensor, eps: float = EPS) -> torch.Tensor:
    """Centre and scale each vector over its last (feature) dimension."""
    mean = o.mean(dim=-1, keepdim=True)
    centred = o - mean
    std = centred.square().mean(dim=-1, keepdim=True).sqrt()
    return centred / (std + eps)


def layernorm(o, gamma, beta, eps: float = EPS) -> torch.Tensor:
    """Standardize, then the learned per-feature scale and shift (broadcast over o)."""
    return gamma * standardize(o, eps) + beta


def entropy(probs: torch.Tensor) -> torch.Tensor:
    """Shannon entropy in nats over the last dim, with the 1e-9 guard of the published code."""
    return -(probs * torch.log(probs + 1e-9)).sum(dim=-1, keepdim=True)


def beta_at_entropy(h: torch.Tensor) -> torch.Tensor:
    """The adaptive rule's inverse temperature for a head whose entropy is h (nats).  The quartic
    exceeds 1 only between about 0.85 and 5.94 nats, so a head outside that band is left alone too."""
    poly = torch.zeros_like(h)
    for coefficient in ADAPTIVE_POLY:  # Horner's rule
        poly = poly * h + coefficient
    sharpen = torch.clamp_min(poly, 1.0)
    return torch.where(h > ADAPTIVE_MIN_ENTROPY, sharpen, torch.ones_like(h))


def sharpening_band() -> tuple[float, float]:
    """(low, high): the entropies (nats) between which the adaptive rule sets beta above 1, the real roots of
    the quartic minus 1."""
    import numpy as np  # only here: the model's path needs torch alone

    roots = np.roots([*ADAPTIVE_POLY[:-1], ADAPTIVE_POLY[-1] - 1])
    low, high = sorted(float(r.real) for r in roots if abs(r.imag) < 1e-9)
    return max(low, ADAPTIVE_MIN_ENTROPY), high


def attention_weights(logits, temperature: str = "fixed", mask=None) -> torch.Tensor:
    """softmax over the last dim, masked items excluded, optionally adaptive temperature."""
    if temperature not in TEMPERATURES:
        raise ValueError(f"temperature must be one of {TEMPERATURES}; got {temperature!r}")
    if mask is not None:
        logits = logits.masked_fill(~mask, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    if temperature == "adaptive":
        probs = torch.softmax(logits * beta_at_entropy(entropy(probs)), dim=-1)
    return probs


def centred_mix(weights, items, mask=None, eps: float = EPS):
    """sum_n c_n x_n / ||c||_2 with c = A - 1/N over the sequence's items, per head: weights (..., H, N) and
    items (..., N, F) -> (..., H, F).

    Because the c_n sum to zero, the mean of the items cancels; if the weights are
    independent of i.i.d. items of variance sigma^2, every component of the result has
    variance exactly sigma^2 at every N (chapter 10 proves it).  Masked items (mask (..., 1, N)) get no
    weight."""
    if mask is None:
        uniform = torch.full_like(weights, 1 / weights.shape[-1])
    else:
        valid = mask.to(weights.dtype)
        uniform = valid / valid.sum(dim=-1, keepdim=True)
    centred = weights - uniform
    return (centred @ items) / (centred.norm(dim=-1, keepdim=True) + eps)


def plain_mix(weights, items, mask=None):
    """sum_n A_n x_n per head: weights (..., H, N) and items (..., N, F) -> (..., H, F) (masked items already
    have weight 0).  One product reads the items once for every head."""
    return weights @ items


@dataclass(frozen=True)
class Norm:
    """What a `norm` changes: how the head mixes the items, the weights it adds (no randomness), its output."""
    mix: Callable = plain_mix
    weights: Callable[[int], dict] = lambda width: {}
    apply: Callable = lambda o, weight: o  # o (S, B, D); weight(name): this layer's weight of that name, (S, ...)


NORM_TABLE = {
    "none": Norm(),
    "layernorm": Norm(weights=lambda width: {"ln.gamma": torch.ones(width), "ln.beta": torch.zeros(width)},
                      apply=lambda o, weight: layernorm(o, weight("ln.gamma").unsqueeze(1), weight("ln.beta").unsqueeze(1))),
    "standardize": Norm(apply=lambda o, weight: standardize(o)),
    "rescale": Norm(mix=centred_mix),  # acts inside the head, on how the items are mixed
}


NORMS = tuple(NORM_TABLE)


def log_length(logits, mask=None):
    """ln N per sequence, (..., 1): N counts the unmasked items (all of them without a mask)."""
    if mask is None:
        n = logits.new_full((*logits.shape[:-1], 1), logits.shape[-1])
    else:
        n = mask.sum(dim=-1, keepdim=True).to(logits.dtype)
    return torch.log(n)
