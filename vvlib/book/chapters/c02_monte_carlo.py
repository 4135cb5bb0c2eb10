"""Chapter 2: the N^-1/2 law by Monte Carlo, an exact check, and broken assumptions (trains nothing)."""

from ...experiments.setups.params import require
from ...experiments.records.declare import param, shared
from ...experiments.records.record import Chapter, keys
from ...experiments.records.scales import BOOK_STORE


def components_within_model(P):
    require(max(P.components) < P.d_model, "components", f"ints < d_model ({P.d_model})", P.components)


# its parameters: the notebook's `parameters` cell is written from these (declare.py)
PARAMETERS = (
    shared("profile", "named parameter set: default (these values), ci (seconds) or book (these values, read from "
                      "results/book, where the published book's tables are committed); a -p value wins over the "
                      "profile"),
    shared("d_model", "width D of the random module"),
    shared("vocab_size"),
    shared("lengths"),
    shared("n_sequences", "sequences drawn per length and setting (streamed in blocks of 256)"),
    shared("components", "output features whose standard deviation is followed"),
    param("value_mean", 0.0, "added to every value in sections 1, 2 and 4 (0 means centred, as Proposition 1 "
                             "assumes)"),
    param("shifted_mean", 1.0, "the non-zero value mean used when that assumption is broken (section 3)"),
    param("stickiness", 0.9, "Markov tokens: probability of repeating the previous token (section 3)"),
    param("exact_vocab_size", 3, "vocabulary of the exactly solvable module (section 2)"),
    param("exact_max_length", 10, "longest N enumerated exactly (section 2)"),
    param("explore_lengths", [16, 64, 256, 1024, 4096, 16384],
          "section 5 slider: lengths N (one precomputed view each)"),
    param("explore_scales", [0.5, 1.0, 2.0, 4.0], "section 5 slider: inverse temperatures (multipliers of the "
                                                  "logits)"),
    param("explore_sequences", 2000, "section 5: sequences per view"),
    shared("seed", "draws the modules; sequences come from streams named by (seed, N, block)"),
    shared("device"),
    shared("store_dir", "each section's computed table is cached here (relative paths: from the repository root)"),
    param("output_dir", "_output/02_monte_carlo", "results.json goes here (relative paths: from the repository "
                                                  "root)"),
)

CHAPTER = Chapter(
    "02_monte_carlo", "Monte Carlo: the variance law, an exact check, and broken assumptions",
    keys("loglog_slope slope_ci std_by_length slope_by_feature std_by_length_by_setting broken_assumptions "
         "exact_check global"),
    profiles={"ci": {"n_sequences": 1000, "lengths": [16, 64, 256, 1024, 4096], "explore_lengths": [16, 256, 4096],
                     "explore_scales": [1.0, 4.0], "explore_sequences": 256},
              # the default's tables, committed: the published book reads them instead of drawing them again
              "book": {"store_dir": BOOK_STORE}},
    checks=(components_within_model,),
    params=PARAMETERS,
)
