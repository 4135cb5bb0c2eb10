"""Chapters 4 and 5 as one body: a task's Baseline and +LN against the paper's accuracy table,
at the paper's scale (read from results/paper), at the page's own profile, after the longer
training, the gap at each scale, the two devices compared and the training loss.

A notebook holds the chapter's prose and calls one method per cell; every method shows what it
computes and keeps what results.json needs.  A third task is a PaperTask record, a Chapter
that reproduces it, and a notebook of prose around these calls.
"""


import pandas as pd
from IPython.display import Markdown, display

from .. import stats
from ..attention import sharpening_band
from ..experiments.reports import adaptive_reach, along_training, answers, dynamics_plots, paper_rows, plots, provisional, report
from ..experiments.setups import dynamics_runs, paper, sensitivity, variants
from ..experiments.storage import runs
from ..experiments.storage.store import StoreError
from ..experiments.reports.answers import device_kind as summary_device
from ..experiments.chapters import SENSITIVITY, Chapter
from ..experiments.setups.params import task_value
from ..experiments.chapters.scales import EARLIER_PAPER_RUN
from . import paper_scale, pending, runner
from .device_sections import DeviceSections
from .page import ChapterPage, show_figure, show_runs, task_title

PAIRS = [variants.PAIR, tuple(variants.run_name(v, "adaptive") for v in variants.PAIR)]  # without, with adaptive temperature
COMPARED = [*PAIRS, (PAIRS[0][1], PAIRS[1][1])]  # and: does adaptive temperature help +LN? (the summary asks)
P_VALUE_KEYS = ("p_value", "adaptive_p_value")  # each pair's p-values in the metrics
LABELS = variants.LABELS
SHORT = answers.SHORT_LABELS
# a table's column labels where its caption says the temperature: each pair's runs as Baseline and +LN
SHORT_BY_RUN = {variants.run_name(v, t): SHORT[v] for v in SHORT for t in ("fixed", "adaptive")}


