"""What every task is made of: the Task interface a task module implements (task_argmax,
task_dictionary), the Batch it draws, and the helpers that reshape batches.  The registry
that names the tasks is vvlib/tasks.py, which imports the task modules; they import only this.

Shapes are batch-first: an item tensor is (..., N), a target is (...).  Training
batches may hold sequences of different lengths: `mask` marks the real items.
"""

from dataclasses import dataclass

import torch

EVAL_BLOCK = 64  # test sequences are generated in blocks of this many, one stream each


class Task:
    """What a task is to the rest of the package; `settings` names the TaskConfig fields the task reads."""

    name: str
    settings: tuple = ()
    query_table: bool = False  # whether ModelConfig.query_table may give its query an embedding of its own

    def n_outputs(self, cfg) -> int:
        raise NotImplementedError

    def max_length(self, cfg) -> int | None:
        return None

    def capturable(self, cfg, max_len: int) -> bool:
        """Whether drawing training sequences of up to max_len items on a GPU is a fixed
        sequence of kernels, which a CUDA graph can record (vvlib/graphdraw.py)."""
        return False

    def sample(self, cfg, draws, rows: int, n: int, device, mask, lengths) -> "Batch":
        """A batch (draws.lead..., rows, n) drawn from `draws` (vvlib/draws.py); mask (same
        shape) or None marks the real items, lengths their counts."""
        raise NotImplementedError

    def answer_position(self, batch: "Batch") -> torch.Tensor:
        """The index of the item that holds each sequence's answer, (...): where a model that
        retrieves well puts its largest attention weight."""
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


def per_seed(t, S):
    """Give a tensor shared by all seeds, (B, ...), a leading seed dim (S, B, ...)."""
    return t.unsqueeze(0).expand(S, *t.shape)


def lookup(table, index):
    """Per-seed embedding rows: table (S, C, E), index (S, ...) -> (S, ..., E)."""
    S = table.shape[0]
    rows = torch.arange(S, device=index.device).view(S, *([1] * (index.dim() - 1)))
    return table[rows, index]


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
