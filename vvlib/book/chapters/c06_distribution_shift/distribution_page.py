"""Chapter 6's page: Figures 2 and 3 (what the readout sees at long lengths) on chapter 4's models, at this page's
profile, at chapter 4's longer training where the profile probes it, and at the paper's scale where its probe is
committed.  The notebook holds the prose and calls one method per cell."""


import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from ....compare import power_of_two
from .. import DISTRIBUTION_SHIFT
from . import distribution_probe, longer_probe
from ....experiments.reports import answers, explore, plots, probed
from ....experiments.setups.paper_tasks import ARGMAX
from ....experiments.setups import probes, variants
from ... import paper_scale
from ...page import ChapterPage, figure_caption, show_collapsed, show_figure

NAME = DISTRIBUTION_SHIFT.name
VARIANTS = list(probes.PAIR)  # chapter 4's Baseline and +LN
LABELS = variants.LABELS
SLOPE_LABELS = {**LABELS, "layernorm_before_norm": "+LN, before the norm"}
# Figure 3's two claims, as the verdict table names them (the summary's wording: probed.DRIFT_CLAIM)
KEPT, DRIFTS = "+LN keeps more global variance", "the Baseline's global mean drifts"


def figure3_caption(scale: str) -> str:
    """The caption of the paper's Figure 3 drawn at one scale."""
    return (f"The paper's Figure 3 ({scale}), mean ± s.e. over seeds against the test length N. Left, the drift of "
            "the readout input's global mean from its value at the training length, in units of its global standard "
            "deviation there; right, its global variance over its value at the training length (log scale). The "
            "paper's claim is that +LN's variance stays nearer 1 than the Baseline's.")


