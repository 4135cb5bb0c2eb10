"""What a CUDA graph records must copy nothing from the host and read nothing back.  CI has no
GPU, so the recorded step runs here on the CPU under capture_safety.HostTraffic, which lists
every call that capture would refuse (the counter stream as first written made host copies in
every Philox call, and crashed at its first graphed step on a GPU)."""

import contextlib
import gc

import pytest
import torch

from vvlib import draws, philox, rng
from vvlib.capture_safety import host_traffic
from vvlib.experiments.setups.variants import VARIANT_OPTIONS
from vvlib.model import ModelConfig
from vvlib.tasks import TaskConfig, sample as tasks_sample
from vvlib.train import TrainConfig, Trainer

X = torch.arange(6)


@pytest.mark.parametrize("work, reason", [
    (lambda: X.sum().item(), "reads a value on the host"),
    (lambda: torch.as_tensor(3, device="cpu"), "makes a tensor from host data"),
    (lambda: X[X > 2], "indexes with a boolean mask"),
    (lambda: X.to("meta"), "copies a CPU tensor to another device"),
])
def test_the_watch_names_each_kind_of_host_traffic(work, reason):
    assert any(found.endswith(reason) for found in host_traffic(work))


def test_kernels_alone_pass_the_watch():
    assert host_traffic(lambda: (torch.full((), 3) * X + torch.arange(6), X.to(torch.float32), X.to("cpu"),
                                 torch.as_tensor(X), X[X.argmax()])) == []


SMALL = {"argmax": TaskConfig("argmax", n_classes=5), "dictionary": TaskConfig("dictionary", n_keys=256, n_values=8)}


# every kind of step a GPU records: (task, draws); the dictionary's generator draw is recorded only on a GPU,
# where it is the fixed draw (checked on its own below), so on a CPU it is not a recorded step
@pytest.mark.parametrize("task, source", [("argmax", "generators"), ("argmax", "counter"), ("dictionary", "counter")])
@pytest.mark.parametrize("extras", [{}, {"dropout": 0.1, "grad_clip": 1.0, "lr_schedule": "cosine", "warmup_steps": 2}])
def test_the_recorded_step_neither_copies_from_nor_reads_back_to_the_host(task, source, extras):
    model_cfg = ModelConfig(task=SMALL[task], hidden=16, key_dim=8, value_dim=8)
    trainer = Trainer(model_cfg, TrainConfig(n_seeds=3, steps=10, seed_group=2, batch_size=8, draws=source, **extras))
    trainer.train_step()  # as GraphedStep records after a first (warm-up) step
    for group in (0, 1):
        assert host_traffic(lambda: trainer.recorded_step(group)(12)) == []
        assert host_traffic(lambda: trainer.recorded_draw(group)(12)) == []


@pytest.mark.parametrize("task", ["argmax", "dictionary"])
@pytest.mark.parametrize("variant", list(VARIANT_OPTIONS))
def test_every_variant_the_queue_trains_records_a_step_without_host_traffic(task, variant):
    """The paper queue trains each variant of chapters 8 and 10 on a GPU (the normalizations, log N
    logits, several heads and layers): a host copy in one of them would stop its units at their first
    step, so each model's recorded step is watched here."""
    options = {**VARIANT_OPTIONS[variant], **({"heads": 4, "layers": 2} if variant.startswith("deep_") else {})}
    model_cfg = ModelConfig(task=SMALL[task], hidden=16, key_dim=8, value_dim=8, **options)
    trainer = Trainer(model_cfg, TrainConfig(n_seeds=2, steps=10, batch_size=8, draws="counter", weight_decay=0.1))
    trainer.train_step()
    assert host_traffic(lambda: trainer.recorded_step(0)(12)) == []


def test_the_dictionarys_fixed_draw_is_capture_safe():
    """The generator draw a GPU records for dictionary lookup (draws.sample_distinct on CUDA)."""
    gen = rng.generator("cpu", 0, "capture")
    assert host_traffic(lambda: draws.sample_distinct_fixed(gen, 8, 16, 16384, "cpu")) == []


@pytest.mark.parametrize("task", ["argmax", "dictionary"])
def test_counter_draws_stay_on_the_counters_device(task):
    """Device placement, held on the CPU with the meta device: every constant Philox and a task's sampling
    make must be made where the counters are (a CPU tensor mixed into meta ones raises, as it would copy on a
    GPU), and the batch comes out there."""
    step = torch.zeros((), dtype=torch.int64, device="meta")
    source = draws.CounterDraws(draws.counter_key(0, "placement"), step, torch.arange(3, device="meta"), "meta")
    batch = tasks_sample(SMALL[task], source, 4, 12, "meta", source.randint(5, 13, 4))
    assert {t.device.type for t in (batch.label, batch.target, batch.mask)} == {"meta"}
    assert {w.device.type for w in philox.philox((torch.arange(8, device="meta"), 7, 0, 2), (1, 2))} == {"meta"}


def test_the_fused_philox_hands_its_kernel_device_tensors_and_the_key_as_plain_ints(monkeypatch):
    """The fused Philox (VVLIB_PHILOX=fused) runs only on a GPU, so its glue is checked here with the kernel
    stubbed: under the host-traffic watch, on the meta device, every counter word reaches the kernel as a tensor
    where the counters are (an int made by a fill kernel, not copied), and the key as kernel arguments, ints."""
    seen = {}

    def kernel(*words, k0, k1):
        seen.update(words=words, key=(k0, k1))
        shape = torch.broadcast_shapes(*(w.shape for w in words))
        return tuple(torch.empty(shape, dtype=torch.int64, device=words[0].device) for _ in range(4))

    monkeypatch.setattr(philox, "fused_kernel", lambda: kernel)
    step, lanes = torch.zeros((), dtype=torch.int64, device="meta"), torch.arange(3, device="meta").view(-1, 1)
    out = []
    assert host_traffic(lambda: out.extend(philox.philox_fused((torch.arange(8, device="meta"), step, lanes, 2),
                                                               (5, 6)))) == []
    assert [(w.device.type, w.dtype) for w in seen["words"]] == [("meta", torch.int64)] * 4
    assert seen["key"] == (5, 6) and all(type(k) is int for k in seen["key"])
    assert [tuple(w.shape) for w in out] == [(3, 8)] * 4


class _Freed:
    """Marks when it is freed; kept alive only by a reference cycle, as a finished trainer's graphs can be."""

    def __init__(self, log):
        self.log, self.me = log, self

    def __del__(self):
        self.log.append("freed")


def test_a_recording_frees_cyclic_garbage_first_and_lets_no_collection_run_inside(monkeypatch):
    """Freeing a CUDA graph while another records invalidates the recording (seen on an H100:
    a test training two ensembles in a row failed at capture_end).  Here the graph and its
    context are stand-ins, so the order of events can be watched on the CPU."""
    from vvlib import graphdraw

    log = []
    monkeypatch.setattr(torch.cuda, "CUDAGraph", lambda: "graph")
    monkeypatch.setattr(torch.cuda, "graph", lambda graph: contextlib.nullcontext())
    _Freed(log)  # unreachable now, but freed only by a collection

    def work():
        log.append(f"recording, collector on: {gc.isenabled()}")
        return "out"

    assert graphdraw.recorded(work, generators=[]) == ("graph", "out")
    assert log == ["freed", "recording, collector on: False"]
    assert gc.isenabled()


