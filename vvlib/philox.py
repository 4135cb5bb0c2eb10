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
"""

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


def philox(counter, key):
    """Philox-4x32-10 of `counter` (four int64 tensors or ints of uint32 words, broadcast
    together, on the device of its tensors) under `key` (two ints of 32 bits): four int64
    tensors of uint32 words.

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
