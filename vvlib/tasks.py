"""The two order-invariant tasks of the paper, as batched tensor generators.

argmax retrieval (Velickovic et al., 2024): every item has a priority ~ U(0, 1) and a
class in {0..n_classes-1}; the answer is the class of the highest-priority item.  The
query carries no information (the model owns a learned query token).

dictionary lookup (the paper's appendix B.1): every item has a key class in
{0..n_keys-1}, distinct within a sequence, and a value class ~ U{0..n_values-1}; the
query is one key present in the sequence and the answer is its value class.

Shapes are batch-first: an item tensor is (..., N), a target is (...).  Training
batches may hold sequences of different lengths: `mask` marks the real items.
"""

from dataclasses import dataclass

import torch

TASKS = ("argmax", "dictionary")
EVAL_BLOCK = 64  # test sequences are generated in blocks of this many, one stream each


@dataclass(frozen=True)
class TaskConfig:
    name: str = "argmax"
    n_classes: int = 10  # argmax: classes per item (UNCONFIRMED in the source papers)
    n_keys: int = 16384  # dictionary: C_K
    n_values: int = 64  # dictionary: C_V

    def __post_init__(self):
        if self.name not in TASKS:
            raise ValueError(f"task must be one of {TASKS}; got {self.name!r}")
        for field in ("n_classes", "n_keys", "n_values"):
            value = getattr(self, field)
            if not isinstance(value, int) or value < 2:
                raise ValueError(f"{field} must be an int >= 2; got {value!r}")

    @property
    def n_outputs(self) -> int:
        return self.n_classes if self.name == "argmax" else self.n_values

    def max_length(self) -> int | None:
        """Dictionary keys are distinct, so a sequence holds at most n_keys items."""
        return self.n_keys if self.name == "dictionary" else None


@dataclass
class Batch:
    """One batch of either task.  Fields unused by a task are None.

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
    same law as drawing one at a time and rejecting repeats).  Rows whose 2n draws hold
    fewer than n distinct values are drawn again; that event is symmetric in the labels,
    so the law stays uniform.  Rows longer than half the classes take the first n of a
    random permutation instead.
    """
    if n > n_classes:
        raise ValueError(f"cannot draw {n} distinct keys from {n_classes} key classes")
    if 2 * n > n_classes:
        noise = torch.rand(rows, n_classes, generator=gen, device=device)
        return noise.argsort(dim=1)[:, :n]
    out = torch.empty(rows, n, dtype=torch.long, device=device)
    todo = torch.arange(rows, device=device)
    while todo.numel():
        draws = torch.randint(n_classes, (todo.numel(), 2 * n), generator=gen, device=device)
        ordered, where = draws.sort(dim=1, stable=True)  # stable: a value's first draw sorts first
        new_in_order = torch.ones_like(ordered, dtype=torch.bool)
        new_in_order[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        first = torch.zeros_like(new_in_order).scatter_(1, where, new_in_order)  # first draw of its value
        keep = first & (first.cumsum(dim=1) <= n)
        done = keep.sum(dim=1) == n
        out[todo[done]] = draws[done][keep[done]].view(-1, n)
        todo = todo[~done]
    return out


def sample(task: TaskConfig, gen, rows: int, n: int, device, lengths=None) -> Batch:
    """`rows` sequences of `n` items.  With `lengths` (rows,), row r uses its first lengths[r] items."""
    if n < 1:
        raise ValueError(f"sequence length must be >= 1; got {n}")
    mask = None
    if lengths is not None:
        mask = torch.arange(n, device=device) < lengths.unsqueeze(-1)
    if task.name == "argmax":
        priority = torch.rand(rows, n, generator=gen, device=device)
        label = torch.randint(task.n_classes, (rows, n), generator=gen, device=device)
        ranked = priority if mask is None else priority.masked_fill(~mask, -1.0)
        target = label.gather(1, ranked.argmax(dim=1, keepdim=True)).squeeze(1)
        return Batch(label=label, target=target, priority=priority, mask=mask)
    key = sample_distinct(gen, rows, n, task.n_keys, device)
    label = torch.randint(task.n_values, (rows, n), generator=gen, device=device)
    u = torch.rand(rows, generator=gen, device=device)
    real = torch.full((rows,), n, device=device) if lengths is None else lengths
    asked = (u * real).long().clamp_max(real - 1).unsqueeze(1)
    query = key.gather(1, asked).squeeze(1)
    target = label.gather(1, asked).squeeze(1)
    return Batch(label=label, target=target, key=key, query=query, mask=mask)


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
