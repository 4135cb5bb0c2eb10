"""Chapter 7's page: Figure 4 (how the attention spreads as sets grow) on chapter 4's models, at this page's profile
and at the paper's scale where its probe is committed; the two accounts side by side; how much of +LN's gain goes
with its sharper attention; the sharpness test.  The notebook holds the prose and calls one method per cell."""


import json

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from .... import probing, stats
from .. import DISPERSION, c07_dispersion
from ....experiments.setups.paper_tasks import ARGMAX
from ....experiments.reports import answers, plots, probed, provisional, report
from . import attention_gain, attention_plots, accounts_page
from ....experiments.setups import probes, variants
from ....experiments.storage import runs
from ... import paper_scale
from ...gpu_queue import pending
from ...page import ChapterPage, show_collapsed, show_figure

NAME = DISPERSION.name
LABELS = variants.LABELS
PAIRS = [probes.PAIR, tuple(variants.run_name(v, "adaptive") for v in probes.PAIR)]  # without, with adaptive θ
RUNS = [run for pair in PAIRS for run in pair]
QUANTITIES = ("top1_weight", "entropy")
SHARPER = "+LN's attention has a lower entropy than the Baseline's beyond the training lengths"  # Figure 4's claim


class DispersionPage(ChapterPage):
    """Chapter 7 being executed: its parameters, its probe's tables, and the paper-scale probe where committed."""

    chapter = NAME

    def __init__(self, namespace: dict):
        super().__init__(namespace)
        self.probe = c07_dispersion.dispersion_probe(self.P, self.device)  # nothing is loaded or trained until needed
        self.trained = self.probe.records()  # {variant: its training record, its runs joined}
        self.tables = self.probe.tables(self.P.store_dir, self.device)
        self.raw = self.tables["attention"]  # one row per model, temperature and N
        # the paper profile's probe: (its parameters, tables, {variant: training record}) or None
        self.big = paper_scale.probe(NAME, self.P.paper_scale_dir) if self.P.paper_scale_dir else None

    def _both_at_paper_scale(self) -> bool:
        return bool(self.big) and "layernorm" in self.big[2]

    def answer(self):
        """Figure 4's answer: a verdict per scale, at the paper's scale where the Baseline's probe is committed (+LN's
        beside it where it is) and at this page's; then each scale's numbers."""
        views = [(P, tables["attention"], trained, answers.scale_text(P.n_seeds, P.steps,
                                                                      trained["baseline"]["provenance"]["device"]))
                 for P, tables, trained in filter(None, (self.big, (self.P, self.tables, self.trained)))]
        verdicts = [answers.verdict_row(scale, SHARPER, answers.probed_evidence(
                        attention, "entropy", probes.PAIR, P.eval_lengths, P.max_len, higher_is_better=False),
                        ARGMAX.name, P.steps)
                    for P, attention, trained, scale in views if "layernorm" in trained]
        display(Markdown(f"**Our answer to the paper's Figure 4**: *{SHARPER}* (lower entropy: less dispersed), "
                         "paired over seeds, at the fixed temperature. The paper's heatmaps print no numbers."))
        if verdicts:
            display(answers.verdict_table(verdicts))
        for P, attention, trained, scale in views[:1]:  # the largest scale; this page's run is in the rerun block
            display(Markdown(f"*{scale}:* the attention's entropy in nats"))
            if "layernorm" in trained:
                display(answers.paired_table(attention, "entropy", probes.PAIR, answers.SHORT_LABELS, P.eval_lengths))
                continue
            display(answers.attention_table(attention, {"baseline": "Baseline", "adaptive_baseline": "adaptive θ"},
                                            P.eval_lengths))
            display(Markdown("The Baseline alone, with and without adaptive temperature: +LN's probe at this scale "
                             "is still in the GPU queue, so Figure 4's comparison waits for it."))

    def rerun_table(self):
        """This run's entropies beside the answer's, where the answer is at the paper's scale."""
        if not self.big:
            return
        P = self.P
        display(Markdown(f"*This run ({P.n_seeds} seeds x {P.steps:,} steps, {self.device.type.upper()}):* the "
                         "attention's entropy in nats, beside the answer's at the top."),
                answers.paired_table(self.raw, "entropy", probes.PAIR, answers.SHORT_LABELS, P.eval_lengths))

    def _figure_runs(self, table: str):
        """(parameters, probe tables, scale in words) of the runs the verdict rests on: the paper's scale where both
        variants' probes, `table` among them, are committed, else this page's run."""
        if self._both_at_paper_scale() and table in self.big[1]:
            P, tables, trained = self.big
            return P, tables, answers.scale_text(P.n_seeds, P.steps, trained["baseline"]["provenance"]["device"])
        P = self.P
        return P, self.tables, f"{P.n_seeds} seeds x {P.steps:,} steps, {self.device.type.upper()}"

    def heatmaps(self):
        """Figure 4 itself: the largest attention weights of each test example, for one model."""
        P, tables, scale = self._figure_runs("heatmaps")
        maps = {LABELS[v]: found for v, found in probing.heatmap_arrays(tables["heatmaps"]).items()}
        attention_plots.attention_heatmaps(maps, title=f"16 largest attention weights of {P.n_examples} test "
                                                       f"examples, model {P.shown_seed}, fixed temperature")
        show_figure(f"The paper's Figure 4 on one model (seed {P.shown_seed}; {scale}). For {P.n_examples} test "
                    "examples (rows), the 16 largest attention weights, largest first (columns), a row of panels per "
                    "variant and a column per length N. A bright first column is attention on one item; a dim, even "
                    "row is dispersed attention.")

    def across_seeds(self):
        """Entropy and largest weight against N, mean over the seeds, of the runs the verdict rests on."""
        P, tables, scale = self._figure_runs("attention")
        frame = tables["attention"].replace({"variant": LABELS})
        lengths = np.array(P.eval_lengths, dtype=float)
        sequences = getattr(P, "n_probe_sequences", None)
        fig, (left, right) = plt.subplots(1, 2, figsize=(10.4, 3.8))
        plots.quantity_vs_length(frame, "entropy", "attention entropy (nats)",
                                 reference=("uniform, ln N", lengths, np.log(lengths)), title="Entropy", ax=left)
        plots.quantity_vs_length(frame, "top1_weight", "largest attention weight", log_y=True,
                                 title="Largest attention weight", ax=right)
        show_figure(f"Left, the attention's entropy against the test length N; right, its largest weight (log scale); "
                    f"mean ± s.e. over seeds ({scale}, {sequences} test sequences per N). The dotted line is ln N, the "
                    "entropy of uniform weights: lower is sharper. A largest weight that falls like 1/N is attention "
                    "spread evenly; one near 1 is attention on one item.", fig)

    def quantity_tables(self):
        """The figures' numbers with the paired t-test, without and with adaptive temperature, collapsed."""
        P, tables, scale = self._figure_runs("attention")
        found = {q: stats.summary_by_length(tables["attention"], q, PAIRS) for q in QUANTITIES}
        body = "".join(f"<p><b>{what}</b></p>" + report.quantity_table(found[q], RUNS, PAIRS, LABELS,
                                                                      P.eval_lengths).to_html()
                       for q, what in (("entropy", "Entropy (nats)"), ("top1_weight", "Largest attention weight")))
        show_collapsed(f"The figures' numbers at every length, with the paired t-test of +LN against the Baseline "
                       f"({scale})", body)

    def what_the_numbers_say(self):
        """The verdict of this page's run, by the summary page's rule, and what adaptive temperature does."""
        P, lines = self.P, []
        for a, b in PAIRS:
            e = answers.probed_evidence(self.raw, "entropy", (a, b), P.eval_lengths, P.max_len, higher_is_better=False)
            lines.append(f"{LABELS[b]} has a lower attention entropy than {LABELS[a]} at {e.ahead} of {e.lengths} "
                         f"lengths beyond training ({e.ahead_significant} with p < {e.alpha}, paired over "
                         f"{P.n_seeds} seeds). That it is less dispersed is, by the rule of the summary page, "
                         f"{provisional.qualified(e.verdict(), ARGMAX.name, P.steps)}.")
        longest, e = str(max(P.eval_lengths)), stats.summary_by_length(self.raw, "entropy", PAIRS)["mean"]
        lines.append(f"At $N = {longest}$ the adaptive temperature lowers the Baseline's entropy from "
                     f"{e['baseline'][longest]:.2f} to {e['adaptive_baseline'][longest]:.2f} nats (uniform: "
                     f"{np.log(int(longest)):.2f}).")
        display(Markdown(" ".join(lines)))

    def two_accounts(self):
        accounts_page.show(self.P.paper_scale_dir)

    def gain_and_entropy(self):
        """At the paper's scale: +LN's gain, and what is left of it among models of equal attention entropy."""
        scored = (paper_scale.accuracy_of_probed(self.big[2], self.P.paper_scale_dir)
                  if self._both_at_paper_scale() else None)
        if not scored:
            display(Markdown("This section reads the paper-scale runs and their probe (`paper_scale_dir`; the book "
                             "profile reads results/paper/); none are committed where this run looked, so it has "
                             "nothing to show."))
            return
        P_paper, paper_tables, paper_trained = self.big
        lengths, accuracy = scored
        gains = attention_gain.gain_and_entropy(accuracy, paper_tables["attention"], lengths, P_paper.max_len)
        scale = answers.scale_text(P_paper.n_seeds, P_paper.steps, paper_trained["baseline"]["provenance"]["device"])
        display(Markdown(attention_gain.gain_sentence(gains, scale)))
        show_collapsed("+LN's gain and what is left of it among models of equal entropy, at every length",
                       attention_gain.gain_table(gains).to_html())
        models = {n: attention_gain.per_model(accuracy, paper_tables["attention"], lengths, n)
                  for n in answers.answer_lengths(lengths)}
        attention_plots.accuracy_against_entropy(models, answers.SHORT_LABELS,
                                                 title=f"Each model's accuracy against its attention entropy ({scale})")
        show_figure(f"Each model ({scale}) as a dot, its accuracy against its attention entropy, a panel per length, "
                    "with one fitted slope for both variants and a line per variant. The vertical gap between the "
                    "lines is +LN's gain among models of equal entropy; no gap means sharper attention explains it.")

    def sharpness(self):
        """The sharpness test at the paper's scale (or the GPU queue units it waits for), then on each set of runs
        the profile names."""
        P, device = self.P, self.device
        if P.paper_scale_dir:
            sharpness_at_scale(paper_scale.sharpness(P.paper_scale_dir), overrides={"store_dir": P.paper_scale_dir})
        tests = c07_dispersion.sharpness_tests(P, device)
        for k, (sharp, seeds, steps) in enumerate(tests):
            frame = sharp.tables(P.store_dir, device)["sharpness"]
            show_sharpness(frame, answers.scale_text(seeds, steps, sharp.records()["baseline"]["provenance"]["device"]),
                           figure=k == len(tests) - 1)  # the figure of the longest training only
        if not tests:
            display(Markdown("The sharpness test reads chapter 4's main runs where `sharpness_main` is set and its "
                             "longer training where `long_steps` names it (the book profile: both); this run leaves "
                             "it out."))

    def scale(self):
        shows = ""
        if self.big:
            shows = ("Figure 4's answer at the top" + ("" if "layernorm" in self.big[2] else ", the Baseline's alone")
                     + ("; every figure but the sharpness test's; the two accounts; the gain at equal entropy"
                        if self._both_at_paper_scale() else ""))
        self.show_pending(shows)

    def write(self):
        """results.json: Figure 4's metrics at this page's scale, and at the paper's where both probes are read."""
        results = probed.figure4_metrics(self.raw, PAIRS)
        sources = {f"training/{v}": record["provenance"] for v, record in self.trained.items()}
        if self._both_at_paper_scale():  # the summary's claims table reads it there
            P_paper, paper_tables, paper_trained = self.big
            results["paper_scale"] = probed.at_paper_scale(probed.figure4_metrics(paper_tables["attention"], PAIRS),
                                                           P_paper)
            sources.update({f"training/paper_scale/{v}": record["provenance"] for v, record in paper_trained.items()})
        self.write_results(results, sources)


