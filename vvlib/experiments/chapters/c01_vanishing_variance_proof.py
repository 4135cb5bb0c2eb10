"""Chapter 1: Proposition 1 and its proof, step by step, with numbers (a random attention module; trains nothing)."""

from ..setups.params import require
from .record import Chapter, keys


def component_within_model(P):
    require(P.component < P.d_model, "component", f"an int < d_model ({P.d_model})", P.component)


CHAPTER = Chapter(
    "01_vanishing_variance_proof", "Proposition 1 and its proof, step by step, with numbers",
    keys("sigma2 delta limit_mean variance_slope chain cross_term_step_fails_at bounds_hold sharp_constant "
         "n_times_variance"),
    profiles={"ci": {"n_sequences": 2000, "lengths": [16, 128, 1024]}},
    checks=(component_within_model,),
)
