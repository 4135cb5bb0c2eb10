"""Step ladders: a run evaluated at steps along its training, and runs joined along seeds."""

import numpy as np
import pytest
import torch

from vvlib import evaluate, runs
from vvlib.train import TrainConfig, train

EVAL = evaluate.EvalConfig(lengths=(8, 32), n_sequences=40, seed=7)


def cfg(**kw):
    return TrainConfig(**{**dict(n_seeds=2, steps=12, batch_size=16, checkpoint_every=4), **kw})


def test_a_ladder_matches_separate_trainings_and_leaves_the_final_weights_alone(small_argmax, tmp_path):
    rungs = runs.ladder(tmp_path, small_argmax, cfg(), EVAL, [5, 12], "cpu", progress=False)
    assert sorted(rungs) == [5, 12] and rungs[5].shape == (2, 2)
    for step in (5, 12):  # each rung equals an independent run stopped at that step
        weights, _ = train(small_argmax, cfg(steps=step), progress=False)
        expected = evaluate.accuracy(small_argmax, weights, EVAL, progress=False).numpy()
        assert np.array_equal(rungs[step], expected), step
    plain, _ = train(small_argmax, cfg(), progress=False)
    stored = runs.TrainedRun(tmp_path, small_argmax, cfg(), "cpu", progress=False).weights
    assert all(torch.equal(plain[k], stored[k]) for k in plain)
    assert not list(tmp_path.glob("*/*.partial.json")) and not list(tmp_path.glob("*/checkpoint.pt"))


def test_an_interrupted_ladder_resumes_to_the_same_numbers(small_argmax, tmp_path, monkeypatch):
    whole = runs.ladder(tmp_path / "a", small_argmax, cfg(), EVAL, [3, 6, 12], "cpu", progress=False)
    real_accuracy, calls = evaluate.accuracy, []

    def fail_at_second_rung(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_accuracy(*args, **kwargs)

    monkeypatch.setattr(evaluate, "accuracy", fail_at_second_rung)
    with pytest.raises(KeyboardInterrupt):
        runs.ladder(tmp_path / "b", small_argmax, cfg(), EVAL, [3, 6, 12], "cpu", progress=False)
    assert list(tmp_path.glob("b/*/*.partial.json")) and list(tmp_path.glob("b/*/checkpoint.pt"))
    monkeypatch.setattr(evaluate, "accuracy", real_accuracy)
    resumed = runs.ladder(tmp_path / "b", small_argmax, cfg(), EVAL, [3, 6, 12], "cpu", progress=False)
    assert all(np.array_equal(whole[s], resumed[s]) for s in whole)


def test_a_ladder_is_stored_and_its_rungs_are_checked(small_argmax, tmp_path, monkeypatch):
    first = runs.ladder(tmp_path, small_argmax, cfg(), EVAL, [12], "cpu", progress=False)
    monkeypatch.setattr(runs.train, "Trainer", None)  # a stored ladder trains nothing
    assert np.array_equal(runs.ladder(tmp_path, small_argmax, cfg(), EVAL, [12], "cpu")[12], first[12])
    for bad in ([], [0], [13], [2.5]):
        with pytest.raises(ValueError, match="rungs must be ints in 1..12"):
            runs.ladder(tmp_path, small_argmax, cfg(), EVAL, bad, "cpu")
