"""Chapter 2: the N^-1/2 law by Monte Carlo, an exact check, and broken assumptions (trains nothing)."""

from ..setups.params import require
from .record import Chapter, keys
from .scales import BOOK_STORE


def components_within_model(P):
    require(max(P.components) < P.d_model, "components", f"ints < d_model ({P.d_model})", P.components)


CHAPTER = Chapter(
    "02_monte_carlo", "Monte Carlo: the variance law, an exact check, and broken assumptions",
    keys("loglog_slope slope_ci std_by_length slope_by_feature std_by_length_by_setting broken_assumptions "
         "exact_check global"),
    profiles={"ci": {"n_sequences": 1000, "lengths": [16, 64, 256, 1024, 4096], "explore_lengths": [16, 256, 4096],
                     "explore_scales": [1.0, 4.0], "explore_sequences": 256},
              # the default's tables, committed: the published book reads them instead of drawing them again
              "book": {"store_dir": BOOK_STORE}},
    checks=(components_within_model,),
)
