"""Chapters 2 and 3 keep their tables in the results store: computed once per set of parameters, read back
equal, and a stored-only build refuses to compute one."""

import pandas as pd
import pytest
import torch

from vvlib import pretrained
from vvlib.experiments.setups import computed
from vvlib.book.chapters.c03_pretrained_transformer import pretrained_probe
from vvlib.experiments.setups.params import Params
from vvlib.experiments.storage import runs, store
from vvlib.model_files import ModelInfo


def chapter2(tmp_path, **changes):
    return Params({"profile": "ci", "n_sequences": 100, "seed": 0, "lengths": [16, 64], "device": "cpu",
                   "store_dir": str(tmp_path / "store"), "output_dir": str(tmp_path / "out"), **changes})


def counted(frame):
    """A compute() that counts its calls."""
    calls = []

    def compute():
        calls.append(1)
        return frame
    return compute, calls


def test_a_computed_table_is_read_back_equal_and_not_computed_again(tmp_path):
    frame = pd.DataFrame({"N": [16, 64], "std": [0.1234567890123456, 1 / 3], "setting": ["a b (+1.0)", "c"]})
    compute, calls = counted(frame)
    first = computed.table("02_monte_carlo", "iid", chapter2(tmp_path), compute, "cpu")
    with runs.stored_only():
        again = computed.table("02_monte_carlo", "iid", chapter2(tmp_path), compute, "cpu")
    assert len(calls) == 1
    pd.testing.assert_frame_equal(first, frame)
    pd.testing.assert_frame_equal(again, frame)  # floats to the last bit: CSV keeps repr's digits


def test_where_results_go_does_not_name_a_table_and_what_is_computed_does(tmp_path):
    P = chapter2(tmp_path)
    moved = chapter2(tmp_path, output_dir="elsewhere", profile="book", device="auto")
    assert computed.spec("02_monte_carlo", "iid", P, "cpu") == computed.spec("02_monte_carlo", "iid", moved, "cpu")
    for changed in (chapter2(tmp_path, n_sequences=101), chapter2(tmp_path, lengths=[16])):
        assert computed.spec("02_monte_carlo", "iid", P, "cpu") != computed.spec("02_monte_carlo", "iid", changed, "cpu")
    assert computed.spec("02_monte_carlo", "iid", P, "cpu") != computed.spec("02_monte_carlo", "exact", P, "cpu")
    assert computed.spec("02_monte_carlo", "iid", P, "cpu") != computed.spec("02_monte_carlo", "iid", P, "meta")


def test_a_stored_only_build_refuses_a_table_made_with_other_parameters(tmp_path):
    compute, calls = counted(pd.DataFrame({"N": [16], "std": [1.0]}))
    computed.table("02_monte_carlo", "iid", chapter2(tmp_path), compute, "cpu")
    with runs.stored_only(), pytest.raises(store.StoreError, match="VVLIB_STORED_ONLY is set"):
        computed.table("02_monte_carlo", "iid", chapter2(tmp_path, n_sequences=50), compute, "cpu")
    assert len(calls) == 1


INFO = ModelInfo(path=None, model_type="bert", n_layers=2, n_heads=2, hidden=4, max_positions=64, name="tiny")


def chapter3(tmp_path):
    return Params({"layer": 0, "components": [0, 3], "lengths": [4, 8], "n_sequences": 3, "depth_lengths": [4],
                   "depth_sequences": 2, "seed": 0, "store_dir": str(tmp_path / "store")})


def test_a_models_measurements_are_stored_as_the_tables_chapter_3_shows(tmp_path, monkeypatch):
    """The raw outputs are measured once; the chapter reads the same per-feature and per-head spreads, layer
    slopes and facts from the store without the model."""
    gen = torch.Generator().manual_seed(0)
    outputs = {"random_pe": {n: torch.randn(3, 4, generator=gen, dtype=torch.float64) for n in (4, 8)}}
    layers = pd.DataFrame({"strategy": ["random_pe"] * 2, "layer": [0, 1], "slope": [-0.5, -0.25]})
    calls = []

    def probe(info, layer, lengths, n_sequences, depth_lengths, depth_sequences, seed, device):
        calls.append((info.name, layer, lengths, n_sequences, depth_lengths, depth_sequences, seed))
        return pretrained.Probe(info, 1234, "encoder.layer.0.attention", outputs, "zero position embeddings", layers)

    monkeypatch.setattr(pretrained, "probe", probe)
    first = pretrained_probe.measured(chapter3(tmp_path), INFO, "cpu")
    with runs.stored_only():
        again = pretrained_probe.measured(chapter3(tmp_path), INFO, "cpu")
    assert calls == [("tiny", 0, [4, 8], 3, [4], 2, 0)]
    for shown in (first, again):
        assert (shown.info, shown.n_parameters, shown.attention_name, shown.positions_removed) == (
            INFO, 1234, "encoder.layer.0.attention", "zero position embeddings")
        pd.testing.assert_frame_equal(shown.std, pretrained.std_frame(outputs, [0, 3]))
        pd.testing.assert_frame_equal(shown.heads, pretrained.head_frame(outputs, 2))
        pd.testing.assert_frame_equal(shown.layer_slopes, layers)
    # feature 3's spread is its own column's, across the 3 sequences
    at_8 = again.std.query("N == 8 and component == 3")["std"].item()
    assert at_8 == pytest.approx(float(outputs["random_pe"][8][:, 3].std()))


def test_another_model_or_setting_is_measured_again(tmp_path):
    P = chapter3(tmp_path)
    spec = pretrained_probe.spec(P, INFO, "cpu")
    assert spec != pretrained_probe.spec(P, ModelInfo(**{**INFO.__dict__, "weights": "Q4_K"}), "cpu")
    assert spec != pretrained_probe.spec(Params({**P, "n_sequences": 4}), INFO, "cpu")
    assert spec == pretrained_probe.spec(Params({**P, "store_dir": "elsewhere"}), INFO, "cpu")
