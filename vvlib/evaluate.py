"""Accuracy of a trained ensemble at long lengths, in bounded memory.

The test sequences for length N are fixed by (eval seed, task, N): they are generated
in blocks of EVAL_BLOCK sequences, one random stream per block (a torch.Generator, or with
draws="counter" a counter stream whose bits are the same on every device), so every variant and
every seed sees the same sequences (a paired comparison), and how the work is chunked
(`max_items`) changes the cost, never the data or the answer.
"""

import dataclasses
import math
from dataclasses import dataclass

import torch
from tqdm import tqdm  # text bars (stderr): they work in terminals, notebooks and papermill alike

from . import draws as data_draws, rng
from .attention import TEMPERATURES
from .errors import check_fields, int_at_least, ints_at_least, one_of
from .model import ModelConfig, forward, n_seeds
from .task_base import EVAL_BLOCK, slice_rows
from .tasks import sample

PAPER_LENGTHS = tuple(2**k for k in range(4, 15))


@dataclass(frozen=True)
class EvalConfig:
    lengths: tuple = PAPER_LENGTHS
    n_sequences: int = 256  # test sequences per length
    seed: int = 12345  # names the test streams (independent of training seeds)
    temperature: str = "fixed"
    draws: str = "generators"  # the test data's source (vvlib/draws.py)

    def __post_init__(self):
        check_fields(self, FIELD_RULES)


# Each field's own values (errors.py), for EvalConfig's check and for a chapter's test parameters
# (eval_lengths, n_eval_sequences, eval_seed: experiments/setups/params.py names them).
FIELD_RULES = {"lengths": ints_at_least(1), "n_sequences": int_at_least(1), "seed": int_at_least(0),
               "temperature": one_of(TEMPERATURES), "draws": one_of(data_draws.DRAWS)}


def settings(cfg: EvalConfig) -> dict:
    """The config as a plain dict for store hashes; the original generator draws are left
    unsaid, so that evaluations stored before the counter stream keep their entries.  Generator
    draws of a short last block changed on 2026-11-29 (test_block): those sets say so, so that an
    entry stored before then is not read as theirs."""
    out = dataclasses.asdict(cfg)
    if cfg.draws == "generators":
        del out["draws"]
        if cfg.n_sequences % EVAL_BLOCK:
            out["short_block"] = "first rows of the whole block"
    return out


def test_block(model_cfg: ModelConfig, cfg: EvalConfig, n: int, block: int, device):
    """Block `block` of the test set at length n.  A short last block keeps the first rows of the whole
    block: a generator's draws for fewer rows are not the first rows of its draws for more, so drawing the
    block whole is what makes a larger test set begin with a smaller one's sequences at any size."""
    rows = min(EVAL_BLOCK, cfg.n_sequences - block * EVAL_BLOCK)
    stream = (cfg.seed, "eval", model_cfg.task.name, n, block)
    if cfg.draws == "counter":
        source = data_draws.CounterDraws(data_draws.counter_key(*stream), 0, None, device)
    else:
        source = rng.generator(device, *stream)
    whole = sample(model_cfg.task, source, EVAL_BLOCK, n, device)
    return whole if rows == EVAL_BLOCK else slice_rows(whole, 0, rows)


def _chunks(total: int, size: int):
    for start in range(0, total, size):
        yield start, min(total, start + size)


def forward_in_chunks(model_cfg, params, batch, temperature, max_items, probe=False):
    """Run one unstacked batch through every seed in pieces of at most `max_items`
    (seeds x sequences x N); yields (seed slice, row slice, rows of the batch, forward's result)."""
    S, rows, n = n_seeds(params), batch.target.shape[0], batch.length
    seed_group = max(1, min(S, max_items // n))
    rows_per_chunk = max(1, max_items // (seed_group * n))
    for s0, s1 in _chunks(S, seed_group):
        group = {k: v[s0:s1] for k, v in params.items()}
        for r0, r1 in _chunks(rows, rows_per_chunk):
            part = slice_rows(batch, r0, r1)
            yield slice(s0, s1), slice(r0, r1), part, forward(model_cfg, group, part, temperature, probe)


def count_correct(model_cfg, params, batch, temperature, max_items) -> torch.Tensor:
    """Correct answers per seed on one unstacked batch, computed chunk by chunk."""
    correct = torch.zeros(n_seeds(params), dtype=torch.long, device=batch.target.device)
    for seeds, _, part, logits in forward_in_chunks(model_cfg, params, batch, temperature, max_items):
        correct[seeds] += (logits.argmax(dim=-1) == part.target).sum(dim=1)
    return correct


@torch.inference_mode()
def block_correct(model_cfg: ModelConfig, params, cfg: EvalConfig, device="cpu", max_items=2**18, progress=True):
    """Correct answers per seed, length and block of test sequences: a (S, len(lengths),
    n_blocks) int64 tensor.  Every seed sees the same blocks, so the spread of the seeds' mean
    over blocks measures how much a test set of that size moves the mean by itself."""
    device = torch.device(device)
    params = {k: v.detach().to(device) for k, v in params.items()}
    limit = model_cfg.task.max_length()
    if limit is not None and max(cfg.lengths) > limit:
        raise ValueError(f"lengths must be <= {limit} for this task (distinct keys); got {max(cfg.lengths)}")
    n_blocks = math.ceil(cfg.n_sequences / EVAL_BLOCK)
    result = torch.zeros(n_seeds(params), len(cfg.lengths), n_blocks, dtype=torch.long)
    bar = tqdm(total=cfg.n_sequences * sum(cfg.lengths), desc="evaluating", disable=not progress, unit="item",
               unit_scale=True)
    for j, n in enumerate(cfg.lengths):
        for block in range(n_blocks):
            batch = test_block(model_cfg, cfg, n, block, device)
            result[:, j, block] = count_correct(model_cfg, params, batch, cfg.temperature, max_items).cpu()
            bar.update(batch.target.shape[0] * n)
    bar.close()
    return result


def accuracy(model_cfg: ModelConfig, params, cfg: EvalConfig, device="cpu", max_items=2**18, progress=True):
    """Per-seed accuracy, a (S, len(lengths)) tensor of fractions in [0, 1]."""
    return block_correct(model_cfg, params, cfg, device, max_items, progress).sum(-1).double() / cfg.n_sequences
