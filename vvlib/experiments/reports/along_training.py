"""Measured runs along training (vvlib/dynamics.py's tables, one per run) in words: where each run's loss is lowest
and how far it rises after, each layer's attention along the way, and which seeds' first layer ends up attending."""

import numpy as np
import pandas as pd

from ..setups.variants import BASE, NORMED
from ..storage import runs
from ...compare import format_p
from ...dynamics import MARGIN_CAP, attending_below
from ...stats import SHARED_HITS_DRAWS, fisher_p, shared_hits_p


DYNAMICS_READ = ("train_loss", "probe_loss", "missed", "loss_missed", "loss_from_misses", "margin", "grad_norm", "adam_root",
                 "adam_root_keys")  # what dynamics_summary reports


def dynamics_summary(tables: dict) -> dict:
    """Per measured run ({label: frame}, vvlib/dynamics.py), each of DYNAMICS_READ (means over seeds)
    averaged over two windows of a tenth of its measurements each: where the training loss is
    lowest (the window whose mean loss is least) and the last.  Windows, not single steps: one
    measurement of a few seeds is noisy."""
    summary = {}
    for label, frame in tables.items():
        means = frame.groupby("step")[list(DYNAMICS_READ)].mean()
        width = max(1, len(means) // 10)
        windows = means["train_loss"].rolling(width).mean().dropna()  # indexed by each window's last step
        low_end = windows.idxmin()
        low = means.loc[:low_end].iloc[-width:]
        last = means.iloc[-width:]
        summary[label] = {"lowest_steps": [int(low.index[0]), int(low.index[-1])],
                          "last_steps": [int(last.index[0]), int(last.index[-1])],
                          "n_seeds": int(frame["seed"].nunique()),
                          **{f"{c}_at_lowest": float(low[c].mean()) for c in DYNAMICS_READ},
                          **{f"{c}_last": float(last[c].mean()) for c in DYNAMICS_READ}}
    return summary


def last_tenth(frame: pd.DataFrame) -> pd.DataFrame:
    """A measured run's rows over the last tenth of its measurements (at least one): what "at the end" means."""
    return frame.iloc[-max(1, len(frame) // 10):]


def entropy_at_end(frame: pd.DataFrame, layer: int) -> pd.Series:
    """Per seed of a measured run (long-form: step, seed, entropy_layer<layer>), that layer's attention entropy at
    the end: its mean over last_tenth of the measurements."""
    return last_tenth(frame.pivot(index="step", columns="seed", values=f"entropy_layer{layer}")).mean()


def seeds_below_note(layer: int, length: int) -> str:
    """What seeds_below_table counts and tests, in words."""
    return (f"A seed attends when its layer {layer}'s entropy over the last tenth of the measurements is below "
            f"{attending_below(length):.2f} nats, half of ln {length}. Fisher's exact test compares each run's count "
            "with its panel's first run's; a second p asks whether runs attend in the same seeds more often than "
            f"chance ({SHARED_HITS_DRAWS:,} draws keeping each run's count).")


def seeds_below_table(tables: dict, layer: int, length: int) -> pd.DataFrame:
    """One panel of seed_entropy_lines ({label: measured run}), a row per run: in how many seeds its layer ends below
    attending_below(length) (entropy_at_end); for each run after the first, Fisher's exact p of its count against
    the first's and, where the two can be asked it (shared_seed_ends), shared_hits_p's p that they attend in the
    same seeds no more than chance would make them; on the first row, that p across all the panel's runs where it
    has more than two that can be asked it."""
    half, rows = attending_below(length), []
    (first_label, first_frame), first = next(iter(tables.items())), None
    for label, frame in tables.items():
        entropy = entropy_at_end(frame, layer)
        below = (int((entropy < half).sum()), len(entropy))
        later, first = first is not None, first or below
        rows.append({"run": label, "seeds that attend": f"{below[0]} of {below[1]}",
                     "count against the first's": f"p = {format_p(fisher_p(*below, *first))}" if later else "",
                     "same seeds as the first's": (_same_seeds_p({first_label: first_frame, label: frame}, layer,
                                                                 length) if later else "")})
    if len(tables) > 2:
        rows[0]["same seeds across the panel"] = _same_seeds_p(tables, layer, length)
    return pd.DataFrame(rows).fillna("").set_index("run")


def shared_seed_ends(tables: dict, layer: int, length: int):
    """{label: measured run} of one panel as a frame of runs (rows) by seeds (columns) of entropy_at_end, where the
    runs can be asked whether they attend in the same seeds: all on the same seeds, and at least two of them
    ending below attending_below(length) in some of their seeds but not all (a run attending in all or none has
    nothing to place, and one run alone cannot coincide with another).  None otherwise."""
    ends = pd.DataFrame({label: entropy_at_end(frame, layer) for label, frame in tables.items()}).T
    if ends.isna().any().any():  # the runs' seeds differ
        return None
    below = (ends < attending_below(length)).to_numpy()
    return ends if sum(0 < row.sum() < len(row) for row in below) >= 2 else None


def _same_seeds_p(tables: dict, layer: int, length: int) -> str:
    """shared_hits_p of runs' attending seeds in words ("p = ..."), or "" where they cannot be asked it
    (shared_seed_ends).  Where no draw is as large it gives the least p the draws can give, as a bound."""
    ends = shared_seed_ends(tables, layer, length)
    if ends is None:
        return ""
    p = shared_hits_p(ends.to_numpy() < attending_below(length))
    if p * (SHARED_HITS_DRAWS + 1) < 1.5:  # no draw as large: the least p the draws can give
        return f"p < {format_p(2 / (SHARED_HITS_DRAWS + 1))} (no draw as large)"
    return f"p = {format_p(p)}"


def layer_dynamics_table(tables: dict, layers: int, length: int) -> pd.DataFrame:
    """Each layer's attention along training (dynamics.measure_names' entropy_layerK, on_answer_layerK and
    qk_norm_layerK, means over seeds), a row per run and layer: the entropy at the first measurement, the first
    step at which it is below half of ln N (uniform weights over the probe batch's `length` items give ln N) or,
    where it never is, its lowest, and its mean over the last tenth of the measurements ("at the end"); the share
    of largest weights on the answer at its highest and at the end; the norm of its query and key weights at the
    first measurement, at its highest and at the end."""
    half, rows = attending_below(length), []
    for label, frame in tables.items():
        m = frame.groupby("step").mean(numeric_only=True)
        end = last_tenth(m)
        for k in range(1, layers + 1):
            entropy, on_answer, qk = m[f"entropy_layer{k}"], m[f"on_answer_layer{k}"], m[f"qk_norm_layer{k}"]
            below = entropy.index[entropy < half]
            rows.append({"run": label, "layer": k, "entropy at the start": f"{entropy.iloc[0]:.2f}",
                         f"first below {half:.2f}": (f"step {below[0]:,}" if len(below) else
                                                    f"never (lowest {entropy.min():.2f}, step {entropy.idxmin():,})"),
                         "entropy at the end": f"{end[f'entropy_layer{k}'].mean():.2f}",
                         "on the answer: most": f"{on_answer.max():.0%} (step {on_answer.idxmax():,})",
                         "at the end": f"{end[f'on_answer_layer{k}'].mean():.0%}",
                         "query-key norm: start, most, end": f"{qk.iloc[0]:.1f}, {qk.max():.1f} (step {qk.idxmax():,}), "
                                                             f"{end[f'qk_norm_layer{k}'].mean():.1f}"})
    return pd.DataFrame(rows).set_index(["run", "layer"])


def layers_parting_table(tables: dict, length: int) -> pd.DataFrame:
    """When the runs' attention parts: for every run after the first, the step from which its first layer's entropy
    stays more than half of ln N from the first run's (above or below it) to the end, and both training losses
    there; "never" where it does not stay apart."""
    half = attending_below(length)
    means = {label: frame.groupby("step").mean(numeric_only=True) for label, frame in tables.items()}
    (first_label, first), *others = means.items()
    rows = {}
    for label, m in others:
        gap = m["entropy_layer1"] - first["entropy_layer1"]
        step = _parted_from(gap, half)
        rows[label] = ({"apart from step": f"{step:,}", "its first layer": "above" if gap.iloc[-1] > 0 else "below",
                        "its training loss there": f"{m.loc[step, 'train_loss']:.2f}",
                        f"{first_label}'s": f"{first.loc[step, 'train_loss']:.2f}"} if step is not None
                       else {"apart from step": "never"})
    return pd.DataFrame.from_dict(rows, orient="index").fillna("").rename_axis(
        f"first layer more than {half:.2f} nats from {first_label}'s to the end")


def _parted_from(gap: pd.Series, size: float):
    """The first step from which |gap| stays above `size` with one sign to the last step (None if it does not
    by the second to last)."""
    apart = (gap.abs() > size) & (np.sign(gap) == np.sign(gap.iloc[-1]))
    if not apart.iloc[-1]:
        return None
    start = len(apart) - int(apart[::-1].astype(int).cumprod().sum())  # where the unbroken run at the end begins
    return None if start == len(apart) - 1 else int(apart.index[start])


def dynamics_table(summary: dict) -> pd.DataFrame:
    """A row per measured run: how far its training loss rises after its lowest window, and what the misses
    (probe sequences whose attention's top item is not the answer) do from that window to the last: their share,
    the loss of each, their part of the probe loss, and the answer's logit margin ("≥" where the mean margin is
    near the float32 limit, dynamics.MARGIN_CAP, so it is at least that)."""
    rows = {}
    for label, s in summary.items():
        (a, b) = s["lowest_steps"]
        lowest, last = s["train_loss_at_lowest"], s["train_loss_last"]
        rows[label] = {"lowest loss": f"{lowest:.2g}", "at steps": f"{a:,}-{b:,}",
                       "last / lowest": f"{last / lowest:.1f}",
                       "missed (%)": f"{100 * s['missed_at_lowest']:.2f} → {100 * s['missed_last']:.2f}",
                       "loss per miss (nats)": " → ".join(_nats(s[f"loss_missed_{w}"]) for w in ("at_lowest", "last")),
                       "misses' share of the probe loss": _miss_shares(s),
                       "logit margin": f"{s['margin_at_lowest']:.1f} → {_capped(s['margin_last'])}"}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("lowest window → last window")


def _nats(loss: float) -> str:
    return "none missed" if np.isnan(loss) else f"{loss:.1f}"


def _miss_shares(s: dict) -> str:
    shares = [_miss_share(s, when) for when in ("at_lowest", "last")]
    return " → ".join("–" if np.isnan(x) else f"{x:.0%}" for x in shares)


def _capped(margin: float) -> str:
    """A mean margin, with "≥" where it is near the float32 floor of the attention weights (dynamics.MARGIN_CAP)."""
    return f"≥ {margin:.1f}" if margin > 0.8 * MARGIN_CAP else f"{margin:.1f}"


def _miss_share(s: dict, when: str) -> float:
    return s[f"loss_from_misses_{when}"] / s[f"probe_loss_{when}"]


def loss_rise_table(histories: dict) -> pd.DataFrame:
    """A row per run of {label: loss history}: its lowest mean training loss over seeds and the step it falls on,
    the last one and its step, and how many times the lowest the last one is (1.0 where it is still falling)."""
    rows = {}
    for label, history in histories.items():
        means = [float(np.mean(losses)) for _, losses in history]
        best = int(np.argmin(means))
        rows[label] = {"lowest": f"{means[best]:.2g}", "at step": f"{history[best][0]:,}", "last": f"{means[-1]:.2g}",
                       "last step": f"{history[-1][0]:,}", "last / lowest": f"{means[-1] / means[best]:.1f}"}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("mean training loss over seeds")


def last_mean_loss(history: list) -> float:
    """The mean over seeds of a loss history's last logged loss."""
    return float(np.mean(history[-1][1]))


def rise_rows_table(found: list, constant_accuracy: dict, constant_runs: dict, n: str,
                    constant_seeds: int) -> pd.DataFrame:
    """A row for the constant rate (runs {side: [run record]}, accuracy {side: {N: %}}, constant_seeds seeds), then
    one per row of `found` [(row record, training records {side: record})] trained as long: each side's last mean
    training loss and its accuracy at N = n (the rows' +LN minus Baseline is in sensitivity.row_table)."""
    losses = {"constant rate": {v: last_mean_loss(runs.joined_history(rs)) for v, rs in constant_runs.items()}}
    accuracy, seeds = {"constant rate": constant_accuracy}, {"constant rate": constant_seeds}
    for row, training in found:
        losses[row["row"]] = {v: last_mean_loss(r["loss_history"]) for v, r in training.items()}
        accuracy[row["row"]], seeds[row["row"]] = row["accuracy"], row["n_seeds"]
    at = f"at N = {int(n):,} (%)"
    table = {label: {"seeds": seeds[label], "last loss, Baseline": f"{loss[BASE]:.2g}",
                     "last loss, +LN": f"{loss[NORMED]:.2g}", f"Baseline {at}": f"{accuracy[label][BASE][n]:.1f}",
                     f"+LN {at}": f"{accuracy[label][NORMED][n]:.1f}"} for label, loss in losses.items()}
    return pd.DataFrame.from_dict(table, orient="index").rename_axis("row")
