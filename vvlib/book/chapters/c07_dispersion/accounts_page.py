"""Chapter 7's two accounts side by side, on the paper-scale models: the paper's (the readout's input loses
variance) and attention dispersion's (the attention loses the item it should pick), per model and length."""

from IPython.display import Markdown, display

from .. import DISPERSION, DISTRIBUTION_SHIFT
from ....experiments.reports import answers
from . import attention_plots, two_accounts
from ... import paper_scale
from ...page import show_collapsed, show_figure

CAPTION = ("Accuracy against each account's measure ({scale}): a dot per model and length, large dots each "
           "variant's mean, from the training length (top) to 2¹⁴. Left, the largest attention weight; right, the "
           "variance ratio. An account fits where both variants fall on one curve.")


def cells(store_dir):
    """(two_accounts.cells of the paper-scale models, the training length, the scale in words), or None where
    chapter 6's or chapter 7's probe of both variants, or chapter 4's scores of the same runs, is not committed."""
    dispersion = paper_scale.probe(DISPERSION.name, store_dir, needed=("baseline", "layernorm"))
    distribution = paper_scale.probe(DISTRIBUTION_SHIFT.name, store_dir, needed=("baseline", "layernorm"))
    if not (dispersion and distribution):
        return None
    P, attention, trained = dispersion
    if any(distribution[2][v]["spec"] != trained[v]["spec"] for v in trained if v in distribution[2]):
        return None  # the two probes read other runs
    scored = paper_scale.accuracy_of_probed({v: trained[v] for v in ("baseline", "layernorm")}, store_dir)
    if scored is None:
        return None
    lengths, accuracy = scored
    scale = answers.scale_text(P.n_seeds, P.steps, trained["baseline"]["provenance"]["device"])
    return (two_accounts.cells(accuracy, lengths, attention["attention"], distribution[1]["global"]),
            P.max_len, scale)


def show(store_dir):
    """The section's table of correlations, its figure with its caption, the differences between the variants
    and the verdict; a line saying what is missing where the runs are not committed."""
    found = cells(store_dir) if store_dir else None
    if found is None:
        display(Markdown("This section reads the paper-scale runs, chapter 4's scores of them and chapters 6 and 7's "
                         "probes (`paper_scale_dir`; the book profile reads results/paper/); not all are committed "
                         "where this run looked, so it has nothing to show."))
        return
    frame, reference, scale = found
    display(Markdown(two_accounts.verdict(frame, reference, scale)))
    figure = attention_plots.two_accounts(frame, answers.SHORT_LABELS, two_accounts.MEASURES,
                                          title=f"Two accounts, one set of models ({scale})")
    show_figure(CAPTION.format(scale=scale), figure)  # now, above the tables, not when the cell ends
    display(two_accounts.correlation_table(frame, reference))
    show_collapsed("+LN minus the Baseline at each length: accuracy, largest weight and variance ratio",
                   two_accounts.difference_table(two_accounts.between_variants(frame, reference)).to_html())
