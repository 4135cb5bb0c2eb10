"""A chapter's seeds stored as several runs (seed_chunk, long_seed_chunk) give what one run of all of them
gives, and the longer training's test set."""

import json

import numpy as np
import pytest

from vvlib import evaluate
from vvlib.experiments.storage import runs


def long_params(tmp_path, **kw):
    from vvlib.experiments.setups.params import Params

    base = dict(n_seeds=1, steps=1, batch_size=16, lr=1e-3, weight_decay=1e-3, min_len=5, max_len=16,
                seed=0, checkpoint_every=4, hidden=16, n_classes=5, eval_lengths=[8, 32], n_eval_sequences=40,
                eval_seed=7, store_dir=str(tmp_path), long_steps=10, long_seeds=4, long_seed_chunk=2,
                long_seed_group=1)
    return Params({**base, **kw})


def test_seed_chunks_join_into_the_run_of_all_seeds(tmp_path, one_thread):
    """Seeds 0-3 as two stored runs of two give what one run of all four gives."""
    from vvlib.experiments.setups import variants

    task = variants.task_config(long_params(tmp_path), "argmax")
    chunks = long_params(tmp_path / "chunks")
    assert [(c.first_seed, c.n_seeds) for c in variants.long_train_configs(chunks)] == [(0, 2), (2, 2)]
    assert [(c.first_seed, c.n_seeds) for c in variants.long_train_configs(long_params(tmp_path, long_seeds=5))] \
        == [(0, 2), (2, 2), (4, 1)]
    acc, runs_ = variants.long_training(chunks, task, ["baseline"], ["fixed", "adaptive"])
    whole = long_params(tmp_path / "whole", long_seed_chunk=4)
    acc_whole, _ = variants.long_training(whole, task, ["baseline"], ["fixed", "adaptive"])
    assert len(runs_["baseline"]) == 2 and acc["adaptive_baseline"].shape == (4, 2)
    assert all(np.array_equal(acc[k], acc_whole[k]) for k in acc)


def test_the_longer_training_is_scored_on_long_eval_sequences(tmp_path, one_thread):
    """long_eval_sequences (chapter 9's book profile) scores the longer runs on a test set of their own size:
    what an independent evaluation of the stored run on that many sequences gives; 0 keeps n_eval_sequences."""
    from vvlib.experiments.setups import variants

    def scored(n_sequences):
        return run.evaluated(evaluate.EvalConfig(lengths=(8, 32), n_sequences=n_sequences, seed=7))

    P = long_params(tmp_path, long_seeds=2, long_eval_sequences=96)
    task = variants.task_config(P, "argmax")
    run = runs.TrainedRun(P.store_dir, variants.model_config(P, task, "baseline"), variants.long_train_configs(P)[0],
                          "cpu", progress=False)
    acc, _ = variants.long_training(P, task, ["baseline"])
    assert [json.loads(f.read_text())["spec"]["eval"]["n_sequences"] for f in tmp_path.glob("*/eval-*.json")] == [96]
    assert not np.array_equal(scored(96), scored(40))  # the two test sets tell apart
    assert np.array_equal(acc["baseline"], scored(96))
    unset, _ = variants.long_training(long_params(tmp_path, long_seeds=2, long_eval_sequences=0), task, ["baseline"])
    assert np.array_equal(unset["baseline"], scored(40))  # n_eval_sequences


def test_a_negative_long_eval_sequences_is_refused_naming_it():
    from vvlib.book.runner import checked_parameters
    from vvlib.experiments.setups.params import ParameterError

    with pytest.raises(ParameterError, match=r"long_eval_sequences.*an int >= 0 \(0: n_eval_sequences\)"):
        checked_parameters("09_longer_training", "ci", {"long_eval_sequences": {"dictionary": -64}})


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