class DistributionPage(ChapterPage):
    """Chapter 6 being executed: its parameters, its probe's tables, the longer runs' and the paper scale's."""

    chapter = NAME

    def __init__(self, namespace: dict):
        super().__init__(namespace)
        P = self.P
        self.probe = distribution_probe(P, self.device)  # nothing is loaded or trained until needed
        self.trained = self.probe.records()  # {variant: its training record, its runs joined}
        self.tables = self.probe.tables(P.store_dir, self.device)
        # chapter 4's longer runs, probed where long_steps names them: Figure 3 and what +LN's norm does
        self.longer = longer_probe(P, self.device) if P.long_steps else None
        self.longer_view = ((probes.longer_scale(P), self.longer.tables(P.store_dir, self.device),
                             self.longer.records()) if self.longer else None)
        # the paper profile's probe: (its parameters, tables, {variant: training record}) or None
        self.big = paper_scale.probe(NAME, P.paper_scale_dir) if P.paper_scale_dir else None
        self.frame = self.tables["global"].replace({"variant": LABELS})
        std = self.tables["component_std"]
        self.component_std = {v: {str(n): std[(std.variant == v) & (std.N == n)].sort_values("component")["std"].tolist()
                                  for n in P.eval_lengths} for v in VARIANTS}
        self.slopes = {v: part["slope"].to_numpy() for v, part in self.tables["slopes"].groupby("variant", sort=False)}

    def answer(self):
        """Figure 3's answer: a verdict per claim and scale, at the paper's scale where the Baseline's probe is
        committed (+LN's beside it where it is), at chapter 4's longer training where this profile probes both
        variants, and at this page's; then each scale's numbers, and how far each seed's global mean moves."""
        paired_longer = self.longer_view if self.longer_view and set(probes.PAIR) <= set(self.longer_view[2]) else None
        views = [(P, tables["global"], trained, answers.scale_text(P.n_seeds, P.steps,
                                                                   trained["baseline"]["provenance"]["device"]))
                 for P, tables, trained in filter(None, (self.big, paired_longer, (self.P, self.tables, self.trained)))]
        verdicts, sizes = [], []
        for P_shown, shift, trained_shown, scale in views:
            labels = {v: answers.SHORT_LABELS[v] for v in probes.PAIR if v in trained_shown}
            if "layernorm" in labels:
                kept = answers.probed_evidence(shift, "relative_variance", probes.PAIR, P_shown.eval_lengths,
                                               P_shown.max_len)
                verdicts.append(answers.verdict_row(scale, KEPT, kept, ARGMAX.name, P_shown.steps))
            drift = answers.drift_evidence(shift, P_shown.eval_lengths, P_shown.max_len)
            verdicts.append(answers.verdict_row(scale, DRIFTS, drift, ARGMAX.name, P_shown.steps))
            sizes.append(answers.drift_size_row(shift, P_shown.eval_lengths, labels, scale))
        display(Markdown(f"**Our answer to the paper's Figure 3**, which prints no numbers. *{KEPT}*: its global "
                         "variance over its value at the training length against the Baseline's, paired over seeds. "
                         f"*{DRIFTS}*: against no drift, a one-sample t-test over seeds."))
        display(answers.verdict_table(verdicts))
        for P_shown, shift, trained_shown, scale in views[:1]:  # the largest scale; the others' in their sections
            display(Markdown(f"*{scale}:* the global variance over its value at the training length (1 = no shift)"
                             + ("" if "layernorm" in trained_shown else "; +LN's probe is still in the GPU queue")))
            display(answers.paired_table(shift, "relative_variance", probes.PAIR, answers.SHORT_LABELS,
                                         P_shown.eval_lengths) if "layernorm" in trained_shown else
                    answers.drift_table(shift, P_shown.eval_lengths, P_shown.max_len))
        show_collapsed("How far each seed's global mean moves, in global standard deviations at the training length "
                       "(a small mean over seeds could hide drifts that cancel)",
                       pd.DataFrame(sizes).set_index("scale").to_html())

    def components(self):
        """Figure 2: fixed components of the readout's input, one model, at a few lengths."""
        values = self.tables["values"].replace({"variant": LABELS})
        plots.component_distributions(values, title=f"Fixed components of the readout's input, model "
                                                    f"{self.P.shown_seed} ({self.P.n_probe_sequences} test sequences per "
                                                    f"panel)")
        show_figure(f"The paper's Figure 2 on one model (seed {self.P.shown_seed}, {self.P.n_seeds} seeds x "
                    f"{self.P.steps:,} steps, {self.device.type.upper()}): a few fixed components of the readout's "
                    f"input, each over {self.P.n_probe_sequences} test sequences. A row per variant on one x axis, a "
                    "column per length N. The paper's claim is that each "
                    "component narrows as N grows.")

    def component_tables(self):
        """Each fixed component's standard deviation at the shown lengths, and the log-log slope over N."""
        P = self.P
        display(pd.DataFrame({f"{LABELS[v]}, N = {n}": self.component_std[v][str(n)] for v in VARIANTS
                              for n in P.distribution_lengths}, index=pd.Index(P.components, name="component")).round(4))
        display(pd.DataFrame({"slope of log std vs log N": {
            SLOPE_LABELS[v]: f"{s.mean():.3f} ± {s.std(ddof=1) / np.sqrt(len(s)):.3f}"
            for v, s in self.slopes.items() if v in SLOPE_LABELS}}))

    def histograms(self):
        """The slider view: each fixed component's histogram at every length (one image per length, made now)."""
        histograms = self.tables["histograms"]
        display(explore.figure_explorer(lambda N: plots.component_histograms(histograms, VARIANTS, LABELS, N),
                                        {"N": sorted(histograms["N"].unique().tolist())},
                                        labels={"N": "sequence length N"}))
        display(figure_caption(f"Each fixed component's histogram over the {self.P.n_probe_sequences} test "
                               f"sequences of model {self.P.shown_seed}, a panel per variant, at the length N the "
                               "slider picks: Figure 2 at every length probed."))

    def global_statistics(self):
        """Figure 3 at the largest scale probed (the paper's where both variants' probes are committed), and this
        page's means as a table, collapsed."""
        P = self.P
        summary = self.frame.groupby(["variant", "N"])[["mean_drift", "relative_variance"]].mean().unstack("variant")
        summary.index = [power_of_two(n) for n in summary.index]
        mine = f"{P.n_seeds} seeds x {P.steps:,} steps, {self.device.type.upper()}"
        if not (self.big and "layernorm" in self.big[2]):
            plots.global_statistics(self.frame, title=f"Readout input, {P.n_seeds} models x {P.n_probe_sequences} "
                                                      "test sequences per N")
            show_figure(figure3_caption(mine))
            display(summary.round(3))
            return
        P_paper, paper_tables, _ = self.big
        plots.global_statistics(paper_tables["global"].replace({"variant": LABELS}),
                                title=f"Readout input at the paper's scale, {P_paper.n_seeds} models x "
                                      f"{P_paper.n_probe_sequences} test sequences per N")
        show_figure(figure3_caption(f"{P_paper.n_seeds} seeds x {P_paper.steps:,} steps, GPU"))
        show_collapsed(f"This run's means at every length ({mine})", summary.round(3).to_html())
        at_training = paper_tables["global"].query(f"N == {P_paper.max_len}").groupby("variant")["global_variance"].mean()
        display(Markdown(
            f"At the training length the global variance of +LN's readout input is "
            f"{at_training['layernorm']:.3g}, the Baseline's {at_training['baseline']:.3g} (mean over seeds). What "
            f"sets +LN's ratio at longer $N$ is not measured at this scale: its probe records the normalized output, "
            f"not the norm's learned gain and bias. The next section measures them for chapter 4's longer runs (the "
            f"paper's steps, on a CPU){'' if P.long_steps else ', where `long_steps` names them'}."))

    def longer_runs(self):
        """What +LN's norm does to the attention output at chapter 4's longer training."""
        if not self.longer_view:
            display(Markdown("*Skipped at this profile (`long_steps` = 0).*"))
            return
        P_long, long_tables, _ = self.longer_view
        if "norm" in long_tables:
            display(probed.norm_table(long_tables["norm"], P_long.eval_lengths, P_long.max_len))
            display(Markdown(probed.norm_sentence(probed.norm_metrics(long_tables["norm"], P_long.eval_lengths),
                                                  P_long.max_len, max(P_long.eval_lengths), P_long.n_seeds)))

    def what_the_numbers_say(self):
        """This page's run in sentences: the variance kept at the longest length, the components' slopes, the drift."""
        P, frame, slopes = self.P, self.frame, self.slopes
        longest = max(P.eval_lengths)
        ratio = {v: frame[(frame.variant == LABELS[v]) & (frame.N == longest)]["relative_variance"].to_numpy()
                 for v in VARIANTS}
        steadier = sum(ratio["layernorm"] > ratio["baseline"])  # paired by seed index
        drift = {v: frame[frame.variant == LABELS[v]].groupby("N")["mean_drift"].mean().abs().max() for v in VARIANTS}
        size = {v: max(probed.drift_size(frame, LABELS[v], n)[0] for n in P.eval_lengths) for v in VARIANTS}
        display(Markdown(
            f"At $N = {longest}$ the Baseline's readout input keeps {ratio['baseline'].mean():.0%} of its global "
            f"variance at the training length and the +LN model's keeps {ratio['layernorm'].mean():.0%} (the +LN "
            f"ratio is the larger for {steadier} of {P.n_seeds} paired seeds). Single components shrink in both: the "
            f"median log-log slope of a component's standard deviation is {slopes['baseline'].mean():.2f} for the "
            f"Baseline and {slopes['layernorm'].mean():.2f} for +LN ({slopes['layernorm_before_norm'].mean():.2f} "
            f"before the norm). The global mean hardly moves in either model: its largest drift over all lengths is "
            f"{drift['baseline']:.3f} (Baseline) and {drift['layernorm']:.3f} (+LN) training standard deviations, "
            f"mean over seeds, and each seed's own drift averages at most {size['baseline']:.3f} and "
            f"{size['layernorm']:.3f} in size."))

    def scale(self):
        alone = "" if self.big and "layernorm" in self.big[2] else ", the Baseline's alone"
        self.show_pending(f"Figure 3's answer at the top{alone}" if self.big else "")

    def write(self):
        """results.json: Figure 3's metrics at this page's scale, at the paper's and at the longer runs' where read."""
        P = self.P
        results = {**probed.figure3_metrics(self.tables["global"], P.eval_lengths), "component_std": self.component_std,
                   **probed.slope_metrics(self.tables["slopes"])}
        sources = {f"training/{v}": record["provenance"] for v, record in self.trained.items()}
        if self.big:  # the summary's claims table reads it at that scale
            P_paper, paper_tables, paper_trained = self.big
            results["paper_scale"] = probed.at_paper_scale(
                {**probed.figure3_metrics(paper_tables["global"], P_paper.eval_lengths),
                 **probed.slope_metrics(paper_tables["slopes"])}, P_paper)
            sources.update({f"training/paper_scale/{v}": record["provenance"] for v, record in paper_trained.items()})
        if self.longer_view:  # chapter 4's longer runs: the summary's claims table reads Figure 3 at their scale too
            P_long, long_tables, _ = self.longer_view
            results["longer"] = {**probed.figure3_metrics(long_tables["global"], P_long.eval_lengths),
                                 "n_seeds": P_long.n_seeds, "steps": P_long.steps}
            if "norm" in long_tables:
                results["longer"]["norm"] = probed.norm_metrics(long_tables["norm"], P_long.eval_lengths)
            sources.update({f"training/long/{v}/{i}": run.record["provenance"]  # chapter 4's keys for the same runs
                            for v, runs_ in self.longer.models.items() for i, run in enumerate(runs_)})
        self.write_results(results, sources)
