"""Chapter 3: Figure 1 on two pretrained transformers from PyPI (trains nothing)."""

from ... import model_files
from .record import Chapter, keys
from .scales import BOOK_STORE


def models_hold_the_probe(P):
    """Every model named exists and has the layer, heads and components asked for, at the lengths asked for."""
    model_files.check(P.models, P.layer, P.lengths + P.depth_lengths, P.components, P.heads)


CHAPTER = Chapter(
    "03_pretrained_transformer", "Real pretrained transformers: Figure 1 on all-MiniLM-L6-v2 and SmolLM2-135M",
    keys("models"),
    profiles={"ci": {"n_sequences": 30, "lengths": [8, 32, 128, 512], "depth_lengths": [16, 64, 256],
                     "depth_sequences": 8},
              # the default's measurements, committed: the published book reads them instead of running the models
              "book": {"store_dir": BOOK_STORE}},
    checks=(models_hold_the_probe,),
)
