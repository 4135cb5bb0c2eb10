"""Chapter 5's second evaluation of the longer training on more test sequences (recheck_*): its first
blocks are the sequences the chapter scores, so its split tells an easy test set from a hard one."""

import numpy as np
import pytest

from vvlib import evaluate
from vvlib.book.runner import checked_parameters
from vvlib.experiments.reports import devices
from vvlib.experiments.storage import runs
from vvlib.experiments.setups.params import ParameterError
from vvlib.task_base import EVAL_BLOCK
from vvlib.train import TrainConfig


def test_the_first_blocks_of_a_larger_test_set_are_the_sequences_a_smaller_one_scores(small_dictionary, tmp_path):
    run = runs.TrainedRun(tmp_path, small_dictionary, TrainConfig(n_seeds=3, steps=30, batch_size=16), "cpu",
                          progress=False)
    scored = evaluate.EvalConfig(lengths=(8, 32), n_sequences=EVAL_BLOCK, seed=5)
    larger = evaluate.EvalConfig(lengths=(8, 32), n_sequences=4 * EVAL_BLOCK, seed=5)
    blocks = run.correct_per_block(larger)
    assert blocks.shape == (3, 2, 4)
    first, others = devices.split_blocks(blocks, 1, EVAL_BLOCK)
    np.testing.assert_allclose(first, 100 * run.evaluated(scored))  # evaluated on its own, the same numbers
    np.testing.assert_allclose(others, 100 * blocks[..., 1:].sum(-1) / (3 * EVAL_BLOCK))
    np.testing.assert_allclose((first + 3 * others) / 4, 100 * run.evaluated(larger))


def test_the_summary_pairs_each_seed_on_the_two_parts():
    counts = np.array([[[10, 20, 20]], [[30, 20, 40]]])  # 2 seeds, 1 length, 3 blocks of 40
    summary = devices.recheck_summary({"baseline": counts}, [16], 1, 40)["baseline"]["16"]
    assert summary["seeds"] == 2
    assert summary["scored"] == pytest.approx(100 * (10 + 30) / 80)
    assert summary["others"] == pytest.approx(100 * (40 / 80 + 60 / 80) / 2)
    assert summary["difference"]["diff"] == pytest.approx(summary["others"] - summary["scored"])


@pytest.mark.parametrize("given, message", [
    ({"recheck_sequences": 64}, "recheck_sequences: expected 0, or a multiple of 64 above n_eval_sequences"),
    ({"recheck_sequences": 100}, "recheck_sequences: expected 0, or a multiple of 64"),
    ({"recheck_from_seed": 2}, "recheck_from_seed: expected a seed below long_seeds"),
    ({"recheck_lengths": [100]}, "recheck_lengths: expected lengths among eval_lengths"),
    ({"long_steps": 0, "dynamics_rows": []}, "recheck_sequences: expected 0 while long_steps is 0"),
    ({"n_eval_sequences": 96}, "n_eval_sequences: expected a multiple of 64"),
])
def test_a_recheck_that_cannot_split_is_refused_before_anything_runs(given, message):
    with pytest.raises(ParameterError, match=message):
        checked_parameters("05_dictionary_lookup", "ci", given)
