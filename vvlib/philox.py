"""Philox-4x32-10 (Salmon, Moraes, Dror and Shaw, SC 2011) in int64 tensor arithmetic.

A counter-based generator keeps no state: four 32-bit words come out of
philox(counter, key) as a pure function of a 128-bit counter and a 64-bit key, so any
number of the stream is computed without the ones before it, in one batch of elementwise
kernels for as many counters as wanted.

Words are uint32 values held in int64 tensors: every operation below (multiply, shift, and,
or, xor) is exact integer arithmetic with no result above 2^49, so CPU and CUDA give the same
bits.  A 32 x 32-bit product would need 64 unsigned bits, beyond int64; `mulhilo` multiplies
by the constant's two 16-bit halves instead.
"""

import torch

MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
KEY_STEPS = (0x9E3779B9, 0xBB67AE85)  # added to the key between rounds (golden ratio, sqrt(3) - 1)
ROUNDS = 10
MASK32 = 0xFFFFFFFF


def mulhilo(a: torch.Tensor, m: int):
    """(high, low) 32-bit halves of a * m, for int64 words a in [0, 2^32) and a constant m < 2^32."""
    low_part = a * (m & 0xFFFF)  # < 2^48
    # a * m = t * 2^16 + (low_part mod 2^16), with t < 2^49
    t = a * (m >> 16) + (low_part >> 16)
    return t >> 16, ((t & 0xFFFF) << 16) | (low_part & 0xFFFF)


def philox(counter, key):
    """Philox-4x32-10 of `counter` (four int64 tensors or ints of uint32 words, broadcast
    together, on the device of its tensors) under `key` (two ints of 32 bits): four int64
    tensors of uint32 words."""
    device = next((c.device for c in counter if isinstance(c, torch.Tensor)), None)
    c0, c1, c2, c3 = torch.broadcast_tensors(*(torch.as_tensor(c, dtype=torch.int64, device=device) for c in counter))
    k0, k1 = key
    for _ in range(ROUNDS):
        hi0, lo0 = mulhilo(c0, MULTIPLIERS[0])
        hi1, lo1 = mulhilo(c2, MULTIPLIERS[1])
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        k0, k1 = (k0 + KEY_STEPS[0]) & MASK32, (k1 + KEY_STEPS[1]) & MASK32
    return c0, c1, c2, c3
