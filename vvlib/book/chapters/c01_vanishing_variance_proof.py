"""Chapter 1: Proposition 1 and its proof, step by step, with numbers (a random attention module; trains nothing)."""

from ...experiments.setups.params import require
from ...experiments.records.declare import param, shared
from ...experiments.records.record import Chapter, keys


def component_within_model(P):
    require(P.component < P.d_model, "component", f"an int < d_model ({P.d_model})", P.component)


# its parameters: the notebook's `parameters` cell is written from these (declare.py)
PARAMETERS = (
    shared("profile", "named parameter set: default (these values) or ci (seconds); a -p value wins over the "
                      "profile"),
    shared("d_model", "width D of the module"),
    shared("vocab_size"),
    param("logit_scale", 1.0, "multiplies every logit (an inverse temperature)"),
    param("component", 0, "the output feature d that is measured"),
    shared("lengths"),
    shared("n_sequences", "sequences drawn per length (the expectations below are averages over them)"),
    shared("seed", "draws the module; the sequences come from streams named by (seed, N, block)"),
    shared("device"),
    param("output_dir", "_output/01_vanishing_variance_proof",
          "results.json goes here (relative paths: from the repository root)"),
)

CHAPTER = Chapter(
    "01_vanishing_variance_proof", "Proposition 1 and its proof, step by step, with numbers",
    keys("sigma2 delta limit_mean variance_slope chain cross_term_step_fails_at bounds_hold sharp_constant "
         "n_times_variance"),
    profiles={"ci": {"n_sequences": 2000, "lengths": [16, 128, 1024]}},
    checks=(component_within_model,),
    params=PARAMETERS,
)
