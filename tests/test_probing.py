import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats as scipy_stats

from vvlib import probing
from vvlib.attention import standardize
from vvlib import evaluate
from vvlib.evaluate import EvalConfig
from vvlib.model import ModelConfig, forward, init_params
from vvlib.stats import summary_by_length


@pytest.fixture
def small_layernorm(small_argmax):
    return ModelConfig(task=small_argmax.task, hidden=small_argmax.hidden, norm="layernorm")


def test_probe_returns_what_the_model_computes_on_the_test_sequences(small_layernorm):
    params = init_params(small_layernorm, [0, 1])
    cfg = EvalConfig(lengths=(20,), n_sequences=70)  # crosses an EVAL_BLOCK boundary
    got = probing.probe_length(small_layernorm, params, cfg, 20, top_k=4, max_items=37)
    assert got["output"].shape == got["normalized"].shape == (2, 70, small_layernorm.hidden)
    assert got["top_weights"].shape == (2, 70, 4) and got["entropy"].shape == (2, 70)
    # independent: the second block of test sequences, straight through the model in one piece
    _, inside = forward(small_layernorm, params, evaluate.test_block(small_layernorm, cfg, 20, 1, "cpu"), probe=True)
    torch.testing.assert_close(got["output"][:, 64:], inside["output"])
    torch.testing.assert_close(got["normalized"][:, 64:], inside["normalized"])
    attn = inside["attention"].double()
    torch.testing.assert_close(got["entropy"][:, 64:].double(), -(attn * attn.log()).sum(-1), atol=1e-5, rtol=1e-5)
    sorted_weights = attn.sort(dim=-1, descending=True).values[..., :4].float()
    torch.testing.assert_close(got["top_weights"][:, 64:], sorted_weights)
    # before the norm is O, after it is gamma * standardize(O) + beta (gamma 1, beta 0 at init)
    torch.testing.assert_close(got["normalized"], standardize(got["output"]), atol=1e-5, rtol=1e-4)


def test_probe_of_every_length_and_bad_top_k(small_argmax):
    params = init_params(small_argmax, [0])
    cfg = EvalConfig(lengths=(16, 64), n_sequences=5)
    got = probing.probe(small_argmax, params, cfg, progress=False)
    assert list(got) == [16, 64] and got[64]["top_weights"].shape == (1, 5, probing.TOP_K)
    assert (got[64]["top_weights"].diff(dim=-1) <= 0).all()  # largest first
    with pytest.raises(ValueError, match="top_k"):
        probing.probe_length(small_argmax, params, cfg, 8)


def test_the_probe_gives_the_cpus_tables_on_any_device_and_returns_them_on_the_cpu(small_layernorm, device):
    """Chapters 6, 7 and 10 probe the paper-scale runs on the GPU that trained them: the same tables as the
    CPU's (float rounding apart), copied back to the CPU for the pages.  On a GPU this is the check's only
    test of the probes' CUDA path (bench.gpu_check runs this file).  The counter stream, as the paper profile
    probes: torch's generators draw other test sequences on a GPU (the H200 check of 2026-11-27 failed on that)."""
    params = init_params(small_layernorm, [0, 1])
    cfg = EvalConfig(lengths=(16, 40), n_sequences=70, draws="counter")
    here = probing.probe(small_layernorm, params, cfg, "cpu", top_k=4, progress=False)
    there = probing.probe(small_layernorm, params, cfg, device, top_k=4, progress=False)
    for n in cfg.lengths:
        assert set(there[n]) == set(here[n])
        for key, value in there[n].items():
            assert value.device.type == "cpu"
            torch.testing.assert_close(value, here[n][key], atol=1e-5, rtol=1e-4)