class AccuracyPage(ChapterPage, DeviceSections):
    """One accuracy chapter being executed: its parameters, what it has computed so far, and
    the sections that show it."""

    def __init__(self, record: Chapter, namespace: dict):
        self.record, self.task_record, self.chapter = record, record.reproduces, record.name
        super().__init__(namespace)
        self.task = variants.task_config(self.P, self.task_record.name)
        self.table = self.task_record.accuracy  # the paper's numbers for this task
        self.name = task_title(self.task_record)  # "Argmax retrieval"
        self.paper_scale = self.long = self.counter = self.dynamics_summary = self.recheck_summary = None
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
            P, accuracy = self.paper_scale["P"], self.paper_scale["accuracy"]
            device = ("GPU, counter stream" if self.paper_scale["draws"] != EARLIER_PAPER_RUN["draws"] else
                      "GPU, the earlier runs with a generator per seed; on the counter stream, "
                      + self.paper_scale["counter_share"][0])
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
        """The newest committed paper-scale runs: on the counter stream where the GPU queue has committed
        them, else the earlier runs (per-seed generators)."""
        if self.paper_scale or not self.P.paper_scale_dir:
            return
        draws, P_paper, accuracy, records = paper_scale.latest_accuracy_runs(self.record.name, self.task.name,
                                                                              self.P.paper_scale_dir)
        self.paper_scale = {"P": P_paper, "accuracy": accuracy, "runs": records, "draws": draws,
                            "metrics": report.per_length(accuracy, P_paper.eval_lengths, COMPARED)}
        if draws == EARLIER_PAPER_RUN["draws"]:  # how far the queue's counter-stream runs are (answer, records)
            self.paper_scale["counter_share"] = paper_scale.committed_share(self.record.name, self.P.paper_scale_dir)
        else:  # the earlier runs stay beside the queue's, where committed
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
        if self.paper_scale["draws"] == EARLIER_PAPER_RUN["draws"]:
            share, committed = self.paper_scale["counter_share"]
            listed = f" ({'; '.join(committed)})" if committed else ""
            display(Markdown("Shown: the earlier paper-scale runs, whose batches and test sequences came from a "
                             f"generator per seed. The same runs on the counter stream: {share}{listed}; "
                             "this page shows them once every one is committed (`python -m vvlib paper --plan`)."))
        else:
            display(Markdown("Shown: the paper-scale runs on the counter stream (the GPU queue's); the earlier "
                             "runs, from a generator per seed, stay committed, and the gap table below sets them "
                             "beside these."))
        # a run stored in parts of seeds (seed_chunk) is one row per part
        show_runs({v: runs.run_records(r) for v, r in self.paper_scale["runs"].items()}, LABELS)

    def paper_scale_comparison(self, pair: int):
        """The paper-scale table beside the paper's, and its verdict, for PAIRS[pair]."""
        if self.paper_scale:
            P_paper, metrics = self.paper_scale["P"], self.paper_scale["metrics"]
            self._comparison(metrics, P_paper, pair, P_paper.n_seeds)

    def paper_scale_figure(self):
        if self.paper_scale:
            P_paper = self.paper_scale["P"]
            self._figure(self.paper_scale["accuracy"], P_paper.eval_lengths, PAIRS[0],
                         f"{self.name} at the paper's scale ({P_paper.n_seeds} seeds x {P_paper.steps:,} steps, GPU; "
                         "dashed: the paper)", f"{P_paper.n_seeds} seeds x {P_paper.steps:,} steps, GPU")

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

    def comparison(self, pair: int):
        """This run's table beside the paper's, and its verdict, for PAIRS[pair]."""
        self._comparison(self.metrics, self.P, pair, self.P.n_seeds)

    def figures(self):
        scale = f"{self.P.n_seeds} seeds x {self.P.steps:,} steps, {self.device.type.upper()}"
        for pair, title in zip(PAIRS, ["without test-time adaptation", "with adaptive temperature"]):
            self._figure(self.accuracy, self.P.eval_lengths, pair,
                         f"{self.name}, {title} ({self.P.n_seeds} seeds x {self.P.steps} steps; dashed: the paper)",
                         f"{scale}, {title}")

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
        display(Markdown(adaptive_reach.reach_sentence(measured, labels, max(P.eval_lengths))))
        display(adaptive_reach.reach_table(measured, labels, P.eval_lengths[::2]))
        low, high = sharpening_band()
        plots.quantity_vs_length(adaptive_reach.sharpened_frame(frame, LABELS), "sharpened",
                                 "test sequences sharpened (%)", title=f"{self.name}: where adaptive temperature acts")
        show_figure(f"The share of test sequences whose attention the adaptive rule sharpens, mean ± s.e. over "
                    f"seeds ({scale}, {P.n_eval_sequences} test sequences per length). The rule sharpens a head only "
                    f"when its entropy lies between {low:.2f} and {high:.2f} nats; elsewhere the model's output is "
                    "unchanged.")
        return measured

    # --- the longer training --------------------------------------------------------------------

    def longer_training(self):
        """The long_* runs with their step ladders, or a note where the profile has none."""
        P = self.P
        if not P.long_steps:
            display(Markdown("*Skipped at this profile (`long_steps` = 0).*"))
            return
        accuracy, ladders, runs = variants.long_training(P, self.task, list(PAIRS[0]), ["fixed", "adaptive"], self.device)
        self.long = {"accuracy": accuracy, "runs": runs, "ladder": report.ladder_frame(ladders, P.ladder_lengths, PAIRS[0]),
                     "metrics": report.per_length(accuracy, P.eval_lengths, COMPARED)}
        show_runs(runs, LABELS)

    def scales(self, pair: int):
        """Both scales of this page beside the paper's, and the longer training's verdict."""
        if self.long:
            P = self.P
            scales = {f"{P.n_seeds} seeds x {P.steps:,} steps": self.metrics,
                      f"{P.long_seeds} seeds x {P.long_steps:,} steps": self.long["metrics"]}
            display(report.scales_table(scales, P.eval_lengths, PAIRS[pair], SHORT_BY_RUN, self.table, P_VALUE_KEYS[pair]))
            display(Markdown(report.verdict(self.long["metrics"], P.eval_lengths, PAIRS[pair], LABELS, P.max_len,
                                            P.long_seeds, paper_table=self.table)))

    def ladder(self):
        """+LN minus Baseline along training: a figure, a sentence and the table."""
        if self.long:
            ladder = self.long["ladder"]
            figure = plots.ladder_differences(ladder, LABELS, PAIRS[0],
                                              title=f"{self.name}: +LN minus Baseline along training ({self.P.long_seeds} seeds)")
            show_figure(f"+LN's accuracy minus the Baseline's (mean over {self.P.long_seeds} seeds paired by seed, "
                        f"with its 95% interval) at each checkpoint of the longer training ({self.P.long_steps:,} "
                        f"steps, {self.device.type.upper()}), one line per test length. Where a line crosses zero, "
                        "the verdict at that length depends on the training budget.", figure)
            display(Markdown(report.overtaking(ladder, PAIRS[0], LABELS, self.P.max_len)))
            display(report.ladder_table(ladder, PAIRS[0], LABELS))

    # --- across scales and devices ----------------------------------------------------------------

    def gaps_by_scale(self):
        """+LN minus Baseline at every scale the page has, and each scale's verdict."""
        if not self.paper_scale:
            return
        P, P_paper = self.P, self.paper_scale["P"]
        gaps = {f"{P.n_seeds} seeds x {P.steps:,} steps": (P.eval_lengths, self.accuracy, P.steps)}
        if self.long:
            gaps[f"{P.long_seeds} seeds x {P.long_steps:,} steps"] = (P.eval_lengths, self.long["accuracy"], P.long_steps)
        gaps[f"{P_paper.n_seeds} seeds x {P_paper.steps:,} steps, GPU"] = (P_paper.eval_lengths, self.paper_scale["accuracy"],
                                                                           P_paper.steps)
        if self.earlier:
            P_early = self.earlier["P"]
            gaps[f"{P_early.n_seeds} seeds x {P_early.steps:,} steps, GPU, the earlier runs"] = (
                P_early.eval_lengths, self.earlier["accuracy"], P_early.steps)
        display(report.differences_by_scale({label: gap[:2] for label, gap in gaps.items()}, PAIRS[0]))
        display(Markdown(report.verdicts_by_scale({label: (lengths, report.per_length(acc, lengths, PAIRS), steps)
                                                   for label, (lengths, acc, steps) in gaps.items()}, PAIRS[0], LABELS,
                                                  P.max_len, self.task.name)))

    def losses(self):
        """The mean training loss along the way, over seeds with a band, for the longer training, the
        paper's scale and chapter 11's decaying-rate row where the store has it (never trained here)."""
        P = self.P
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
                    "percentile seed, for each run named in the legend (its seeds and device there). A loss that "
                    "falls and then climbs again is the rise the table below measures.")
        display(along_training.loss_rise_table(histories))
        if decayed:
            longest = str(max(P_rows.eval_lengths))
            display(Markdown(
                f"With the rate decayed, at N = {int(longest):,}: Baseline {row['accuracy']['baseline'][longest]:.1f}%, "
                f"+LN {row['accuracy']['layernorm'][longest]:.1f}% ({row['n_seeds']} seeds, "
                f"{task_value(P_rows, 'n_eval_sequences', self.task.name)} test sequences per length); +LN is "
                f"{sensitivity.described(row['difference'][longest])}. At a constant rate, the longer training above "
                f"reaches {self.long['metrics']['accuracy']['baseline'][longest]:.1f}% and "
                f"{self.long['metrics']['accuracy']['layernorm'][longest]:.1f}% there ({P.long_seeds} seeds)."))

    def dynamics(self):
        """The measured runs (dynamics_rows): a figure of the measures along training and a sentence per run."""
        P = self.P
        if not P.dynamics_rows:
            display(Markdown("*Not measured at this profile (`dynamics_rows` is empty).*"))
            return
        tables, provenance = {}, {}
        for row in P.dynamics_rows:
            label = dynamics_runs.label(row)
            tables[label], provenance[label] = dynamics_runs.measured_row(P, self.task, row, self.device)
        self.dynamics_provenance = provenance
        self.dynamics_summary = along_training.dynamics_summary(tables)
        figure = dynamics_plots.training_dynamics(tables, title=f"{self.name}, {P.dynamics_seeds} seeds x {P.long_steps:,} "
                                                       f"steps: measured every {P.dynamics_every} steps (mean over seeds)")
        show_figure(f"Each measured run ({P.dynamics_seeds} seeds x {P.long_steps:,} steps, {self.device.type.upper()}), "
                    f"every {P.dynamics_every} steps, mean over seeds. Top: the training loss; on a fixed probe batch, "
                    "the share of sequences whose largest attention weight misses the answer, and their loss. Bottom: "
                    "the answer's logit margin, the gradient norm, AdamW's running gradient scale. Look for the step "
                    "where the loss turns up and what moves with it.",
                    figure)
        display(along_training.dynamics_table(self.dynamics_summary))

    def rows_at_long_steps(self):
        """Chapter 11's rows of this task trained for the longer training's steps (a decaying rate, the
        cut at 2,000 steps, weight decay 0.1): +LN minus Baseline under each change that stops the loss
        rise, as tables, from the store only (never trained here)."""
        if not self.long:
            return
        found, P_rows = self._stored_long_rows()
        if not found:
            display(Markdown(f"*None of chapter 11's rows at {self.P.long_steps:,} steps is in the store at this "
                             f"profile.*"))
            return
        records = [row for row, _ in found]
        display(sensitivity.row_table(records, self.task.name, self._row_lengths(P_rows)))
        longest = str(max(P_rows.eval_lengths))
        display(along_training.rise_rows_table(found, self.long["metrics"]["accuracy"], self.long["runs"], longest,
                                               self.P.long_seeds))

    def _stored_long_rows(self) -> tuple[list, object]:
        """([(row record, training records {side: record})] of chapter 11's rows of this task's model (no model
        setting changed) whose steps are the longer training's, those the store has, in the chapter's order;
        chapter 11's parameters)."""
        name = SENSITIVITY.name
        P_rows = runner.resolved(name, SENSITIVITY.profile_or_default(self.P.profile), {"store_dir": self.P.store_dir})
        rows = [row for row in sensitivity.rows_of_model(P_rows, self.task.name, {})
                if row.get("steps") == self.P.long_steps]
        found = [sensitivity.stored_row(P_rows, self.task.name, row, self._row_lengths(P_rows)) for row in rows]
        return [f for f in found if f is not None], P_rows

    @staticmethod
    def _row_lengths(P_rows) -> list:
        return sorted({*P_rows.compared_lengths, max(P_rows.eval_lengths)})

    # --- results.json -----------------------------------------------------------------------------

    def write(self):
        """results.json: this run's metrics, the longer training's and the paper scale's beside them."""
        metrics, training = dict(self.metrics), dict(self.training)
        if self.long:
            metrics.update(long={**self.long["metrics"], "steps": self.P.long_steps},
                           ladder=report.ladder_records(self.long["ladder"]))
            training.update({f"long/{v}/{r['spec']['train']['first_seed']}": r
                             for v, rs in self.long["runs"].items() for r in rs})
        if self.counter:
            training.update({f"counter/{v}/{r['spec']['train']['first_seed']}": r
                             for v, rs in self.counter["runs"].items() for r in rs})
        if self.dynamics_summary:
            metrics["dynamics"] = self.dynamics_summary
            training.update({f"dynamics/{label}": {"provenance": p} for label, p in self.dynamics_provenance.items()})
        if self.recheck_summary:
            metrics["recheck"] = self.recheck_summary
        if self.reach:
            metrics["adaptive_reach"] = self.reach
        if self.paper_scale:
            metrics["paper_scale"] = {**self.paper_scale["metrics"], "steps": self.paper_scale["P"].steps,
                                      "device_type": "cuda", "draws": self.paper_scale["draws"]}
            if self.reach_paper:
                metrics["paper_scale"]["adaptive_reach"] = self.reach_paper
            training.update({f"paper_scale/{v}": r for v, r in self.paper_scale["runs"].items()})
        self.write_results(metrics, {f"training/{v}": r["provenance"] for v, r in training.items()})

    # --- pieces -----------------------------------------------------------------------------------

    def _comparison(self, metrics, P, pair: int, n_seeds: int):
        display(report.comparison_table(metrics, P.eval_lengths, PAIRS[pair], LABELS, self.table, P_VALUE_KEYS[pair]))
        display(Markdown(report.verdict(metrics, P.eval_lengths, PAIRS[pair], LABELS, P.max_len, n_seeds,
                                        paper_table=self.table)))

    def _figure(self, accuracy, lengths, pair, title, scale: str):
        plots.accuracy_vs_length(stats.long_form({r: accuracy[r] for r in pair}, lengths), {r: LABELS[r] for r in pair},
                                 paper=paper.dashed(self.table, pair), title=title)
        show_figure(f"{self.name}: mean test accuracy ± s.e. over seeds against the test length N ({scale}); dashed, "
                    f"the paper's {self.task_record.table} for the same two variants. The paper's claim is the solid "
                    f"{SHORT_BY_RUN[pair[1]]} line above the {SHORT_BY_RUN[pair[0]]} beyond the training lengths.")
