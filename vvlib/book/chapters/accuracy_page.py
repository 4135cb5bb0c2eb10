"""Chapters 4 and 5 as one body: a task's Baseline and +LN against the paper's accuracy table at the paper's
scale (read from results/paper), the reader's own run beside it, where adaptive temperature acts, and the
training loss.  The gap at every scale (the page's run, the longer training, the counter stream, the GPU) goes
to results.json for the scale page, which shows it for both chapters.

A notebook holds the chapter's prose and calls one method per cell; every method shows what it
computes and keeps what results.json needs.  A third task is a PaperTask record, a Chapter
that reproduces it, and a notebook of prose around these calls.
"""


import pandas as pd
from IPython.display import Markdown, display

from ... import stats
from ...attention import sharpening_band
from ...experiments.reports import along_training, answers, plots, provisional, report
from .c05_dictionary_lookup import adaptive_reach
from .c11_sensitivity import paper_rows, row_reports
from ...experiments.setups import paper, sensitivity, variants
from ...experiments.storage import runs
from ...experiments.storage.store import StoreError
from ...experiments.reports.answers import device_kind as summary_device
from . import SENSITIVITY, Chapter
from ...experiments.setups.params import task_value
from .. import paper_scale, runner
from ..gpu_queue import pending
from ..page import ChapterPage, show_figure, show_runs, task_title

PAIRS = [variants.PAIR, tuple(variants.run_name(v, "adaptive") for v in variants.PAIR)]  # without, with adaptive temperature
COMPARED = [*PAIRS, (PAIRS[0][1], PAIRS[1][1])]  # and: does adaptive temperature help +LN? (the summary asks)
P_VALUE_KEYS = ("p_value", "adaptive_p_value")  # each pair's p-values in the metrics
LABELS = variants.LABELS
SHORT = answers.SHORT_LABELS
# a table's column labels where its caption says the temperature: each pair's runs as Baseline and +LN
SHORT_BY_RUN = {variants.run_name(v, t): SHORT[v] for v in SHORT for t in ("fixed", "adaptive")}


