import math

import pytest
import torch
import torch.nn.functional as F

from vvlib import rng
from vvlib.model import ModelConfig, forward, init_params
from vvlib.tasks import TaskConfig, sample


def reference_forward(cfg, p, batch, s):
    """One seed, one sequence at a time, K and V materialised: the textbook computation."""
    outs, attns, os_ = [], [], []
    for b in range(batch.target.shape[0]):
        if cfg.task.name == "argmax":
            x = torch.cat([batch.priority[b, :, None], F.one_hot(batch.label[b], cfg.task.n_classes).float()], 1)
            y = p["query_token"][s][None]
        else:
            x = torch.cat([p["emb_key"][s][batch.key[b]], p["emb_value"][s][batch.label[b]]], 1)
            y = torch.cat([p["emb_key"][s][batch.query[b]], torch.zeros(cfg.value_dim)])[None]

        def encode(z):
            z = torch.relu(z @ p["enc0.w"][s] + p["enc0.b"][s])
            return z @ p["enc1.w"][s] + p["enc1.b"][s]

        H, q = encode(x), (encode(y) if cfg.encode_query else y) @ p["wq"][s]
        K, V = H @ p["wk"][s], H @ p["wv"][s]
        A = torch.softmax((q @ K.T) / math.sqrt(cfg.hidden), dim=-1)
        O = A @ V
        if cfg.norm == "layernorm":
            mu, sd = O.mean(-1, keepdim=True), O.std(-1, unbiased=False, keepdim=True)
            O = p["ln.gamma"][s] * (O - mu) / (sd + 1e-5) + p["ln.beta"][s]
        out = torch.relu(O @ p["out0.w"][s] + p["out0.b"][s]) @ p["out1.w"][s] + p["out1.b"][s]
        outs.append(out[0]), attns.append(A[0]), os_.append(O[0])
    return torch.stack(outs), torch.stack(attns)


@pytest.mark.parametrize("task", ["argmax", "dictionary"])
@pytest.mark.parametrize("norm, encode_query", [("none", True), ("layernorm", True), ("none", False)])
def test_batched_ensemble_matches_textbook_attention(task, norm, encode_query):
    cfg = ModelConfig(task=TaskConfig(task, n_keys=128, n_values=6, n_classes=6), hidden=12, key_dim=4,
                      value_dim=4, norm=norm, encode_query=encode_query)
    params = init_params(cfg, [0, 1, 2], init_seed=3)
    if norm == "layernorm":  # make the learned scale and shift matter
        params["ln.gamma"] = torch.randn_like(params["ln.gamma"])
        params["ln.beta"] = torch.randn_like(params["ln.beta"])
    batch = sample(cfg.task, rng.generator("cpu", 1), 5, 11, "cpu")
    out, probe = forward(cfg, params, batch, probe=True)
    assert out.shape == (3, 5, cfg.task.n_outputs)
    assert probe["attention"].shape == (3, 5, 11) and probe["output"].shape == (3, 5, 12)
    for s in range(3):
        ref_out, ref_attn = reference_forward(cfg, params, batch, s)
        assert torch.allclose(out[s], ref_out, atol=1e-5)
        assert torch.allclose(probe["attention"][s], ref_attn, atol=1e-6)


def test_probe_normalized_output_is_standardized(small_argmax):
    cfg = ModelConfig(task=small_argmax.task, hidden=16, norm="standardize")
    params = init_params(cfg, [0, 1])
    batch = sample(cfg.task, rng.generator("cpu", 2), 8, 30, "cpu")
    _, probe = forward(cfg, params, batch, probe=True)
    z = probe["normalized"]
    assert torch.allclose(z.mean(-1), torch.zeros(2, 8), atol=1e-5)
    assert torch.allclose(z.var(-1, unbiased=False), torch.ones(2, 8), atol=1e-3)


def test_seed_weights_do_not_depend_on_the_ensemble(small_argmax):
    alone = init_params(small_argmax, [2])
    together = init_params(small_argmax, [0, 1, 2])
    assert all(torch.equal(alone[k][0], together[k][2]) for k in alone)
    assert not torch.equal(together["wq"][0], together["wq"][1])


def test_an_unencoded_query_meets_W_Q_as_it_is(small_argmax):
    """encode_query=False: the first layer's W_Q takes the query's input features (11 for argmax
    with 10 classes), with nn.Linear's bound for that fan-in; the items' encoder is unchanged."""
    cfg = ModelConfig(task=small_argmax.task, hidden=16, encode_query=False)
    direct, encoded = init_params(cfg, [0, 1]), init_params(small_argmax, [0, 1])
    assert direct["wq"].shape == (2, cfg.in_features, 16) and encoded["wq"].shape == (2, 16, 16)
    assert direct["wq"].abs().max() <= 1 / math.sqrt(cfg.in_features)
    assert all(torch.equal(direct[k], encoded[k]) for k in encoded if k.startswith(("query_token", "enc")))
    with pytest.raises(ValueError, match="encode_query must be True or False"):
        ModelConfig(encode_query="no")


