import math

import numpy as np
import pytest
import torch

from vvlib import rng
from vvlib.montecarlo import (Moments, RandomAttention, Setting, Tables, attend, exact_moments,
                              fit_loglog_slope, output_moments, proof_chain, sample_tokens, sinusoidal,
                              variance_constant)


@pytest.fixture(scope="module")
def module():
    return Tables(RandomAttention(d_model=16, vocab_size=12, seed=1))


@pytest.mark.parametrize("vocab_size", [2, 3])
def test_monte_carlo_variance_agrees_with_exact_enumeration(vocab_size):
    tiny = Tables(RandomAttention(d_model=8, vocab_size=vocab_size, seed=2))
    for n in (1, 4, 9):
        mean, var = exact_moments(tiny, n, component=0)
        m = output_moments(tiny, Setting(), n, 20000, seed=5)
        assert abs(m.variance()[0] - var) < 4 * m.variance_se()[0]
        assert abs(m.mean()[0] - mean) < 4 * math.sqrt(var / 20000)


def test_n_times_the_exact_variance_converges_to_the_sharp_constant():
    """Exact enumeration (no approximation) against the delta method's limit: the gap
    N Var(O) - C shrinks like 1/N, so it halves (roughly) as N doubles."""
    tables = Tables(RandomAttention(d_model=8, vocab_size=2, seed=3, logit_scale=2.0))
    constant = float(variance_constant(tables)[0])
    gaps = [n * exact_moments(tables, n, component=0)[1] - constant for n in (100, 200, 400, 800)]
    assert abs(gaps[-1]) < 0.01 * constant
    assert all(0.35 < later / earlier < 0.65 for earlier, later in zip(gaps, gaps[1:]))


def test_the_sharp_constant_with_equal_logits_is_the_value_variance():
    flat = Tables(RandomAttention(d_model=8, vocab_size=3, seed=2, logit_scale=0.0))
    values = flat.values[:, 0]
    assert float(variance_constant(flat)[0]) == pytest.approx(float(values.var(unbiased=False)), rel=1e-12)


def test_iid_slope_is_minus_one_half(module):
    lengths = [32, 128, 512, 2048]
    stds, ses = [], []
    for n in lengths:
        m = output_moments(module, Setting(), n, 3000, seed=1)
        stds.append(math.sqrt(m.variance()[0]))
        ses.append(m.variance_se()[0] / (2 * m.variance()[0]))
    slope, low, high = fit_loglog_slope(lengths, stds, ses)
    assert low < -0.5 < high and high - low < 0.1


def test_shifting_every_value_shifts_the_output_and_keeps_the_variance():
    plain = Tables(RandomAttention(d_model=8, vocab_size=10, seed=4))
    shifted = Tables(RandomAttention(d_model=8, vocab_size=10, seed=4, value_mean=3.0))
    a, b = output_moments(plain, Setting(), 64, 500, seed=2), output_moments(shifted, Setting(), 64, 500, seed=2)
    assert np.allclose(b.mean() - a.mean(), 3.0)
    assert np.allclose(b.variance(), a.variance(), rtol=1e-6)


def test_values_are_centred_under_the_token_distribution(module):
    assert torch.allclose(module.probs @ module.values, torch.zeros(16, dtype=torch.float64), atol=1e-12)


def test_attention_matches_a_direct_computation_with_positions(module):
    setting = Setting(positional=True)
    tokens = sample_tokens(module, setting, rng.generator("cpu", 1), 3, 20)
    weights, out = attend(module, setting, tokens)
    x = module.embeddings[tokens] + sinusoidal(20, 16)  # (3, 20, D)
    logits = (x @ module.w_k) @ module.query_vector
    expected_w = torch.softmax(logits, dim=1)
    value_rows = x @ module.w_v + module.value_offset
    assert torch.allclose(weights, expected_w)
    assert torch.allclose(out, (expected_w.unsqueeze(-1) * value_rows).sum(1))


def test_lemma_max_weight_bound_holds_on_every_sequence(module):
    for n in (16, 1024):
        tokens = sample_tokens(module, Setting(), rng.generator("cpu", n), 200, n)
        weights, _ = attend(module, Setting(), tokens)
        assert (weights.max(1).values <= math.exp(module.logit_range()) / n + 1e-12).all()


def test_proof_chain_valid_steps_hold_and_the_cross_term_step_fails(module):
    r = proof_chain(module, 1024, 2000, component=0)
    m = r["mean"]
    assert m["variance"] <= m["second_moment"] <= m["line4"] <= m["line5"]
    assert m["second_moment"] == pytest.approx(m["diagonal"] + m["cross"])
    assert m["variance"] <= m["efron_stein_bound"]
    assert m["line5"] > 100 * m["line6"]  # replacing E[V_k V_l; V_k V_l >= 0] by E[V_k] E[V_l] is invalid


def test_markov_tokens_repeat_at_the_stated_rate(module):
    setting = Setting(tokens="markov", stickiness=0.8)
    tokens = sample_tokens(module, setting, rng.generator("cpu", 3), 200, 500)
    same = (tokens[:, 1:] == tokens[:, :-1]).double().mean().item()
    assert same == pytest.approx(0.8 + 0.2 / 12, abs=0.01)
    iid = sample_tokens(module, Setting(), rng.generator("cpu", 3), 200, 500)
    assert (iid[:, 1:] == iid[:, :-1]).double().mean().item() == pytest.approx(1 / 12, abs=0.01)


def test_moments_variance_error_matches_normal_theory():
    x = np.random.default_rng(0).normal(size=(200000, 1)) * 2
    m = Moments(1)
    for chunk in np.array_split(x, 7):
        m.add(chunk)
    assert m.variance()[0] == pytest.approx(4, rel=0.02)
    assert m.variance_se()[0] == pytest.approx(4 * math.sqrt(2 / 200000), rel=0.05)


def test_slope_fit_recovers_an_exact_power_law():
    lengths = [16, 64, 256, 1024]
    slope, low, high = fit_loglog_slope(lengths, [3 * n**-0.37 for n in lengths])
    assert slope == pytest.approx(-0.37) and low == pytest.approx(-0.37) and high == pytest.approx(-0.37)


def test_sinusoidal_encoding_shape_and_first_position():
    pe = sinusoidal(10, 6)
    assert pe.shape == (10, 6) and torch.equal(pe[0, 0::2], torch.zeros(3)) and torch.equal(pe[0, 1::2], torch.ones(3))


@pytest.mark.parametrize("kw, match", [(dict(tokens="zipf"), "tokens"), (dict(query="random"), "query"),
                                       (dict(stickiness=1.0), "stickiness")])
def test_bad_settings_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        Setting(**kw)
    with pytest.raises(ValueError, match="vocab_size"):
        RandomAttention(vocab_size=1)
