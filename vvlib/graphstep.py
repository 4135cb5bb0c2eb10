"""A whole training step replayed from a CUDA graph: the draw, the forward and backward pass
and AdamW's update, one replay per step and seed group.

graphdraw.py records the draw alone; the forward and backward pass and the update are still
hundreds of small kernels launched one by one, each too small to fill a GPU.  This records
them all, once per training length.  What a replay computes is what the eager step computes
(the same kernels on the same memory), so the weights should be the same bit for bit:
tests/test_train.py checks it on a GPU.

Recording needs a warm-up step first (lazily made kernels and handles; AdamW's state), which
would otherwise be a step too many: the warm-up's changes to the weights, AdamW's state and
the generators are undone before recording, so it leaves no trace.  Recording itself
launches nothing.  AdamW must be built with capturable=True (its step count then stays on the
GPU).  A graph holds the addresses of the weights, the gradients and AdamW's state: a
checkpoint's resume replaces AdamW's state tensors, so the trainer records afresh after one.
"""

import torch

from . import graphdraw


class GraphedStep:
    """`step(n)` of one seed group, replayed from a graph recorded for length n.

    step(n) draws a batch of length n from `generators` only, computes the per-seed loss,
    backpropagates it and steps `optimizer`; it returns the loss (S_g,), detached."""

    def __init__(self, step, generators, params: dict, optimizer: torch.optim.Optimizer):
        self.step, self.generators, self.optimizer = step, generators, optimizer
        self.params = list(params.values())
        self.graphs = {}  # training length -> (graph, the loss it writes)

    def __call__(self, n: int) -> torch.Tensor:
        if n not in self.graphs:
            self.graphs[n] = self.record(n)
        graph, loss = self.graphs[n]
        graph.replay()
        return loss.clone()  # the graph's own tensor is overwritten by the next replay

    def record(self, n: int):
        saved = self._saved()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up, as PyTorch's guide to graphs asks, on a side stream
            self.optimizer.zero_grad(set_to_none=True)
            self.step(n)
        torch.cuda.current_stream().wait_stream(side)
        self._restore(saved)
        # gradients made inside the recording live in the graph's memory: the replayed backward
        # writes them where the replayed update reads them
        self.optimizer.zero_grad(set_to_none=True)
        return graphdraw.recorded(lambda: self.step(n), self.generators)

    def _saved(self) -> dict:
        return {"generators": [g.get_state() for g in self.generators],
                "params": [p.detach().clone() for p in self.params],
                "optimizer": [{k: v.clone() for k, v in self.optimizer.state[p].items()} for p in self.params]}

    def _restore(self, saved: dict):
        for g, state in zip(self.generators, saved["generators"]):
            g.set_state(state)
        with torch.no_grad():
            for p, value, before in zip(self.params, saved["params"], saved["optimizer"]):
                p.copy_(value)
                # state AdamW made in the warm-up (the first step) goes back to how it starts: zeros
                for key, tensor in self.optimizer.state[p].items():
                    tensor.copy_(before[key]) if key in before else tensor.zero_()
