"""Step ladders: a run evaluated at steps along its training, and runs joined along seeds."""

import json

import numpy as np
import pytest
import torch

from vvlib import evaluate
from vvlib.experiments.storage import runs
from vvlib.train import TrainConfig, train

EVAL = evaluate.EvalConfig(lengths=(8, 32), n_sequences=40, seed=7)


def cfg(**kw):
    return TrainConfig(**{**dict(n_seeds=2, steps=12, batch_size=16, checkpoint_every=4, checkpoint_gap_s=0), **kw})


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


def long_params(tmp_path, **kw):
    from vvlib.experiments.setups.params import Params

    base = dict(n_seeds=1, steps=1, batch_size=16, lr=1e-3, weight_decay=1e-3, min_len=5, max_len=16,
                seed=0, checkpoint_every=4, hidden=16, n_classes=5, eval_lengths=[8, 32], n_eval_sequences=40,
                eval_seed=7, store_dir=str(tmp_path), long_steps=10, long_seeds=4, long_seed_chunk=2,
                long_seed_group=1, ladder_steps=[5, 10], ladder_lengths=[8])
    return Params({**base, **kw})


def test_seed_chunks_join_into_the_run_of_all_seeds(tmp_path, one_thread):
    """Seeds 0-3 as two stored runs of two give what one run of all four gives."""
    from vvlib.experiments.setups import variants

    task = variants.task_config(long_params(tmp_path), "argmax")
    chunks = long_params(tmp_path / "chunks")
    assert [(c.first_seed, c.n_seeds) for c in variants.long_train_configs(chunks)] == [(0, 2), (2, 2)]
    assert [(c.first_seed, c.n_seeds) for c in variants.long_train_configs(long_params(tmp_path, long_seeds=5))] \
        == [(0, 2), (2, 2), (4, 1)]
    acc, ladders, runs_ = variants.long_training(chunks, task, ["baseline"], ["fixed", "adaptive"])
    whole = long_params(tmp_path / "whole", long_seed_chunk=4)
    acc_whole, ladders_whole, _ = variants.long_training(whole, task, ["baseline"], ["fixed", "adaptive"])
    assert len(runs_["baseline"]) == 2 and acc["adaptive_baseline"].shape == (4, 2)
    assert all(np.array_equal(acc[k], acc_whole[k]) for k in acc)
    assert all(np.array_equal(ladders["baseline"][s], ladders_whole["baseline"][s]) for s in (5, 10))
    # the last rung is the final model: the same numbers as its evaluation at those lengths
    assert np.array_equal(ladders["baseline"][10][:, 0], acc["baseline"][:, 0])


def test_the_longer_training_is_scored_on_long_eval_sequences(tmp_path, one_thread):
    """long_eval_sequences (chapter 9's book profile) scores the longer runs on a test set of their own size:
    what an independent evaluation of the stored run on that many sequences gives; 0 keeps n_eval_sequences."""
    from vvlib.experiments.setups import variants

    def scored(n_sequences):
        return run.evaluated(evaluate.EvalConfig(lengths=(8, 32), n_sequences=n_sequences, seed=7))

    P = long_params(tmp_path, long_seeds=2, ladder_steps=[], long_eval_sequences=96)
    task = variants.task_config(P, "argmax")
    run = runs.TrainedRun(P.store_dir, variants.model_config(P, task, "baseline"), variants.long_train_configs(P)[0],
                          "cpu", progress=False)
    acc, _, _ = variants.long_training(P, task, ["baseline"])
    assert [json.loads(f.read_text())["spec"]["eval"]["n_sequences"] for f in tmp_path.glob("*/eval-*.json")] == [96]
    assert not np.array_equal(scored(96), scored(40))  # the two test sets tell apart
    assert np.array_equal(acc["baseline"], scored(96))
    unset, _, _ = variants.long_training(long_params(tmp_path, long_seeds=2, ladder_steps=[], long_eval_sequences=0),
                                         task, ["baseline"])
    assert np.array_equal(unset["baseline"], scored(40))  # n_eval_sequences


def test_a_negative_long_eval_sequences_is_refused_naming_it():
    from vvlib.book.runner import checked_parameters
    from vvlib.experiments.setups.params import ParameterError

    with pytest.raises(ParameterError, match=r"long_eval_sequences.*an int >= 0 \(0: n_eval_sequences\)"):
        checked_parameters("09_longer_training", "ci", {"long_eval_sequences": {"dictionary": -64}})


def test_paired_difference_matches_a_worked_example():
    from vvlib.stats import paired_difference

    # differences 1, 2, 3: mean 2, sd 1, s.e. 1/sqrt(3); t(0.975, 2 d.f.) = 4.3027 from tables
    d = paired_difference([0.0, 0.0, 0.0], [1.0, 2.0, 3.0])
    half = 4.302653 / np.sqrt(3)
    assert d["diff"] == pytest.approx(2) and d["low"] == pytest.approx(2 - half, abs=1e-5)
    assert d["high"] == pytest.approx(2 + half, abs=1e-5) and d["p"] == pytest.approx(0.0741799, abs=1e-6)
    assert np.isnan(paired_difference([1.0], [2.0])["low"])


