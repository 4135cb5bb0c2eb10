import math

import pytest
import torch

from vvlib.attention import attention_weights, beta_at_entropy, entropy, layernorm, sharpening_band, standardize


def test_standardize_gives_zero_mean_unit_variance_per_row():
    o = torch.randn(6, 5, 32, dtype=torch.float64) * 3 + 2
    z = standardize(o)
    assert torch.allclose(z.mean(-1), torch.zeros(6, 5, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(z.var(-1, unbiased=False), torch.ones(6, 5, dtype=torch.float64), atol=1e-4)


def test_layernorm_matches_torch_and_the_papers_formula():
    o = torch.randn(4, 10, 64, dtype=torch.float64)
    gamma, beta = torch.randn(64, dtype=torch.float64), torch.randn(64, dtype=torch.float64)
    ours = layernorm(o, gamma, beta, eps=1e-5)
    mu = o.mean(-1, keepdim=True)
    sigma = ((o - mu) ** 2).mean(-1, keepdim=True).sqrt()
    assert torch.allclose(ours, gamma * (o - mu) / (sigma + 1e-5) + beta, atol=1e-12)
    # torch puts eps inside the square root; the two agree to ~eps/sigma
    reference = torch.nn.functional.layer_norm(o, (64,), gamma, beta, eps=1e-5)
    assert torch.allclose(ours, reference, atol=1e-4)


def uniform(k, n=None):
    """Probabilities uniform over the first k of n items: entropy ln k exactly."""
    n = n or k
    p = torch.zeros(n, dtype=torch.float64)
    p[:k] = 1 / k
    return p


@pytest.mark.parametrize("k, expected", [
    (16, -0.037 * math.log(16) ** 4 + 0.481 * math.log(16) ** 3 - 2.3 * math.log(16) ** 2
     + 4.917 * math.log(16) - 1.791),  # ~2.23
    (64, -0.037 * math.log(64) ** 4 + 0.481 * math.log(64) ** 3 - 2.3 * math.log(64) ** 2
     + 4.917 * math.log(64) - 1.791),  # ~2.41
    (1, 1.0),  # entropy 0 <= 0.5: untouched
    (2**12, 1.0),  # the quartic is below 1 at H = ln 4096 ~ 8.3: clamped to 1
])
def test_adaptive_beta_follows_the_published_polynomial(k, expected):
    beta = beta_at_entropy(entropy(uniform(k, 4096)))
    assert beta.item() == pytest.approx(expected, rel=1e-6)


def test_adaptive_temperature_never_raises_entropy_and_is_softmax_when_sharp():
    torch.manual_seed(0)
    logits = torch.randn(500, 40, dtype=torch.float64) * torch.linspace(0.1, 8, 500, dtype=torch.float64)[:, None]
    plain = attention_weights(logits, "fixed")
    adaptive = attention_weights(logits, "adaptive")
    assert (entropy(adaptive) <= entropy(plain) + 1e-12).all()
    sharp = entropy(plain).squeeze(-1) <= 0.5
    assert sharp.any() and torch.equal(adaptive[sharp], plain[sharp])


def test_masked_items_get_no_weight_and_bad_temperature_is_named():
    logits = torch.zeros(2, 4)
    mask = torch.tensor([[True, True, False, False], [True, True, True, True]])
    weights = attention_weights(logits, "fixed", mask)
    assert torch.allclose(weights[0], torch.tensor([0.5, 0.5, 0, 0]))
    with pytest.raises(ValueError, match="temperature must be one of"):
        attention_weights(logits, "cold")


def test_the_adaptive_rule_sharpens_only_between_the_quartics_two_real_crossings_of_one():
    """beta > 1 exactly inside the band (the quartic's real crossings of 1), which the published values put at
    about 0.85 to 5.9 nats."""
    low, high = sharpening_band()
    h = torch.tensor([low - 1e-3, low + 1e-3, (low + high) / 2, high - 1e-3, high + 1e-3, 9.7], dtype=torch.float64)
    assert (beta_at_entropy(h) > 1).tolist() == [False, True, True, True, False, False]
    assert low == pytest.approx(0.85, abs=0.01) and high == pytest.approx(5.94, abs=0.01)
