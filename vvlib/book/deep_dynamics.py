"""Chapter 10's deep dictionary model along training: when do its Baseline, its +LN and +LN with the norm after
the last layer only part, layer by layer?  Chapter 5 measures them (those of its dynamics_rows that change its
model into chapter 10's deep one, at the constant rate: the first seeds of chapter 11's rows of that model);
this page reads their tables from the store and never trains anything.
"""

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from ..experiments.chapters import DICTIONARY_LOOKUP
from ..experiments.reports import plots, report
from ..experiments.reports.summary import device_kind
from ..experiments.setups import dynamics_runs, variants
from ..experiments.storage import runs, store
from .decay_rows import TASK, deep_model
from .norm_rows import LAST, LAST_LABEL
from .runner import resolved


def row_label(row: dict) -> str:
    """A measured row of the deep model as chapter 10 names its variants, and the step where it takes its
    Baseline's run over if it does."""
    if row.get("norm_layers") == LAST["norm_layers"]:
        name = LAST_LABEL
    else:
        name = variants.LABELS["deep_layernorm" if row.get("variant") == "layernorm" else "deep_baseline"]
    start = row.get("start_from_step")
    return name if start is None else f"{name}, from the Baseline's step {start:,}"


def deep_rows(P, P_measured) -> list:
    """Chapter 5's measured rows (its parameters P_measured) of chapter 10's deep model (P) that change nothing
    else but where they start, in chapter 5's order: the Baseline, +LN, +LN with its norm after the last layer
    only, and each +LN taking the Baseline's run over."""
    model = deep_model(P)
    return [row for row in P_measured.dynamics_rows
            if {k: v for k, v in dynamics_runs.model_changes(row).items() if k != "norm_layers"} == model
            and set(row) <= {"variant", "start_from_step", *dynamics_runs.model_changes(row)}]


def stored_tables(P, device) -> tuple:
    """(chapter 5's parameters at the profile of P's name, {label: table}, {label: provenance}, [labels not
    stored]) of the deep rows, read from P's store only."""
    P_measured = resolved(DICTIONARY_LOOKUP.name, DICTIONARY_LOOKUP.profile_or_default(P.profile),
                          {"store_dir": P.store_dir})
    task = variants.task_config(P_measured, TASK)
    tables, provenance, missing = {}, {}, []
    for row in deep_rows(P, P_measured):
        try:
            with runs.stored_only():
                tables[row_label(row)], provenance[row_label(row)] = dynamics_runs.measured_row(
                    P_measured, task, row, device, progress=False)
        except store.StoreError:
            missing.append(row_label(row))
    return P_measured, tables, provenance, missing


def show(P, device) -> dict:
    """The figure of each layer's attention along training and a sentence on when the runs part; the runs not
    stored named.  Returns their provenance {"deep_dynamics/<label>": provenance} for the chapter's results.json."""
    P_measured, tables, provenance, missing = stored_tables(P, device)
    rows = deep_rows(P, P_measured)
    if not tables:
        display(Markdown("*Not measured at this profile: chapter 5's `dynamics_rows` has no row of this deep model*"
                         if not rows else f"*Not stored yet: {'; '.join(missing)} (chapter 5 measures them: "
                                          f"`python -m vvlib run 05_dictionary_lookup --profile {P.profile}`)*"))
        return {}
    kind = device_kind(next(iter(provenance.values()))["device"])
    figure = plots.layer_dynamics(tables, P.deep_layers, P_measured.max_len,
                                  title=f"{TASK}, H={P.deep_heads} L={P.deep_layers}, constant rate: "
                                        f"{P_measured.dynamics_seeds} seeds x {P_measured.long_steps:,} steps ({kind}), measured "
                                        f"every {P_measured.dynamics_every} steps on {dynamics_runs.PROBE_ROWS} "
                                        f"sequences of {P_measured.max_len} items (mean over seeds)")
    display(figure)
    plt.close(figure)
    said = [report.layer_dynamics_sentence(tables, P.deep_layers, P_measured.max_len)]
    if missing:
        said.append(f"Not stored yet: {'; '.join(missing)}.")
    display(Markdown(" ".join(said)))
    return {f"deep_dynamics/{label}": p for label, p in provenance.items()}
