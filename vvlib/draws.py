"""Where a batch's random numbers come from: two sources behind the same few methods.

`GeneratorDraws` reads a torch.Generator in call order: the engine's original streams, which
made every result committed before the counter stream existed; each seed has its own generator,
so a step draws seed by seed, and CPU and CUDA give different numbers.

`CounterDraws` computes every number as a pure function of where it sits: (key, coordinate,
lane, call, position), with the key naming the run seed and the stream, the lane the seed
index, the coordinate the training step, the call which tensor of the batch, and the position
the element (Philox-4x32-10, vvlib/philox.py).  So all seeds' batches come out of one batch of
kernels, a CUDA graph can record them with no generator state (the step is a tensor the graph
reads), a checkpoint needs only the step, and seed s's data are the same bits on a CPU and a GPU,
whatever the seed grouping.

A task samples through `rand`, `randint`, `index_below` and `distinct`; shapes are those of
one seed's batch, and CounterDraws with lanes puts a leading lane dimension before them.
"""

import math

import torch

from . import philox, rng

DRAWS = ("generators", "counter")  # TrainConfig.draws and EvalConfig.draws

FIXED_EXTRA_DRAWS = 32  # the fixed draw takes 2n + 32 values per row: the 32 make short rows unlikely at small n
FIXED_FAILURE_LOG2 = -100  # ... and it is used only where a short row has a chance below 2^-100


def check(draws: str):
    if draws not in DRAWS:
        raise ValueError(f"draws must be one of {DRAWS}; got {draws!r}")


def short_row_log2(n: int, n_classes: int) -> float:
    """log2 of a bound on the chance that M = 2n + 32 i.i.d. draws from n_classes hold fewer
    than n distinct values.  Each draw repeats an earlier value with chance below M / n_classes
    whatever came before, so the repeats are dominated by a Binomial(M, M / n_classes); fewer
    than n distinct needs k = M - n + 1 repeats, and P(Binomial >= k) <= C(M, k) p^k."""
    draws = 2 * n + FIXED_EXTRA_DRAWS
    k, p = draws - n + 1, draws / n_classes
    if p >= 1:
        return 0.0
    log2_choose = (math.lgamma(draws + 1) - math.lgamma(k + 1) - math.lgamma(draws - k + 1)) / math.log(2)
    return min(0.0, log2_choose + k * math.log2(p))


def fixed_draw_is_safe(n: int, n_classes: int) -> bool:
    return short_row_log2(n, n_classes) <= FIXED_FAILURE_LOG2


