"""Chapter 6: the paper's Figures 2 and 3, what the readout sees at long lengths (probes chapter 4's models)."""

from .... import probing
from ....experiments.setups import probes, variants
from ....experiments.setups.paper_tasks import ARGMAX
from ....experiments.setups.params import require
from ....experiments.records import checks
from ....experiments.records.declare import param, shared, shared_each
from ....experiments.records.record import Chapter, Work, keys
from ....experiments.records.scales import CI_LONG, probed_longer, probing_profiles

# The book probes the first two of chapter 4's longer runs (scales.probed_longer), both variants
BOOK_LONGER = {**probed_longer(ARGMAX), "long_variants": ["baseline", "layernorm"]}


def profiles() -> dict:
    """Chapter 4's models at each scale (probing_profiles), and at ci and book its longer runs too."""
    named = probing_profiles(ARGMAX, ci_sequences=64)
    return {**named, "ci": {**named["ci"], **CI_LONG}, "book": {**named["book"], **BOOK_LONGER}}


def distribution_lengths_tested(P):
    require(set(P.distribution_lengths) <= set(P.eval_lengths), "distribution_lengths",
            f"lengths from eval_lengths {P.eval_lengths}", P.distribution_lengths)


def long_variants_probed(P):
    require(set(P.long_variants) <= set(probes.PAIR), "long_variants", f"names from {', '.join(probes.PAIR)}",
            P.long_variants)


def components_within_hidden(P):
    require(max(P.components) < P.hidden, "components", f"indices < hidden ({P.hidden})", P.components)


def distribution_probe(P, device) -> probes.Probe:
    """Chapter 6: the attention output's components and global statistics (Figures 2-3)."""
    models = probes.main_models(P, device)
    cfg = variants.eval_config(P, n_sequences=P.n_probe_sequences)

    def tables_of(variant, run, first):
        probed = {variant: probing.probe(run.model_cfg, run.weights, cfg, device)}
        return probing.distribution_tables(probed, P.components, probes.shown_in(run, first, P.shown_seed),
                                           P.distribution_lengths, P.max_len, P.histogram_bins)

    choices = dict(components=P.components, shown_seed=P.shown_seed, distribution_lengths=P.distribution_lengths,
                   reference=P.max_len, histogram_bins=P.histogram_bins)
    return probes.parts("probe-distribution", models, cfg, choices, tables_of)

def longer_probe(P, device) -> probes.Probe:
    """Chapter 6 on chapter 4's longer training (its long_* parameters): Figure 3's global statistics of
    the variants long_variants names, and for +LN what its norm does (probing.norm_frame)."""
    models = probes.longer_models(P, device, P.long_variants)
    cfg = variants.eval_config(P, n_sequences=P.n_probe_sequences)

    def tables_of(variant, run, first):
        probed = {variant: probing.probe(run.model_cfg, run.weights, cfg, device)}
        tables = {"global": probing.global_frame(probed, P.max_len)}
        if run.model_cfg.norm == "layernorm":
            tables["norm"] = probing.norm_frame(probed, run.weights, run.model_cfg)
        return tables

    return probes.parts("probe-longer", models, cfg, dict(reference=P.max_len, norm_columns=list(probing.NORM_COLUMNS)),
                  tables_of)


# its parameters: the notebook's `parameters` cell is written from these (declare.py)
PARAMETERS = (
    shared("profile"),
    shared("n_seeds", "trained models per variant (chapter 4's default, so its models are reused)"),
    shared("steps"),
    shared("seed_chunk"),
    shared("long_steps", "chapter 4's longer training, probed too: AdamW steps per run (the book: the paper's "
                         "100,000); 0 skips it"),
    shared("long_seeds"),
    shared("long_seed_chunk"),
    shared("long_seed_group", "seed_group of the longer training (chapter 4's)"),
    param("long_variants", ["baseline", "layernorm"], "the variants whose longer runs are probed"),
    shared("batch_size"),
    shared("hidden"),
    shared("n_classes", "classes an item can carry"),
    shared("min_len"),
    shared("max_len", "longest training sequence; also the reference length of Figure 3 (must be one of "
                      "eval_lengths)"),
    *shared_each("lr", "weight_decay", "seed"),
    shared("eval_lengths", "lengths N probed"),
    param("n_probe_sequences", 256, "test sequences per length and seed (the paper: 32k for Figure 3)"),
    shared("eval_seed", "names the test sequences (the ones chapter 4 scores)"),
    shared("components", "the fixed components d shown in Figure 2 (each < hidden)"),
    param("distribution_lengths", [16, 4096, 16384], "the lengths of Figure 2 (each one of eval_lengths)"),
    shared("shown_seed", "the trained model (seed index) whose components Figure 2 shows"),
    param("histogram_bins", 40, "the length slider: bins of each precomputed histogram (one range per component "
                                "over all N)"),
    shared("checkpoint_every", "steps between checkpoints, if the models must be trained here"),
    *shared_each("seed_group", "draws", "tf32", "device"),
    shared("store_dir", "trained weights are cached here (relative paths: from the repository root)"),
    shared("paper_scale_dir", "a results store holding the paper profile's probe of chapter 4's runs (trained on a "
                              "GPU), whose answer opens the page once the Baseline's is in (+LN's beside it where "
                              "it is); \"\" leaves it out (the book profile: results/paper)"),
    param("output_dir", "_output/06_distribution_shift", "results.json goes here (relative paths: from the "
                                                         "repository root)"),
)

CHAPTER = Chapter(
    "06_distribution_shift", "Distribution shift of the attention output (Figures 2 and 3)",
    keys("global_mean global_variance global_mean_drift relative_global_variance component_std component_std_slope "
         "component_std_slope_sem p_value_relative_global_variance p_value_mean_drift", "paper_scale longer"),
    Work((ARGMAX.name,), probes.PAIR, ()),  # trains nothing new: its probes are planned
    paper_scale_needs=("baseline",),  # at the paper's scale: the Baseline's probe, +LN's once committed
    # its probes: chapter 4's main runs, and its longer runs where long_steps names them
    probes=lambda P, device: [(ARGMAX.name, distribution_probe(P, device))] + (
        [(ARGMAX.name, longer_probe(P, device))] if P.long_steps else []),
    profiles=profiles(),
    checks=(checks.training_length_is_tested, distribution_lengths_tested, components_within_hidden,
            long_variants_probed, checks.shown_seed_exists, checks.paper_scale_store_exists),
    params=PARAMETERS,
    reader=('n_seeds', 'steps', 'long_steps', 'n_probe_sequences', 'distribution_lengths', 'shown_seed'),
)