def sharpness_at_scale(found: tuple, **plan) -> dict | None:
    """The sharpness test on chapter 4's main runs at a store's scale, found = paper_scale.sharpness(...): its table,
    note and figure where every part is stored, else one line naming the queue units it waits for (plan: the
    queue's plan, pending.units_computing's).  Returns the test matched seed pair by seed pair, or None while
    pending."""
    P, probe, frame, records = found
    if frame is None:
        display(Markdown(pending.note(f"At {P.n_seeds} seeds x {P.steps:,} steps the sharpness test",
                                      [part.folder(P.store_dir) / "tables.json" for part in probe.parts], **plan)))
        return None
    matched = show_sharpness(frame, answers.scale_text(P.n_seeds, P.steps, records["baseline"]["provenance"]["device"]))
    display(Markdown(repeated(probe)))
    return matched


def repeated(probe) -> str:
    """Whether the runs a probe read, trained again for it (a lent GPU keeps no weights), repeated their records'
    losses bit for bit (runs.retrained_note): only then are they the models chapter 4 scored."""
    folders = [runs.run_dir(run.store_dir, run.model_cfg, run.train_cfg, run.device)
               for runs_of in probe.models.values() for run in runs_of]
    notes = [json.loads(path.read_text()) for path in (f / runs.RETRAINED_FILE for f in folders) if path.exists()]
    if not notes:
        return "Its models are the runs as first trained (none was trained again for it)."
    same = sum(note["same_loss_history"] for note in notes)
    differ = "." if same == len(notes) else "; the others' models are not bit for bit the ones chapter 4 scored."
    return (f"Its models were trained again for it: {same} of {len(notes)} runs repeated their recorded losses bit for "
            f"bit{differ}")


def show_sharpness(frame, scale: str, figure=True):
    """One scale's sharpness test: each model at its partner's entropy, as a table, a note and (with `figure`) a
    figure."""
    matched = attention_gain.matched_sharpness(frame)
    display(Markdown(attention_gain.sharpness_note(matched, scale)), attention_gain.sharpness_table(matched))  # scale first
    if not figure:
        return matched
    attention_plots.accuracy_along_sharpness(frame, answers.SHORT_LABELS,
                                             title=f"Each model as its attention is sharpened or spread "
                                                   f"({scale}; large dots: as trained)")
    show_figure(f"Accuracy against attention entropy as each model's logits are scaled by β ({scale}): a line "
                "per model, a panel per length, large dots as trained. A Baseline line that reaches +LN's "
                "accuracy at +LN's entropy: sharpness accounts for the gap.")
    return matched