def _first_distinct(draws: torch.Tensor) -> torch.Tensor:
    """(..., M) bool: True at the first draw of each value in its row."""
    ordered, where = draws.sort(dim=-1, stable=True)  # stable: a value's first draw sorts first
    new_in_order = torch.ones_like(ordered, dtype=torch.bool)
    new_in_order[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    return torch.zeros_like(new_in_order).scatter_(-1, where, new_in_order)


def first_n_distinct(draws: torch.Tensor, n: int) -> torch.Tensor:
    """(..., n): the first n distinct values of each row of draws (..., M), in a fixed sequence of
    kernels; a row with fewer ends in zeros (callers make that chance negligible)."""
    first = _first_distinct(draws)
    slot = first.cumsum(dim=-1) - 1  # where each first draw goes in the row
    slot = torch.where(first & (slot < n), slot, n)  # repeats and extra values go to a column that is dropped
    out = torch.zeros(*draws.shape[:-1], n + 1, dtype=draws.dtype, device=draws.device)
    return out.scatter_(-1, slot, draws)[..., :n]


def sample_distinct(gen, rows: int, n: int, n_classes: int, device) -> torch.Tensor:
    """`rows` x `n` integers in [0, n_classes), distinct within each row, uniformly.

    Each row is the first n distinct values of a stream of i.i.d. uniform draws (the
    same law as drawing one at a time and rejecting repeats).  On a CPU, rows whose 2n draws
    hold fewer than n distinct values are drawn again; that event is symmetric in the labels,
    so the law stays uniform.  On a GPU the draws are made in a fixed number of kernels
    (`sample_distinct_fixed`), which a CUDA graph can record, wherever that is safe.  Rows
    longer than half the classes take the first n of a random permutation instead.
    """
    if n > n_classes:
        raise ValueError(f"cannot draw {n} distinct keys from {n_classes} key classes")
    if 2 * n > n_classes:
        noise = torch.rand(rows, n_classes, generator=gen, device=device)
        return noise.argsort(dim=1)[:, :n]
    if torch.device(device).type == "cuda" and fixed_draw_is_safe(n, n_classes):
        return sample_distinct_fixed(gen, rows, n, n_classes, device)
    out = torch.empty(rows, n, dtype=torch.long, device=device)
    todo = torch.arange(rows, device=device)
    while todo.numel():
        draws = torch.randint(n_classes, (todo.numel(), 2 * n), generator=gen, device=device)
        first = _first_distinct(draws)
        keep = first & (first.cumsum(dim=1) <= n)
        done = keep.sum(dim=1) == n
        out[todo[done]] = draws[done][keep[done]].view(-1, n)
        todo = todo[~done]
    return out


def sample_distinct_fixed(gen, rows: int, n: int, n_classes: int, device) -> torch.Tensor:
    """sample_distinct's law in a fixed sequence of kernels with no host synchronisation, so a
    CUDA graph can record it: each row is the first n distinct values of its 2n + 32 draws.  A
    row whose draws hold fewer (chance below 2^short_row_log2(n, n_classes), which
    sample_distinct keeps below 2^-100: about 10^-30) would end in zeros; in 100 seeds x 10,000
    steps x 128 rows that has a chance below 10^-21 of happening once."""
    draws = torch.randint(n_classes, (rows, 2 * n + FIXED_EXTRA_DRAWS), generator=gen, device=device)
    return first_n_distinct(draws, n)


class GeneratorDraws:
    """Numbers read from one torch.Generator in call order (the original streams)."""

    lead = ()  # one seed's batch: no leading dimension

    def __init__(self, gen: torch.Generator, device):
        self.gen, self.device = gen, device

    def rand(self, *shape) -> torch.Tensor:
        return torch.rand(shape, generator=self.gen, device=self.device)

    def randint(self, low: int, high: int, *shape) -> torch.Tensor:
        return torch.randint(low, high, shape, generator=self.gen, device=self.device)

    def index_below(self, counts: torch.Tensor) -> torch.Tensor:
        """One index uniform in [0, counts[r]) per entry of counts (rows,)."""
        u = self.rand(*counts.shape)
        return (u * counts).long().clamp_max(counts - 1)

    def distinct(self, rows: int, n: int, n_classes: int) -> torch.Tensor:
        return sample_distinct(self.gen, rows, n, n_classes, self.device)


def counter_key(*parts) -> tuple[int, int]:
    """Philox's 64-bit key for a named stream, as two 32-bit words."""
    seed = rng.derive_seed(*parts)
    return seed & philox.MASK32, seed >> 32


class CounterDraws:
    """Numbers computed from where they sit.  `lanes`: None, or an int64 tensor (L,) (seed indices), adding a
    leading dimension L; `coordinate`: an int or a 0-dim int64 tensor (the step, read when the kernels run)."""

    def __init__(self, key: tuple[int, int], coordinate, lanes: torch.Tensor | None, device):
        self.key, self.coordinate, self.device = key, coordinate, torch.device(device)
        self.lanes = None if lanes is None else lanes.to(self.device).view(-1, 1)
        self.lead = () if lanes is None else (len(lanes),)
        self.calls = 0  # each call draws from its own counters: the call number is one of them

    def words(self, *shape) -> torch.Tensor:
        """uint32 words in int64, lead + shape."""
        count = math.prod(shape)
        blocks = torch.arange((count + 3) // 4, device=self.device)
        lane = 0 if self.lanes is None else self.lanes
        out = torch.stack(philox.philox((blocks, self.coordinate, lane, self.calls), self.key), dim=-1)
        self.calls += 1
        return out.reshape(*out.shape[:-2], -1)[..., :count].reshape(*self.lead, *shape)

    def rand(self, *shape) -> torch.Tensor:
        """float32 uniform on the 2^24 points k / 2^24 of [0, 1): exact on every device."""
        return (self.words(*shape) >> 8).float() * 2.0**-24

    def randint(self, low: int, high: int, *shape) -> torch.Tensor:
        """Integers in [low, high) by multiply and shift: each value's chance is off by less than
        (high - low) / 2^32 of itself (Lemire's method without its rejection step)."""
        return low + ((self.words(*shape) * (high - low)) >> 32)

    def index_below(self, counts: torch.Tensor) -> torch.Tensor:
        """One index in [0, counts[..., r]) per entry, counts (lead..., rows), by multiply and shift."""
        return (self.words(*counts.shape[len(self.lead):]) * counts) >> 32

    def distinct(self, rows: int, n: int, n_classes: int) -> torch.Tensor:
        """(lead..., rows, n) keys distinct within each row, uniformly: the first n distinct of
        2n + 32 draws where a short row is negligible (fixed_draw_is_safe), else the first n of
        a random permutation (classes sorted by 63 random bits each; a stable sort settles the
        rare tie the same way on every device)."""
        if n > n_classes:
            raise ValueError(f"cannot draw {n} distinct keys from {n_classes} key classes")
        if 2 * n <= n_classes and fixed_draw_is_safe(n, n_classes):
            return first_n_distinct(self.randint(0, n_classes, rows, 2 * n + FIXED_EXTRA_DRAWS), n)
        high, low = self.words(rows, n_classes), self.words(rows, n_classes)
        return ((high << 31) | (low >> 1)).sort(dim=-1, stable=True).indices[..., :n]