def test_layernorm_variant_shares_the_baselines_weights(small_argmax):
    base = init_params(small_argmax, [0, 1])
    ln = init_params(ModelConfig(task=small_argmax.task, hidden=16, norm="layernorm"), [0, 1])
    assert all(torch.equal(base[k], ln[k]) for k in base)


def _dictionary_model(**options):
    return ModelConfig(task=TaskConfig("dictionary", n_keys=50, n_values=8), hidden=16, key_dim=4, value_dim=4, **options)


def test_the_query_is_looked_up_in_its_own_table_and_the_items_in_the_keys():
    from vvlib import tasks
    from vvlib.task_base import Batch

    cfg = _dictionary_model(query_table=True)
    params = init_params(cfg, [0, 1])
    batch = Batch(key=torch.tensor([[3, 7, 9]]), label=torch.tensor([[0, 5, 2]]), query=torch.tensor([7]),
                  target=torch.tensor([5]), mask=None)
    x, y = tasks.get("dictionary").features(cfg, params, batch, 2)
    for s in range(2):
        assert torch.equal(y[s, 0, :4], params["emb_query"][s, 7]) and not y[s, 0, 4:].any()
        assert torch.equal(x[s, 0, 1, :4], params["emb_key"][s, 7]) and torch.equal(x[s, 0, 1, 4:], params["emb_value"][s, 5])


def test_a_query_table_is_refused_where_the_task_has_none():
    with pytest.raises(ValueError, match="query_table: the argmax task has no query embedding.*dictionary"):
        ModelConfig(task=TaskConfig("argmax"), query_table=True)
    with pytest.raises(ValueError, match="query_table must be True or False"):
        _dictionary_model(query_table=1)


def test_the_torch_attention_block_computes_what_torch_multiheadattention_computes():
    """attention='torch' against torch.nn.MultiheadAttention itself, given the same weights (random
    biases too, so that each one is checked), on a masked batch."""
    from vvlib import model
    from vvlib.task_base import Batch

    cfg = _dictionary_model(attention="torch")
    params = init_params(cfg, [0])
    D = cfg.hidden
    gen = torch.Generator().manual_seed(5)
    for name in ("bq", "bk", "bv", "bo"):
        params[name] = torch.randn(1, D, generator=gen)
    batch = Batch(key=torch.tensor([[3, 7, 9, 11], [1, 2, 4, 8]]), label=torch.tensor([[0, 5, 2, 1], [3, 3, 6, 7]]),
                  query=torch.tensor([7, 2]), target=torch.tensor([5, 3]),
                  mask=torch.tensor([[True, True, True, False], [True, True, True, True]]))
    one_seed = Batch(**{k: None if v is None else v.unsqueeze(0) for k, v in vars(batch).items()})
    _, probe = model.forward(cfg, params, one_seed, probe=True)
    x, y = model.features(cfg, params, one_seed)
    h, z = model.mlp(params, "enc", cfg.encoder_layers, x)[0], model.mlp(params, "enc", cfg.encoder_layers, y)[0]
    mha = torch.nn.MultiheadAttention(D, num_heads=1, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([params[n][0].T for n in ("wq", "wk", "wv")]))
        mha.in_proj_bias.copy_(torch.cat([params[n][0] for n in ("bq", "bk", "bv")]))
        mha.out_proj.weight.copy_(params["wo"][0].T)
        mha.out_proj.bias.copy_(params["bo"][0])
        expected, weights = mha(z.unsqueeze(1), h, h, key_padding_mask=~batch.mask)
    torch.testing.assert_close(probe["output"][0], expected.squeeze(1), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(probe["attention"][0], weights.squeeze(1), rtol=1e-5, atol=1e-6)


def test_the_torch_attention_block_draws_xavier_weights_and_leaves_the_rest_of_the_model_alone():
    from vvlib import model

    paper_cfg, torch_cfg = _dictionary_model(), _dictionary_model(attention="torch")
    assert "attention" not in model.settings(paper_cfg) and model.settings(torch_cfg)["attention"] == "torch"
    paper, mine = init_params(paper_cfg, [0, 1]), init_params(torch_cfg, [0, 1])
    assert set(mine) - set(paper) == {"bq", "bk", "bv", "wo", "bo"}
    assert all(torch.equal(paper[n], mine[n]) for n in paper if n not in ("wq", "wk", "wv"))
    D, bound = torch_cfg.hidden, (6 / (4 * torch_cfg.hidden)) ** 0.5  # Xavier over the joint (3D x D) in-projection
    joint = torch.cat([mine[n] for n in ("wq", "wk", "wv")], dim=-1)
    assert joint.abs().max() <= bound and joint.abs().max() > 0.9 * bound
    assert torch.allclose(joint / bound, torch.cat([paper[n] for n in ("wq", "wk", "wv")], dim=-1) * D ** 0.5)
    assert not any(mine[n].any() for n in ("bq", "bk", "bv", "bo"))
    with pytest.raises(ValueError, match="attention must be one of"):
        _dictionary_model(attention="flash")
    with pytest.raises(ValueError, match="one head on an encoded query"):
        _dictionary_model(attention="torch", heads=2)
