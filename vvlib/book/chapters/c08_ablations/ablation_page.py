"""Chapter 8's page: Baseline, +std and +LN on both tasks (the paper's Tables 3 and 6), at this page's profile, at the
longer training where the profile has one, and at the paper's scale where its runs are committed.  The notebook
holds the prose and calls one method per cell."""


import pandas as pd
from IPython.display import Markdown, display

from .... import stats
from .. import ABLATIONS
from ....experiments.reports import answers, plots, report
from ..summary import summary_tables
from ....experiments.setups import paper_tasks, variants
from ...page import TasksPage, show_figure, show_runs, task_title

LABELS = variants.LABELS


def verdicts(rows: list) -> pd.DataFrame:
    """report.ablation_row's lines as one table, a row per task and scale."""
    return pd.DataFrame(rows).set_index(["task", "scale"])


class AblationPage(TasksPage):
    """Chapter 8 being executed: its parameters, each task's runs and their metrics, and the paper scale's."""

    chapter = ABLATIONS.name
    trained = ABLATIONS.work.variants  # Baseline, +std, +LN

    def __init__(self, namespace: dict):
        super().__init__(namespace)
        self.big_metrics = {t: report.ablation_metrics(acc, self.P_paper.eval_lengths)
                            for t, (_, acc, _) in self.big.items()}

    def train(self):
        self.train_tasks()
        self.metrics = {name: report.ablation_metrics(acc, self.P.eval_lengths) for name, acc in self.accuracy.items()}

    def train_longer(self):
        self.train_longer_tasks()
        self.long_metrics = {t: report.ablation_metrics(acc, self.P.eval_lengths)
                             for t, acc in self.long_accuracy.items()}

    def answer(self):
        """The verdicts first: each task at the paper's scale where its Baseline and +std are committed (+LN beside
        them where it is), then at the largest scale this page trained; then each one's numbers, and the paper
        scale's figures."""
        P, shown = self.P, []  # (task, metrics, parameters, steps, scale), the paper's scale first
        for task in paper_tasks.TASKS:
            P_task, longer = self.tasks[task.name], task.name in self.long_tasks
            if task.name in self.big:
                steps = self.big[task.name][0].steps
                shown.append((task, self.big_metrics[task.name], self.P_paper, steps,
                              f"{self.P_paper.n_seeds} seeds x {steps:,} steps, {cards(self.big[task.name][2])}"))
            seeds, steps = (P_task.long_seeds, P_task.long_steps) if longer else (P.n_seeds, P_task.steps)
            shown.append((task, self.long_metrics[task.name] if longer else self.metrics[task.name], P, steps,
                          f"{seeds} seeds x {steps:,} steps, CPU"))
        base, plain, learned = (variants.short_label(v) for v in variants.ABLATION.variants)
        display(Markdown(f"**Our answer to the paper's Tables 3 and 6**: does each norm beat the {base} beyond the "
                         f"training lengths, and does {learned}'s learned gain and shift add to {plain}? Paired over "
                         "seeds; the paper claims the last on argmax retrieval and the two about equal on dictionary "
                         "lookup."))
        display(verdicts([report.ablation_row(task.name, m, P_shown.eval_lengths, P_shown.max_len, scale, steps,
                                              task.ln_beats_std) for task, m, P_shown, steps, scale in shown]))
        for task, m, P_shown, steps, scale in shown:  # Table 6's equivalence reading, where the paper claims it
            if not task.ln_beats_std and "ln_minus_std" in m:
                display(Markdown(f"*{scale}:* " + summary_tables.table6_sentence(m, P_shown.eval_lengths,
                                                                                 P_shown.max_len)))
        for task, m, P_shown, steps, scale in shown:
            display(Markdown(f"*{task.name}, {scale}:*"))
            display(report.ablation_table(m, answers.answer_lengths(P_shown.eval_lengths), LABELS, task.ablation))
            if P_shown is self.P_paper:
                self._gain_figure(task, self.big[task.name][1], P_shown.eval_lengths, scale)

    def _gain_figure(self, task, accuracy: dict, lengths, scale: str):
        """Each norm's accuracy change against the Baseline along N, captioned."""
        base, plain, learned = (variants.short_label(v) for v in variants.ABLATION.variants)
        plots.relative_gain_vs_length(stats.relative_gains(accuracy, lengths, variants.ABLATION.base), LABELS,
                                      title=f"{task_title(task)}: change vs Baseline ({scale})")
        show_figure(f"{task_title(task)} ({scale}): each norm's accuracy minus the {base}'s, in % of the {base}'s mean "
                    f"at that length (mean ± s.e. over seeds, paired), against N. Above zero the norm helps; the gap "
                    f"between {plain} and {learned} is what the learned gain and shift add.")

    def tables(self):
        """Each task's table beside the paper's, and each variant's change against the Baseline."""
        P = self.P
        for task in paper_tasks.TASKS:
            display(Markdown(f"### {task_title(task)} (the paper's {task.ablation_table})"))
            display(report.ablation_table(self.metrics[task.name], P.eval_lengths, LABELS, task.ablation))
            self._gain_figure(task, self.accuracy[task.name], P.eval_lengths,
                              f"{P.n_seeds} seeds x {self.tasks[task.name].steps:,} steps, {self.device.type.upper()}")

    def sentences(self):
        """This page's own scale in the verdict table's form, and Table 6's reading of dictionary lookup."""
        P = self.P
        display(verdicts([report.ablation_row(t, self.metrics[t], P.eval_lengths, P.max_len,
                                              f"{P.n_seeds} seeds x {self.tasks[t].steps:,} steps", self.tasks[t].steps,
                                              paper_tasks.BY_NAME[t].ln_beats_std) for t in self.tasks]))
        display(Markdown(summary_tables.table6_sentence(self.metrics[paper_tasks.DICTIONARY.name], P.eval_lengths, P.max_len)))

    def longer(self):
        """The longer training's runs, table and verdicts, where the profile has one."""
        P = self.P
        for name in self.long_tasks:
            P_task, task = self.tasks[name], paper_tasks.BY_NAME[name]
            display(Markdown(f"### {name}: {P_task.long_seeds} seeds x {P_task.long_steps:,} steps"))
            show_runs(self.long_runs[name], LABELS)
            display(report.ablation_table(self.long_metrics[name], P.eval_lengths, LABELS, task.ablation))
            display(verdicts([report.ablation_row(name, self.long_metrics[name], P.eval_lengths, P.max_len,
                                                  f"{P_task.long_seeds} seeds x {P_task.long_steps:,} steps",
                                                  P_task.long_steps, task.ln_beats_std)]))
            if not task.ln_beats_std:
                display(Markdown(summary_tables.table6_sentence(self.long_metrics[name], P.eval_lengths, P.max_len)))
        if not self.long_tasks:
            display(Markdown("*Skipped at this profile (`long_steps` is 0 for both tasks).*"))

    def scale(self):
        """Which of the paper profile's store entries are committed, and what this page shows of them."""
        base, plain, learned = (variants.short_label(v) for v in variants.ABLATION.variants)
        shown = [t if variants.ABLATION.learned in runs else
                 f"{t}'s {plain} against the {base} ({learned} still in the GPU queue)"
                 for t, (_, _, runs) in self.big.items()]
        self.show_pending(f"the ablation of {' and '.join(shown)} at the top" if self.big else "")

    def write(self):
        """results.json: each task's metrics at this page's scale, the longer training's and the paper scale's."""
        P, metrics = self.P, self.metrics
        results = {
            "relative_gain": {t: m["relative_gain"] for t, m in metrics.items()},
            "p_value_ln_vs_std": {t: m["p_value_ln_vs_std"] for t, m in metrics.items()},
            "p_value_vs_baseline": {t: m["p_value_vs_baseline"] for t, m in metrics.items()},
            "accuracy": {t: report.per_length(acc, P.eval_lengths, [])["accuracy"] for t, acc in self.accuracy.items()},
            "ln_minus_std": {t: m["ln_minus_std"] for t, m in metrics.items()},
        }
        results["long"] = {t: {**self.long_metrics[t], "steps": self.tasks[t]["long_steps"],
                               "accuracy": report.per_length(self.long_accuracy[t], P.eval_lengths, [])["accuracy"]}
                           for t in self.long_tasks}
        if self.big:  # the summary's claims table reads them at that scale
            results["paper_scale"] = {t: {**self.big_metrics[t], "steps": P_t.steps, "device_type": "cuda",
                                          "accuracy": report.per_length(acc, self.P_paper.eval_lengths, [])["accuracy"]}
                                      for t, (P_t, acc, _) in self.big.items()}
        self.write_results(results, self.task_sources())


def cards(records: dict) -> str:
    """'GPU' where every variant trained on the same card, else which card trained which variant."""
    devices = {variants.short_label(v): r["provenance"]["device"] for v, r in records.items()}
    if len(set(devices.values())) == 1:
        return "GPU"
    return "GPUs: " + ", ".join(f"{label} on {device.removeprefix('NVIDIA ')}" for label, device in devices.items())
