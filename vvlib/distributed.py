"""Seeds spread over the processes of a `torchrun` launch (torch.distributed).

Seeds never interact in training (each has its own weights, AdamW state and data stream), so
a run splits into whole seed groups (TrainConfig.seed_group; 0 is one group, never split)
that the ranks train on their own; then every rank gathers every seed's weights and loss
history, in seed order.  A rank computes exactly what one process computes for those seeds,
so with the same number of threads per process the weights equal a single-process run's bit
for bit (tests/test_distributed.py).

torchrun sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT; the process group is
made from them on first use.  It is gloo on CPUs and GPUs alike: the ranks only exchange pickled
objects (weights, losses, accuracies) once per run, never inside a step.  On GPUs each
rank computes on the one numbered by LOCAL_RANK (rng.resolve_device).  Without torchrun there
is one process, as before.
"""

import dataclasses
import os
from pathlib import Path

import torch

from .train import Trainer, TrainConfig, group_size


def launched() -> bool:
    """True in a process that torchrun started with more than one rank."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def rank_and_size() -> tuple[int, int]:
    """(this process's rank, number of ranks); (0, 1) outside torchrun."""
    if not launched():
        return 0, 1
    import torch.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group("gloo")
    return dist.get_rank(), dist.get_world_size()


def env_rank() -> int:
    """This process's rank as torchrun set it (0 outside torchrun), without joining the group."""
    return int(os.environ.get("RANK", "0")) if launched() else 0


def _groups(cfg: TrainConfig) -> int:
    return -(-cfg.n_seeds // group_size(cfg))


def share_bounds(units: int, rank: int, size: int) -> tuple[int, int]:
    """[begin, end) of rank `rank`'s consecutive share of `units` things, as even as can be."""
    return rank * units // size, (rank + 1) * units // size


def spreads(cfg: TrainConfig) -> bool:
    """Whether a run is spread over the ranks: under torchrun, with at least one seed group per
    rank.  Otherwise every rank trains the whole run itself (the same numbers, no faster).
    seed_group 0 is one group: splitting a one-batch run would change its rounding (measured:
    weights apart by up to 0.16, accuracies by 2 points at the ci profile) under the same store entry."""
    return launched() and rank_and_size()[1] <= _groups(cfg)


def is_writer() -> bool:
    """Only rank 0 writes results and store entries (the other ranks hold the same numbers)."""
    return rank_and_size()[0] == 0


def barrier():
    """Wait for every rank (after rank 0 has written to the store, before anyone reads it)."""
    if launched():
        import torch.distributed as dist

        rank_and_size()
        dist.barrier()


def agreed(read):
    """read() as rank 0 sees it, on every rank: what the store holds is decided once, so all
    ranks take the same path (one rank computing while another loads would never meet the
    other in a collective)."""
    if not launched():
        return read()
    import torch.distributed as dist

    rank_and_size()
    box = [read() if dist.get_rank() == 0 else None]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def seed_share(cfg: TrainConfig, rank: int, size: int) -> TrainConfig:
    """The part of the run that rank `rank` of `size` trains: consecutive whole seed groups, as
    even as the groups allow.  Every rank needs a share."""
    unit, units = group_size(cfg), _groups(cfg)
    if size > units:
        raise ValueError(f"{size} ranks but only {units} seed group(s) of {unit} to share among them "
                         f"({cfg.n_seeds} seeds, seed_group {cfg.seed_group}): start at most {units} ranks, "
                         "or set a smaller seed_group")
    begin, end = share_bounds(units, rank, size)
    first = cfg.first_seed + begin * unit
    last = min(cfg.first_seed + end * unit, cfg.first_seed + cfg.n_seeds)
    return dataclasses.replace(cfg, first_seed=first, n_seeds=last - first)


def checkpoint_of(checkpoint: Path, rank: int, size: int) -> Path:
    """Each rank's own checkpoint beside the run's (a resume needs the same number of ranks)."""
    return checkpoint.with_name(f"{checkpoint.stem}-rank{rank}-of-{size}{checkpoint.suffix}")


def gather(value) -> list:
    """[value of rank 0, value of rank 1, ...] on every rank (any picklable value)."""
    import torch.distributed as dist

    parts = [None] * rank_and_size()[1]
    dist.all_gather_object(parts, value)
    return parts


def train_spread(model_cfg, cfg: TrainConfig, device, checkpoint: Path | None, progress=True):
    """Train the run with its seeds spread over the ranks, each resuming from its own checkpoint;
    returns (all seeds' weights on `device`, loss history, the step this rank started from)."""
    rank, size = rank_and_size()
    # every rank checkpoints at the same steps (a clock's gap would split them: see the restart below)
    share = dataclasses.replace(seed_share(cfg, rank, size), checkpoint_gap_s=0)
    trainer = Trainer(model_cfg, share, device)
    own = None if checkpoint is None else checkpoint_of(Path(checkpoint), rank, size)
    if own is not None:
        trainer.resume(own)
    if len(set(gather(trainer.step))) > 1:  # stopped between two ranks' checkpoints: start over together
        trainer = Trainer(model_cfg, share, device)
    start = trainer.step
    weights = trainer.run(own, progress=progress and rank == 0)
    parts = gather(({k: v.cpu() for k, v in weights.items()}, trainer.loss_history))  # rank order = seed order
    barrier()  # every rank holds every seed before any checkpoint goes
    if own is not None:
        own.unlink(missing_ok=True)
    weights = {k: torch.cat([w[k] for w, _ in parts]).to(device) for k in parts[0][0]}
    history = [(step, [loss for _, h in parts for loss in h[i][1]]) for i, (step, _) in enumerate(parts[0][1])]
    return weights, history, start
