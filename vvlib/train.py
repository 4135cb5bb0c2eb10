"""Seed-batched training with checkpoints that resume bit-for-bit.

All randomness of a run lives in its data draws and the init seed, so a checkpoint
(weights, AdamW state, step, and with `draws="generators"` the per-seed generator states) is
the whole state: resuming from it reproduces the uninterrupted run exactly.  The counter
stream (`draws="counter"`, vvlib/draws.py) computes each step's data from the step itself.

`seed_group` > 0 steps the ensemble in groups of that many seeds.  On a CPU, groups of a
few seeds keep a step's activations in the caches, which trains faster than one batch of
many seeds (figures in bench/README.md).  With one thread it gives the whole ensemble's weights bit
for bit; with several, a reduction may be split differently for a different number of seeds,
which changes the rounding (tests/test_train.py checks both).  So it is one of the settings
that decide the weights; 0 (all seeds at once) stands for every group size that covers all seeds.
The groups themselves, and the checkpoint layout they share, are vvlib/seed_groups.py.

A command with a time limit (a lent GPU's) trains inside `stopping_at(deadline)`: a run still
training at the deadline saves its checkpoint and raises TimeUp, and a later command resumes it.
"""

import contextlib
import contextvars
import time
from pathlib import Path

import torch
from tqdm import tqdm  # text bars (stderr): they work in terminals, notebooks and papermill alike

from . import draws as data_draws, graphdraw, graphstep, optim, seed_groups
from .draws import CounterDraws
from .model import ModelConfig, per_seed_loss, settings as model_settings
from .atomic import save_torch
from .task_base import map_fields, stack
from .tasks import sample
from .train_config import TrainConfig, group_size, max_len_at, weight_settings

CHECKPOINT_FORMAT = 1
_DEADLINE = contextvars.ContextVar("deadline", default=None)  # (deadline, its clock) by which runs stop: stopping_at


class TimeUp(Exception):
    """A run stopped at the deadline of stopping_at, its checkpoint saved: training it again resumes there."""


@contextlib.contextmanager
def stopping_at(deadline: float | None, clock=time.monotonic):
    """Runs trained in this process inside the block stop after the step at which clock() reaches
    `deadline` (None: no deadline), saving their checkpoint, and raise TimeUp."""
    token = _DEADLINE.set(None if deadline is None else (deadline, clock))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def training_batch(model_cfg: ModelConfig, cfg: TrainConfig, source, step, device):
    """One batch per seed, stacked to (S, B, ...); `source` as in batch_up_to."""
    return batch_up_to(model_cfg, cfg, source, max_len_at(cfg, step), device)


def batch_up_to(model_cfg: ModelConfig, cfg: TrainConfig, source, n: int, device):
    """training_batch with the longest sequence given: n items, each sequence's length ~ U{min_len..n}.
    `source`: each seed's generator, drawn one after another, or one CounterDraws for all the seeds."""
    if isinstance(source, CounterDraws):
        lengths = source.randint(cfg.min_len, n + 1, cfg.batch_size)
        return sample(model_cfg.task, source, cfg.batch_size, n, device, lengths)
    batches = []
    for gen in source:
        lengths = torch.randint(cfg.min_len, n + 1, (cfg.batch_size,), generator=gen, device=device)
        batches.append(sample(model_cfg.task, gen, cfg.batch_size, n, device, lengths))
    return stack(batches)


DROPOUT_STREAM = "dropout"  # with the run's seed, names the counter stream of the dropout masks


def dropout_masks(cfg: TrainConfig, step: torch.Tensor, seeds: torch.Tensor):
    """The masks of one training step for seed indices `seeds` (model.mlp's `dropout`): each
    activation kept with chance 1 - cfg.dropout and then scaled by 1 / (1 - cfg.dropout), so
    its mean is unchanged; None without dropout.  The masks come from the counter stream
    (draws.CounterDraws), a pure function of (run seed, seed index, step, which activation), so a
    seed's masks are the same whatever its group, after a resume, and on every device; they
    need no generator state in a checkpoint, and a CUDA graph reads the step when it replays."""
    if not cfg.dropout:
        return None
    source = CounterDraws(data_draws.counter_key(cfg.seed, DROPOUT_STREAM), step, seeds, step.device)
    keep = 1 - cfg.dropout
    return lambda shape: (source.rand(*shape[1:]) < keep).to(torch.float32) / keep  # shape: (S, ...)


