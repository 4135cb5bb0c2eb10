"""The same seeds on two devices: the loss gaps and the paired accuracy, against hand computation."""

import numpy as np
import pytest

from vvlib.experiments.reports import same_seeds


def record(first_seed, history):
    return {"spec": {"train": {"first_seed": first_seed}}, "loss_history": history}


def test_seed_losses_numbers_each_runs_columns_from_its_first_seed():
    runs = [record(0, [[100, [1.0, 2.0]], [200, [0.5, 0.6]]]), record(2, [[100, [3.0]], [200, [0.7]]])]
    assert same_seeds.seed_losses(runs) == {0: {100: 1.0, 200: 0.5}, 1: {100: 2.0, 200: 0.6}, 2: {100: 3.0, 200: 0.7}}


def test_loss_parting_compares_the_same_seed_and_the_next_seed_on_the_seeds_both_have():
    cpu = {"baseline": [record(0, [[100, [1.0, 2.0, 4.0]]])]}
    gpu = {"baseline": [record(0, [[100, [1.01, 2.0]]]), record(2, [[100, [4.4]]]), record(3, [[100, [9.0]]])]}
    row = same_seeds.loss_parting(cpu, gpu, [100]).loc[("baseline", 100)]
    same = [0.01 / 1.0, 0.0, 0.4 / 4.0]  # |gpu - cpu| / cpu, seeds 0, 1, 2 (seed 3 only on the GPU)
    # gpu seed s+1 (cyclic over the shared seeds) against cpu seed s
    other = [abs(2.0 - 1.0) / 1.0, abs(4.4 - 2.0) / 2.0, abs(1.01 - 4.0) / 4.0]
    assert row["seeds"] == 3
    assert row["same seed: median"] == pytest.approx(100 * np.median(same))
    assert row["same seed: largest"] == pytest.approx(100 * max(same))
    assert row["different seeds: median"] == pytest.approx(100 * np.median(other))


def test_loss_parting_refuses_fewer_than_two_shared_seeds():
    with pytest.raises(ValueError, match="two seeds both devices trained"):
        same_seeds.loss_parting({"b": [record(0, [[1, [1.0]]])]}, {"b": [record(5, [[1, [1.0]]])]}, [1])


def test_the_paired_difference_uses_the_shared_seeds_and_blocks_at_each_sides_own_lengths():
    rng = np.random.default_rng(0)
    block = 4
    cpu = rng.integers(0, block + 1, size=(3, 2, 2))  # seeds 0-2, lengths (16, 32), 2 blocks
    gpu = rng.integers(0, block + 1, size=(4, 3, 5))  # seeds 3, 0, 1, 2; lengths (8, 16, 32); 5 blocks
    order = [3, 0, 1, 2]
    for k, seed in enumerate(order[1:], 1):  # on the shared blocks the GPU gets one more right per block at 32
        gpu[k, 1, :2] = cpu[seed, 0]
        gpu[k, 2, :2] = np.minimum(cpu[seed, 1], block - 1) + 1
    result = same_seeds.paired_on_shared_blocks({"v": (cpu, [0, 1, 2], [16, 32])}, {"v": (gpu, order, [8, 16, 32])},
                                                [16, 32], block)["v"]
    assert result[16]["diff"] == pytest.approx(0.0)
    expected = 100 * (np.minimum(cpu[:, 1], block - 1) + 1 - cpu[:, 1]).sum(-1) / (2 * block)
    assert result[32]["diff"] == pytest.approx(expected.mean())


def test_the_summary_quotes_the_tables():
    cpu = {"baseline": [record(0, [[100, [1.0, 2.0]], [200, [1.0, 2.0]]])]}
    gpu = {"baseline": [record(0, [[100, [1.0, 2.0]], [200, [1.5, 1.0]]])]}
    parting = same_seeds.loss_parting(cpu, gpu, [100, 200])
    paired = {"baseline": {1024: {"diff": -3.25, "low": -5.0, "high": -1.0, "p": 0.01}}}
    said = same_seeds.summary(parting, paired, {"baseline": "Baseline"}, 0.05)
    assert "first 100 steps" in said and "at most 0.00%" in said and "started alike" in said
    assert "By step 200 the same seed differs by a median of 50-50%" in said and "as far apart as new seeds" in said
    assert "at 1 of 1 variant-lengths (Baseline at 2¹⁰, -3.2 points). Chance alone would give about 0.1." in said
    unlike = {"baseline": [record(0, [[100, [3.0, 1.0]], [200, [1.0, 2.0]]])]}
    said = same_seeds.summary(same_seeds.loss_parting(cpu, unlike, [100, 200]), paired, {"baseline": "Baseline"}, 0.05)
    assert "did not start alike" in said and "as far apart" not in said


def test_runs_are_alike_whatever_seeds_they_hold_but_not_with_another_setting():
    def run(first_seed, n_seeds, **train):
        return {"spec": {"model": {"hidden": 128}, "train": {"lr": 1e-3, "first_seed": first_seed, "n_seeds": n_seeds,
                                                          "seed_group": 4, **train}}}
    cpu = {"baseline": [run(0, 4), run(4, 4)]}
    assert same_seeds.trained_alike(cpu, {"baseline": [run(0, 100, seed_group=0)]})
    assert not same_seeds.trained_alike(cpu, {"baseline": [run(0, 100, lr=3e-4)]})
    assert not same_seeds.trained_alike(cpu, {"layernorm": [run(0, 100)]})
