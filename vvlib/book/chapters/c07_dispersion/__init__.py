"""Chapter 7: the paper's Figure 4, how attention spreads out as sets grow (probes chapter 4's models)."""

from ....train import TrainConfig
from .... import probing
from ....experiments.setups import probes, variants
from ....experiments.setups.paper import LENGTHS as PAPER_LENGTHS
from ....experiments.setups.paper_tasks import ARGMAX
from ....experiments.setups.params import require
from ....experiments.records import checks
from ....experiments.records.declare import param, shared, shared_each
from ....experiments.records.record import Chapter, Work, keys
from ....experiments.records.scales import CI_LONG, probed_longer, probing_profiles


def profiles() -> dict:
    """Chapter 4's models at each scale (probing_profiles); at ci and book the sharpness test on its main runs and
    on its longer runs (ci: at two lengths; the book: the first two runs of 4 seeds at the paper's steps, as
    chapter 6).  At the paper's scale, on its main runs at every length beyond training: a lent GPU keeps no
    weights, so each of its two queue units trains one of chapter 4's runs again (the same store key) and probes it
    in the same command."""
    named = probing_profiles(ARGMAX, ci_sequences=32)
    beyond = [n for n in PAPER_LENGTHS if n > TrainConfig.max_len]  # the paper tests these; it trains to 16
    return {**named, "ci": {**named["ci"], **CI_LONG, "sharpness_main": True, "sharpness_lengths": [64, 256],
                            "sharpness_sequences": 32},
            "book": {**named["book"], **probed_longer(ARGMAX), "sharpness_main": True},
            "paper": {**named["paper"], "sharpness_main": True, "sharpness_lengths": beyond}}


def sharpness_tests(P, device) -> list:
    """[(probe, seeds, steps)]: the sharpness test on chapter 4's main runs where sharpness_main says so, then on
    its longer runs where long_steps names them."""
    tests = (("main", P.n_seeds, P.steps, P.sharpness_main), ("longer", P.long_seeds, P.long_steps, P.long_steps))
    return [(sharpness_probe(P, device, runs), seeds, steps) for runs, seeds, steps, wanted in tests if wanted]


def lengths_hold_top_k(P):
    from ....probing import TOP_K

    require(min(P.eval_lengths) >= TOP_K, "eval_lengths", f"lengths >= {TOP_K}", P.eval_lengths)


def heatmap_lengths_tested(P):
    require(set(P.heatmap_lengths) <= set(P.eval_lengths), "heatmap_lengths",
            f"lengths from eval_lengths {P.eval_lengths}", P.heatmap_lengths)


def sharpness_fits(P):
    require(set(P.sharpness_lengths) <= set(P.eval_lengths) and min(P.sharpness_lengths) > P.max_len,
            "sharpness_lengths", f"lengths from eval_lengths {P.eval_lengths} beyond max_len ({P.max_len})",
            P.sharpness_lengths)
    require(1 in P.sharpness_betas, "sharpness_betas", "a list that holds 1 (the models as trained)",
            P.sharpness_betas)


def examples_within_probes(P):
    require(P.n_examples <= P.n_probe_sequences, "n_examples",
            f"an int <= n_probe_sequences ({P.n_probe_sequences})", P.n_examples)


SHARPNESS_RUNS = ("main", "longer")  # chapter 4's runs the sharpness test reads: n_seeds x steps, or long_*

def sharpness_probe(P, device, runs: str = "longer") -> probes.Probe:
    """Chapter 7 on chapter 4's main runs (runs "main": n_seeds x steps) or its longer training ("longer": the
    long_* parameters): each model's accuracy and attention entropy at each of sharpness_lengths with its
    attention's logits times each of sharpness_betas (probing.sharpened), on sharpness_sequences test
    sequences, so that a page can read each model at its partner's entropy and score it."""
    if runs not in SHARPNESS_RUNS:
        raise ValueError(f"runs: one of {SHARPNESS_RUNS}, not {runs!r}")
    models = probes.main_models(P, device) if runs == "main" else probes.longer_models(P, device)
    cfg = variants.eval_config(P, n_sequences=P.sharpness_sequences, lengths=P.sharpness_lengths)

    def tables_of(variant, run, first, beta):
        return {"sharpness": probing.sharpness_frame(run.model_cfg, run.weights, cfg, [beta], variant, device)}

    # one part per beta: a beta added to the list computes only its own share
    return probes.parts("probe-sharpness", models, cfg, {}, tables_of,
                  splits=tuple({"beta": float(b)} for b in P.sharpness_betas))

