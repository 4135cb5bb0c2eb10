"""Chapter 10's model options: heads, layers, length-aware logits, the rescaled output."""

import dataclasses
import math

import pytest
import torch
import torch.nn.functional as F

from vvlib import montecarlo as mc
from vvlib import rng
from vvlib.attention import centred_mix
from vvlib.model import ModelConfig, forward, init_params, settings
from vvlib.task_base import map_fields, stack
from vvlib.tasks import TaskConfig, sample


def textbook_forward(cfg, p, x_items, x_query, s):
    """One seed, one argmax sequence, every head and layer written out with K and V."""
    def encode(z):
        return torch.relu(z @ p["enc0.w"][s] + p["enc0.b"][s]) @ p["enc1.w"][s] + p["enc1.b"][s]

    H, z = encode(x_items), encode(x_query)
    n, width = H.shape[0], cfg.hidden // cfg.heads
    for layer in range(cfg.layers):
        pre = "" if layer == 0 else f"l{layer}."
        Q, K, V = z @ p[pre + "wq"][s], H @ p[pre + "wk"][s], H @ p[pre + "wv"][s]
        outs = []
        for j in range(cfg.heads):
            c = slice(j * width, (j + 1) * width)
            logits = K[:, c] @ Q[c] / math.sqrt(width)
            if cfg.logit_scale == "log_n":
                logits = logits * p[pre + "ssmax.s"][s][j] * math.log(n)
            A = torch.softmax(logits, dim=0)
            if cfg.norm == "rescale":
                centred = A - 1 / n
                outs.append(centred @ V[:, c] / (centred.norm() + 1e-5))
            else:
                outs.append(A @ V[:, c])
        O = torch.cat(outs)
        if cfg.norm == "layernorm" and (cfg.norm_layers == "all" or layer == cfg.layers - 1):
            O = p[pre + "ln.gamma"][s] * (O - O.mean()) / (O.std(unbiased=False) + 1e-5) + p[pre + "ln.beta"][s]
        z = O
    return torch.relu(z @ p["out0.w"][s] + p["out0.b"][s]) @ p["out1.w"][s] + p["out1.b"][s]


@pytest.mark.parametrize("options", [
    {"heads": 4}, {"layers": 2, "norm": "layernorm"}, {"heads": 2, "layers": 3},
    {"logit_scale": "log_n", "norm": "layernorm", "heads": 2}, {"norm": "rescale"},
    {"layers": 3, "heads": 2, "norm": "layernorm", "norm_layers": "last"},
])
def test_extended_model_matches_textbook_attention(options):
    cfg = ModelConfig(task=TaskConfig("argmax"), hidden=16, **options)
    p = init_params(cfg, [0, 1])
    for name in p:  # move the no-randomness parameters off their init, so they are really tested
        if "ln." in name or "ssmax" in name:
            p[name] = p[name] + 0.3 * torch.randn(p[name].shape, generator=torch.Generator().manual_seed(1))
    batches = [sample(cfg.task, rng.generator("cpu", 0, "t", s), 3, 12, "cpu") for s in range(2)]
    out = forward(cfg, p, stack(batches))
    for s, b in enumerate(batches):
        for i in range(3):
            x = torch.cat([b.priority[i, :, None], F.one_hot(b.label[i], cfg.task.n_classes).float()], 1)
            expected = textbook_forward(cfg, p, x, p["query_token"][s], s)
            torch.testing.assert_close(out[s, i], expected, rtol=1e-4, atol=1e-5)


def test_log_n_counts_only_the_unmasked_items():
    cfg = ModelConfig(task=TaskConfig("argmax"), hidden=16, logit_scale="log_n")
    p = init_params(cfg, [0])
    gen = rng.generator("cpu", 0, "mask")
    short = sample(cfg.task, gen, 1, 7, "cpu")
    padded = sample(cfg.task, rng.generator("cpu", 0, "mask"), 1, 7, "cpu")
    padded = dataclasses.replace(  # the same 7 items followed by 5 masked ones
        padded, priority=F.pad(short.priority, (0, 5)), label=F.pad(short.label, (0, 5)),
        mask=torch.arange(12).unsqueeze(0) < 7)
    torch.testing.assert_close(forward(cfg, p, short), forward(cfg, p, padded))