def test_global_moments_and_component_std_against_numpy():
    x = torch.randn(3, 50, 7, generator=torch.Generator().manual_seed(0))
    mean, var = probing.global_moments(x)
    np.testing.assert_allclose(mean.numpy(), x.numpy().mean(-1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var.numpy(), x.numpy().var(-1), rtol=1e-5)
    np.testing.assert_allclose(probing.component_std(x).numpy(), x.numpy().std(1, ddof=1), rtol=1e-5)


def test_loglog_slope_recovers_power_laws():
    lengths = [16, 64, 256, 1024]
    curves = np.array([[3 * n**-0.5 for n in lengths], [n**0.25 for n in lengths]])
    np.testing.assert_allclose(probing.loglog_slope(lengths, curves), [-0.5, 0.25])


def test_component_slopes_of_iid_means_are_minus_one_half():
    """The mean of N i.i.d. values has std ∝ N^-1/2: a probe-shaped input with that law."""
    gen = torch.Generator().manual_seed(1)
    lengths = [16, 64, 256]
    by_length = {n: {"normalized": torch.rand(2, 400, 6, n, generator=gen).mean(-1)} for n in lengths}
    slopes = probing.component_slopes(by_length, lengths)
    assert slopes.shape == (2,)
    assert np.all(np.abs(slopes + 0.5) < 0.08)


def test_global_frame_is_relative_to_the_reference_length():
    gen = torch.Generator().manual_seed(2)
    probes = {"a": {16: {"normalized": torch.randn(2, 30, 8, generator=gen) + 1},
                    64: {"normalized": 0.5 * torch.randn(2, 30, 8, generator=gen) + 1}}}
    frame = probing.global_frame(probes, 16)
    at_ref = frame[frame.N == 16]
    assert np.allclose(at_ref["relative_variance"], 1) and np.allclose(at_ref["mean_drift"], 0)
    assert len(frame) == 4 and (frame[frame.N == 64]["relative_variance"] < 0.5).all()  # about a quarter


def test_summary_by_length_pairs_seeds_like_scipy():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=6), rng.normal(size=6) + 0.5
    frame = pd.DataFrame([{"variant": v, "seed": s, "N": 16, "x": x[s]} for v, x in (("a", a), ("b", b))
                          for s in range(6)])
    summary = summary_by_length(frame, "x", [("a", "b")])
    assert summary["mean"]["b"]["16"] == pytest.approx(b.mean())
    assert summary["sem"]["a"]["16"] == pytest.approx(a.std(ddof=1) / math.sqrt(6))
    assert summary["p_value"]["a_vs_b"]["16"] == pytest.approx(scipy_stats.ttest_rel(a, b).pvalue)


def test_chapter_tables_keep_what_the_pages_show(small_argmax, small_layernorm):
    cfg = EvalConfig(lengths=(16, 32, 64), n_sequences=12)
    probes = {name: probing.probe(model, init_params(model, [0, 1]), cfg, progress=False)
              for name, model in (("baseline", small_argmax), ("layernorm", small_layernorm))}
    dist = probing.distribution_tables(probes, components=[0, 3], shown_seed=1, distribution_lengths=[16, 64],
                                       reference=16)
    # a before-the-norm slope only where there is a norm
    assert set(dist["slopes"]["variant"]) == {"baseline", "layernorm", "layernorm_before_norm"}
    std = dist["component_std"].query("variant == 'layernorm' and N == 32 and component == 3")["std"].item()
    assert std == pytest.approx(float(probes["layernorm"][32]["normalized"][1, :, 3].std()))
    assert len(dist["values"]) == 2 * 2 * 2 * 12  # variants x lengths x components x sequences
    hist = dist["histograms"].query("variant == 'baseline' and component == 3")
    assert len(hist) == 3 * 40  # every probed length, default 40 bins
    for n, part in hist.groupby("N"):
        assert ((part["right"] - part["left"]) * part["density"]).sum() == pytest.approx(1)  # a density
        assert part["left"].min() == hist["left"].min()  # one range for all N
        values = probes["baseline"][n]["normalized"][1, :, 3].double().numpy()
        counts, _ = np.histogram(values, bins=np.append(part["left"].to_numpy(), part["right"].iloc[-1]))
        np.testing.assert_allclose(part["density"], counts / counts.sum() / (part["right"] - part["left"]))
    disp = probing.dispersion_tables(probes, shown_seed=1, n_examples=5, heatmap_lengths=[32, 64],
                                     heatmap_runs=["layernorm"])
    arrays = probing.heatmap_arrays(disp["heatmaps"])
    assert list(arrays) == ["layernorm"] and list(arrays["layernorm"]) == [32, 64]
    np.testing.assert_allclose(arrays["layernorm"][64], probes["layernorm"][64]["top_weights"][1, :5].numpy())


