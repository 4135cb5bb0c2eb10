"""One colour per variant across the book: a figure asks here by the variant's name or either of its labels.
The paper's numbers for a variant are drawn in a darker shade of the same hue, so that no colour repeats."""

import seaborn as sns

from ..setups.variants import LABELS, SHORT_LABELS

_DEEP, _DARK = sns.color_palette("deep"), sns.color_palette("dark")
_INDEX = {"baseline": 0, "layernorm": 1, "standardize": 2, "adaptive_layernorm": 3, "rescale": 4, "log_n": 5,
          "log_n_layernorm": 6, "adaptive_standardize": 8, "adaptive_baseline": 9}
COLOURS = {v: _DEEP[i] for v, i in _INDEX.items()} | {"deep_baseline": _DARK[7], "deep_layernorm": _DARK[8]}
_BY_LABEL = {label: v for names in (LABELS, SHORT_LABELS) for v, label in names.items() if v in COLOURS}


def _key(name: str) -> str:
    """KeyError for a name with no colour of its own."""
    return name if name in COLOURS else _BY_LABEL[name]


SPARE = [_DARK[i] for i in (2, 4, 5, 6, 9)]  # for a line no variant names (a deep model with its shape in its label)


def has_colour(name: str) -> bool:
    return name in COLOURS or name in _BY_LABEL


def colour(name: str):
    """The colour of a variant named by its key ('layernorm') or a label ('+LN')."""
    return COLOURS[_key(name)]


def paper_colour(name: str):
    """The darker shade the paper's numbers for the variant are drawn in."""
    return _DARK[_INDEX[_key(name)]]
