"""Chapter 10's question about its deep +LN, whose dictionary model trains to a higher loss than its Baseline
and whose first layer hardly attends: is the first layer's norm what sets it apart?  Chapter 11 trains +LN with
its norm after the last layer only (`norm_layers` "last") as rows of its own, at the same rates and on the same
seeds as its rows of the deep model; their Baseline is the same run.  This page reads them from the store, on
the page's own store and at the paper's scale, and never trains or evaluates anything.
"""

from IPython.display import Markdown, display

from ..experiments.reports import along_training, layer_rows, plots
from ..experiments.reports.answers import device_kind
from ..experiments.setups import variants
from . import decay_rows
from .page import show_figure

LAST = {"norm_layers": "last"}  # what chapter 11's rows change besides the deep model
LAST_LABEL = "Deep (+ LN after the last layer)"


def stored_pairs(P, P_rows, device) -> list:
    """[(rate name, the norm-after-the-last-layer row's stored_rows entry, the deep row's of the same rate or None)]
    in chapter 11's order: each row of +LN with its norm after the last layer only beside the row of the same rate
    and steps with it after every layer."""
    every = {entry[0]: entry for entry in decay_rows.stored_rows(P, P_rows, device)}
    last = decay_rows.stored_rows(P, P_rows, device, {**decay_rows.deep_model(P), **LAST})
    return [(entry[0], entry, every.get(entry[0])) for entry in last]


def show(P, device) -> dict:
    """Per scale: the training loss of both kinds of +LN and the Baseline at each rate committed, each row's accuracy
    against +LN after every layer and the Baseline on the same seeds, and each layer's attention; the rows not
    committed named.  Returns the shown runs' provenance for the chapter's results.json."""
    sources = {}
    for where, (P_rows, on) in decay_rows.scales(P, device).items():
        pairs = stored_pairs(P, P_rows, on)
        found = [(name, last, every) for name, last, every in pairs
                 if last[2] is not None and every is not None and every[2] is not None]
        missing = [name for name, _, _ in pairs if name not in {shown for shown, _, _ in found}]
        if not found:
            display(Markdown(f"*At {where}: chapter 11's rows of +LN with its norm after the last layer only are not stored"
                             + (f" (not yet: {'; '.join(missing)})*" if missing else " at this profile.*")))
            continue
        n_seeds, kind = found[0][1][1].n_seeds, device_kind(found[0][1][3]["layernorm"]["provenance"]["device"])
        histories = {}
        for name, (_, _, _, last), (_, _, _, every) in found:
            histories |= {f"{variants.LABELS['deep_baseline']}, {name}": every["baseline"]["loss_history"],
                          f"{variants.LABELS['deep_layernorm']}, {name}": every["layernorm"]["loss_history"],
                          f"{LAST_LABEL}, {name}": last["layernorm"]["loss_history"]}
        plots.training_curves(histories, band=True, title=f"{decay_rows.TASK}, H={P.deep_heads} L={P.deep_layers}: "
                                                          f"{n_seeds} seeds ({kind}), chapter 11's rows")
        show_figure(f"The deep model's training loss in chapter 11's rows ({n_seeds} seeds, {kind}), mean over seeds "
                    "with the 10-90% band. The Baseline, +LN with its norm after every layer, and +LN with it after "
                    "the last layer only share their seeds. If the first layer's norm holds +LN back, the last "
                    "line should follow the Baseline's.")
        display(Markdown(f"**At {where}** ({n_seeds} seeds, {kind}):"))
        display(along_training.loss_rise_table(histories))
        display(Markdown("Accuracy of +LN with its norm after the last layer only, paired seed by seed:"))
        display(layer_rows.norm_layers_table([(name, every[2], last[2]) for name, last, every in found],
                                             P_rows.eval_lengths, P_rows.compared_lengths))
        if missing:
            display(Markdown(f"Not yet committed: {'; '.join(missing)}."))
        sources |= {f"norm_rows/{where}/{name}/{side}": record["provenance"]
                    for name, (_, _, _, training), _ in found for side, record in training.items()}
        sources |= decay_rows.show_layers(P_rows, [(name, last[1]) for name, last, _ in found], on, where, kind,
                                          {"baseline": variants.LABELS["deep_baseline"], "layernorm": LAST_LABEL})
        placed = [(name, decay_rows.stored_layers(every[1], on)[1], decay_rows.stored_layers(last[1], on)[1])
                  for name, last, every in found]
        placed = [(name, every, last) for name, every, last in placed if every is not None and last is not None]
        if placed:
            display(Markdown("+LN's first layer by where its norm is, paired seed by seed:"))
            display(layer_rows.placement_table(placed, P_rows.max_len))
    return sources
