"""Chapter 10's question about its deep dictionary model, whose training loss climbs late at a constant
rate: does a decaying rate stop the climb, and what does the climb cost its accuracy?  Chapter 11 trains
the model as rows of its own on the same seeds (a constant and a cosine rate, and the constant rate stopped
before the climb); this page reads them from the store, on the page's own store and at the paper's scale,
and never trains or evaluates anything.
"""

from IPython.display import Markdown, display

from ..experiments.chapters import SENSITIVITY
from ..experiments.reports import along_training, layer_rows, plots
from ..experiments.reports.answers import device_kind
from ..experiments.setups import probes, sensitivity, variants
from ..experiments.setups.paper_tasks import DICTIONARY
from ..experiments.storage import runs, store
from .page import show_figure
from .runner import resolved

TASK = DICTIONARY.name  # the task whose deep model's loss climbs at the paper's scale


def deep_model(P) -> dict:
    """Chapter 10's deep variants' model as chapter 11's rows name it."""
    return {"heads": P.deep_heads, "layers": P.deep_layers}


def rate_name(row: dict, P_row) -> str:
    """A deep row as this page names it: what it changes besides the model and the seeds, or 'constant rate'
    where nothing else (chapter 11's default rate is constant), and its steps: 'lr_schedule=cosine, 10,000 steps'."""
    rest = {k: v for k, v in row.items() if k not in (*sensitivity.model_changes(row), "steps", "n_seeds")}
    return f"{sensitivity.label(rest) if rest else 'constant rate'}, {P_row.steps:,} steps"


def stored_rows(P, P_rows, device, model: dict | None = None) -> list:
    """[(rate_name, the row's parameters, accuracy {side: (seeds, lengths)}, training {side: record})] of chapter
    11's TASK rows (its parameters P_rows) of the deep model (or of `model`, its changes as a row names them), in
    chapter 11's order (not those taking the Baseline's run over: start_from_step), accuracy and training None where
    the store lacks any of the row.  Only rows on the first
    row's seeds are kept, so that every comparison with it is paired: the same seeds draw the same data and start
    from the same weights in every row."""
    rows = [(row, sensitivity.row_params(P_rows, TASK, row))
            for row in sensitivity.rows_of_model(P_rows, TASK, model or deep_model(P))
            if "start_from_step" not in row]  # a handover is not a rate: deep_dynamics.show_handover reads those
    return [(rate_name(row, P_row), P_row, *(sensitivity.stored_accuracy(P_row, TASK, device) or (None, None)))
            for row, P_row in rows if P_row.n_seeds == rows[0][1].n_seeds]


def scales(P, device) -> dict:
    """{where, in words: (chapter 11's parameters, the device type its runs are stored under)}: the page's own
    store at chapter 11's profile of the same name, and the paper's scale where the page reads one."""
    at = {"this page's store": (resolved(SENSITIVITY.name, SENSITIVITY.profile_or_default(P.profile),
                                         {"store_dir": P.store_dir}), device)}
    if P.paper_scale_dir:
        at["the paper's scale"] = (resolved(SENSITIVITY.name, "paper", {"store_dir": P.paper_scale_dir}), "cuda")
    return at