def dispersion_probe(P, device) -> probes.Probe:
    """Chapter 7: the largest attention weights and the attention's entropy (Figure 4)."""
    models = probes.main_models(P, device)
    cfgs = {t: variants.eval_config(P, t, n_sequences=P.n_probe_sequences) for t in probes.TEMPERATURES}

    def tables_of(variant, run, first):
        probed = {variants.run_name(variant, t): probing.probe(run.model_cfg, run.weights, cfg, device)
                  for t, cfg in cfgs.items()}
        return probing.dispersion_tables(probed, probes.shown_in(run, first, P.shown_seed), P.n_examples,
                                         P.heatmap_lengths, [variant])

    choices = dict(temperatures=list(probes.TEMPERATURES), shown_seed=P.shown_seed, n_examples=P.n_examples,
                   heatmap_lengths=P.heatmap_lengths)
    return probes.parts("probe-dispersion", models, cfgs["fixed"], choices, tables_of, passes=len(probes.TEMPERATURES))


# its parameters: the notebook's `parameters` cell is written from these (declare.py)
PARAMETERS = (
    shared("profile"),
    shared("n_seeds", "trained models per variant (chapter 4's default, so its models are reused)"),
    *shared_each("steps", "seed_chunk", "batch_size", "hidden"),
    shared("n_classes", "classes an item can carry"),
    shared("min_len"),
    shared("max_len", "longest training sequence"),
    *shared_each("lr", "weight_decay", "seed"),
    shared("eval_lengths", "lengths N probed (each at least 16)"),
    param("n_probe_sequences", 128, "test sequences per length and seed for the averages"),
    shared("eval_seed", "names the test sequences (the ones chapter 4 scores)"),
    param("n_examples", 32, "test examples per heatmap (the paper: 32; at most n_probe_sequences)"),
    param("heatmap_lengths", [16, 256, 4096, 16384], "the lengths shown as heatmaps (each one of eval_lengths)"),
    shared("shown_seed", "the trained model (seed index) whose heatmaps are shown"),
    shared("long_steps", "chapter 4's longer training, probed for the sharpness test: AdamW steps per run (the "
                         "book: the paper's 100,000); 0 skips it"),
    shared("long_seeds"),
    shared("long_seed_chunk"),
    shared("long_seed_group", "seed_group of the longer training (chapter 4's)"),
    param("sharpness_main", False, "the sharpness test on chapter 4's main runs (n_seeds x steps) too; it probes "
                                   "each model at every beta"),
    param("sharpness_betas", [0.4, 0.6, 0.8, 0.9, 1.0, 1.1, 1.25, 1.6, 2.0, 2.5],
          "the sharpness test: factors on the attention's logits, a softmax temperature of 1/beta (1: the models "
          "as trained); each is stored apart, so a beta added computes only its own"),
    param("sharpness_lengths", [1024, 16384], "lengths N of the sharpness test (each one of eval_lengths, beyond "
                                              "max_len)"),
    param("sharpness_sequences", 1024, "test sequences per length and beta in the sharpness test"),
    shared("checkpoint_every", "steps between checkpoints, if the models must be trained here"),
    *shared_each("seed_group", "draws", "tf32", "device"),
    shared("store_dir", "trained weights are cached here (relative paths: from the repository root)"),
    shared("paper_scale_dir", "a results store holding the paper profile's probe of chapter 4's runs (trained on a "
                              "GPU), whose answer opens the page once the Baseline's is in (+LN's beside it where "
                              "it is); \"\" leaves it out (the book profile: results/paper)"),
    param("output_dir", "_output/07_dispersion", "results.json goes here (relative paths: from the repository "
                                                 "root)"),
)

CHAPTER = Chapter(
    "07_dispersion", "Dispersion of the attention weights (Figure 4)",
    keys("top1_weight entropy p_value_top1_weight p_value_entropy", "paper_scale"),
    Work((ARGMAX.name,), probes.PAIR, ()),  # trains nothing new: its probes are planned
    paper_scale_needs=("baseline",),  # at the paper's scale: the Baseline's probe, +LN's once committed
    # its probes: Figure 4's on chapter 4's main runs, then the sharpness tests
    probes=lambda P, device: [(ARGMAX.name, dispersion_probe(P, device))] + [
        (ARGMAX.name, probe) for probe, _, _ in sharpness_tests(P, device)],
    profiles=profiles(),
    checks=(lengths_hold_top_k, heatmap_lengths_tested, examples_within_probes, sharpness_fits,
            checks.shown_seed_exists, checks.paper_scale_store_exists),
    params=PARAMETERS,
    reader=('n_seeds', 'steps', 'long_steps', 'n_probe_sequences', 'sharpness_betas', 'shown_seed'),
)
