"""Chapter 3: Figure 1 on two pretrained transformers from PyPI (trains nothing)."""

from .... import model_files
from ....experiments.records.declare import param, shared
from ....experiments.records.record import Chapter, keys
from ....experiments.records.scales import BOOK_STORE


def models_hold_the_probe(P):
    """Every model named exists and has the layer, heads and components asked for, at the lengths asked for."""
    model_files.check(P.models, P.layer, P.lengths + P.depth_lengths, P.components, P.heads)


# its parameters: the notebook's `parameters` cell is written from these (declare.py)
PARAMETERS = (
    shared("profile", "named parameter set: default (these values), ci (a quick run) or book (these values, read "
                      "from results/book, where the published book's measurements are committed); a -p value wins "
                      "over the profile"),
    param("models", ["bundled", "smollm2"], "models measured, in order: bundled (all-MiniLM-L6-v2), smollm2 "
                                            "(SmolLM2-135M-Instruct, 4-bit GGUF), a local Hugging Face model "
                                            "directory or a .gguf file"),
    param("layer", 0, "the layer whose attention output Figure 1 measures (0 is the first)"),
    shared("components", "fixed components d of the attention output (before the output projection) followed "
                         "individually"),
    param("heads", [], "heads shown in the per-head view; empty means all heads"),
    param("lengths", [4, 8, 16, 32, 64, 128, 256, 512], "sequence lengths N (at most every model's maximum "
                                                        "positions)"),
    param("n_sequences", 100, "input sequences per length and kind of input (the paper: 100)"),
    param("depth_lengths", [16, 32, 64, 128, 256], "lengths N of the every-layer view (the whole model runs, so "
                                                   "fewer and shorter)"),
    param("depth_sequences", 30, "input sequences per length and kind of input in the every-layer view"),
    shared("seed", "names the random token streams and the text windows"),
    shared("device"),
    shared("store_dir", "each model's measured tables are cached here (relative paths: from the repository root)"),
    param("output_dir", "_output/03_pretrained_transformer",
          "results.json goes here (relative paths: from the repository root)"),
)

CHAPTER = Chapter(
    "03_pretrained_transformer", "Real pretrained transformers: Figure 1 on all-MiniLM-L6-v2 and SmolLM2-135M",
    keys("models"),
    profiles={"ci": {"n_sequences": 30, "lengths": [8, 32, 128, 512], "depth_lengths": [16, 64, 256],
                     "depth_sequences": 8},
              # the default's measurements, committed: the published book reads them instead of running the models
              "book": {"store_dir": BOOK_STORE}},
    checks=(models_hold_the_probe,),
    params=PARAMETERS,
    reader=('models', 'layer', 'lengths', 'n_sequences', 'heads', 'components'),
)