def show(P, device) -> dict:
    """Per scale: the training loss of each deep row committed, a sentence on its climb, and each variant's
    accuracy against the constant rate's on the same seeds; the rows not committed named.  Returns the shown
    runs' provenance {"deep_rows/<where>/<rate>/<side>": provenance} for the chapter's results.json."""
    sources = {}
    for where, (P_rows, on) in scales(P, device).items():
        rows = stored_rows(P, P_rows, on)
        found = [r for r in rows if r[2] is not None]
        missing = [name for name, _, accuracy, _ in rows if accuracy is None]
        if not found:
            display(Markdown(f"*At {where}: none of chapter 11's rows of this model is stored"
                             + (f" (not yet: {'; '.join(missing)})*" if missing else " at this profile.*")))
            continue
        n_seeds = found[0][1].n_seeds
        histories = {f"{variants.LABELS['deep_' + side]}, {name}": record["loss_history"]
                     for name, _, _, training in found for side, record in training.items()}
        kind = device_kind(found[0][3]["baseline"]["provenance"]["device"])
        plots.training_curves(histories, band=True, title=f"{TASK}, H={P.deep_heads} L={P.deep_layers}: {n_seeds} "
                                                          f"seeds ({kind}), chapter 11's rows")
        show_figure(f"The deep model's training loss in chapter 11's rows ({n_seeds} seeds, {kind}), at the "
                    "constant rate and with the rate decayed along half a cosine, each with and without +LN: mean over "
                    "seeds with the 10-90% band. Compare the constant-rate lines with the decayed ones late in "
                    "training.")
        display(Markdown(f"**At {where}** ({n_seeds} seeds, {kind}):"))
        display(along_training.loss_rise_table(histories))
        if len(found) > 1 and rows[0][2] is not None:  # compared with the first row, the constant rate
            display(Markdown(f"Accuracy, each row against the constant rate on the same {n_seeds} seeds:"))
            display(layer_rows.schedule_table([(name, acc) for name, _, acc, _ in found], P_rows.eval_lengths,
                                              P_rows.compared_lengths))
        if missing:
            display(Markdown(f"Not yet committed: {'; '.join(missing)}."))
        sources |= {f"deep_rows/{where}/{name}/{side}": record["provenance"]
                    for name, _, _, training in found for side, record in training.items()}
        sources |= show_layers(P_rows, [(name, P_row) for name, P_row, accuracy, _ in found], on, where, kind)
    return sources


def stored_layers(P_row, device):
    """(chapter 11's probe of each layer's attention for one row (probes.layer_probe), its layer_frame rows of both
    sides) read from P_row.store_dir, the frame None where any part is not stored.  Nothing is computed."""
    probe = probes.layer_probe(P_row, TASK, device)
    if not all(part.stored(P_row.store_dir) for part in probe.parts):
        return probe, None
    with runs.stored_only():
        return probe, probe.tables(P_row.store_dir, device)["layers"]


def show_layers(P_rows, rows: list, device, where: str, kind: str, labels: dict | None = None) -> dict:
    """Each layer's attention in the deep rows `rows` [(rate name, the row's parameters)]: tables of entropies and
    of the first layer at the training length, the rows not probed named; `labels` {side: its name}
    (default: the deep variants').  Returns the probe parts' provenance for results.json's sources."""
    probed, missing, sources = [], [], {}
    for name, P_row in rows:
        probe, frame = stored_layers(P_row, device)
        if frame is None:
            missing.append(name)
            continue
        probed.append((name, frame))
        sources |= {f"deep_layers/{where}/{name}/{part.variant}":
                    store.read_json(part.folder(P_row.store_dir) / "tables.json")["provenance"] for part in probe.parts}
    if probed:
        labels = labels or {side: variants.LABELS[f"deep_{side}"] for side in sensitivity.PAIR}
        display(Markdown(f"**Each layer's attention at {where}** ({kind}, {probes.LAYER_PROBE_SEQUENCES} test sequences "
                         "per length, means over the seeds and heads): its entropy in nats,"))
        display(layer_rows.layer_table(probed, labels))
        display(Markdown("and how often a head's largest weight is on the item that holds the answer (%, a mean over "
                         "the layer's heads):"))
        display(layer_rows.layer_table(probed, labels, "on_answer"))
        display(Markdown("The first layer at the training length, the two variants paired seed by seed:"))
        display(layer_rows.layer_entropy_table(probed, P_rows.max_len, labels))
    if missing:
        how = ("each row's GPU unit probes it with its run" if P_rows.profile == "paper" else
               f"`python -m vvlib paper --chapters 11 --profile {P_rows.profile}` probes them")
        display(Markdown(f"Each layer's attention not probed yet: {'; '.join(missing)} ({how})."))
    return sources
