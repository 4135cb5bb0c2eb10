"""Chapter 3's measurements of a pretrained model, kept as the tables the chapter shows.

pretrained.probe runs a model over its inputs and returns every output it measured; the chapter
shows three small tables of them (each feature's spread, each head's, each layer's slope).  Stored
in the results store (runs.cached_tables) under the settings that make them, those tables are all a
later build needs: the published book reads them from results/book/ instead of running SmolLM2-135M
at every build (its every-layer view alone is about four minutes on 2 CPU cores).
"""

from dataclasses import dataclass

import pandas as pd
import torch

from .... import pretrained
from ....model_files import ModelInfo
from ....experiments.storage import runs, store


@dataclass(frozen=True)
class Measured:
    """One model's measurements, as chapter 3 shows them (pretrained.Probe without the raw outputs)."""
    info: ModelInfo
    n_parameters: int
    attention_name: str  # the measured layer's attention module
    positions_removed: str  # how, in a sentence
    std: pd.DataFrame  # pretrained.std_frame at the chapter's components
    heads: pd.DataFrame  # pretrained.head_frame
    layer_slopes: pd.DataFrame  # pretrained.layer_slope_frame over every layer


def spec(P, info: ModelInfo, device) -> dict:
    """Every setting that changes the tables: the model as its header describes it, what is measured and
    how many inputs, the seed and the kind of device (a GPU's sums differ from a CPU's in the last bits)."""
    return {"kind": "pretrained", "format": store.STORE_FORMAT,
            "model": {"name": info.name, "model_type": info.model_type, "layers": info.n_layers,
                      "heads": info.n_heads, "hidden": info.hidden, "gguf_file": info.gguf_file,
                      "weights": info.weights},
            "layer": P.layer, "components": list(P.components), "lengths": list(P.lengths),
            "n_sequences": P.n_sequences, "depth_lengths": list(P.depth_lengths),
            "depth_sequences": P.depth_sequences, "seed": P.seed, "device_type": torch.device(device).type}


def measured(P, info: ModelInfo, device) -> Measured:
    """The model's tables from P.store_dir, or measured (the model loaded and run) and stored there."""
    def compute() -> dict:
        probe = pretrained.probe(info, P.layer, P.lengths, P.n_sequences, P.depth_lengths, P.depth_sequences,
                                 P.seed, device)
        facts = {"parameters": probe.n_parameters, "attention_name": probe.attention_name,
                 "positions_removed": probe.positions_removed}
        return {"std": pretrained.std_frame(probe.outputs, P.components),
                "heads": pretrained.head_frame(probe.outputs, info.n_heads),
                "layers": probe.layer_slopes, "facts": pd.DataFrame([facts])}

    tables = runs.cached_tables(P.store_dir, "pretrained", spec(P, info, device), compute, device)
    facts = tables["facts"].iloc[0]
    return Measured(info, int(facts["parameters"]), str(facts["attention_name"]), str(facts["positions_removed"]),
                    tables["std"], tables["heads"], tables["layers"])