class AccuracyPage(ChapterPage):
    """One accuracy chapter being executed: its parameters, what it has computed so far, and
    the sections that show it."""

    def __init__(self, record: Chapter, namespace: dict):
        self.record, self.task_record, self.chapter = record, record.reproduces, record.name
        super().__init__(namespace)
        self.task = variants.task_config(self.P, self.task_record.name)
        self.table = self.task_record.accuracy  # the paper's numbers for this task
        self.name = task_title(self.task_record)  # "Argmax retrieval"
        self.paper_scale = self.long = self.counter = None
        self.earlier = None  # the earlier paper-scale runs (per-seed generators), where newer ones are shown
        self.training = None  # set by train()
        self.reach = self.reach_paper = None  # set by adaptive_reach()

    # --- the answer first, then the paper's scale, trained on a GPU and committed ----------------

    def answer(self):
        """The page's answer under its title: at the largest scale this page shows (the committed
        paper-scale runs where the profile loads them, else its own run), the paper's numbers and
        ours at answers.ANSWER_LENGTHS, the paired difference, and the verdict with its scale."""
        self._read_paper_scale()
        if self.paper_scale:
            P, accuracy, device = self.paper_scale["P"], self.paper_scale["accuracy"], "GPU, counter stream"
        else:
            P = self.P
            self.train(show=False)
            accuracy, device = self.accuracy, summary_device(str(self.device))
        claim = answers.accuracy_claim(PAIRS[0], SHORT)
        evidence = answers.accuracy_evidence(accuracy, P.eval_lengths, PAIRS[0], P.max_len)
        verdict = provisional.qualified(evidence.verdict(), self.task.name, P.steps)
        display(Markdown(f"**Our verdict on the paper's {self.task_record.table}: {verdict}.** Its claim: *{claim}*. "
                         f"Tested on {P.n_seeds} seeds x {P.steps:,} steps ({device}), paired over seeds."))
        display(answers.verdict_table([answers.verdict_row(f"{P.n_seeds} seeds x {P.steps:,} steps, {device}", claim,
                                                           evidence, self.task.name, P.steps)]))
        display(answers.answer_table(accuracy, P.eval_lengths, PAIRS[0], SHORT, self.table))
        self.paper_scale_figure()
        if self.P.paper_scale_dir:  # the book reads the committed paper-scale results: so may this sentence
            status = self._rows_at_the_papers_scale()
            if status:
                display(Markdown(status))

    def _rows_at_the_papers_scale(self) -> str:
        """What chapter 11's paper-profile rows of this task say (or that they are pending), where that
        profile has rows of it; '' where it has none."""
        if "paper" not in SENSITIVITY.profiles:
            return ""
        P_paper = runner.resolved(SENSITIVITY.name, "paper", {"store_dir": self.P.paper_scale_dir})
        return paper_rows.status(P_paper, self.task.name, max(P_paper.eval_lengths))

    def _read_paper_scale(self):
        """The committed paper-scale runs on the counter stream (every profile's committed store holds them), and
        the earlier runs (per-seed generators) beside them."""
        if self.paper_scale or not self.P.paper_scale_dir:
            return
        draws, P_paper, accuracy, records = paper_scale.latest_accuracy_runs(self.record.name, self.task.name,
                                                                              self.P.paper_scale_dir)
        self.paper_scale = {"P": P_paper, "accuracy": accuracy, "runs": records, "draws": draws,
                            "metrics": report.per_length(accuracy, P_paper.eval_lengths, COMPARED)}
        try:
            P_early, accuracy, records = paper_scale.accuracy_runs(self.record.name, self.task.name,
                                                                   self.P.paper_scale_dir)
            self.earlier = {"P": P_early, "accuracy": accuracy, "runs": records}
        except StoreError:
            self.earlier = None

    def load_paper_scale(self):
        """The committed paper-scale runs' records (where, when, how long), or a note where the profile
        loads none."""
        if not self.P.paper_scale_dir:
            display(Markdown("*Not loaded at this profile (`paper_scale_dir` is empty); `-p paper_scale_dir "
                             "results/paper` shows the committed paper-scale runs.*"))
            return
        self._read_paper_scale()
        display(Markdown("Shown: the paper-scale runs on the counter stream (the GPU queue's); the earlier "
                         "runs, from a generator per seed, stay committed; the scale page sets them beside these."))
        # a run stored in parts of seeds (seed_chunk) is one row per part
        show_runs({v: runs.run_records(r) for v, r in self.paper_scale["runs"].items()}, LABELS)

    def paper_scale_comparison(self, pair: int):
        """The paper-scale table beside the paper's, and its verdict, for PAIRS[pair]."""
        if not self.paper_scale:
            return
        P, metrics = self.paper_scale["P"], self.paper_scale["metrics"]
        display(report.comparison_table(metrics, P.eval_lengths, PAIRS[pair], LABELS, self.table, P_VALUE_KEYS[pair]))
        display(Markdown(report.verdict(metrics, P.eval_lengths, PAIRS[pair], LABELS, P.max_len, P.n_seeds,
                                        paper_table=self.table)))

    def paper_scale_figure(self):
        """The paper-scale accuracy against N, the paper's dashed beside it."""
        if not self.paper_scale:
            return
        P, pair = self.paper_scale["P"], PAIRS[0]
        scale = f"{P.n_seeds} seeds x {P.steps:,} steps, GPU"
        plots.accuracy_vs_length(stats.long_form({r: self.paper_scale["accuracy"][r] for r in pair}, P.eval_lengths),
                                 {r: LABELS[r] for r in pair}, paper=paper.dashed(self.table, pair),
                                 title=f"{self.name} at the paper's scale ({scale}; dashed: the paper)")
        show_figure(f"{self.name}: mean test accuracy ± s.e. over seeds against the test length N ({scale}); dashed, "
                    f"the paper's {self.task_record.table} for the same two variants. The paper's claim is the solid "
                    f"{SHORT_BY_RUN[pair[1]]} line above the {SHORT_BY_RUN[pair[0]]} beyond the training lengths.")

    # --- this page's own run ---------------------------------------------------------------------

    def train(self, show=True):
        """Both variants trained (or loaded) and evaluated, with and without adaptive temperature, once
        per page (the answer asks first where no paper-scale runs are loaded)."""
        if self.training is None:
            self.accuracy, self.training = variants.train_and_evaluate(self.P, self.task, list(PAIRS[0]),
                                                                       ["fixed", "adaptive"], self.device)
            self.metrics = report.per_length(self.accuracy, self.P.eval_lengths, COMPARED)
        if not show:
            return
        display(pd.DataFrame({
            LABELS[v]: {"final training loss (mean over seeds)": sum(r["final_loss"]) / len(r["final_loss"]),
                        "training wall time (s)": r["provenance"]["wall_time_s"],
                        "model-steps per second": r["model_steps_per_s"], "trained on": r["provenance"]["device"]}
            for v, r in self.training.items()}))

    def rerun_table(self):
        """This run beside the answer: +LN minus the Baseline at each length both tested, at the paper's scale
        (where loaded) and here, each paired over its own seeds."""
        P, scales = self.P, {}
        if self.paper_scale:
            P_paper = self.paper_scale["P"]
            scales[f"the answer: {P_paper.n_seeds} seeds x {P_paper.steps:,} steps, GPU"] = (
                P_paper.eval_lengths, self.paper_scale["accuracy"])
        scales[f"this run: {P.n_seeds} seeds x {P.steps:,} steps, {self.device.type.upper()}"] = (
            P.eval_lengths, self.accuracy)
        display(report.differences_by_scale(scales, PAIRS[0]).rename_axis("+LN minus Baseline (points) [95%] at N"))

    def adaptive_reach(self):
        """Where adaptive temperature acts (the chapter's probe), at the paper's scale where its probe is
        committed, then on this page's runs: per length, the attention's entropy, the share of test sequences
        the rule sharpens and the accuracy it adds, beside the paper's; a captioned figure of the share."""
        if self.paper_scale:
            self._reach_at_paper_scale()
        [(_, probe)] = self.record.probes(self.P, self.device)
        self.reach = self._reach(probe.tables(self.P.store_dir, self.device)["adaptive"], self.P,
                                 f"{self.P.n_seeds} seeds x {self.P.steps:,} steps, {self.device.type.upper()}")

    def _reach_at_paper_scale(self):
        """adaptive_reach at the paper's scale: the cells it leaves as they are, then its probe or the units it awaits."""
        P_paper, accuracy = self.paper_scale["P"], self.paper_scale["accuracy"]
        scale = f"{P_paper.n_seeds} seeds x {P_paper.steps:,} steps, GPU"
        display(Markdown(adaptive_reach.unchanged_sentence(accuracy, {v: SHORT[v] for v in PAIRS[0]},
                                                           f"the paper's scale ({scale})")))
        if found := paper_scale.probe(self.record.name, self.P.paper_scale_dir):
            self.reach_paper = self._reach(found[1]["adaptive"], P_paper, scale)
            return
        display(Markdown(pending.note("The heads' entropy at the paper's scale", paper_scale.probe_entries(
            self.record.name, self.P.paper_scale_dir), overrides={"store_dir": self.P.paper_scale_dir})))

    def _reach(self, frame, P, scale: str) -> dict:
        """One scale's section of adaptive_reach: its sentence, table and captioned figure; returns its numbers."""
        measured = adaptive_reach.reach(frame, P.eval_lengths, self.table)
        labels = {v: SHORT[v] for v in measured}
        display(Markdown(f"*{scale}:*\n\n" + adaptive_reach.reach_sentence(measured, labels, max(P.eval_lengths))))
        display(adaptive_reach.reach_table(measured, labels, P.eval_lengths[::2]))
        low, high = sharpening_band()
        plots.quantity_vs_length(adaptive_reach.sharpened_frame(frame, LABELS), "sharpened",
                                 "test sequences sharpened (%)", title=f"{self.name}: where adaptive temperature acts")
        show_figure(f"The share of test sequences whose attention the adaptive rule sharpens, mean ± s.e. over "
                    f"seeds ({scale}, {P.n_eval_sequences} test sequences per length). The rule sharpens a head only "
                    f"when its entropy lies between {low:.2f} and {high:.2f} nats; elsewhere the model's output is "
                    "unchanged.")
        return measured

    # --- every scale, for the scale page ----------------------------------------------------------

    def _longer(self):
        """The longer training (long_*) and its counter-stream arm (counter_seeds), loaded or trained once."""
        P = self.P
        if self.long is None and P.long_steps:
            accuracy, trained = variants.long_training(P, self.task, list(PAIRS[0]), ["fixed", "adaptive"],
                                                          self.device)
            self.long = {"accuracy": accuracy, "runs": trained,
                         "metrics": report.per_length(accuracy, P.eval_lengths, COMPARED)}
            arm = variants.counter_arm(P)
            if arm is not None:
                accuracy, trained = variants.long_training(arm, self.task, list(PAIRS[0]), ["fixed"], self.device)
                self.counter = {"P": arm, "accuracy": accuracy, "runs": trained}

    def scale_rows(self) -> dict:
        """{scale in words: {N: paired difference of +LN minus the Baseline, points}} at each length the paper
        reports beyond training, for every scale this page has: its run, the longer training (and its counter
        stream), the paper's scale (and its earlier runs)."""
        self._longer()
        P, device = self.P, self.device.type.upper()
        found = {f"{P.n_seeds} seeds x {P.steps:,} steps, {device}": (P.eval_lengths, self.accuracy)}
        if self.long:
            found[f"{P.long_seeds} seeds x {P.long_steps:,} steps, {device}"] = (P.eval_lengths, self.long["accuracy"])
        if self.counter:
            arm = self.counter["P"]
            found[f"{arm.long_seeds} seeds x {arm.long_steps:,} steps, {device}, counter stream"] = (
                P.eval_lengths, self.counter["accuracy"])
        for shown, words in ((self.paper_scale, "GPU, counter stream"),
                             (self.earlier, "GPU, earlier runs")):
            if shown:
                found[f"{shown['P'].n_seeds} seeds x {shown['P'].steps:,} steps, {words}"] = (
                    shown["P"].eval_lengths, shown["accuracy"])
        base, ln = PAIRS[0]
        at = [n for n in answers.ANSWER_LENGTHS if n > P.max_len]
        return {label: {str(n): stats.paired_difference(100 * acc[base][:, list(lengths).index(n)],
                                                        100 * acc[ln][:, list(lengths).index(n)])
                        for n in at if n in lengths}
                for label, (lengths, acc) in found.items()}

    def device_sentence(self):
        """Whether the device changes the answer: the CPU's counter-stream arm against the GPU's runs on the same
        stream, +LN minus the Baseline at the longest length, where both are at hand."""
        rows = self.scale_rows()
        cpu = next((k for k in rows if k.endswith("counter stream") and "GPU" not in k), None)
        gpu = next((k for k in rows if k.endswith("GPU, counter stream")), None)
        if not (cpu and gpu):
            return
        n = max(rows[gpu], key=int)
        words = lambda d: f"{d['diff']:+.1f} [{d['low']:+.1f}, {d['high']:+.1f}]"
        display(Markdown(f"**Does the device change the answer?** The counter stream draws the same data on any "
                         f"device. On it, +LN minus the Baseline at N = {int(n):,} is {words(rows[cpu][n])} points on "
                         f"the CPU ({cpu}) and {words(rows[gpu][n])} on the GPU ({gpu}). The scale page sets every "
                         "scale side by side."))

    def losses(self):
        """The mean training loss along the way, over seeds with a band, for the longer training, the
        paper's scale and chapter 11's decaying-rate row where the store has it (never trained here)."""
        P = self.P
        self._longer()
        if not (self.long or self.paper_scale):
            return
        histories = {}
        if self.long:
            histories.update({f"{LABELS[v]}, {P.long_seeds} seeds ({rs[0]['spec']['device_type']})": runs.joined_history(rs)
                              for v, rs in self.long["runs"].items()})
        if self.paper_scale:
            histories.update({f"{LABELS[v]}, {self.paper_scale['P'].n_seeds} seeds (GPU)": r["loss_history"]
                              for v, r in self.paper_scale["runs"].items()})
        found, P_rows = self._stored_long_rows() if self.long else ([], None)
        decayed = next(((row, training) for row, training in found if row["changes"].get("lr_schedule") == "cosine"), None)
        if decayed:
            row, training = decayed
            histories.update({f"{LABELS[v]}, {P_rows.n_seeds} seeds ({r['spec']['device_type']}), rate decayed":
                              r["loss_history"] for v, r in training.items()})
        plots.training_curves(histories, band=True, title=f"{self.name}: training loss (mean over seeds, 10-90% band)")
        show_figure("The training loss along training, mean over seeds with the band from the 10th to the 90th "
                    "percentile seed, for each run named in the legend (its seeds and device there). The table below "
                    "gives each run's lowest loss and its last; a ratio above 1 means the loss climbed again.")
        display(along_training.loss_rise_table(histories))
        if decayed:
            longest = str(max(P_rows.eval_lengths))
            display(Markdown(
                f"With the rate decayed, at N = {int(longest):,}: Baseline {row['accuracy']['baseline'][longest]:.1f}%, "
                f"+LN {row['accuracy']['layernorm'][longest]:.1f}% ({row['n_seeds']} seeds, "
                f"{task_value(P_rows, 'n_eval_sequences', self.task.name)} test sequences per length); +LN is "
                f"{row_reports.described(row['difference'][longest])}. At a constant rate, the longer training (the paper's "
                f"steps on a CPU) "
                f"reaches {self.long['metrics']['accuracy']['baseline'][longest]:.1f}% and "
                f"{self.long['metrics']['accuracy']['layernorm'][longest]:.1f}% there ({P.long_seeds} seeds)."))

    def _stored_long_rows(self) -> tuple[list, object]:
        """([(row record, training records {side: record})] of chapter 11's rows of this task's model (no model
        setting changed) whose steps are the longer training's, those the store has, in the chapter's order;
        chapter 11's parameters)."""
        name = SENSITIVITY.name
        P_rows = runner.resolved(name, SENSITIVITY.profile_or_default(self.P.profile), {"store_dir": self.P.store_dir})
        rows = [row for row in sensitivity.rows_of_model(P_rows, self.task.name, {})
                if row.get("steps") == self.P.long_steps]
        lengths = sorted({*P_rows.compared_lengths, max(P_rows.eval_lengths)})
        found = [sensitivity.stored_row(P_rows, self.task.name, row, lengths) for row in rows]
        return [f for f in found if f is not None], P_rows

    # --- results.json -----------------------------------------------------------------------------

    def write(self):
        """results.json: this run's metrics, the longer training's and the paper scale's beside them."""
        metrics, training = dict(self.metrics), dict(self.training)
        metrics["scales"] = self.scale_rows()
        if self.long:
            metrics.update(long={**self.long["metrics"], "steps": self.P.long_steps})
            training.update({f"long/{v}/{r['spec']['train']['first_seed']}": r
                             for v, rs in self.long["runs"].items() for r in rs})
        if self.counter:
            training.update({f"counter/{v}/{r['spec']['train']['first_seed']}": r
                             for v, rs in self.counter["runs"].items() for r in rs})
        if self.reach:
            metrics["adaptive_reach"] = self.reach
        if self.paper_scale:
            metrics["paper_scale"] = {**self.paper_scale["metrics"], "steps": self.paper_scale["P"].steps,
                                      "device_type": "cuda", "draws": self.paper_scale["draws"]}
            if self.reach_paper:
                metrics["paper_scale"]["adaptive_reach"] = self.reach_paper
            training.update({f"paper_scale/{v}": r for v, r in self.paper_scale["runs"].items()})
        self.write_results(metrics, {f"training/{v}": r["provenance"] for v, r in training.items()})
