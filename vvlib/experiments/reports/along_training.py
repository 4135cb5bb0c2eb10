"""Measured runs along training (vvlib/dynamics.py's tables, one per run) in words: where each run's loss is lowest,
how far it rises after, and what the attention's misses do meanwhile."""

import numpy as np
import pandas as pd

from ..setups.variants import BASE, NORMED
from ..storage import runs
from ...dynamics import MARGIN_CAP


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
