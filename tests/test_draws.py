"""The counter stream: Philox against its published answers and an independent uint64
implementation, numbers that depend only on their coordinates, and the laws of each task's
batches against the generator draws that made every committed result."""

from math import perm

import numpy as np
import pytest
import torch
from scipy.stats import chi2_contingency, chisquare, ks_2samp, kstest

from vvlib import draws, philox, rng
from vvlib.draws import CounterDraws, GeneratorDraws
from vvlib.tasks import TaskConfig, sample

# Random123's known-answer vectors for Philox-4x32-10 (counter, key, output), as published with
# Salmon et al. 2011 (their tests/kat_vectors)
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("counter, key, expected", KNOWN_ANSWERS)
def test_philox_gives_the_published_known_answers(counter, key, expected):
    out = philox.philox([torch.tensor([c]) for c in counter], key)
    assert tuple(int(w) for w in out) == expected


def reference_philox(counter: np.ndarray, key) -> np.ndarray:
    """Philox-4x32-10 written from the paper's definition in numpy uint64, where a 32 x 32-bit
    product fits: counter (M, 4) -> (M, 4)."""
    c = counter.astype(np.uint64)
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    mask = np.uint64(0xFFFFFFFF)
    for _ in range(10):
        p0 = c[:, 0] * np.uint64(0xD2511F53)
        p1 = c[:, 2] * np.uint64(0xCD9E8D57)
        c = np.stack([(p1 >> np.uint64(32)) ^ c[:, 1] ^ k0, p1 & mask,
                      (p0 >> np.uint64(32)) ^ c[:, 3] ^ k1, p0 & mask], axis=1)
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & mask, (k1 + np.uint64(0xBB67AE85)) & mask
    return c


def random_counters(rows: int, seed: int) -> np.ndarray:
    words = np.random.default_rng(seed).integers(0, 2**32, size=(rows, 4), dtype=np.uint64)
    words[:4] = [[0, 0, 0, 0], [2**32 - 1] * 4, [2**31, 2**31 - 1, 1, 2**16], [65535, 65536, 2**31 + 1, 3]]
    return words


def test_philox_equals_an_independent_uint64_implementation():
    counters, key = random_counters(20_000, 1), (0xDEADBEEF, 0x8BADF00D)
    got = philox.philox([torch.from_numpy(counters[:, i].astype(np.int64)) for i in range(4)], key)
    assert np.array_equal(np.stack([w.numpy() for w in got], axis=1).astype(np.uint64), reference_philox(counters, key))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_philox_gives_the_same_bits_on_cuda():
    counters, key = random_counters(20_000, 2), draws.counter_key(0, "train-data")
    columns = [torch.from_numpy(counters[:, i].astype(np.int64)) for i in range(4)]
    on_cpu = philox.philox(columns, key)
    on_gpu = philox.philox([c.cuda() for c in columns], key)
    assert all(torch.equal(a, b.cpu()) for a, b in zip(on_cpu, on_gpu))


def counter(lanes=(0, 1, 2), coordinate=7, device="cpu"):
    return CounterDraws(draws.counter_key(0, "test"), coordinate, torch.tensor(lanes), device)


def test_a_number_depends_only_on_its_coordinates():
    """A lane's numbers are the same whichever lanes are drawn with it (seed grouping), and the
    same call at the same coordinates repeats; another call, coordinate or key does not."""
    together = counter(lanes=(3, 7, 9)).randint(0, 1000, 5, 6)
    alone = counter(lanes=(7,)).randint(0, 1000, 5, 6)
    assert together.shape == (3, 5, 6) and torch.equal(together[1], alone[0])
    assert torch.equal(counter().rand(4, 5), counter().rand(4, 5))
    two_calls = counter()
    first, second = two_calls.rand(4, 5), two_calls.rand(4, 5)
    assert not torch.equal(first, second)
    assert not torch.equal(first, counter(coordinate=8).rand(4, 5))
    assert not torch.equal(first, CounterDraws(draws.counter_key(1, "test"), 7, torch.tensor([0, 1, 2]), "cpu").rand(4, 5))


def test_the_step_may_be_a_tensor_read_when_the_kernels_run():
    """What a CUDA graph needs: the coordinate as a 0-dim tensor gives what the int gives."""
    step = torch.tensor(41)
    step.fill_(7)
    assert torch.equal(counter(coordinate=step).randint(0, 99, 8), counter(coordinate=7).randint(0, 99, 8))


def test_uniform_floats_and_integers_follow_their_laws():
    source = counter(lanes=tuple(range(4)))
    u = source.rand(50_000).flatten()
    assert u.dtype == torch.float32 and 0 <= u.min() and u.max() < 1
    assert kstest(u.numpy(), "uniform").pvalue > 1e-4
    ints = source.randint(3, 20, 40_000).flatten()
    assert ints.min() == 3 and ints.max() == 19
    assert chisquare(torch.bincount(ints - 3).numpy()).pvalue > 1e-4


