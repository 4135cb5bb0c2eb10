"""Chapter 11's page: one unstated setting at a time, +LN against the Baseline per configuration, at the paper's
scale (read from results/paper) and at this page's profile (trained here or read from the store).  The notebook
holds the prose and calls one method per cell."""

import html

from IPython.display import Markdown, display

from .. import SENSITIVITY
from ....experiments.records import scales
from ....experiments.reports import plots
from . import paper_rows, row_reports
from ....experiments.setups import paper, sensitivity, variants
from ....experiments.setups.paper_tasks import ARGMAX, BY_NAME
from ... import runner
from ...page import ChapterPage, show_collapsed, show_figure, show_table


FOREST_CAPTION = ("+LN's accuracy minus the Baseline's, a row per configuration (the defaults in bold), a panel per "
                  "length; each dot with its paired 95% interval, filled where p < 0.05. Dashed red: the paper's "
                  "difference. Right of zero favours +LN.")


def forest(records: list, task: str, lengths, scale: str):
    """The forest of `task`'s rows (records: row_record's): +LN minus Baseline per configuration at each N of
    `lengths`, the defaults in bold, the paper's difference dashed; `scale` closes the title."""
    marks = {n: sensitivity.paper_gain(task, n) for n in lengths}
    return plots.forest(row_reports.forest_frame(records, task), lengths, "defaults", marks=marks,
                        mark_label="the paper", title=f"{task}: +LN minus Baseline per configuration ({scale})")


