"""A chapter's computed table, kept in the results store under every parameter of the chapter.

For chapters that train nothing (chapter 2's Monte Carlo): each section's table is computed once
per set of parameters and stored (runs.cached_tables), so the published book reads chapter 2's
from results/book/ instead of drawing its 20,000 sequences per length at every build, and a
stored-only build (VVLIB_STORED_ONLY) fails rather than recompute one.
"""

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
