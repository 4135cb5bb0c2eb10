"""Checks between a chapter's parameters, each written once, run before a kernel starts.

A parameter's own type and range are checked where it is read (experiments/params.py).  What
involves several parameters (test lengths against the key classes, a ladder within the longer
training), the machine (a GPU asked for) or the disk (a results store named) is checked here:
`python -m vvlib run` refuses a bad combination with one line and exit status 2 before
papermill starts, and a notebook run by plain papermill refuses it the same way in its first
cell (chapters.configure runs the same checks).
"""

from pathlib import Path

import torch

from ..experiments import dynamics_runs
from ..task_base import EVAL_BLOCK
from ..experiments.params import ParameterError, require


def device_available(P):
    if P.get("device") == "cuda" and not torch.cuda.is_available():
        raise ParameterError("device: expected auto or cpu on this machine (no CUDA GPU is available here), got 'cuda'")


def keys_cover_lengths(P):
    require(max(P.eval_lengths) <= P.n_keys, "eval_lengths", f"lengths <= n_keys ({P.n_keys}), since keys are distinct",
            P.eval_lengths)


def ladder_within_long_training(P):
    require(not P.long_steps or max(P.ladder_steps) <= P.long_steps, "ladder_steps",
            f"steps at most long_steps ({P.long_steps})", P.ladder_steps)


def measured_rows_fit(P):
    """Chapters 4-5's measured runs (dynamics_rows) are the longer training's, measured at its checkpoints."""
    if not P.dynamics_rows:
        return
    require(P.long_steps > 0, "dynamics_rows", "[] while long_steps is 0 (a measured run is the longer training's)",
            P.dynamics_rows)
    for row in P.dynamics_rows:  # dicts: params.py checked the list's type
        try:
            train_cfg = dynamics_runs.row_train_config(P, row)
        except (ValueError, TypeError) as exc:
            raise ParameterError(f"dynamics_rows: {row!r} is refused: {exc}") from None
        require(dynamics_runs.lands_on_checkpoints(P.dynamics_every, train_cfg), "dynamics_every",
                f"a step count up to long_steps ({P.long_steps}) that divides checkpoint_every ({P.checkpoint_every})",
                P.dynamics_every)


def recheck_fits(P):
    """Chapters 4-5's second evaluation of the longer training (recheck_*): more test sequences than the
    first, whose blocks it begins with, at tested lengths, from a seed the longer training has."""
    if not P.recheck_sequences:
        return
    require(P.long_steps > 0, "recheck_sequences", "0 while long_steps is 0 (it evaluates the longer training again)",
            P.recheck_sequences)
    require(P.n_eval_sequences % EVAL_BLOCK == 0, "n_eval_sequences",
            f"a multiple of {EVAL_BLOCK} (the test blocks) when recheck_sequences is set", P.n_eval_sequences)
    require(P.recheck_sequences > P.n_eval_sequences and P.recheck_sequences % EVAL_BLOCK == 0, "recheck_sequences",
            f"0, or a multiple of {EVAL_BLOCK} above n_eval_sequences ({P.n_eval_sequences}), whose sequences it "
            f"begins with", P.recheck_sequences)
    require(P.recheck_from_seed < P.long_seeds, "recheck_from_seed", f"a seed below long_seeds ({P.long_seeds})",
            P.recheck_from_seed)
    require(set(P.recheck_lengths) <= set(P.eval_lengths), "recheck_lengths",
            f"lengths among eval_lengths ({P.eval_lengths})", P.recheck_lengths)


def counter_arm_fits(P):
    """Chapters 4-5's counter-stream arm (counter_seeds): the longer training again, on the other stream,
    in runs of long_seed_group seeds each (variants.counter_arm)."""
    if not P.get("counter_seeds"):
        return
    require(P.long_steps > 0, "counter_seeds", "0 while long_steps is 0 (it trains the longer training again)",
            P.counter_seeds)
    require(P.draws == "generators", "counter_seeds", "0 when draws is already counter (the arm is the longer "
            "training on the other stream)", P.counter_seeds)
    require(P.counter_seeds % (P.long_seed_group or P.counter_seeds) == 0, "counter_seeds",
            f"a multiple of long_seed_group ({P.long_seed_group}), one stored run per group", P.counter_seeds)


def paper_scale_store_exists(P):
    require(not P.paper_scale_dir or Path(P.paper_scale_dir).is_dir(), "paper_scale_dir",
            "an existing results store, or ''", P.paper_scale_dir)


def training_length_is_tested(P):
    """Chapters that compare every length with the longest training length."""
    require(P.max_train_len in P.eval_lengths, "eval_lengths", f"a list holding max_train_len ({P.max_train_len})",
            P.eval_lengths)


def shown_seed_exists(P):
    require(P.shown_seed < P.n_seeds, "shown_seed", f"a seed index < n_seeds ({P.n_seeds})", P.shown_seed)


def distribution_lengths_tested(P):
    require(set(P.distribution_lengths) <= set(P.eval_lengths), "distribution_lengths",
            f"lengths from eval_lengths {P.eval_lengths}", P.distribution_lengths)


def components_within_hidden(P):
    require(max(P.components) < P.hidden, "components", f"indices < hidden ({P.hidden})", P.components)


def lengths_hold_top_k(P):
    from ..probing import TOP_K

    require(min(P.eval_lengths) >= TOP_K, "eval_lengths", f"lengths >= {TOP_K}", P.eval_lengths)


def heatmap_lengths_tested(P):
    require(set(P.heatmap_lengths) <= set(P.eval_lengths), "heatmap_lengths",
            f"lengths from eval_lengths {P.eval_lengths}", P.heatmap_lengths)


def examples_within_probes(P):
    require(P.n_examples <= P.n_probe_sequences, "n_examples",
            f"an int <= n_probe_sequences ({P.n_probe_sequences})", P.n_examples)


def curriculum_start_within_training(P):
    require(P.min_train_len <= P.curriculum_start_len <= P.max_train_len, "curriculum_start_len",
            f"an int from min_train_len ({P.min_train_len}) to max_train_len ({P.max_train_len})",
            P.curriculum_start_len)


def heads_divide_hidden(P):
    require(P.hidden % P.deep_heads == 0, "deep_heads", f"a divisor of hidden ({P.hidden})", P.deep_heads)


def compared_lengths_tested(P):
    require(all(n in P.eval_lengths for n in P.compared_lengths), "compared_lengths",
            f"lengths among eval_lengths ({P.eval_lengths})", P.compared_lengths)


def component_within_model(P):
    require(P.component < P.d_model, "component", f"an int < d_model ({P.d_model})", P.component)


def components_within_model(P):
    require(max(P.components) < P.d_model, "components", f"ints < d_model ({P.d_model})", P.components)


def run_all(checks, P):
    """Every chapter's device check, then the chapter's own; the first failure raises ParameterError."""
    for check in (device_available, *checks):
        check(P)