def test_the_papers_model_keeps_its_weights_and_its_settings_name_the_extensions():
    paper = ModelConfig(task=TaskConfig("argmax"))
    later = {"query_table", "attention", "norm_layers"}  # model.LATER_DEFAULTS: left out at their defaults, so no stored entry moves
    assert settings(paper) == {k: v for k, v in dataclasses.asdict(paper).items() if k not in later}
    assert (settings(paper)["heads"], settings(ModelConfig(heads=4))["heads"]) == (1, 4)
    deeper = init_params(dataclasses.replace(paper, layers=2), [0])
    for name, w in init_params(paper, [0]).items():  # extra layers are drawn after the paper's weights
        assert torch.equal(deeper[name], w), name


@pytest.mark.parametrize("n", [16, 1024])
def test_rescaled_output_has_the_items_variance_at_every_length(n):
    """The exact case of chapter 10's proposition: weights independent of i.i.d. items."""
    gen = torch.Generator().manual_seed(n)
    rows, width, sigma = 4000, 8, 1.5
    weights = torch.softmax(3 * torch.randn(rows, n, generator=gen), dim=-1)
    items = 2.0 + sigma * torch.randn(rows, n, width, generator=gen)  # a non-zero mean cancels too
    out = centred_mix(weights.unsqueeze(1), items).squeeze(1)  # one head
    var = out.var(dim=0)  # per component, over sequences
    se = sigma**2 * math.sqrt(2 / rows)  # normal theory
    assert (var - sigma**2).abs().max() < 4.5 * se
    assert out.mean(dim=0).abs().max() < 4.5 * sigma / math.sqrt(rows)
    plain = (weights.unsqueeze(1) @ items).squeeze(1)  # for contrast: sigma^2 E||A||^2, shrinking with n
    expected = sigma**2 * weights.square().sum(-1).mean()
    assert abs(plain.var(dim=0).mean() / expected - 1) < 0.1


def test_monte_carlo_rescaled_module_is_flat_and_drifts_as_theory_says():
    tables = mc.Tables(mc.RandomAttention(d_model=16, vocab_size=16, output="rescale"))
    curve = mc.std_curve(tables, mc.Setting(), [64, 256, 1024, 4096], 2048, components=(0, 1, 2, 3),
                         progress=False)
    for fit in mc.slope_of(curve).values():
        assert abs(fit["slope"]) < 0.05  # the plain module: -0.5 (test_montecarlo)
    limits = mc.rescaled_limits(tables)
    m = mc.output_moments(tables, mc.Setting(), 4096, 8192)
    se_mean = torch.tensor(m.variance() / m.n).sqrt()
    assert torch.all((torch.tensor(m.mean()) - math.sqrt(4096) * limits["drift"]).abs() < 5 * se_mean + 0.02 * 64)
    assert torch.all((torch.tensor(m.variance()) - limits["variance"]).abs() < 5 * torch.tensor(m.variance_se()) + 0.02)


@pytest.mark.parametrize("kw, match", [
    ({"heads": 3}, "heads must divide hidden"),
    ({"logit_scale": "sqrt"}, "logit_scale must be one of none, log_n"),
    ({"layers": 0}, "layers must be an int >= 1"),
    ({"norm": "rms"}, "rescale"),
    ({"norm_layers": "first"}, "norm_layers must be one of all, last"),
    ({"norm_layers": "last", "norm": "layernorm"}, "needs several layers"),
    ({"norm_layers": "last", "layers": 2, "norm": "rescale"}, "got layers=2, norm='rescale'"),
])
def test_bad_extension_options_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        ModelConfig(**kw)


def test_bad_monte_carlo_output_is_named():
    with pytest.raises(ValueError, match=r"output must be one of \('plain', 'rescale'\)"):
        mc.RandomAttention(output="unit")


