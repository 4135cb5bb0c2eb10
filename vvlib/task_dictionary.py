"""Dictionary lookup (the paper's appendix B.1): every item has a key class in {0..n_keys-1},
distinct within a sequence, and a value class ~ U{0..n_values-1}; the query is one key present
in the sequence and the answer is its value class.

An item reaches the encoder as [key embedding, value embedding], the query as [key embedding,
zeros]: a key with no value, through the same encoder (our choice; the paper does not say;
ModelConfig.encode_query=False sends it to W_Q without the encoder; ModelConfig.query_table=True
looks the query up in a table of its own, of the same size, instead of the keys').
"""

import torch

from .draws import fixed_draw_is_safe
from .task_base import Batch, Task, lookup, per_seed


class Dictionary(Task):
    name = "dictionary"
    settings = ("n_keys", "n_values")
    query_table = True

    def n_outputs(self, cfg) -> int:
        return cfg.n_values

    def max_length(self, cfg) -> int:
        return cfg.n_keys  # keys are distinct within a sequence

    def capturable(self, cfg, max_len: int) -> bool:
        # every length a curriculum may draw: a permutation (fixed kernels too), or the fixed draw
        return all(2 * n > cfg.n_keys or fixed_draw_is_safe(n, cfg.n_keys) for n in range(1, max_len + 1))

    def sample(self, cfg, draws, rows, n, device, mask, lengths) -> Batch:
        key = draws.distinct(rows, n, cfg.n_keys)
        label = draws.randint(0, cfg.n_values, rows, n)
        real = torch.full((*draws.lead, rows), n, device=device) if lengths is None else lengths
        asked = draws.index_below(real).unsqueeze(-1)  # the query: one of the row's real items
        query = key.gather(-1, asked).squeeze(-1)
        target = label.gather(-1, asked).squeeze(-1)
        return Batch(label=label, target=target, key=key, query=query, mask=mask)

    def answer_position(self, batch) -> torch.Tensor:
        return (batch.key == batch.query.unsqueeze(-1)).int().argmax(dim=-1)  # keys are distinct: one match

    def in_features(self, model_cfg) -> int:
        return model_cfg.key_dim + model_cfg.value_dim

    def input_weights(self, model_cfg, gen) -> dict:
        emb_key = torch.randn(model_cfg.task.n_keys, model_cfg.key_dim, generator=gen)  # drawn first
        emb_value = torch.randn(model_cfg.task.n_values, model_cfg.value_dim, generator=gen)
        if not model_cfg.query_table:
            return {"emb_key": emb_key, "emb_value": emb_value}
        emb_query = torch.randn(model_cfg.task.n_keys, model_cfg.key_dim, generator=gen)  # drawn after the others
        return {"emb_key": emb_key, "emb_value": emb_value, "emb_query": emb_query}

    def features(self, model_cfg, params, batch, S):
        key, label, query = batch.key, batch.label, batch.query
        if key.dim() == 2:
            key, label, query = (per_seed(t, S) for t in (key, label, query))
        x = torch.cat([lookup(params["emb_key"], key), lookup(params["emb_value"], label)], -1)
        q = lookup(params["emb_query" if model_cfg.query_table else "emb_key"], query)
        y = torch.cat([q, q.new_zeros(*q.shape[:-1], model_cfg.value_dim)], -1)  # a key with no value
        return x, y
