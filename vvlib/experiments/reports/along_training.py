"""Training runs' loss histories in a table: where each run's mean loss is lowest and how far it rises after."""

import numpy as np
import pandas as pd


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
