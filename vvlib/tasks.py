"""The tasks, as batched tensor generators, and the registry that names them.

A task is one module that registers a Task (task_argmax, task_dictionary): how its
sequences are drawn, how the model reads them (the encoder's input features and the
weights that make them), and how many answer classes there are.  Everything else (the
attention, training, evaluation) is the same for every task and asks the registry.

Shapes are batch-first: an item tensor is (..., N), a target is (...).  Training
batches may hold sequences of different lengths: `mask` marks the real items.
"""

import math
from dataclasses import dataclass

import torch

EVAL_BLOCK = 64  # test sequences are generated in blocks of this many, one stream each


class Task:
    """What a task is to the rest of the package.  A task module subclasses it and registers
    an instance; `settings` names the TaskConfig fields the task reads."""

    name: str
    settings: tuple = ()

    def n_outputs(self, cfg) -> int:
        raise NotImplementedError

    def max_length(self, cfg) -> int | None:
        return None

    def capturable(self, cfg, max_len: int) -> bool:
        """Whether drawing training sequences of up to max_len items on a GPU is a fixed
        sequence of kernels, which a CUDA graph can record (vvlib/graphdraw.py)."""
        return False

    def sample(self, cfg, gen, rows: int, n: int, device, mask, lengths) -> "Batch":
        """A batch (rows, n); mask (rows, n) or None marks the real items, lengths their counts."""
        raise NotImplementedError

    def in_features(self, model_cfg) -> int:
        """The width of an item's input to the encoder."""
        raise NotImplementedError

    def input_weights(self, model_cfg, gen) -> dict:
        """The weights that turn a batch into encoder inputs, drawn from `gen` before all others."""
        raise NotImplementedError

    def features(self, model_cfg, params, batch, S: int):
        """Encoder inputs of the items (S, B, N, F) and of the query (S, B, F)."""
        raise NotImplementedError


TASKS: dict = {}  # name -> Task


def register(task: Task) -> Task:
    if task.name in TASKS:
        raise ValueError(f"a task named {task.name!r} is registered already")
    TASKS[task.name] = task
    return task


def get(name: str) -> Task:
    if name not in TASKS:
        raise ValueError(f"task must be one of {tuple(TASKS)}; got {name!r}")
    return TASKS[name]


def per_seed(t, S):
    """Give a tensor shared by all seeds, (B, ...), a leading seed dim (S, B, ...)."""
    return t.unsqueeze(0).expand(S, *t.shape)


def lookup(table, index):
    """Per-seed embedding rows: table (S, C, E), index (S, ...) -> (S, ..., E)."""
    S = table.shape[0]
    rows = torch.arange(S, device=index.device).view(S, *([1] * (index.dim() - 1)))
    return table[rows, index]


@dataclass(frozen=True)
class TaskConfig:
    name: str = "argmax"
    n_classes: int = 10  # argmax: classes per item (UNCONFIRMED in the source papers)
    n_keys: int = 16384  # dictionary: C_K
    n_values: int = 64  # dictionary: C_V

    def __post_init__(self):
        get(self.name)  # an unknown task fails here, naming the known ones
        for field in ("n_classes", "n_keys", "n_values"):
            value = getattr(self, field)
            if not isinstance(value, int) or value < 2:
                raise ValueError(f"{field} must be an int >= 2; got {value!r}")

    @property
    def n_outputs(self) -> int:
        return get(self.name).n_outputs(self)

    def max_length(self) -> int | None:
        """The most items a sequence of this task can hold (None: no limit)."""
        return get(self.name).max_length(self)


@dataclass
class Batch:
    """One batch of any task.  Fields unused by a task are None.

    argmax:     priority (float), label (class of each item)
    dictionary: key, label (value class of each item), query (the key asked about)
    """

    label: torch.Tensor
    target: torch.Tensor
    priority: torch.Tensor | None = None
    key: torch.Tensor | None = None
    query: torch.Tensor | None = None
    mask: torch.Tensor | None = None

    @property
    def length(self) -> int:
        return self.label.shape[-1]


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


def _first_distinct(draws: torch.Tensor) -> torch.Tensor:
    """(rows, M) bool: True at the first draw of each value in its row."""
    ordered, where = draws.sort(dim=1, stable=True)  # stable: a value's first draw sorts first
    new_in_order = torch.ones_like(ordered, dtype=torch.bool)
    new_in_order[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    return torch.zeros_like(new_in_order).scatter_(1, where, new_in_order)


FIXED_EXTRA_DRAWS = 32  # the fixed draw takes 2n + 32 values per row: the 32 make short rows unlikely at small n
FIXED_FAILURE_LOG2 = -100  # ... and it is used only where a short row has a chance below 2^-100


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


def sample_distinct_fixed(gen, rows: int, n: int, n_classes: int, device) -> torch.Tensor:
    """sample_distinct's law in a fixed sequence of kernels with no host synchronisation, so a
    CUDA graph can record it: each row is the first n distinct values of its 2n + 32 draws.  A
    row whose draws hold fewer (chance below 2^short_row_log2(n, n_classes), which
    sample_distinct keeps below 2^-100: about 10^-30) would end in zeros; in 100 seeds x 10,000
    steps x 128 rows that has a chance below 10^-21 of happening once."""
    draws = torch.randint(n_classes, (rows, 2 * n + FIXED_EXTRA_DRAWS), generator=gen, device=device)
    first = _first_distinct(draws)
    slot = first.cumsum(dim=1) - 1  # where each first draw goes in the row
    slot = torch.where(first & (slot < n), slot, n)  # repeats and extra values go to a column that is dropped
    out = torch.zeros(rows, n + 1, dtype=torch.long, device=device)
    return out.scatter_(1, slot, draws)[:, :n]


def sample(task: TaskConfig, gen, rows: int, n: int, device, lengths=None) -> Batch:
    """`rows` sequences of `n` items.  With `lengths` (rows,), row r uses its first lengths[r] items."""
    if n < 1:
        raise ValueError(f"sequence length must be >= 1; got {n}")
    mask = None
    if lengths is not None:
        mask = torch.arange(n, device=device) < lengths.unsqueeze(-1)
    return get(task.name).sample(task, gen, rows, n, device, mask, lengths)


FIELDS = ("label", "target", "priority", "key", "query", "mask")  # Batch's tensor fields


def stack(batches: list[Batch]) -> Batch:
    """Stack per-seed batches along a new leading seed dimension."""
    fields = {}
    for name in FIELDS:
        values = [getattr(b, name) for b in batches]
        fields[name] = None if values[0] is None else torch.stack(values)
    return Batch(**fields)


def map_fields(batch: Batch, fn) -> Batch:
    """A batch with fn applied to each of its tensors (unused fields stay None)."""
    return Batch(**{name: None if getattr(batch, name) is None else fn(getattr(batch, name)) for name in FIELDS})


def slice_rows(batch: Batch, start: int, stop: int) -> Batch:
    """Rows [start, stop) of an unstacked batch (leading dim = sequences)."""
    return map_fields(batch, lambda value: value[start:stop])


from . import task_argmax, task_dictionary  # noqa: E402  (they register themselves; they need the names above)
