"""Deterministic seeds: every random stream in the project is named by integers.

A stream is identified by a tuple such as (seed, "train-data", seed_index).  Hashing
the tuple (rather than adding offsets) keeps streams independent: seed 1's data is
never seed 0's data shifted by one.
"""

import hashlib
import os

import torch


def derive_seed(*parts) -> int:
    """A 63-bit seed from any tuple of ints/strings, stable across runs and machines."""
    text = "/".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "little") >> 1


def generator(device, *parts) -> torch.Generator:
    """A torch.Generator on `device`, seeded from the named stream `parts`."""
    gen = torch.Generator(device=device)
    gen.manual_seed(derive_seed(*parts))
    return gen


def resolve_device(device: str) -> torch.device:
    """'auto' picks CUDA when available; 'cuda' without a GPU is a clear error.  In a process
    that torchrun started, CUDA means this rank's own GPU, numbered by LOCAL_RANK."""
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be one of 'auto', 'cpu', 'cuda'; got {device!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' was requested but no CUDA GPU is available; use 'cpu' or 'auto'")
    if device == "cuda" and "LOCAL_RANK" in os.environ:
        return torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    return torch.device(device)
