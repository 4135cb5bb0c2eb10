"""Argmax retrieval (Velickovic et al., 2024): every item has a priority ~ U(0, 1) and a class
in {0..n_classes-1}; the answer is the class of the highest-priority item.  The query carries
no information: the model owns a learned query token.

An item reaches the encoder as [priority, one-hot class].
"""

import torch
import torch.nn.functional as F

from .task_base import Batch, Task, per_seed


class Argmax(Task):
    name = "argmax"
    settings = ("n_classes",)

    def n_outputs(self, cfg) -> int:
        return cfg.n_classes

    def capturable(self, cfg, max_len: int) -> bool:
        return True

    def sample(self, cfg, draws, rows, n, device, mask, lengths) -> Batch:
        priority = draws.rand(rows, n)
        label = draws.randint(0, cfg.n_classes, rows, n)
        ranked = priority if mask is None else priority.masked_fill(~mask, -1.0)
        target = label.gather(-1, ranked.argmax(dim=-1, keepdim=True)).squeeze(-1)  # ties: the first
        return Batch(label=label, target=target, priority=priority, mask=mask)

    def answer_position(self, batch) -> torch.Tensor:
        ranked = batch.priority if batch.mask is None else batch.priority.masked_fill(~batch.mask, -1.0)
        return ranked.argmax(dim=-1)  # the draw's rule: ties go to the first

    def in_features(self, model_cfg) -> int:
        return 1 + model_cfg.task.n_classes  # priority, one-hot class

    def input_weights(self, model_cfg, gen) -> dict:
        return {"query_token": torch.randn(self.in_features(model_cfg), generator=gen)}

    def features(self, model_cfg, params, batch, S):
        x = torch.cat([batch.priority.unsqueeze(-1), F.one_hot(batch.label, model_cfg.task.n_classes).float()], -1)
        if x.dim() == 3:
            x = per_seed(x, S)
        y = params["query_token"].view(S, 1, -1).expand(S, x.shape[1], -1)
        return x, y
