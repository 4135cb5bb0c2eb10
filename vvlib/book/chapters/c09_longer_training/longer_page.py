"""Chapter 9's page: both tasks trained on longer sets with a curriculum (the paper's Tables 4 and 5), at this page's
profile, at the longer training and its seeds trained again alone where the profile has them, and at the paper's
scale where its runs are committed.  The notebook holds the prose and calls one method per cell."""


import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from .... import compare, train
from .. import LONGER_TRAINING
from ....experiments.reports import answers, plots, report
from ....experiments.setups import paper, paper_tasks, variants
from ....experiments.storage import runs
from ...page import TasksPage, show_collapsed, show_figure, show_runs, task_title

NAME = LONGER_TRAINING.name
VARIANTS, LABELS = list(LONGER_TRAINING.work.variants), variants.LABELS
PAIR = tuple(VARIANTS)


class LongerTrainingPage(TasksPage):
    """Chapter 9 being executed: its parameters, each task's runs, the longer training's, the paper's."""

    chapter = NAME
    trained = PAIR

    def train(self):
        self.train_tasks()
        self.metrics = {t: report.per_length(acc, self.P.eval_lengths, [PAIR]) for t, acc in self.accuracy.items()}

    def train_longer(self):
        self.train_longer_tasks()
        self.long_metrics = {t: report.per_length(acc, self.P.eval_lengths, [PAIR])
                             for t, acc in self.long_accuracy.items()}

    def answer(self):
        """Each task against the paper's table: a verdict per scale, at the paper's scale where all its runs are
        committed, then at the most steps this page trained (its longer training where it has one); then each
        scale's numbers."""
        P, claim = self.P, answers.accuracy_claim(PAIR, answers.SHORT_LABELS)
        for task in paper_tasks.TASKS:
            P_task, shown = self.tasks[task.name], []
            if task.name in self.big:
                P_big, acc, big_runs = self.big[task.name]
                shown.append((self.P_paper, self.P_paper.n_seeds, P_big.steps, acc,
                              big_runs["baseline"]["provenance"]["device"]))
            if task.name in self.long_tasks:
                shown.append((P, P_task.long_seeds, P_task.long_steps, self.long_accuracy[task.name],
                              self.long_runs[task.name]["baseline"][0]["provenance"]["device"]))
            else:
                shown.append((P, P.n_seeds, P_task.steps, self.accuracy[task.name],
                              self.training[task.name]["baseline"]["provenance"]["device"]))
            scales = [answers.scale_text(seeds, steps, trained_on) for _, seeds, steps, _, trained_on in shown]
            display(Markdown(f"**Our answer to the paper's {task.longer_table}** ({task.title}, trained on up to "
                             f"{P.max_len} items): *{claim}*, paired over seeds."))
            display(answers.verdict_table([answers.verdict_row(
                scale, claim, answers.accuracy_evidence(acc, P_shown.eval_lengths, PAIR, P_shown.max_len), task.name,
                steps) for scale, (P_shown, _, steps, acc, _) in zip(scales, shown)]))
            for scale, (P_shown, _, _, acc, _) in zip(scales, shown):
                if len(shown) > 1:  # several scales: each table says whose it is
                    display(Markdown(f"*{scale}:*"))
                display(answers.answer_table(acc, P_shown.eval_lengths, PAIR, answers.SHORT_LABELS, task.longer))

    def _largest(self, name: str):
        """A task's largest scale trained here: (accuracy, metrics, seeds, its training config, loss histories by label,
        the runs' records by variant or None): its longer training where the profile has one, else its main runs."""
        P_task = self.tasks[name]
        if name in self.long_tasks:
            found = self.long_runs[name]
            return (self.long_accuracy[name], self.long_metrics[name], P_task.long_seeds,
                    variants.long_train_configs(P_task)[0],
                    {LABELS[v]: runs.joined_record(f)["loss_history"] for v, f in found.items()}, found)
        return (self.accuracy[name], self.metrics[name], self.P.n_seeds, variants.train_config(P_task),
                {LABELS[v]: r["loss_history"] for v, r in self.training[name].items()}, None)

    def losses(self):
        """Each task's training loss at the largest scale trained here, with the curriculum's longest set along the
        steps: one figure, a panel per task."""
        fig, axes = plt.subplots(1, len(self.tasks), figsize=(5.6 * len(self.tasks), 3.8), squeeze=False)
        for ax, name in zip(axes[0], self.tasks):
            _, _, seeds, cfg, histories, _ = self._largest(name)
            steps = range(cfg.steps)
            plots.training_curves(histories, (steps, [train.max_len_at(cfg, s) for s in steps]),
                                  title=f"{name}: {seeds} seeds x {cfg.steps:,} steps", ax=ax)
        show_figure(f"The training loss, mean over seeds, against the step ({self.device.type.upper()}), with the "
                    "curriculum's longest training set as a grey step line on the right axis. A jump in the loss where "
                    "the cap doubles is the new length being learned.", fig)

    def tables(self):
        """Each task at the largest scale trained here beside the paper's table, with its verdict; then both tasks'
        curves in one figure."""
        P, panels = self.P, []
        for task in paper_tasks.TASKS:
            accuracy, metrics, seeds, cfg, _, found = self._largest(task.name)
            display(Markdown(f"### {task_title(task)} (the paper's {task.longer_table}): {seeds} seeds x "
                             f"{cfg.steps:,} steps"))
            if found:
                show_runs(found, LABELS)
            display(report.comparison_table(metrics, P.eval_lengths, PAIR, LABELS, task.longer, "p_value"))
            display(Markdown(report.verdict(metrics, P.eval_lengths, PAIR, LABELS, P.max_len, seeds,
                                            paper_table=task.longer)))
            panels.append({"title": f"{task_title(task)}: {seeds} seeds x {cfg.steps:,} steps", "lengths": P.eval_lengths,
                           "ours": {v: 100 * accuracy[v] for v in VARIANTS},
                           "paper": {v: task.longer[v] for v in VARIANTS if v in task.longer}})
        plots.answer(panels, {v: LABELS[v] for v in VARIANTS}, paper.LENGTHS)
        show_figure(f"Both tasks trained on sets of up to {P.max_len} items ({self.device.type.upper()}): mean test "
                    "accuracy against N, shaded over its 95% interval across seeds; dashed, the paper's Tables 4 and 5. "
                    "The paper's claim is +LN above the Baseline beyond the training lengths.")

    def rerun_table(self):
        """This run's main training beside the paper's tables, collapsed, where the page's answer rests on its longer
        training."""
        if not self.long_tasks:
            return  # the answer is this run's main training
        P = self.P
        body = "".join(f"<p><b>{t}</b> ({P.n_seeds} seeds x {self.tasks[t].steps:,} steps)</p>"
                       + report.comparison_table(self.metrics[t], P.eval_lengths, PAIR, LABELS,
                                                 paper_tasks.BY_NAME[t].longer, "p_value").to_html()
                       for t in self.tasks)
        show_collapsed(f"This run's main training ({P.n_seeds} seeds, fewer steps), each task beside the paper's table",
                       body)

    def scale(self):
        self.show_pending(f"the answer for {' and '.join(self.big)} at the top" if self.big else "")

    def write(self):
        """results.json: each task's scores at this page's scale, the longer training's and the paper scale's."""
        pair = compare.pair_name(PAIR)

        def scored(m, **scale):
            """One task's accuracies, their errors and the pair's p per length, with the scale they rest on."""
            return {"accuracy": m["accuracy"], "accuracy_sem": m["accuracy_sem"], "p_value": m["p_value"][pair], **scale}

        results = {"accuracy": {t: m["accuracy"] for t, m in self.metrics.items()},
                   "accuracy_sem": {t: m["accuracy_sem"] for t, m in self.metrics.items()},
                   "p_value": {t: m["p_value"][pair] for t, m in self.metrics.items()}}
        results["long"] = {t: scored(m, n_seeds=self.tasks[t].long_seeds, steps=self.tasks[t].long_steps,
                                     n_sequences=variants.long_eval_params(self.tasks[t]).n_eval_sequences)
                           for t, m in self.long_metrics.items()}
        for t, (P_t, acc, _) in self.big.items():  # the summary reads them at that scale
            results.setdefault("paper_scale", {})[t] = scored(report.per_length(acc, self.P_paper.eval_lengths, [PAIR]),
                                                              n_seeds=self.P_paper.n_seeds, steps=P_t.steps,
                                                              device_type="cuda")
        self.write_results(results, self.task_sources())