def test_index_below_is_uniform_below_each_rows_count():
    counts = torch.tensor([1, 2, 5, 16] * 20_000).view(1, -1).expand(3, -1)
    picked = counter().index_below(counts)
    assert (picked >= 0).all() and (picked < counts).all()
    for c in (2, 5, 16):
        assert chisquare(torch.bincount(picked[counts == c], minlength=c).numpy()).pvalue > 1e-4


@pytest.mark.parametrize("n, n_classes", [(2, 6), (3, 6), (2, 1000)])  # permutation, permutation, first-distinct
def test_counter_distinct_keys_are_uniform_over_ordered_tuples(n, n_classes):
    keys = counter(lanes=(0, 1)).distinct(300 * perm(min(n_classes, 6), n), n, n_classes).flatten(0, 1)
    assert (keys.sort(-1).values.diff(dim=-1) > 0).all()
    if n_classes == 6:
        codes = (keys * torch.tensor([36, 6, 1][-n:])).sum(-1)
        observed = torch.bincount(codes, minlength=6**n)
        observed = observed[observed > 0]
        assert len(observed) == perm(6, n) and chisquare(observed.numpy()).pvalue > 1e-4
    else:  # each key equally likely in each position
        for column in keys.T:
            assert chisquare(torch.bincount(column, minlength=n_classes).numpy()).pvalue > 1e-4


def test_the_fixed_draw_is_used_where_safe_and_the_permutation_elsewhere():
    """Both branches give keys distinct within each row, at lengths of training and testing."""
    for n in (1, 16, 4096, 9000, 16384):  # fixed, fixed, permutation (unsafe), permutation (> half), all keys
        keys = counter(lanes=(5,)).distinct(3, n, 16384)[0]
        assert keys.shape == (3, n) and all(len(set(row.tolist())) == n for row in keys)


def batches(task, source_of, n_batches, rows, n, lengths_from=None):
    """n_batches batches, one per call of source_of(i), flattened to (rows_total, ...)."""
    out = []
    for i in range(n_batches):
        source = source_of(i)
        lengths = source.randint(lengths_from, n + 1, rows) if lengths_from else None
        out.append(sample(task, source, rows, n, "cpu", lengths))
    return out


def generator_source(i):
    return GeneratorDraws(rng.generator("cpu", "law", i), "cpu")


def counter_source(i):
    return CounterDraws(draws.counter_key(0, "law"), i, torch.tensor([0, 1]), "cpu")


def column(batch_list, field):
    return torch.cat([getattr(b, field).flatten() for b in batch_list]).numpy()


def same_discrete_law(a, b, classes: int) -> float:
    table = np.stack([np.bincount(a, minlength=classes), np.bincount(b, minlength=classes)])
    return chi2_contingency(table[:, table.sum(0) > 0]).pvalue


def test_argmax_batches_have_the_law_of_the_generator_draws():
    task = TaskConfig("argmax", n_classes=10)
    old = batches(task, generator_source, 40, 256, 16, lengths_from=5)
    new = batches(task, counter_source, 20, 256, 16, lengths_from=5)  # two lanes each: as many rows
    assert ks_2samp(column(old, "priority"), column(new, "priority")).pvalue > 1e-4
    for field, classes in (("label", 10), ("target", 10)):
        assert same_discrete_law(column(old, field), column(new, field), classes) > 1e-4
    lengths = lambda bs: np.concatenate([b.mask.sum(-1).flatten().numpy() for b in bs])
    assert same_discrete_law(lengths(old), lengths(new), 17) > 1e-4


def test_dictionary_batches_have_the_law_of_the_generator_draws():
    task = TaskConfig("dictionary", n_keys=512, n_values=16)
    old = batches(task, generator_source, 40, 256, 16, lengths_from=5)
    new = batches(task, counter_source, 20, 256, 16, lengths_from=5)
    for field, classes in (("key", 512), ("label", 16), ("query", 512), ("target", 16)):
        assert same_discrete_law(column(old, field), column(new, field), classes) > 1e-4
    # where the query sits among the real items, against the uniform law over them
    for b in new:
        where = (b.key == b.query.unsqueeze(-1)).float().argmax(-1)
        assert (where < b.mask.sum(-1)).all()
    position = lambda bs: np.concatenate([((b.key == b.query.unsqueeze(-1)).float().argmax(-1)).flatten().numpy()
                                          for b in bs])
    assert same_discrete_law(position(old), position(new), 16) > 1e-4
    assert all((b.key.sort(-1).values.diff(dim=-1) > 0).all() for b in new)
