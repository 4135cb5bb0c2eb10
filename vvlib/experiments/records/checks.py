"""Checks between parameters that several chapters make, each written once; a check that one
chapter alone makes is in that chapter's file.

A parameter's own type and range are checked where it is read (experiments/setups/params.py).  What
involves several parameters (test lengths against the key classes), the machine (a GPU asked for)
or the disk (a results store named) is checked here: `python -m vvlib run` refuses a bad
combination with one line and exit status 2 before papermill starts, and a notebook run by plain
papermill refuses it the same way in its first cell (book/page.configure runs the same checks).
"""

from pathlib import Path

import torch

from ... import rng
from ..setups.params import ParameterError, require


def device_available(P):
    if P.get("device") == "cuda" and not torch.cuda.is_available():
        raise ParameterError("device: expected auto or cpu on this machine (no CUDA GPU is available here), got 'cuda'")
    if P.get("tf32") and rng.resolve_device(P.device).type != "cuda":
        raise ParameterError("tf32: expected False without a CUDA GPU in use (TF32 is a GPU's tensor-core format), got True")


def keys_cover_lengths(P):
    require(max(P.eval_lengths) <= P.n_keys, "eval_lengths", f"lengths <= n_keys ({P.n_keys}), since keys are distinct",
            P.eval_lengths)


def paper_scale_store_exists(P):
    require(not P.paper_scale_dir or Path(P.paper_scale_dir).is_dir(), "paper_scale_dir",
            "an existing results store, or ''", P.paper_scale_dir)


def training_length_is_tested(P):
    """Chapters that compare every length with the longest training length."""
    require(P.max_len in P.eval_lengths, "eval_lengths", f"a list holding max_len ({P.max_len})",
            P.eval_lengths)


def shown_seed_exists(P):
    require(P.shown_seed < P.n_seeds, "shown_seed", f"a seed index < n_seeds ({P.n_seeds})", P.shown_seed)


def run_all(checks, P):
    """Every chapter's device check, then the chapter's own; the first failure raises ParameterError."""
    for check in (device_available, *checks):
        check(P)
