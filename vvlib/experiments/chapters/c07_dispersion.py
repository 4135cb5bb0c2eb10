"""Chapter 7: the paper's Figure 4, how attention spreads out as sets grow (probes chapter 4's models)."""

from ..setups import probes
from ..setups.paper_tasks import ARGMAX
from ..setups.params import require
from . import checks
from .record import Chapter, Work, keys
from .scales import probing_profiles


def lengths_hold_top_k(P):
    from ...probing import TOP_K

    require(min(P.eval_lengths) >= TOP_K, "eval_lengths", f"lengths >= {TOP_K}", P.eval_lengths)


def heatmap_lengths_tested(P):
    require(set(P.heatmap_lengths) <= set(P.eval_lengths), "heatmap_lengths",
            f"lengths from eval_lengths {P.eval_lengths}", P.heatmap_lengths)


def examples_within_probes(P):
    require(P.n_examples <= P.n_probe_sequences, "n_examples",
            f"an int <= n_probe_sequences ({P.n_probe_sequences})", P.n_examples)


CHAPTER = Chapter(
    "07_dispersion", "Dispersion of the attention weights (Figure 4)",
    keys("top1_weight entropy p_value_top1_weight p_value_entropy", "paper_scale"),
    Work((ARGMAX.name,), probes.PAIR, ()),  # trains nothing new: its probes are planned
    paper_scale_needs=("baseline",),  # at the paper's scale: the Baseline's probe, +LN's once committed
    probes=lambda P, device: [(ARGMAX.name, probes.dispersion(P, device))],
    profiles=probing_profiles(ARGMAX, ci_sequences=32),
    checks=(lengths_hold_top_k, heatmap_lengths_tested, examples_within_probes, checks.shown_seed_exists,
            checks.paper_scale_store_exists),
)