def test_norm_frame_measures_the_norms_input_against_eps_and_its_learned_gain_and_bias(small_layernorm):
    """Checked against numpy on the probed tensors: the spread of O over the features, eps's share of the
    divisor, the gain's and bias's root mean square and the readout's global variance.  Values scaled 1e-6 leave
    an O far smaller than eps: its share nears 1 and the readout's variance collapses, as a norm swamped by eps
    would make it."""
    params = init_params(small_layernorm, [0, 1])
    params["ln.gamma"] = params["ln.gamma"] * torch.tensor([[0.5], [2.0]])  # seed 1's gain four times seed 0's
    uneven = torch.tensor([1.5, 0.5]).sqrt().repeat(small_layernorm.hidden // 2)  # over the features, mean square 1
    params["ln.gamma"] = params["ln.gamma"] * uneven  # so the gain-weighted energy weighs features unequally
    params["ln.beta"] = params["ln.beta"] + 0.25
    cfg = EvalConfig(lengths=(16, 64), n_sequences=9)
    probed = probing.probe(small_layernorm, params, cfg, progress=False)
    frame = probing.norm_frame({"layernorm": probed}, params, small_layernorm)
    assert list(frame.columns) == ["variant", "seed", "N", *probing.NORM_COLUMNS] and len(frame) == 4
    for row in frame.itertuples():
        o, readout = (probed[row.N][key][row.seed].double().numpy() for key in ("output", "normalized"))
        spread = o.std(axis=-1)
        assert row.input_std == pytest.approx(spread.mean(), rel=1e-5)
        assert row.epsilon_share == pytest.approx((1e-5 / (spread + 1e-5)).mean(), rel=1e-4)
        assert row.gain_rms == pytest.approx([0.5, 2.0][row.seed]) and row.bias_rms == pytest.approx(0.25)
        assert row.global_variance == pytest.approx(readout.var(axis=-1).mean(), rel=1e-4)
        assert row.epsilon_share < 0.01  # at init O spreads far more than eps
        # the standardized output, from the readout's input: (LN(O) - b) / g, with this test's gain and bias
        z = (readout - params["ln.beta"][row.seed].double().numpy()) / params["ln.gamma"][row.seed].double().numpy()
        gain = params["ln.gamma"][row.seed].double().numpy()
        assert row.gain_energy == pytest.approx(((gain * z) ** 2).mean(), rel=1e-4)
        assert row.fixed_share == pytest.approx((z.mean(axis=0) ** 2).mean() / (z ** 2).mean(), rel=1e-4)
        assert 0 < row.fixed_share < 1
    params["wv"] = params["wv"] * 1e-6
    swamped = probing.norm_frame({"layernorm": probing.probe(small_layernorm, params, cfg, progress=False)}, params,
                                 small_layernorm)
    assert (swamped["epsilon_share"] > 0.5).all()
    assert (swamped["global_variance"] < frame["global_variance"].to_numpy() / 2).all()


def test_sharpening_multiplies_the_attentions_logits_and_nothing_else(small_layernorm):
    """sharpened(beta) gives the attention softmax(beta * logits), computed here from the unsharpened weights A
    as softmax(beta * log A) (log A is the logits less a constant per sequence); beta 1 changes nothing, and
    beta <= 0 or a non-number is refused."""
    params = init_params(small_layernorm, [0, 1])
    batch = evaluate.test_block(small_layernorm, EvalConfig(n_sequences=8), 24, 0, "cpu")
    _, plain = forward(small_layernorm, params, batch, probe=True)
    for beta in (0.5, 2.0):
        _, sharp = forward(small_layernorm, probing.sharpened(small_layernorm, params, beta), batch, probe=True)
        expected = torch.softmax(beta * plain["attention"].double().log(), dim=-1)
        torch.testing.assert_close(sharp["attention"].double(), expected, atol=1e-6, rtol=1e-5)
    same = probing.sharpened(small_layernorm, params, 1.0)
    assert all(torch.equal(same[k], params[k]) for k in params)
    for bad in (0, -1.0, "2"):
        with pytest.raises(ValueError, match="beta"):
            probing.sharpened(small_layernorm, params, bad)


def test_the_sharpness_frame_scores_as_evaluate_does_and_sharper_attention_has_lower_entropy(small_layernorm):
    """At beta 1 each seed's accuracy is evaluate.accuracy's and its entropy the probe's mean, on the same test
    sequences (70 of them: two blocks); the entropy falls as beta grows."""
    params = init_params(small_layernorm, [0, 1])
    cfg = EvalConfig(lengths=(16, 40), n_sequences=70)
    frame = probing.sharpness_frame(small_layernorm, params, cfg, [0.5, 1.0, 3.0], "layernorm", max_items=53)
    assert len(frame) == 3 * 2 * 2 and set(frame["variant"]) == {"layernorm"}
    at_one = frame[frame.beta == 1.0].set_index(["seed", "N"])
    scored = evaluate.accuracy(small_layernorm, params, cfg, progress=False)
    probed = probing.probe(small_layernorm, params, cfg, progress=False)
    for s in (0, 1):
        for j, n in enumerate(cfg.lengths):
            assert at_one.loc[(s, n), "accuracy"] == pytest.approx(float(scored[s, j]))
            assert at_one.loc[(s, n), "entropy"] == pytest.approx(float(probed[n]["entropy"][s].mean()), rel=1e-5)
    by_beta = frame.pivot_table(index=["seed", "N"], columns="beta", values="entropy")
    assert (by_beta[0.5] > by_beta[1.0]).all() and (by_beta[1.0] > by_beta[3.0]).all()


def _each_layers_attention(model_cfg, params, batch):
    """Every layer's attention weights (S, B, H, N), the model's layers stepped through one at a time."""
    from vvlib import model
    x, y = model.features(model_cfg, params, batch)
    h = model.mlp(params, "enc", model_cfg.encoder_layers, x)
    z = model.mlp(params, "enc", model_cfg.encoder_layers, y)
    weights = []
    for layer in range(model_cfg.layers):
        prefix = model.layer_prefix(layer)
        attn, o = model.attention_layer(model_cfg, params, prefix, model.linear(z, params[prefix + "wq"]), h,
                                        batch.mask, "fixed")
        weights.append(attn)
        z = model.normalize(model_cfg, params, prefix, o)
    return weights


def test_the_layer_frame_gives_each_layers_entropy_and_largest_weight_averaged_over_heads_and_sequences(small_argmax):
    """Chapter 10 reads the deep model's layers from this table: each layer's mean over heads and test sequences,
    computed in pieces (max_items) over blocks of test sequences, against the model stepped through layer by
    layer on the whole blocks.  A layer whose W_K is zero attends uniformly: entropy ln N, largest weight 1/N."""
    deep = ModelConfig(task=small_argmax.task, hidden=small_argmax.hidden, norm="layernorm", heads=2, layers=2)
    params = init_params(deep, [0, 1, 2])
    params = {**params, "wk": params["wk"] * 20}  # a sharp first layer, a near-uniform second
    cfg = EvalConfig(lengths=(12, 30), n_sequences=70)  # crosses an EVAL_BLOCK boundary
    frame = probing.layer_frame(deep, params, cfg, "deep", max_items=37)
    assert list(frame.columns) == ["variant", "seed", "N", "layer", "entropy", "top1_weight", "on_answer"]
    assert len(frame) == 3 * 2 * 2 and set(frame["variant"]) == {"deep"}
    for n in cfg.lengths:
        blocks = [evaluate.test_block(deep, cfg, n, b, "cpu") for b in range(2)]
        per_block = [_each_layers_attention(deep, params, batch) for batch in blocks]
        for layer in range(2):
            attn = torch.cat([weights[layer] for weights in per_block], dim=1).double()  # (S, 70, H, N)
            want_entropy = -(attn * attn.log()).sum(-1).mean(dim=(1, 2))
            want_top1 = attn.max(dim=-1).values.mean(dim=(1, 2))
            answer = torch.cat([b.priority.argmax(-1) for b in blocks])  # argmax retrieval: the top priority's item
            want_on_answer = (attn.argmax(-1) == answer.view(1, -1, 1)).double().mean(dim=(1, 2))
            got = frame[(frame["N"] == n) & (frame["layer"] == layer)].sort_values("seed")
            np.testing.assert_allclose(got["entropy"], want_entropy.numpy(), rtol=1e-5)
            np.testing.assert_allclose(got["top1_weight"], want_top1.numpy(), rtol=1e-5)
            np.testing.assert_allclose(got["on_answer"], want_on_answer.numpy(), rtol=1e-12)
    first, second = (frame[frame["layer"] == layer]["entropy"].mean() for layer in range(2))
    assert first < second  # the sharpened layer is the sharper
    uniform = probing.layer_frame(deep, {**params, "l1.wk": torch.zeros_like(params["l1.wk"])}, cfg, "deep")
    second_layer = uniform[uniform["layer"] == 1]
    np.testing.assert_allclose(second_layer["entropy"], np.log(second_layer["N"]), rtol=1e-5)
    np.testing.assert_allclose(second_layer["top1_weight"], 1 / second_layer["N"], rtol=1e-5)


def test_the_adaptive_frame_counts_the_sequences_whose_head_the_rule_sharpens(small_dictionary, monkeypatch):
    """Entropies set by hand: ln 1 = 0 and ln 1000 (about 6.9) lie outside the band where the rule sharpens
    (about 0.85 to 5.94 nats), ln 8 (about 2.1) inside it."""
    h = torch.tensor([[0.0, math.log(8), math.log(8), math.log(1000)], [math.log(8)] * 4])
    monkeypatch.setattr(probing, "probe", lambda *args, **kwargs: {64: {"entropy": h}})
    monkeypatch.setattr(evaluate, "accuracy", lambda model_cfg, params, cfg, device: torch.tensor(
        [[0.25], [0.5]]) + (cfg.temperature == "adaptive"))
    frame = probing.adaptive_frame(small_dictionary, {}, EvalConfig(lengths=(64,)), "baseline")
    assert list(frame["seed"]) == [0, 1] and set(frame["N"]) == {64} and set(frame["variant"]) == {"baseline"}
    assert frame["sharpened"].tolist() == [0.5, 1.0]
    assert frame["entropy"].tolist() == pytest.approx([float(h[0].mean()), math.log(8)])
    assert frame["beta"][1] > 1 and frame["beta"][0] == pytest.approx((2 * frame["beta"][1] + 2) / 4)
    assert frame["accuracy_fixed"].tolist() == [0.25, 0.5] and frame["accuracy_adaptive"].tolist() == [1.25, 1.5]


def test_the_adaptive_frame_scores_the_models_it_probes_as_evaluate_does(small_dictionary):
    params = init_params(small_dictionary, [0, 1, 2])
    cfg = EvalConfig(lengths=(16, 32), n_sequences=16)
    frame = probing.adaptive_frame(small_dictionary, params, cfg, "baseline")
    for t in ("fixed", "adaptive"):
        expected = evaluate.accuracy(small_dictionary, params, EvalConfig(lengths=(16, 32), n_sequences=16, temperature=t))
        got = frame.pivot(index="seed", columns="N", values=f"accuracy_{t}").to_numpy()
        np.testing.assert_allclose(got, expected.numpy())
    probed = probing.probe(small_dictionary, params, cfg, progress=False)
    np.testing.assert_allclose(frame.pivot(index="seed", columns="N", values="entropy").to_numpy()[:, 1],
                               probed[32]["entropy"].mean(dim=1).numpy(), rtol=1e-6)
