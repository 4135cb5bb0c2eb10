"""The one-kernel Philox (philox.KERNEL_SOURCE) gives the bits of the tensor implementation.

A GPU compiles the source with NVRTC (torch.cuda.jiterator) and is lent here too rarely to find a
wrong bit, so this compiles the very same source with g++ on the CPU, calls it for each element
through ctypes, and compares with philox_tensors and the published known answers.  On a GPU the
same comparison runs through jiterator itself, and a graphed training step with each (the last
two tests)."""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest
import torch

from vvlib import draws, philox
from vvlib.train import TrainConfig, Trainer

from tests.test_draws import KNOWN_ANSWERS, random_counters

# Calls the kernel's entry point once per element, as jiterator's elementwise loop does on a GPU.
HARNESS = """
extern "C" void run(const long long* c, long long k0, long long k1, long long n, long long* out) {
  for (long long i = 0; i < n; ++i)
    philox4x32_10<long long>(c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3], k0, k1,
                             out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]);
}
"""


@pytest.fixture(scope="module")
def kernel_on_cpu(tmp_path_factory):
    """KERNEL_SOURCE built with g++ (-O2, where a compiler would exploit any undefined behaviour)."""
    if shutil.which("g++") is None:
        pytest.skip("needs g++ (Debian: apt-get install g++)")
    folder = tmp_path_factory.mktemp("philox")
    (folder / "kernel.cpp").write_text(philox.KERNEL_SOURCE + HARNESS)
    subprocess.run(["g++", "-O2", "-shared", "-fPIC", "-o", str(folder / "kernel.so"), str(folder / "kernel.cpp")],
                   check=True, capture_output=True)
    library = ctypes.CDLL(str(folder / "kernel.so"))
    library.run.argtypes = [ctypes.c_void_p, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_void_p]

    def run(counters: np.ndarray, key) -> np.ndarray:
        counters = np.ascontiguousarray(counters, dtype=np.int64)
        out = np.empty_like(counters)
        library.run(counters.ctypes.data, key[0], key[1], len(counters), out.ctypes.data)
        return out

    return run


@pytest.mark.parametrize("counter, key, expected", KNOWN_ANSWERS)
def test_the_kernel_gives_the_published_known_answers(kernel_on_cpu, counter, key, expected):
    assert tuple(int(w) for w in kernel_on_cpu(np.array([counter]), key)[0]) == expected


@pytest.mark.parametrize("key", [(0xDEADBEEF, 0x8BADF00D), (0, 0xFFFFFFFF), draws.counter_key(0, "train-data")])
def test_the_kernel_gives_the_tensor_implementations_bits(kernel_on_cpu, key):
    counters = random_counters(20_000, 3).astype(np.int64)
    expected = philox.philox_tensors([torch.from_numpy(counters[:, i]) for i in range(4)], key)
    assert np.array_equal(kernel_on_cpu(counters, key), np.stack([w.numpy() for w in expected], axis=1))


def test_jiterator_reads_the_kernels_entry_point_and_arguments():
    """What jiterator parses on any machine: the entry point's name, and the key as its two kwargs."""
    from torch.cuda import jiterator

    assert jiterator._CodeParser(philox.KERNEL_SOURCE).function_name == "philox4x32_10"
    made = philox.fused_kernel()
    assert made.kernel_name == "philox4x32_10" and made.num_outputs == 4 and made.kwargs_dict == {"k0": 0, "k1": 0}


def test_a_gpu_takes_the_kernel_unless_told_otherwise(monkeypatch):
    monkeypatch.delenv("VVLIB_PHILOX", raising=False)
    assert philox.implementation() == "fused"
    monkeypatch.setenv("VVLIB_PHILOX", "tensors")
    assert philox.implementation() == "tensors"


def test_a_cpu_never_takes_the_kernel_and_a_bad_choice_is_named(monkeypatch):
    monkeypatch.setenv("VVLIB_PHILOX", "fused")
    words = philox.philox((torch.arange(4), 1, 2, 3), (5, 6))  # jiterator would raise without CUDA
    assert all(torch.equal(a, b) for a, b in zip(words, philox.philox_tensors((torch.arange(4), 1, 2, 3), (5, 6))))
    monkeypatch.setenv("VVLIB_PHILOX", "triton")
    with pytest.raises(ValueError, match="VVLIB_PHILOX must be one of fused, tensors; got 'triton'"):
        philox.implementation()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_on_cuda_the_kernel_gives_the_tensor_implementations_bits():
    counters = torch.from_numpy(random_counters(20_000, 4).astype(np.int64)).cuda()
    lanes = torch.arange(3, device="cuda").view(-1, 1)  # broadcast as CounterDraws does
    key = (0xA4093822, 0x299F31D0)
    for counter in ([counters[:, i] for i in range(4)], (counters[:, 0], torch.tensor(7, device="cuda"), lanes, 2)):
        fused, tensors = philox.philox_fused(counter, key), philox.philox_tensors(counter, key)
        assert all(torch.equal(a, b) for a, b in zip(fused, tensors))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("task", ["argmax", "dictionary"])
def test_a_graphed_step_with_the_kernel_gives_the_same_losses_and_weights(task, small_argmax, monkeypatch):
    """The kernel inside a recorded CUDA graph (compiled in the warm-up step, before the recording)."""
    from tests.test_train import CAPTURABLE_DICTIONARY

    model = small_argmax if task == "argmax" else CAPTURABLE_DICTIONARY
    cfg = TrainConfig(n_seeds=3, steps=6, batch_size=8, draws="counter", min_len=3, max_len=16)
    runs = {}
    for choice in philox.IMPLEMENTATIONS:
        monkeypatch.setenv("VVLIB_PHILOX", choice)
        trainer = Trainer(model, cfg, "cuda", graph_step=True)
        runs[choice] = ([trainer.train_step() for _ in range(cfg.steps)], trainer.weights())
    (losses, weights), (fused_losses, fused_weights) = runs["tensors"], runs["fused"]
    assert all(torch.equal(a, b) for a, b in zip(losses, fused_losses))
    assert all(torch.equal(weights[name], fused_weights[name]) for name in weights)
