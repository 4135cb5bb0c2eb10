"""Chapter 6: the paper's Figures 2 and 3, what the readout sees at long lengths (probes chapter 4's models)."""

from ..setups import probes
from ..setups.paper_tasks import ARGMAX
from ..setups.params import require
from . import checks
from .record import Chapter, Work, keys
from .scales import CI_LONG, longer, probed_longer, probing_profiles

# The book probes the first two of chapter 4's longer runs (scales.probed_longer), both variants
BOOK_LONGER = {**probed_longer(ARGMAX), "long_variants": ["baseline", "layernorm"]}


def profiles() -> dict:
    """Chapter 4's models at each scale (probing_profiles), and at ci and book its longer runs too."""
    named = probing_profiles(ARGMAX, ci_sequences=64)
    return {**named, "ci": {**named["ci"], **longer(CI_LONG)}, "book": {**named["book"], **BOOK_LONGER}}


def distribution_lengths_tested(P):
    require(set(P.distribution_lengths) <= set(P.eval_lengths), "distribution_lengths",
            f"lengths from eval_lengths {P.eval_lengths}", P.distribution_lengths)


def long_variants_probed(P):
    require(set(P.long_variants) <= set(probes.PAIR), "long_variants", f"names from {', '.join(probes.PAIR)}",
            P.long_variants)


def components_within_hidden(P):
    require(max(P.components) < P.hidden, "components", f"indices < hidden ({P.hidden})", P.components)


CHAPTER = Chapter(
    "06_distribution_shift", "Distribution shift of the attention output (Figures 2 and 3)",
    keys("global_mean global_variance global_mean_drift relative_global_variance component_std component_std_slope "
         "component_std_slope_sem p_value_relative_global_variance p_value_mean_drift", "paper_scale longer"),
    Work((ARGMAX.name,), probes.PAIR, ()),  # trains nothing new: its probes are planned
    paper_scale_needs=("baseline",),  # at the paper's scale: the Baseline's probe, +LN's once committed
    # its probes: chapter 4's main runs, and its longer runs where long_steps names them
    probes=lambda P, device: [(ARGMAX.name, probes.distribution(P, device))] + (
        [(ARGMAX.name, probes.longer(P, device))] if P.long_steps else []),
    profiles=profiles(),
    checks=(checks.training_length_is_tested, distribution_lengths_tested, components_within_hidden,
            long_variants_probed, checks.shown_seed_exists, checks.paper_scale_store_exists),
)