def test_overtaking_names_the_first_rung_from_which_the_lead_holds():
    import pandas as pd

    from vvlib.experiments.reports.report import overtaking

    rows = [(100, 64, -2, 0.01), (200, 64, 1, 0.01), (300, 64, -1, 0.5), (400, 64, 2, 0.01), (500, 64, 3, 0.001),
            (100, 256, -1, 0.01), (500, 256, -2, 0.01), (100, 8, 5, 0.001)]
    frame = pd.DataFrame(rows, columns=["step", "N", "diff", "p"])
    text = overtaking(frame, ("a", "b"), {"a": "A", "b": "B"}, in_distribution=16)
    assert "At N = 2⁶ it is ahead from step 400 on, and significantly behind at 1 of 5 rungs." in text
    assert "At N = 2⁸ it is not significantly ahead at the last rung (step 500), and significantly behind at 2 of 2" in text
    assert "N = 2³" not in text  # inside the training lengths
    assert text.startswith("**Does B overtake A?** Yes, for good, at N = 2⁶ from step 400.")
    no = overtaking(frame[frame["N"] != 64], ("a", "b"), {"a": "A", "b": "B"}, in_distribution=16)
    assert no.startswith("**Does B overtake A?** Not within the 500 steps of the ladder")
    # ahead at the last rung alone: said as such, not as a lead that lasts
    late = frame[frame["N"] != 64].copy()
    late.loc[(late["N"] == 256) & (late["step"] == 500), "diff"] = 2
    text = overtaking(late, ("a", "b"), {"a": "A", "b": "B"}, in_distribution=16)
    assert text.startswith("**Does B overtake A?** Only at the last rung (step 500), at N = 2⁸: whether that "
                           "lead lasts, these rungs cannot tell.")
    both = pd.concat([frame[frame["N"] == 64], late])
    assert overtaking(both, ("a", "b"), {"a": "A", "b": "B"}, 16).startswith(
        "**Does B overtake A?** Yes, for good, at N = 2⁶ from step 400. Ahead at the last rung (step 500) only, at N = 2⁸:")


@pytest.mark.parametrize("draws", ["counter", "generators"])
def test_a_chapters_seeds_in_chunks_give_what_one_run_gives(tmp_path, one_thread, draws):
    """seed_chunk (chapter 9 at the paper's scale) cuts the main runs by seeds: the chunks' joined
    accuracies and loss history are those of one run of all the seeds, seed by seed."""
    from vvlib.experiments.setups import variants

    one = long_params(tmp_path / "one", n_seeds=5, steps=6, draws=draws, seed_group=0)
    chunked = long_params(tmp_path / "chunked", n_seeds=5, steps=6, draws=draws, seed_group=0, seed_chunk=2)
    assert [(c.first_seed, c.n_seeds) for c in variants.train_configs(chunked)] == [(0, 2), (2, 2), (4, 1)]
    assert variants.train_configs(one) == [variants.train_config(one)]
    assert variants.train_configs(long_params(tmp_path, n_seeds=5, seed_chunk=5)) == [
        variants.train_config(long_params(tmp_path, n_seeds=5))]
    # deep_seed_chunk (chapter 10's deep variants at the paper's scale) cuts those variants' runs alone
    deep = long_params(tmp_path, n_seeds=5, deep_seed_chunk=3)
    assert [(c.first_seed, c.n_seeds) for c in variants.train_configs(deep, "deep_baseline")] == [(0, 3), (3, 2)]
    assert variants.train_configs(deep, "baseline") == variants.train_configs(deep) == [variants.train_config(deep)]
    unset = long_params(tmp_path, n_seeds=5, seed_chunk=2, deep_seed_chunk=0)  # 0: as seed_chunk
    assert len(variants.train_configs(unset, "deep_layernorm")) == 3
    task = variants.task_config(one, "argmax")
    acc_one, training_one = variants.train_and_evaluate(one, task, ["baseline"], ["fixed", "adaptive"])
    acc, training = variants.train_and_evaluate(chunked, task, ["baseline"], ["fixed", "adaptive"])
    assert acc["baseline"].shape == (5, 2) and all(np.array_equal(acc[k], acc_one[k]) for k in acc_one)
    joined, whole = training["baseline"], training_one["baseline"]
    assert [len(p["loss_history"][0][1]) for p in joined["parts"]] == [2, 2, 1]
    assert joined["loss_history"] == whole["loss_history"]
    assert joined["provenance"]["wall_time_s"] == pytest.approx(sum(p["provenance"]["wall_time_s"]
                                                                    for p in joined["parts"]))
    assert "parts" not in whole and whole["spec"]["train"]["n_seeds"] == 5