def one_head_as_before(cfg, p, batch, temperature="fixed"):
    """The one-head model as the engine computed it before a layer's heads shared their products (commit
    bb3af3a): the head's logits h . u as a product with one column, its weights (S, B, N), its mix
    A . h with one row.  Every committed paper-scale run has one head, so this is the rounding they hold."""
    from vvlib.attention import EPS, attention_weights, log_length
    from vvlib.model import features, linear, mlp, normalize

    x, y = features(cfg, p, batch)
    h, z = mlp(p, "enc", cfg.encoder_layers, x), mlp(p, "enc", cfg.encoder_layers, y)
    q = linear(z, p["wq"], p.get("bq"))
    u = linear(q, p["wk"].transpose(1, 2)) / math.sqrt(cfg.hidden)
    logits = (h @ u.unsqueeze(-1)).squeeze(-1)
    if cfg.attention == "torch":
        logits = logits + (q * p["bk"].unsqueeze(1)).sum(-1, keepdim=True) / math.sqrt(cfg.hidden)
    if cfg.logit_scale == "log_n":
        logits = logits * p["ssmax.s"][:, 0].view(-1, 1, 1) * log_length(logits, batch.mask)
    attn = attention_weights(logits, temperature, batch.mask)
    if cfg.norm == "rescale":
        valid = batch.mask.to(attn.dtype)
        centred = attn - valid / valid.sum(dim=-1, keepdim=True)
        mixed = (centred.unsqueeze(-2) @ h).squeeze(-2) / (centred.norm(dim=-1, keepdim=True) + EPS)
    else:
        mixed = (attn.unsqueeze(-2) @ h).squeeze(-2)
    o = linear(mixed, p["wv"], p.get("bv"))
    if cfg.attention == "torch":
        o = linear(o, p["wo"], p["bo"])
    return mlp(p, "out", cfg.readout_layers, normalize(cfg, p, "", o))


def masked_batch(cfg, seeds: int, rows: int, n: int):
    """Each seed's batch of sequences of 5 to n items (the rest masked), stacked."""
    batches = []
    for s in range(seeds):
        gen = rng.generator("cpu", 0, "heads", s)
        batches.append(sample(cfg.task, gen, rows, n, "cpu", torch.randint(5, n + 1, (rows,), generator=gen)))
    return stack(batches)


@pytest.mark.parametrize("task", ["argmax", "dictionary"])
@pytest.mark.parametrize("options", [{}, {"norm": "layernorm"}, {"norm": "standardize"}, {"norm": "rescale"},
                                     {"logit_scale": "log_n"}, {"attention": "torch"}])
def test_one_head_computes_what_it_did_before_the_heads_shared_their_products(task, options, device, one_thread):
    """The same bits, forward (both temperatures) and every weight's gradient: the committed one-head runs
    (chapters 4, 5, 8, 11 at the paper's scale, trained on GPUs) stay what the code computes (the GPU check
    runs this file on CUDA)."""
    cfg = ModelConfig(task=TaskConfig(task), hidden=32, **options)
    p = {name: w.requires_grad_() for name, w in init_params(cfg, [0, 1, 2], device=device).items()}
    batch = map_fields(masked_batch(cfg, 3, 8, 24), lambda t: t.to(device))
    for temperature in ("fixed", "adaptive"):
        assert torch.equal(forward(cfg, p, batch, temperature), one_head_as_before(cfg, p, batch, temperature))
    ours = torch.autograd.grad(forward(cfg, p, batch).square().sum(), list(p.values()))
    before = torch.autograd.grad(one_head_as_before(cfg, p, batch).square().sum(), list(p.values()))
    for name, mine, theirs in zip(p, ours, before):
        assert torch.equal(mine, theirs), name


def test_a_norm_after_the_last_layer_only_drops_the_earlier_layers_norms_and_nothing_else():
    """Chapter 11's norm_layers="last" row of the deep model: the same weights as +LN's on every layer but the first
    layers' norms, which it has none of (they draw no random numbers); its Baseline is the row's ordinary Baseline
    (the same store entry: a model without a norm has none to move)."""
    from vvlib.experiments.setups import variants
    from vvlib.experiments.setups.params import Params

    every = ModelConfig(task=TaskConfig("argmax"), hidden=16, heads=2, layers=3, norm="layernorm")
    last = dataclasses.replace(every, norm_layers="last")
    p_every, p_last = init_params(every, [0, 1]), init_params(last, [0, 1])
    assert set(p_every) - set(p_last) == {"ln.gamma", "ln.beta", "l1.ln.gamma", "l1.ln.beta"}
    assert set(p_last) <= set(p_every) and all(torch.equal(p_last[k], p_every[k]) for k in p_last)
    assert settings(last)["norm_layers"] == "last" and "norm_layers" not in settings(every)
    P = Params({"hidden": 16, "heads": 2, "layers": 3, "norm_layers": "last"})
    task = TaskConfig("argmax")
    assert variants.model_config(P, task, "baseline") == ModelConfig(task=task, hidden=16, heads=2, layers=3)
    assert variants.model_config(P, task, "layernorm") == dataclasses.replace(last, task=task)
