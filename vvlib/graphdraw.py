"""Training batches drawn by replaying a CUDA graph: the same numbers, far fewer launches.

Per-seed generator draws cost about eight small launches per seed and step on a GPU (bench/README.md); a
graph records them once per training length with each generator registered, so a replay advances them as the
eager draw would and the weights are the same bit for bit.  Only a fixed sequence of kernels can be recorded
(Task.capturable).
"""

import contextlib
import gc

import torch

from . import tasks
from .task_base import Batch, map_fields


def supported(task: tasks.TaskConfig, max_len: int, device: torch.device, draws: str = "generators") -> bool:
    """Counter draws are fixed kernels for every task and length; generator draws where the task says."""
    return device.type == "cuda" and (draws == "counter" or tasks.get(task.name).capturable(task, max_len))


class GraphedDraws:
    """`draw(n)` returns what `eager(n)` would, by replaying a graph recorded for length n.

    `eager(n)` must draw only from `generators` and launch no host synchronisation."""

    def __init__(self, eager, generators):
        self.eager, self.generators = eager, generators
        self.graphs = {}  # training length -> (graph, the batch it writes)

    def __call__(self, n: int) -> Batch:
        if n not in self.graphs:
            self.graphs[n] = self.record(n)
        graph, out = self.graphs[n]
        graph.replay()
        # a copy: the graph's own tensors are overwritten by the next replay
        return map_fields(out, torch.clone)

    def record(self, n: int):
        # one eager draw first, so that lazy initialisation (kernels, allocator) happens
        # outside the recording; then rewind the generators so that it leaves no trace
        states = [g.get_state() for g in self.generators]
        self.eager(n)
        for g, state in zip(self.generators, states):
            g.set_state(state)
        return recorded(lambda: self.eager(n), self.generators)


def recorded(work, generators):
    """(graph, what work() returned while recorded): a CUDA graph of work(), which draws from
    `generators` and advances them on every replay as an eager call would."""
    graph = torch.cuda.CUDAGraph()
    for g in generators:
        graph.register_generator_state(g)
    with without_garbage_collection(), torch.cuda.graph(graph):
        out = work()
    return graph, out


@contextlib.contextmanager
def without_garbage_collection():
    """Collect first, then keep Python's collector off until the recording ends: freeing an earlier trainer's
    graph (in a reference cycle) while another records invalidates it (cudaErrorStreamCaptureInvalidated)."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
