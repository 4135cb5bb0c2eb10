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


def mulhilo(a: torch.Tensor, m_high: torch.Tensor, m_low: torch.Tensor):
    """(high, low) 32-bit halves of a * m, for int64 words a in [0, 2^32) and multipliers
    m = m_high * 2^16 + m_low < 2^32 given by their 16-bit halves (broadcast against a)."""
    low_part = a * m_low  # < 2^48
    # a * m = t * 2^16 + (low_part mod 2^16), with t < 2^49
    t = a * m_high + (low_part >> 16)
    return t >> 16, ((t & 0xFFFF) << 16) | (low_part & 0xFFFF)


def philox(counter, key):
    """Philox-4x32-10 of `counter` (four int64 tensors or ints of uint32 words, broadcast
    together, on the device of its tensors) under `key` (two ints of 32 bits): four int64
    tensors of uint32 words.

    Each round multiplies words 0 and 2 and xors the products' high halves into words 1 and 3;
    the two halves of the state are held stacked, (0, 2) and (1, 3), so that a round is a dozen
    elementwise kernels, not two dozen (on a CPU, small tensors cost per kernel more than per element)."""
    device = next((c.device for c in counter if isinstance(c, torch.Tensor)), None)
    c0, c1, c2, c3 = torch.broadcast_tensors(*(torch.as_tensor(c, dtype=torch.int64, device=device) for c in counter))
    column = (2,) + (1,) * c0.dim()  # one value per stacked half, broadcast over the counters
    as_column = lambda values: torch.tensor(values, dtype=torch.int64, device=device).view(column)
    m_high, m_low = as_column([m >> 16 for m in MULTIPLIERS]), as_column([m & 0xFFFF for m in MULTIPLIERS])
    round_keys = [as_column([(key[i] + r * KEY_STEPS[i]) & MASK32 for i in (0, 1)]) for r in range(ROUNDS)]
    multiplied, other = torch.stack((c0, c2)), torch.stack((c1, c3))
    for k in round_keys:
        high, low = mulhilo(multiplied, m_high, m_low)
        # (c0, c2) <- (hi(c2 M1) ^ c1 ^ k0, hi(c0 M0) ^ c3 ^ k1);  (c1, c3) <- (lo(c2 M1), lo(c0 M0))
        multiplied, other = high.flip(0) ^ other ^ k, low.flip(0)
    return multiplied[0], other[0], multiplied[1], other[1]