class SensitivityPage(ChapterPage):
    """Chapter 11 being executed: its parameters, its rows (every config checked before anything trains), what
    they gave, and the rows at the paper's scale."""

    chapter = SENSITIVITY.name

    def __init__(self, namespace: dict):
        super().__init__(namespace)
        self.plan = sensitivity.check_rows(self.P)  # every row's configs built and checked before anything trains
        self.records, self.accuracies, self.sources = [], {}, {}
        self.P_paper = runner.resolved(SENSITIVITY.name, "paper", {"store_dir": scales.PAPER_SCALE_STORE})
        self.at_paper_scale = sensitivity.paper_scale_records(self.P_paper, self.P.compared_lengths)  # read once

    def train(self):
        """Each row's two variants, trained or read from the store, evaluated at every length."""
        for i, (task, row, P_row) in enumerate(self.plan):
            print(f"[{i + 1}/{len(self.plan)}] {task}: {sensitivity.label(row)}", flush=True)
            accuracy, training = sensitivity.train_row(P_row, task, self.device)
            self.accuracies[task, sensitivity.label(row)] = accuracy
            self.records.append(sensitivity.row_record(task, row, P_row, accuracy, training, self.P.compared_lengths))
            self.sources |= {f"{task}/{sensitivity.label(row)}/{v}": r["provenance"] for v, r in training.items()}

    def paper_scale_answer(self):
        """The rows at the paper's scale: a forest per task, the table, and what they say at the compared lengths
        and at every length beyond training."""
        P, P_paper, found = self.P, self.P_paper, self.at_paper_scale
        committed = [r for r in found if r["difference"] is not None]
        for task in sensitivity.tasks_with_rows(committed):
            first = next(r for r in committed if r["task"] == task)
            forest(committed, task, P.compared_lengths, f"{sensitivity.budget(first)}, on a GPU")
            show_figure(f"{task} at the paper's scale ({sensitivity.budget(first)}, GPU). " + FOREST_CAPTION)
        display(paper_rows.table(found, P.compared_lengths))
        tasks = list(sensitivity.row_parameters())
        for task in tasks:  # a task with no rows says nothing
            if len(signs := paper_rows.sign_table(found, task, P.compared_lengths)):
                display(Markdown(f"**{task}**: the committed rows by where +LN stands, per length (points):"), signs)
            said = [paper_rows.closest(found, task, P.compared_lengths), paper_rows.pending(found, task)]
            if any(said):
                display(Markdown(" ".join(filter(None, said))))
        beyond = [n for n in P_paper.eval_lengths if n > P_paper.max_len]  # every row judged at every length past training
        every_length = sensitivity.paper_scale_records(P_paper, beyond)
        tables = [t for task in tasks if len(t := paper_rows.lengths_table(every_length, task, beyond))]
        if tables:
            show_collapsed("Each committed row over every length beyond training, by the book's verdict rule",
                           "".join(t.to_html() for t in tables))

    def answer(self):
        """This page's rows: +LN minus Baseline per configuration, a forest per task and its verdicts."""
        for task in sensitivity.tasks_with_rows(self.records):
            forest(self.records, task, self.P.compared_lengths,
                                     f"{self.P.n_seeds} seeds unless the row sets n_seeds")
            show_figure(f"{task} at this page's scale ({self.P.n_seeds} seeds unless the row sets n_seeds, "
                        f"{self.device.type.upper()}; the row tables give each budget). " + FOREST_CAPTION)
            display(row_reports.sign_table({n: row_reports.sorted_by_sign(self.records, task, n)
                                            for n in self.P.compared_lengths}))

    def training_time(self):
        minutes = 60 * row_reports.hours_at(self.records)
        display(Markdown(f"Training all {len(row_reports.trained_runs(self.records))} runs took {minutes:.0f} minutes "
                         f"on {row_reports.devices(self.records)}, not counting the evaluations. A run's time is the "
                         "wall-clock time kept in the store with it, so it includes any time the run was paused or "
                         "shared its cores; a run resumed from a checkpoint is counted at its time per step."))

    def row_tables(self):
        """One table per task: each row's budget, both variants' accuracy and the paired difference."""
        for task in sensitivity.tasks_with_rows(self.records):
            display(Markdown(f"### {task}"))
            show_table(row_reports.row_table(self.records, task, self.P.compared_lengths),
                       f"Every {task} row: +LN minus the Baseline at each compared length")
            if len(again := row_reports.more_seeds_table(self.records, task, self.P.compared_lengths)):
                show_collapsed(f"The {task} rows run again with more seeds, beside their first run", again.to_html())
            if unlearned := row_reports.unlearned_sentence(self.records, task):
                display(Markdown(unlearned))

    def argmax_cost(self):
        """What the argmax rows would cost at the paper's steps, scaled from what they took."""
        task = ARGMAX.name
        if task not in sensitivity.tasks_with_rows(self.records):
            return
        steps, records = paper.STEPS[task], self.records
        hours, took = row_reports.hours_at(records, task, steps), row_reports.hours_at(records, task)
        display(Markdown(f"Trained for the paper's {steps:,} steps instead, the "
                         f"{sum(r['task'] == task for r in records)} {task} rows above would take about "
                         f"{hours:.0f} hours of {row_reports.devices(records, task)} (the {took:.1f} hours they "
                         "took, scaled by steps). That is why the map stops at the book's steps on a CPU; a GPU is the "
                         "way to redraw it (bench/README.md gives its throughput)."))

    def closest_to_paper(self):
        """Per task the paper reports, every row's distance to its Baseline (collapsed) and what the closest row says;
        then the closest rows beside the paper's in one figure, a panel per task."""
        P, panels = self.P, []
        for task in (t for t in sensitivity.tasks_with_rows(self.records) if BY_NAME[t].accuracy):
            show_table(row_reports.distance_table(self.records, task),
                       f"Every {task} row's Baseline against the paper's, length by length")
            best = row_reports.closest_to_paper(self.records, task)
            if best is None:
                continue
            display(Markdown(f"**{task}**: " + row_reports.closest_sentence(best, P.compared_lengths)))
            panels.append({"title": f"{task}: {best['row']} ({best['n_seeds']} seeds x {best['steps']:,} steps)",
                           "lengths": P.eval_lengths,
                           "ours": {v: 100 * self.accuracies[task, best["row"]][v] for v in sensitivity.PAIR},
                           "paper": {v: BY_NAME[task].accuracy[v] for v in sensitivity.PAIR}})
        if panels:
            plots.answer(panels, {v: variants.LABELS[v] for v in sensitivity.PAIR}, paper.LENGTHS)
            show_figure("Per task, the configuration whose Baseline comes closest to the paper's: mean test accuracy "
                        f"against N, shaded over its 95% interval across seeds ({self.device.type.upper()}), the "
                        "paper's Baseline and +LN dashed.")

    def show_parameters(self):
        """The rerun block, and which of the chapter's own rows this run leaves out."""
        P = self.P
        super().show_parameters()
        print(f"this run: {len(self.plan)} rows, each Baseline and +LN, {P.n_seeds} seeds unless the row sets n_seeds")
        planned = SENSITIVITY.parameters()  # the chapter's own lists of rows
        for task, name in sensitivity.row_parameters().items():
            left_out = row_reports.not_run(P[name], planned[name].default)
            if left_out:
                rows = "".join(f"<li>{html.escape(row)}</li>" for row in left_out)  # a list, collapsed: it can be long
                show_collapsed(f"<b>{task}</b>: {len(left_out)} of the chapter's rows are not in this run",
                               f"<ul>{rows}</ul>")

    def write(self):
        """results.json: the rows, the closest per task, and the rows at the paper's scale (the summary counts them)."""
        records = self.records
        metrics = {"rows": records, "closest": {t: (row_reports.closest_to_paper(records, t) or {}).get("row")
                                                for t in sensitivity.tasks_with_rows(records)},
                   "paper_scale": self.at_paper_scale}
        self.write_results(metrics, self.sources | sensitivity.paper_scale_sources(self.P_paper))
