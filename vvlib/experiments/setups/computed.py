"""A table of a chapter that trains nothing (chapter 2's Monte Carlo), kept in the results store under every
parameter of the chapter, so the book reads it instead of drawing its sequences at every build."""

import pandas as pd
import torch

from ..storage import runs, store

# Parameters that say where results go or how the chapter was asked for, not what is computed.
NOT_COMPUTED = ("profile", "store_dir", "output_dir", "device")


def spec(chapter: str, name: str, P, device) -> dict:
    """The settings one of `chapter`'s tables is made with: all its parameters but NOT_COMPUTED's, and the
    kind of device (a GPU's sums differ from a CPU's in the last bits)."""
    return {"kind": "computed", "format": store.STORE_FORMAT, "chapter": chapter, "table": name,
            "parameters": {k: v for k, v in P.items() if k not in NOT_COMPUTED},
            "device_type": torch.device(device).type}


def table(chapter: str, name: str, P, compute, device) -> pd.DataFrame:
    """compute()'s DataFrame, read from P.store_dir when stored with these parameters, else computed and stored."""
    return runs.cached_tables(P.store_dir, f"{chapter[:2]}-{name}", spec(chapter, name, P, device),
                              lambda: {name: compute()}, device)[name]
