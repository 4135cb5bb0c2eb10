"""Philox-4x32-10 (Salmon, Moraes, Dror and Shaw, SC 2011) in int64 tensor arithmetic.

A counter-based generator keeps no state: four 32-bit words come out of
philox(counter, key) as a pure function of a 128-bit counter and a 64-bit key, so any
number of the stream is computed without the ones before it, in one batch of elementwise
kernels for as many counters as wanted.

Words are uint32 values held in int64 tensors.  A round multiplies two words by 32-bit
constants: the product of two values below 2^32 needs 64 unsigned bits, and int64 keeps
exactly its low 64 bits (multiplication wraps modulo 2^64 on CPUs and GPUs alike), so the
product's two 32-bit halves are its low word and its high word masked back to 32 bits.
tests/test_draws.py checks the bits against the published answers and an independent uint64
implementation, on every device the tests run on.

Nothing here copies from the host or reads a value back: every constant is made on the
counters' device by kernels (arange, multiply, add), so a CUDA graph can record a call
(tests/test_capture.py runs it under a check that fails on any host copy or read).

That takes about seventy small kernels a call.  On a GPU the same rounds run as one kernel,
each element's four words kept in registers (KERNEL_SOURCE, compiled on first use by
torch.cuda.jiterator), the default there since an H100 showed the same bits and a faster step
(bench/README.md: the first GPU check, 2026-11-26); VVLIB_PHILOX=tensors asks for the elementwise
kernels instead.  g++ compiles the same source on a CPU for its bits test (tests/test_philox_kernel.py).
"""

import functools
import os

import torch

MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
KEY_STEPS = (0x9E3779B9, 0xBB67AE85)  # added to the key between rounds (golden ratio, sqrt(3) - 1)
ROUNDS = 10
MASK32 = 0xFFFFFFFF


def _pair(first: int, second: int, device, dims: int) -> torch.Tensor:
    """(2, 1, ..., 1) int64 holding (first, second) on `device`, made by kernels, not copied from
    the host (arange and an affine map: capture-safe where torch.tensor([first, second]) is not)."""
    return (torch.arange(2, dtype=torch.int64, device=device) * (second - first) + first).view(2, *(1,) * dims)


def _word(c, device) -> torch.Tensor:
    """A counter word as an int64 tensor on `device`: a tensor as it is, an int by a fill kernel."""
    if isinstance(c, torch.Tensor):
        return c.to(torch.int64)
    return torch.full((), c, dtype=torch.int64, device=device)


IMPLEMENTATIONS = ("fused", "tensors")  # VVLIB_PHILOX on a GPU: one CUDA kernel per call (default), or elementwise


def implementation() -> str:
    """Which implementation a call on a GPU takes (a CPU always takes "tensors")."""
    chosen = os.environ.get("VVLIB_PHILOX", IMPLEMENTATIONS[0])
    if chosen not in IMPLEMENTATIONS:
        raise ValueError(f"VVLIB_PHILOX must be one of {', '.join(IMPLEMENTATIONS)}; got {chosen!r}")
    return chosen


def philox(counter, key):
    """Philox-4x32-10 of `counter` (four int64 tensors or ints of uint32 words, broadcast
    together, on the device of its tensors) under `key` (two ints of 32 bits): four int64
    tensors of uint32 words."""
    device = next((c.device for c in counter if isinstance(c, torch.Tensor)), torch.device("cpu"))
    if device.type == "cuda" and implementation() == "fused":
        return philox_fused(counter, key)
    return philox_tensors(counter, key)


def philox_tensors(counter, key):
    """philox() in elementwise torch kernels, on any device.

    The state is held as two stacked pairs, the multiplied words (0, 2) and the others in
    reverse order (3, 1); a round then needs no reordering of the others, and one flip of the
    multiplied pair's new values: seven elementwise kernels."""
    device = next((c.device for c in counter if isinstance(c, torch.Tensor)), torch.device("cpu"))
    c0, c1, c2, c3 = torch.broadcast_tensors(*(_word(c, device) for c in counter))
    dims = c0.dim()
    multipliers = _pair(*MULTIPLIERS, device, dims)
    # each round's key, reversed as the others are: (k1, k0) + r * (step1, step0), all rounds in one tensor
    rounds = torch.arange(ROUNDS, dtype=torch.int64, device=device).view(ROUNDS, *(1,) * (dims + 1))
    keys = (_pair(key[1], key[0], device, dims) + rounds * _pair(KEY_STEPS[1], KEY_STEPS[0], device, dims)) & MASK32
    multiplied, others = torch.stack((c0, c2)), torch.stack((c3, c1))
    for r in range(ROUNDS):
        product = multiplied * multipliers  # (c0 M0, c2 M1) modulo 2^64
        # c0' = hi(c2 M1) ^ c1 ^ k0, c2' = hi(c0 M0) ^ c3 ^ k1: in reversed order that is hi ^ others ^ keys
        # (the high word's sign extension is masked away with the rest)
        multiplied = (((product >> 32) ^ others ^ keys[r]) & MASK32).flip(0)
        others = product & MASK32  # (lo(c0 M0), lo(c2 M1)) = (c3', c1'): already in reversed order
    return multiplied[0], others[1], multiplied[1], others[0]


# One element's Philox-4x32-10 for jiterator (NVRTC) and g++ alike (no CUDA-only names); words in and out as T.
KERNEL_SOURCE = """
template <typename T> void philox4x32_10(T c0, T c1, T c2, T c3, T k0, T k1, T& o0, T& o1, T& o2, T& o3) {
  unsigned int x0 = (unsigned int)c0, x1 = (unsigned int)c1, x2 = (unsigned int)c2, x3 = (unsigned int)c3;
  unsigned int key0 = (unsigned int)k0, key1 = (unsigned int)k1;
  for (int r = 0; r < 10; ++r) {
    unsigned long long p0 = 0xD2511F53ull * x0, p1 = 0xCD9E8D57ull * x2;
    unsigned int y0 = (unsigned int)(p1 >> 32) ^ x1 ^ key0, y2 = (unsigned int)(p0 >> 32) ^ x3 ^ key1;
    x1 = (unsigned int)p1;
    x3 = (unsigned int)p0;
    x0 = y0;
    x2 = y2;
    key0 += 0x9E3779B9u;
    key1 += 0xBB67AE85u;
  }
  o0 = (T)x0; o1 = (T)x1; o2 = (T)x2; o3 = (T)x3;
}
"""
@functools.cache
def fused_kernel():
    """KERNEL_SOURCE as a jiterator function of the four counter words, the key its two keyword
    arguments: made once (needing no GPU), compiled by NVRTC at its first call on one."""
    from torch.cuda import jiterator

    return jiterator._create_multi_output_jit_fn(KERNEL_SOURCE, num_outputs=4, k0=0, k1=0)


def philox_fused(counter, key):
    """philox() as one CUDA kernel per call.  The counter words are tensors on the GPU (an int by a fill
    kernel, as in philox_tensors), the key two kernel arguments: nothing is copied from the host."""
    device = next(c.device for c in counter if isinstance(c, torch.Tensor))
    return tuple(fused_kernel()(*(_word(c, device) for c in counter), k0=key[0], k1=key[1]))
