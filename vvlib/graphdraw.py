"""Training batches drawn by replaying a CUDA graph: the same numbers, far fewer launches.

Every seed draws its batch from its own generator, so that seed s's data never depend on
which seeds share the ensemble.  On a GPU that costs about eight small kernel launches per
seed and step, most of a step at 100 seeds (bench/README.md).  A CUDA graph records those
launches once, per training length, and replays them in one call.  Each seed's generator
is registered with the graph, so a replay draws from and advances the generators exactly as
the eager draw would: the batches, and so the trained weights, are the same bit for bit
(tests/test_train.py, on a GPU).

Only a draw that is a fixed sequence of kernels can be recorded (Task.capturable): argmax
retrieval's is; dictionary lookup's is on a GPU for the training lengths of the book and the
paper (draws.sample_distinct_fixed; on a CPU it redraws rows until their keys are distinct,
and how often is something the host must read, which a graph could not hold).
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
    """Collect first, then keep Python's collector off until the recording ends.  An earlier
    trainer's graphs that sit in a reference cycle are freed by the collector, at whatever
    allocation triggers it; freeing a graph while another records invalidates that recording
    (a GPU showed it: cudaErrorStreamCaptureInvalidated, 'operation not permitted when stream
    is capturing (function reset)'), and torch no longer collects on entering the recording."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
