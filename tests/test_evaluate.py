import dataclasses

import pytest
import torch

from vvlib.evaluate import EvalConfig, accuracy
from vvlib.model import init_params


def test_chunking_changes_cost_not_answer(small_dictionary, device):
    params = init_params(small_dictionary, [0, 1, 2], device=device)
    cfg = EvalConfig(lengths=(3, 40, 200), n_sequences=70)  # 70 crosses an EVAL_BLOCK boundary
    whole = accuracy(small_dictionary, params, cfg, device, max_items=10**9, progress=False)
    tiny = accuracy(small_dictionary, params, cfg, device, max_items=7, progress=False)
    assert whole.shape == (3, 3)
    assert torch.equal(whole, tiny)


def test_every_seed_sees_the_same_test_sequences(small_argmax, device):
    """Two copies of one seed's weights must score identically."""
    params = init_params(small_argmax, [4], device=device)
    twice = {k: torch.cat([v, v]) for k, v in params.items()}
    acc = accuracy(small_argmax, twice, EvalConfig(lengths=(8, 64), n_sequences=100), device, progress=False)
    assert torch.equal(acc[0], acc[1])


def test_bad_evaluation_settings_are_named(small_dictionary):
    with pytest.raises(ValueError, match="lengths"):
        EvalConfig(lengths=(16, 0))
    with pytest.raises(ValueError, match="temperature"):
        EvalConfig(temperature="hot")
    with pytest.raises(ValueError, match="lengths must be <= 256"):
        accuracy(small_dictionary, init_params(small_dictionary, [0]), EvalConfig(lengths=(512,)), progress=False)


def test_block_counts_add_up_to_the_accuracy(small_dictionary, device):
    """70 sequences: a block of 64 and a short one of 6; each count is at most its block's size."""
    from vvlib.evaluate import block_correct

    params = init_params(small_dictionary, [0, 1], device=device)
    cfg = EvalConfig(lengths=(3, 40), n_sequences=70)
    counts = block_correct(small_dictionary, params, cfg, device, progress=False)
    assert counts.shape == (2, 2, 2) and (counts[..., 0] <= 64).all() and (counts[..., 1] <= 6).all()
    assert torch.equal(counts.sum(-1).double() / 70, accuracy(small_dictionary, params, cfg, device, progress=False))


@pytest.mark.parametrize("task", ["argmax", "dictionary"])
def test_counter_test_sequences_are_fixed_by_their_coordinates(task, small_argmax, small_dictionary):
    """Counter-drawn test blocks repeat exactly, differ from the generator-drawn ones, and differ
    from block to block; the generator draws stay unsaid in the stored settings."""
    from vvlib.evaluate import settings, test_block

    model = small_argmax if task == "argmax" else small_dictionary
    cfg = EvalConfig(lengths=(16,), n_sequences=128, draws="counter")
    first, again, other = (test_block(model, cfg, 16, b, "cpu") for b in (0, 0, 1))
    assert torch.equal(first.label, again.label) and not torch.equal(first.label, other.label)
    assert first.label.shape == (64, 16)
    assert not torch.equal(first.label, test_block(model, EvalConfig(lengths=(16,)), 16, 0, "cpu").label)
    assert "draws" not in settings(EvalConfig()) and settings(cfg)["draws"] == "counter"
    # generator-drawn sets with a short last block drew it otherwise before 2026-11-29: their entries say so
    short = EvalConfig(lengths=(16,), n_sequences=100)
    assert "short_block" in settings(short) and "short_block" not in settings(EvalConfig(n_sequences=128))
    assert "short_block" not in settings(dataclasses.replace(short, draws="counter"))


@pytest.mark.parametrize("draws", ["generators", "counter"])
@pytest.mark.parametrize("task", ["argmax", "dictionary"])
def test_a_larger_test_set_begins_with_a_smaller_ones_sequences_whatever_their_sizes(task, draws, small_argmax,
                                                                                   small_dictionary):
    """A short last block (100 sequences: 64 + 36) is the first rows of that block in a larger set (128)."""
    from vvlib.evaluate import test_block

    model = small_argmax if task == "argmax" else small_dictionary
    small = EvalConfig(lengths=(32,), n_sequences=100, seed=5, draws=draws)
    short, whole = (test_block(model, cfg, 32, 1, "cpu") for cfg in (small, dataclasses.replace(small, n_sequences=128)))
    assert short.label.shape[0] == 36 and whole.label.shape[0] == 64
    for name, value in vars(short).items():
        if torch.is_tensor(value):
            assert torch.equal(value, getattr(whole, name)[:36]), name
