import pytest
import torch

from vvlib import rng, tasks
from vvlib.draws import sample_distinct, sample_distinct_fixed
from vvlib.task_base import stack
from vvlib.tasks import TaskConfig, sample


def gen(*parts):
    return rng.generator("cpu", "test", *parts)


def test_argmax_target_is_class_of_max_priority_by_brute_force():
    task = TaskConfig("argmax", n_classes=7)
    batch = sample(task, gen(1), 50, 9, "cpu")
    assert batch.priority.shape == batch.label.shape == (50, 9) and batch.target.shape == (50,)
    for r in range(50):
        best = max(range(9), key=lambda i: batch.priority[r, i].item())
        assert batch.target[r].item() == batch.label[r, best].item()
    assert batch.label.min() >= 0 and batch.label.max() < 7


def test_argmax_target_ignores_padding():
    task = TaskConfig("argmax")
    lengths = torch.tensor([1, 3, 8, 8])
    batch = sample(task, gen(2), 4, 8, "cpu", lengths)
    assert batch.mask.sum(1).tolist() == [1, 3, 8, 8]
    for r, n in enumerate(lengths.tolist()):
        best = int(batch.priority[r, :n].argmax())
        assert batch.target[r] == batch.label[r, best]


@pytest.mark.parametrize("n", [1, 5, 16, 200, 600])  # first-distinct draws (n <= 512) and permutation
def test_dictionary_keys_distinct_and_query_answered_by_brute_force(n):
    task = TaskConfig("dictionary", n_keys=1024, n_values=8)
    batch = sample(task, gen(3, n), 40, n, "cpu")
    assert batch.key.shape == (40, n) and batch.query.shape == batch.target.shape == (40,)
    for r in range(40):
        keys = batch.key[r].tolist()
        assert len(set(keys)) == n
        assert batch.query[r].item() in keys
        assert batch.target[r] == batch.label[r, keys.index(batch.query[r].item())]


def test_dictionary_query_stays_within_real_items():
    task = TaskConfig("dictionary", n_keys=512, n_values=4)
    lengths = torch.tensor([1, 2, 3] * 30)
    batch = sample(task, gen(4), 90, 6, "cpu", lengths)
    position = (batch.key == batch.query.unsqueeze(1)).float().argmax(1)
    assert (position < lengths).all()


def test_dictionary_can_fill_every_key():
    task = TaskConfig("dictionary", n_keys=64, n_values=4)
    batch = sample(task, gen(5), 3, 64, "cpu")
    assert (batch.key.sort(1).values == torch.arange(64)).all()
    with pytest.raises(ValueError, match="distinct"):
        sample(task, gen(5), 3, 65, "cpu")


@pytest.mark.parametrize("n", [2, 3])  # n = 3 of 6 keys: many rows are redrawn
@pytest.mark.parametrize("draw, seed", [(sample_distinct, 8), (sample_distinct_fixed, 9)])  # the CPU's, the GPU's
def test_distinct_keys_are_uniform_over_ordered_tuples(draw, seed, n):
    """Chi-square against the uniform law over the 6!/(6-n)! ordered tuples of distinct keys."""
    from math import perm

    from scipy.stats import chisquare

    keys = draw(gen(seed, n), 200 * perm(6, n), n, 6, "cpu")
    assert (keys.sort(1).values.diff(dim=1) > 0).all()
    counts = torch.bincount((keys * torch.tensor([36, 6, 1][-n:])).sum(1), minlength=6**n)
    observed = counts[counts > 0]
    assert len(observed) == perm(6, n)  # every ordered tuple occurs, nothing else
    assert chisquare(observed.numpy()).pvalue > 1e-4


def short_row_exact(n: int, draws: int, n_classes: int) -> float:
    """P(fewer than n distinct values in `draws` i.i.d. uniform draws), by the occupancy recursion."""
    p = [1.0] + [0.0] * draws  # p[d]: chance of d distinct values so far
    for _ in range(draws):
        p = [p[d] * d / n_classes + (p[d - 1] * (n_classes - d + 1) / n_classes if d else 0.0)
             for d in range(draws + 1)]
    return sum(p[:n])


@pytest.mark.parametrize("n, n_classes", [(2, 64), (4, 64), (8, 64), (12, 100), (16, 128), (24, 200)])
def test_the_short_row_bound_holds_against_the_exact_chance(n, n_classes):
    import math

    from vvlib.draws import FIXED_EXTRA_DRAWS, short_row_log2

    exact = short_row_exact(n, 2 * n + FIXED_EXTRA_DRAWS, n_classes)
    assert exact <= 2 ** short_row_log2(n, n_classes)
    assert exact > 0 and short_row_log2(n, n_classes) - math.log2(exact) < 200  # a bound, not a wild one


def test_the_fixed_draw_is_used_on_the_gpu_only_where_a_short_row_is_beyond_reach():
    from vvlib.draws import fixed_draw_is_safe

    assert all(fixed_draw_is_safe(n, 16384) for n in (1, 16, 256, 1024))  # the paper's C_K, training to 256 items
    assert not fixed_draw_is_safe(16, 256) and not fixed_draw_is_safe(4096, 16384)
    dictionary = tasks.get("dictionary")
    assert dictionary.capturable(TaskConfig("dictionary"), 256)
    assert not dictionary.capturable(TaskConfig("dictionary", n_keys=256, n_values=8), 16)


def test_same_stream_same_data_and_stack_adds_seed_dim():
    task = TaskConfig("argmax")
    a, b = sample(task, gen(7), 5, 4, "cpu"), sample(task, gen(7), 5, 4, "cpu")
    assert torch.equal(a.priority, b.priority) and torch.equal(a.target, b.target)
    stacked = stack([a, b])
    assert stacked.priority.shape == (2, 5, 4) and stacked.mask is None


def test_bad_task_settings_are_named():
    with pytest.raises(ValueError, match="task must be one of"):
        TaskConfig("sorting")
    with pytest.raises(ValueError, match="n_keys"):
        TaskConfig("dictionary", n_keys=1)
    with pytest.raises(ValueError, match="length"):
        sample(TaskConfig(), gen(8), 2, 0, "cpu")