class Trainer:
    """Holds the whole training state; `run()` advances it to cfg.steps.

    `graph_draws` replays each seed group's draws from a CUDA graph (graphdraw.py), `graph_step` the whole step
    (graphstep.py).  Neither changes a number, so neither is a setting.  None for both: the whole step where
    supported (CUDA, Task.capturable), else eager; asking for graph_draws alone keeps the step eager."""

    def __init__(self, model_cfg: ModelConfig, cfg: TrainConfig, device="cpu", graph_draws: bool | None = None,
                 graph_step: bool | None = None):
        self.model_cfg, self.cfg, self.device = model_cfg, cfg, torch.device(device)
        if cfg.tf32 and self.device.type != "cuda":
            raise ValueError(f"tf32=True needs a CUDA GPU (TF32 is a tensor-core format); got device {self.device.type!r}")
        supported = graphdraw.supported(model_cfg.task, cfg.max_len, self.device, cfg.draws)
        if not all(isinstance(g, (bool, type(None))) for g in (graph_draws, graph_step)):
            raise ValueError(f"graph_draws and graph_step must each be None (where supported), True or False; "
                             f"got {graph_draws!r} and {graph_step!r}")
        for name, asked in (("graph_draws", graph_draws), ("graph_step", graph_step)):
            if asked and not supported:
                raise ValueError(f"{name}=True needs CUDA and a task whose draws a CUDA graph can record "
                                 f"(Task.capturable); got task {model_cfg.task.name!r} on {self.device.type}")
        self.graph_step = (supported and graph_draws is None) if graph_step is None else graph_step
        self.graph_draws = not self.graph_step and (supported if graph_draws is None else graph_draws)
        # a schedule's learning rate lives in a tensor that every group's AdamW reads (and a CUDA graph with it)
        varies = cfg.lr_schedule != "constant"
        self.lr = torch.tensor(cfg.lr, device=self.device) if varies else cfg.lr
        self.groups = seed_groups.make_groups(model_cfg, cfg, group_size(cfg), self.device, self.lr,
                                              capturable=self.graph_step)
        self.graphed = [None] * len(self.groups)  # each group's GraphedDraws or GraphedStep, made at first use
        self.step = 0
        self.step_tensor = torch.zeros((), dtype=torch.int64, device=self.device)  # the counter draws' step
        self._counter_batch = None  # (step, the ensemble's batch at that step): see counter_batch
        self.loss_history = []  # (step, per-seed mean loss over the last window)
        # the losses since the last logged step, checkpointed: a resumed run logs what an uninterrupted one does
        self.loss_window = torch.zeros(cfg.n_seeds, device=self.device)
        self.window_steps = 0
        self.saves, self.saving_s = 0, 0.0  # checkpoints written by this process, and the seconds they took
        # seconds trained in earlier sittings (None: unknown), and when this sitting began
        self.earlier_s, self.sitting_start = 0.0, time.perf_counter()

    def configs(self) -> dict:
        return {"model": model_settings(self.model_cfg), "train": weight_settings(self.cfg)}

    def draw(self, group: int = 0):
        """This step's batch for one seed group, (S_g, B, ...): each seed's from its own generator,
        or the group's rows of the whole ensemble's counter-drawn batch (see counter_batch)."""
        g = self.groups[group]
        self.step_tensor.fill_(self.step)
        if not self.graph_draws and self.cfg.draws == "counter":
            start = sum(len(other.seeds) for other in self.groups[:group])
            return map_fields(self.counter_batch(), lambda t: t[start:start + len(g.seeds)])
        if not self.graph_draws:
            return training_batch(self.model_cfg, self.cfg, g.source(self.step_tensor), self.step, self.device)
        if self.graphed[group] is None:
            self.graphed[group] = graphdraw.GraphedDraws(self.recorded_draw(group), g.generators)
        return self.graphed[group](max_len_at(self.cfg, self.step))

    def recorded_draw(self, group: int):
        """What GraphedDraws records for one seed group: n -> its batch of length n, drawn at the
        step `step_tensor` holds.  It must copy nothing from the host and read nothing back
        (tests/test_capture.py runs it under capture_safety.HostTraffic on a CPU)."""
        g = self.groups[group]
        return lambda n: batch_up_to(self.model_cfg, self.cfg, g.source(self.step_tensor), n, self.device)

    def counter_batch(self):
        """The whole ensemble's counter-drawn batch for this step, drawn once per step.  A seed's
        numbers depend only on their coordinates, so a group's rows are what the group would draw
        alone; one draw for all seeds costs a few larger kernels instead of many small ones."""
        if self._counter_batch is None or self._counter_batch[0] != self.step:
            seeds = torch.cat([g.seeds for g in self.groups])
            source = CounterDraws(self.groups[0].counter_key, self.step_tensor, seeds, self.device)
            self._counter_batch = (self.step, training_batch(self.model_cfg, self.cfg, source, self.step, self.device))
        return self._counter_batch[1]

    def group_step(self, group: int, batch) -> torch.Tensor:
        """One AdamW step of one seed group on `batch`; returns its seeds' losses, (S_g,)."""
        g = self.groups[group]
        params, optimizer = g.params, g.optimizer
        per_seed = per_seed_loss(self.model_cfg, params, batch, dropout_masks(self.cfg, self.step_tensor, g.seeds))
        optimizer.zero_grad(set_to_none=True)
        per_seed.sum().backward()  # seeds share no weights, so each gets its own gradient
        if self.cfg.grad_clip:
            optim.clip_per_seed(params.values(), self.cfg.grad_clip)
        optimizer.step()
        return per_seed.detach()

    def graphed_step(self, group: int) -> torch.Tensor:
        """group_step with this step's draw, replayed from the group's CUDA graph for this length."""
        g = self.groups[group]
        if self.graphed[group] is None:
            self.graphed[group] = graphstep.GraphedStep(self.recorded_step(group), g.generators, g.params, g.optimizer)
        self.step_tensor.fill_(self.step)  # read by the recorded counter draws
        return self.graphed[group](max_len_at(self.cfg, self.step))

    def recorded_step(self, group: int):
        """What GraphedStep records for one seed group: n -> the group's losses after one AdamW step
        on a batch of length n drawn at the step `step_tensor` holds (the same rule as recorded_draw)."""
        return lambda n: self.group_step(group, self.recorded_draw(group)(n))

    def train_step(self) -> torch.Tensor:
        """One AdamW step of every seed; returns each seed's loss, (S,)."""
        if isinstance(self.lr, torch.Tensor):
            c = self.cfg
            self.lr.fill_(optim.learning_rate(c.lr, c.lr_schedule, c.warmup_steps, c.steps, self.step, c.drop_step))
        with matmul_tf32(self.cfg.tf32):  # the step's products, and those a CUDA graph records in it
            losses = [self.graphed_step(i) if self.graph_step else self.group_step(i, self.draw(i))
                      for i in range(len(self.groups))]
        self.step += 1
        return torch.cat(losses)

    def run(self, checkpoint: Path | None = None, progress=True, on_step=None, log_every=None):
        """Train to cfg.steps, saving a checkpoint at multiples of cfg.checkpoint_every steps at
        least cfg.checkpoint_gap_s seconds apart: a run stopped unexpectedly loses about that much
        time, and a fast one does not spend its time saving (a checkpoint of 100 seeds' weights and
        AdamW's state takes seconds to write).  Inside stopping_at, a run the deadline finds
        unfinished saves its checkpoint and raises TimeUp.  The final weights are the caller's to keep."""
        log_every = log_every or max(1, self.cfg.steps // 100)
        deadline, clock = _DEADLINE.get() or (None, None)
        end = self.cfg.steps
        bar = tqdm(total=end, initial=self.step, desc="training", disable=not progress, unit="step")
        last_save = time.monotonic()
        while self.step < end:
            self.loss_window += self.train_step()
            self.window_steps += 1
            bar.update(1)
            if self.step % log_every == 0:
                mean = (self.loss_window / self.window_steps).tolist()
                self.loss_history.append((self.step, mean))
                bar.set_postfix(loss=f"{sum(mean) / len(mean):.3f}")
                self.loss_window.zero_()
                self.window_steps = 0
            if on_step is not None:  # before the checkpoint: a resumed run never skips a step's hook
                on_step(self.step)
            due = self.step % self.cfg.checkpoint_every == 0 and time.monotonic() - last_save >= self.cfg.checkpoint_gap_s
            saved = checkpoint is not None and due and self.step < self.cfg.steps
            if saved:
                self.save(checkpoint)
                last_save = time.monotonic()
            if deadline is not None and self.step < end and clock() >= deadline:
                bar.close()
                if checkpoint is not None and not saved:
                    self.save(checkpoint)
                raise TimeUp(f"stopped at step {self.step:,} of {self.cfg.steps:,} at the deadline"
                             + (f"; {checkpoint} resumes it" if checkpoint is not None else ""))
        bar.close()
        return self.weights()

    def weights(self) -> dict:
        """All seeds' weights, {name: (S, ...)}."""
        return seed_groups.joined_weights(self.groups)

    def save(self, path: Path):
        start = time.perf_counter()
        state = {
            "format": CHECKPOINT_FORMAT,
            "configs": self.configs(),
            "step": self.step,
            "params": self.weights(),
            "optimizer": seed_groups.joined_optimizer_state(self.groups),  # one layout for any grouping
            "generators": [g.get_state() for g in seed_groups.generators(self.groups)],
            "loss_history": self.loss_history,
            "loss_window": self.loss_window,
            "window_steps": self.window_steps,
            "trained_s": self.trained_s(),
        }
        save_torch(state, path)  # atomic: an interruption leaves the previous checkpoint intact
        self.saves += 1
        self.saving_s += time.perf_counter() - start

    def trained_s(self) -> float | None:
        """Seconds this run has trained so far, every sitting's up to now (None where an earlier one's is unknown)."""
        return None if self.earlier_s is None else self.earlier_s + time.perf_counter() - self.sitting_start

    def resume(self, path: Path) -> bool:
        """Load `path` if it exists; refuse one written for other settings."""
        path = Path(path)
        if not path.exists():
            return False
        try:
            state = torch.load(path, map_location=self.device, weights_only=False)
        except Exception as exc:
            raise RuntimeError(f"checkpoint {path} is unreadable ({exc}); delete it to start over") from exc
        if state.get("format") != CHECKPOINT_FORMAT or state.get("configs") != self.configs():
            raise RuntimeError(f"checkpoint {path} was written for other settings; delete it or use another store")
        seed_groups.load_weights(self.groups, state["params"])
        seed_groups.load_optimizer_state(self.groups, state["optimizer"], self.lr)
        for gen, gen_state in zip(seed_groups.generators(self.groups), state["generators"]):
            gen.set_state(gen_state.cpu())  # map_location moved it; a generator's state is a CPU ByteTensor
        self.step = state["step"]
        self.loss_history = state["loss_history"]
        # an older checkpoint without the window: the next logged loss averages the steps since this resume
        self.loss_window = state.get("loss_window", torch.zeros_like(self.loss_window)).to(self.device)
        self.window_steps = state.get("window_steps", 0)
        self.earlier_s = state.get("trained_s")  # the steps after that checkpoint are trained again, in this sitting
        # record afresh: from the restored generators, and AdamW's new state tensors
        self.graphed = [None] * len(self.groups)
        return True


@contextlib.contextmanager
def matmul_tf32(on: bool):
    """float32 matrix products in TF32 (on) or in full float32 (off) inside the block, as it was after.
    The flag is torch's, process-wide: a run sets it for its own steps and leaves it as it found it."""
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = on
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before


def train(model_cfg: ModelConfig, cfg: TrainConfig, device="cpu", checkpoint=None, progress=True, on_step=None):
    """Train (resuming from `checkpoint` if present); returns (weights, loss_history)."""
    trainer = Trainer(model_cfg, cfg, device)
    if checkpoint is not None:
        trainer.resume(checkpoint)
    weights = trainer.run(checkpoint, progress=progress, on_step=on_step)
    return weights, trainer.loss_history
