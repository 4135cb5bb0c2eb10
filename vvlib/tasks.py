"""The tasks' registry: every task by name, its settings (TaskConfig), and drawing a batch.

A task is one module that subclasses task_base.Task (task_argmax, task_dictionary): how its
sequences are drawn, how the model reads them (the encoder's input features and the
weights that make them), and how many answer classes there are.  Everything else (the
attention, training, evaluation) is the same for every task and asks this registry.
"""

from dataclasses import dataclass

import torch

from .draws import GeneratorDraws
from .task_argmax import Argmax
from .task_base import Batch, Task
from .task_dictionary import Dictionary

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


for _task in (Argmax(), Dictionary()):
    register(_task)


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


def sample(task: TaskConfig, source, rows: int, n: int, device, lengths=None) -> Batch:
    """`rows` sequences of `n` items.  With `lengths` (rows,), row r uses its first lengths[r] items.

    `source` is a torch.Generator or a draws object (vvlib/draws.py); CounterDraws with lanes
    give every tensor a leading lane dimension, lengths included."""
    if n < 1:
        raise ValueError(f"sequence length must be >= 1; got {n}")
    source = GeneratorDraws(source, device) if isinstance(source, torch.Generator) else source
    mask = None
    if lengths is not None:
        mask = torch.arange(n, device=device) < lengths.unsqueeze(-1)
    return get(task.name).sample(task, source, rows, n, device, mask, lengths)
