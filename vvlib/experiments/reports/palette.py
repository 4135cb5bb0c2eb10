"""One colour per variant across the book: a figure asks here by the variant's name or either of its labels."""

import seaborn as sns

from ..setups.variants import LABELS, SHORT_LABELS

_DEEP = sns.color_palette("deep")
_DARK = sns.color_palette("dark")
COLOURS = {"baseline": _DEEP[0], "layernorm": _DEEP[1], "standardize": _DEEP[2], "rescale": _DEEP[4],
           "log_n": _DEEP[5], "log_n_layernorm": _DEEP[6], "deep_baseline": _DARK[0], "deep_layernorm": _DARK[1]}
_BY_LABEL = {label: COLOURS[v] for names in (LABELS, SHORT_LABELS) for v, label in names.items() if v in COLOURS}


def colour(name: str):
    """The colour of a variant named by its key ('layernorm') or label ('Baseline (+ LN)', '+LN').  KeyError
    for a name with no colour of its own."""
    return COLOURS[name] if name in COLOURS else _BY_LABEL[name]
