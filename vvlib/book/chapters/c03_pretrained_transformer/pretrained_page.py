"""Chapter 3's page: the paper's Figure 1 on real pretrained transformers (the std of an attention output against
N per model and input, per head, per layer).  The notebook holds the prose and calls one method per cell."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for the network: the models are local
import pandas as pd
from IPython.display import Markdown, display

from .... import model_files, montecarlo, pretrained
from .. import PRETRAINED
from ....experiments.reports import plots, report
from . import pretrained_probe
from ...page import ChapterPage, show_figure

NAME = PRETRAINED.name
LABELS = {"random_no_pe": "random tokens, no positions", "random_pe": "random tokens, with positions",
          "sentences_pe": "real text, with positions"}


class PretrainedPage(ChapterPage):
    """Chapter 3 being executed: its parameters, the models checked before loading, each model's probe."""

    chapter = NAME

    def __init__(self, namespace: dict):
        super().__init__(namespace)
        P = self.P
        self.infos = model_files.check(P.models, P.layer, P.lengths + P.depth_lengths, P.components, P.heads)
        self.probes, self.fits, self.std_by_length, self.head_slopes = [], {}, {}, {}

    def models(self):
        """Each model measured (or read from store_dir), described in a table, and the run's parameters."""
        self.probes = [pretrained_probe.measured(self.P, info, self.device) for info in self.infos]
        display(pd.DataFrame({p.info.name: {
            "architecture": p.info.model_type, "parameters": f"{p.n_parameters:,}",
            "layers / heads / width": f"{p.info.n_layers} / {p.info.n_heads} / {p.info.hidden}",
            "maximum positions": p.info.max_positions, "weights": p.info.weights,
            "measured module": f"input of the output projection of `{p.attention_name}`",
            "positions removed by": p.positions_removed} for p in self.probes}).rename_axis(""))
        display(pd.DataFrame({"value": {**report.shown_parameters(self.P), "device": str(self.device)}})
                .rename_axis(""))

    def figure_1(self):
        """Per model: the std against N for each kind of input, and its log-log slopes with intervals."""
        P = self.P
        for p in self.probes:
            frame = p.std
            plots.std_vs_length(frame.assign(input=frame["strategy"].map(LABELS)), hue="input",
                                title=f"{p.info.name}, layer {P.layer}: {P.n_sequences} sequences per N")
            show_figure(f"{p.info.name}, layer {P.layer}: the standard deviation of fixed components of the "
                        f"attention output across {P.n_sequences} input sequences, against N (log-log), a line per "
                        "kind of input. The dotted line falls as N^-0.5, the random module's law (chapter 2). A line that falls with N is the vanishing variance; the table gives each slope.")
            spread = pretrained.spread_by_length(frame)
            self.fits[p.info.name] = {s: montecarlo.fit_loglog_slope(P.lengths, [by_n[n] for n in P.lengths])
                                      for s, by_n in spread.items()}
            self.std_by_length[p.info.name] = {s: {str(n): v for n, v in by_n.items()} for s, by_n in spread.items()}
            display(pd.DataFrame({LABELS[s]: {"slope": f"{b:.3f}", "95% interval": f"[{lo:.3f}, {hi:.3f}]"}
                                  for s, (b, lo, hi) in self.fits[p.info.name].items()}).T)

    def per_head(self):
        P = self.P
        for p in self.probes:
            heads = p.heads
            self.head_slopes[p.info.name] = pretrained.slopes(heads[heads["head"].isin(P.heads or range(p.info.n_heads))],
                                                              "head")
            plots.slope_heatmap({LABELS[s]: v for s, v in self.head_slopes[p.info.name].items()}, "head",
                                title=f"{p.info.name}: log-log slope of the per-head std against N (layer {P.layer})")
            show_figure(f"Each head's log-log slope of its output's standard deviation against N in layer {P.layer} of "
                        f"{p.info.name}, per kind of input ({P.n_sequences} sequences per N). Blue cells are negative "
                        "slopes, where that head's spread shrinks as N grows; -0.5 is the random module's law.")

    def deeper_layers(self):
        P = self.P
        plots.layer_slopes({p.info.name: p.layer_slopes for p in self.probes}, LABELS,
                           title=f"{P.depth_sequences} sequences per N, N from {min(P.depth_lengths)} to "
                                 f"{max(P.depth_lengths)}")
        show_figure(f"The same log-log slope at every layer of each model ({P.depth_sequences} sequences per N, N from "
                    f"{min(P.depth_lengths)} to {max(P.depth_lengths)}), with its 95% interval as a band; the dotted "
                    "line is -0.5. It shows whether the spread still vanishes past the layer the paper measures.")
        display(Markdown(" ".join(pretrained.depth_sentence(p.info.name, p.layer_slopes, LABELS) for p in self.probes)))

    def positions(self):
        """Per model, what its slopes with and without positions say (computed from this run)."""
        display(Markdown("\n\n".join(f"**{name}.** " + pretrained.position_sentence(model_fits, LABELS)
                                     for name, model_fits in self.fits.items())))

    def write(self):
        """results.json: per model its slopes with intervals, std per length, per head and per layer."""
        def model(p):
            name = p.info.name
            return {
                "slope": {k: b for k, (b, _, _) in self.fits[name].items()},
                "slope_interval": {k: [lo, hi] for k, (_, lo, hi) in self.fits[name].items()},
                "std_by_length": self.std_by_length[name],
                "head_slope": {k: {str(h): v for h, v in by_head.items()} for k, by_head in self.head_slopes[name].items()},
                "layer_slope": {s: rows.set_index("layer")["slope"].to_dict()
                                for s, rows in p.layer_slopes.groupby("strategy")},
                "model": {"parameters": p.n_parameters, "model_type": p.info.model_type, "layers": p.info.n_layers,
                          "heads": p.info.n_heads, "width": p.info.hidden, "max_positions": p.info.max_positions,
                          "weights": p.info.weights},
                "positions_removed": p.positions_removed}

        self.write_results({"models": {p.info.name: model(p) for p in self.probes}})
