"""Chapter 10's page: variants beyond the paper's two (an output that keeps its variance, length-aware logits, a
deep model with heads), on both tasks at this page's profile and at the paper's scale where its runs are committed,
with the random module's Monte Carlo and the deep model's first layer read from chapter 11's rows.  The notebook
holds the prose and calls one method per cell."""

import math

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

import matplotlib.pyplot as plt

from .... import beyond, compare, montecarlo
from .. import BEYOND, SENSITIVITY, c10_beyond
from ....experiments.reports import answers, plots, provisional, report
from ....experiments.setups import paper_tasks, probes, sensitivity, variants
from ....experiments.storage import runs, store
from ... import key_results, paper_scale
from ...runner import resolved
from ...page import TasksPage, show_collapsed, show_figure, show_table, task_title

NAME = BEYOND.name
ONE_LAYER, DEEP, PAIRS = list(c10_beyond.ONE_LAYER), list(c10_beyond.DEEP), list(c10_beyond.PAIRS)


DEEP_TASK = paper_tasks.DICTIONARY.name  # the task whose deep +LN trains worse than its Baseline


def deep_first_layer(P, device):
    """(the scale in words, the row's parameters, {side: first-layer entropy at the training length per seed},
    the probe's provenance) of chapter 11's constant-rate row of the deep model, at the paper's scale where its
    layer probe is stored, else at chapter 11's profile of this page's name; None where neither is.  Reads only."""
    scales = [("this page's store", resolved(SENSITIVITY.name, SENSITIVITY.profile_or_default(P.profile),
                                             {"store_dir": P.store_dir}), device)]
    if P.paper_scale_dir:
        scales.insert(0, ("the paper's scale", resolved(SENSITIVITY.name, "paper", {"store_dir": P.paper_scale_dir}),
                          "cuda"))
    model = {"heads": P.deep_heads, "layers": P.deep_layers}
    for where, P_rows, on in scales:
        rows = sensitivity.rows_of_model(P_rows, DEEP_TASK, model)
        if not rows:
            continue
        P_row = sensitivity.row_params(P_rows, DEEP_TASK, rows[0])  # the first: the constant rate
        probe = probes.layer_probe(P_row, DEEP_TASK, on)
        if not all(part.stored(P_row.store_dir) for part in probe.parts):
            continue
        with runs.stored_only():
            frame = probe.tables(P_row.store_dir, on)["layers"]
        records = {part.variant: store.read_json(part.folder(P_row.store_dir) / "tables.json") for part in probe.parts}
        scale = answers.scale_text(P_row.n_seeds, P_row.steps, records[sensitivity.PAIR[0]]["provenance"]["device"])
        at_training = frame[(frame["layer"] == 0) & (frame["N"] == P_row.max_len)].sort_values("seed")
        entropy = {side: at_training[at_training["variant"] == side]["entropy"].to_numpy() for side in sensitivity.PAIR}
        return (scale, P_row, entropy,
                {f"deep_layers/{where}/{side}": r["provenance"] for side, r in records.items()})
    return None


class BeyondPage(TasksPage):
    """Chapter 10 being executed: its parameters, each task's variants, the paper scale's, the rows it reads."""

    chapter = NAME
    trained = c10_beyond.DEEPER

    def __init__(self, namespace: dict):
        super().__init__(namespace)
        self.labels = c10_beyond.labels(self.P)
        self.metrics, self.best = {}, {}
        self.pending = {t: [self.labels[v] for v in ONE_LAYER + DEEP if v not in found]
                        for t, (_, _, found) in self.big.items()}  # each task's variants still in the GPU queue
        self.sources, self.slopes_shown = {}, []

    def train(self):
        P = self.P
        self.train_tasks()
        self.metrics = {t: report.per_length(acc, P.eval_lengths, PAIRS) for t, acc in self.accuracy.items()}
        self.best = {t: beyond.best_by_length(self.accuracy[t], P.eval_lengths, self.labels) for t in self.tasks}

    def _paper_scale_text(self, task: str) -> str:
        """'100 seeds x 10,000 steps, GPU' for a task's committed paper-scale runs."""
        P_task, _, found = self.big[task]
        return answers.scale_text(self.P_paper.n_seeds, P_task.steps, found["baseline"]["provenance"]["device"])

    def answer(self):
        """Every variant at the lengths the paper reports, beside the paper's two: at the paper's scale for each
        task whose Baseline and +LN are committed (its other variants 'pending' until they are); this page's where
        none is."""
        P, labels = self.P, self.labels
        if not self.big:
            display(answers.variants_table(self.accuracy, P.eval_lengths, labels,
                                           {t.name: t.accuracy for t in paper_tasks.TASKS}))
            display(Markdown(" ".join(self._page_sentences()) + " Mean accuracy (%) over seeds; the paper tested only "
                             "the Baseline and +LN."))
            return
        if finding := key_results.beyond_finding(self.P.paper_scale_dir):  # the intro's finding, with its interval
            display(Markdown(finding))
        papers = {t: paper_tasks.BY_NAME[t].accuracy for t in self.big}
        display(answers.variants_table({t: acc for t, (_, acc, _) in self.big.items()}, self.P_paper.eval_lengths,
                                       labels, papers).fillna("pending"))
        sentences = []
        for t, (_, acc, _) in self.big.items():
            waiting = (f" {len(acc)} of its {len(ONE_LAYER + DEEP)} variants are committed; "
                       f"{' and '.join(self.pending[t])} wait in the GPU queue.") if self.pending[t] else ""
            best = beyond.best_by_length(acc, self.P_paper.eval_lengths, labels)
            sentences.append(f"**{t}** ({self._paper_scale_text(t)}): "
                             + report.best_sentence(best, self.P_paper.eval_lengths, self.P_paper.max_len) + waiting)
        display(Markdown(" ".join(sentences) + " Mean accuracy (%) over seeds; the paper tested only the Baseline "
                                               "and +LN."))

    def _page_sentences(self) -> list:
        """Per task, which variant leads beyond training at this page's scale."""
        P, sentences = self.P, []
        for t, P_task in self.tasks.items():
            scale = answers.scale_text(P.n_seeds, P_task.steps, self.training[t]["baseline"]["provenance"]["device"])
            note = provisional.note(t, P_task.steps)
            sentences.append(f"**{t}** ({scale}{f'; {note}' if note else ''}): "
                             + report.best_sentence(self.best[t], P.eval_lengths, P.max_len))
        return sentences

    def rerun_table(self):
        """This run beside the answer: every variant's mean accuracy at the paper's lengths, at the paper's scale
        (where committed) and here, in one table; which variant leads at this run's scale under it."""
        P, labels = self.P, self.labels
        if not self.big:
            return
        ours = answers.variants_table(self.accuracy, P.eval_lengths, labels,
                                      {t.name: t.accuracy for t in paper_tasks.TASKS})
        theirs = answers.variants_table({t: acc for t, (_, acc, _) in self.big.items()}, self.P_paper.eval_lengths,
                                        labels, {t: paper_tasks.BY_NAME[t].accuracy for t in self.big})
        yours = "this run"
        display(Markdown(f"Mean accuracy (%) over seeds: the answer (the paper's scale, "
                         f"{'; '.join(f'{t}: {self._paper_scale_text(t)}' for t in self.big)}) beside this run "
                         f"({P.n_seeds} seeds, {self.device.type.upper()})."))
        both = pd.concat({"the answer": theirs, yours: ours}, axis=1).reorder_levels([1, 2, 0], axis=1)
        rows = [r for r in ours.index if not r.startswith("paper: ")]
        display(both.loc[rows, [(t, n, scale) for t, n in ours.columns for scale in ("the answer", yours)
                                if (t, n, scale) in both.columns]].fillna("pending"))

    def random_module(self):
        """The random module's output std against N, plain and rescaled, and the fitted log-log slopes."""
        P = self.P
        module = montecarlo.RandomAttention(d_model=P.mc_d_model, vocab_size=P.mc_vocab_size, seed=P.seed)
        curves = beyond.mc_curves(module, P.mc_lengths, P.mc_sequences, P.mc_components, self.device)
        self.mc_fits, self.theory = beyond.mc_slopes(curves), beyond.mc_theory(module, curves, self.device)
        plots.std_vs_length(curves.assign(component=curves["component"].astype(str)), hue="setting",
                            reference_slope=-0.5,
                            title=f"Random module (D={P.mc_d_model}, vocabulary {P.mc_vocab_size}), "
                                  f"{P.mc_sequences} sequences per N, components {P.mc_components}")
        show_figure(f"A random attention module (width {P.mc_d_model}, vocabulary {P.mc_vocab_size}, {P.mc_sequences} "
                    "sequences per N): the standard deviation of a few output components against N (log-log), the "
                    "plain output beside the variance-keeping one; the dotted line falls as N^-0.5. The plain "
                    "output follows it; the rescaled one stays flat.")
        fits = self.mc_fits
        table = (fits.assign(**{"95% interval": [f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(fits["low"], fits["high"])]})
                 .drop(columns=["low", "high"]).round(3).set_index(["output", "component"]))
        show_collapsed("The fitted log-log slope of each component, with its 95% interval", table.to_html())

    def rescaled_mean(self):
        """The rescaled output at the longest N against theory, and how far its mean moves from 0."""
        theory, longest, shortest = self.theory, max(self.P.mc_lengths), min(self.P.mc_lengths)
        show_collapsed(f"The rescaled output at N = {longest} against the large-N theory, per component",
                       theory[theory["N"] == longest].set_index("component").round(4).to_html())
        drift = theory["mean / sqrt(N)"].abs().groupby(theory["N"]).mean()
        display(Markdown(
            f"At $N = {longest}$ the rescaled output's mean is about {drift.iloc[-1] * longest ** 0.5:.2f} per "
            f"component in absolute value (mean over the followed components), against "
            f"{drift.iloc[0] * shortest ** 0.5:.2f} at $N = {shortest}$: the variance is kept, and the mean moves away."))

    def _accuracy_figure(self, shown: list, what: str):
        """One panel per task: the variants `shown`, mean accuracy with its 95% interval over seeds against N, at
        the paper's scale where every one of them is committed for both tasks, else at this page's."""
        P, big = self.P, self.big
        at_paper = len(big) == len(self.tasks) and all(v in big[t][2] for t in big for v in shown)
        panels = [{"title": task_title(paper_tasks.BY_NAME[t]),
                   "lengths": self.P_paper.eval_lengths if at_paper else P.eval_lengths,
                   "ours": {v: 100 * np.asarray((big[t][1] if at_paper else self.accuracy[t])[v]) for v in shown}}
                  for t in self.tasks]
        scale = ("; ".join(f"{t}: {self._paper_scale_text(t)}" for t in big) if at_paper else
                 f"{P.n_seeds} seeds, {' and '.join(f'{s.steps:,} steps ({t})' for t, s in self.tasks.items())}, "
                 f"{self.device.type.upper()}")
        plots.answer(panels, self.labels)
        show_figure(f"{what} ({scale}): mean test accuracy against N, shaded over its 95% interval across seeds. "
                    "The paired verdicts are in the table at the end of the page.")

    def one_layer(self):
        """The one-layer variants on both tasks, one figure."""
        self._accuracy_figure(ONE_LAYER, "The five one-layer variants on both tasks")

    def deep(self):
        """The deep variants on both tasks beside the one-layer Baseline and +LN: a collapsed table and a figure."""
        P, labels = self.P, self.labels
        table = pd.concat({t: report.quantity_table(self.metrics[t], DEEP, [], labels, P.eval_lengths, digits=1,
                                                    mean="accuracy", sem="accuracy_sem") for t in self.tasks}, axis=1)
        show_collapsed("The deep variants' mean accuracy (%) ± s.e. at every length, this page's runs",
                       table.to_html())
        self._accuracy_figure(["baseline", "layernorm", *DEEP],
                              f"The deep model ({P.deep_heads} heads x {P.deep_layers} layers) with and without +LN "
                              "beside the one-layer Baseline and +LN")

    def paper_losses(self):
        """The training loss of every committed paper-scale variant: a panel per task."""
        if not self.big:
            why = ("none of this chapter's is committed yet." if self.P.paper_scale_dir
                   else "this run reads none (`paper_scale_dir` is empty).")
            display(Markdown(f"*No paper-scale runs are shown: {why}*"))
            return
        fig, axes = plt.subplots(1, len(self.big), figsize=(5.2 * len(self.big), 3.8), squeeze=False)
        for ax, (t, (P_t, _, found)) in zip(axes[0], self.big.items()):
            histories = {self.labels[v]: found[v]["loss_history"] for v in ONE_LAYER if v in found}  # at most 5 lines
            plots.training_curves(histories, title=f"{t}: {P_t.steps:,} steps", band=True, ax=ax)
        show_figure(f"The training loss of every committed one-layer variant at the paper's scale "
                    f"({self.P_paper.n_seeds} seeds, GPU), "
                    "mean over seeds with the band from the 10th to the 90th percentile seed.", fig)

    def deep_attention(self):
        """Does the deep dictionary model's first layer attend?  Per seed, its entropy at the training length in
        chapter 11's constant-rate row of that model, at the largest scale whose layer probe is stored."""
        found = deep_first_layer(self.P, self.device)
        if found is None:
            display(Markdown("*Not shown: chapter 11's layer probe of the deep model is not stored at this profile "
                             "(`python -m vvlib run 11_sensitivity --profile book` makes it).*"))
            return
        scale, P_row, entropy, provenance = found
        n, threshold = P_row.max_len, math.log(P_row.max_len) / 2  # attends: below half of ln N (glossary)
        shares = {variants.LABELS[f"deep_{side}"]: values / np.log(n) for side, values in entropy.items()}
        plots.seed_dots(shares, threshold / np.log(n), ylabel=f"first layer's entropy / ln N, N = {n}",
                        title=f"Deep dictionary model, {P_row.n_seeds} seeds")
        show_figure(f"The deep dictionary model's first layer, seed by seed ({P_row.heads} heads x {P_row.layers} "
                    f"layers; {scale}). Each dot is one seed's attention entropy at the training length N = {n}, as a "
                    "share of ln N (1: uniform weights). Below the dashed line the layer attends.")
        counts = [f"{label}: {int((v < threshold / np.log(n)).sum())} of {len(v)} seeds" for label, v in shares.items()]
        display(Markdown(f"Seeds whose first layer attends (entropy below half of ln N), {scale}: "
                         f"{'; '.join(counts)}."))
        self.sources.update(provenance)

    def best_variants(self):
        """Per task and length: the best variant, the runner-up and the p of their difference."""
        frames = {t: b.assign(N=[report.power_of_two(n) for n in b["N"]], best=b["label"],
                              **{"runner-up": [self.labels[v] for v in b["runner-up"]],
                                 "p": [compare.format_p(p) for p in b["p"]]})
                  .drop(columns=["label"]).set_index("N").round(1) for t, b in self.best.items()}
        show_table(pd.concat(frames, axis=0), "The best variant and the runner-up at each length, per task")

    def slopes(self):
        """The trained models' log-log slopes of component std against N: this page's, and beside them the paper
        scale's where committed, one table."""
        P, labels = self.P, self.labels
        frames = {t: c10_beyond.slopes_probe(P, P_task, t, ONE_LAYER + DEEP, self.device).tables(P.store_dir, self.device)
                  ["slopes"] for t, P_task in self.tasks.items()}
        self.variance_slope = {t: beyond.slope_summary(f) for t, f in frames.items()}
        if not P.paper_scale_dir:
            paper = pd.DataFrame({t: [] for t in self.tasks})
        else:
            paper, self.P_paper = paper_scale.slopes(NAME, {t: ONE_LAYER + DEEP for t in self.tasks}, P.paper_scale_dir)
        self.slopes_shown = [f"{labels[v]} ({t})" for t in self.tasks for v in paper.index if pd.notna(paper.loc[v, t])]
        columns = {f"{t}: this page ({P.n_seeds} seeds)": {labels[v]: f"{s:.3f}" for v, s in by_variant.items()}
                   for t, by_variant in self.variance_slope.items()}
        if P.paper_scale_dir:
            columns.update({f"{t}: paper scale ({self.P_paper.n_seeds} seeds x {self.P_paper.steps[t]:,} steps, GPU)":
                            {labels[v]: "pending" if pd.isna(s) else f"{s:.3f}" for v, s in paper[t].items()}
                            for t in self.tasks})
        display(pd.DataFrame(columns).rename_axis(f"log-log slope of component std, N >= {P.max_len}"))

    def says(self):
        """Each pair's verdict in one table: at the paper's scale for the pairs committed there, then at this page's;
        under it, which variant leads beyond training at this page's scale and what waits in the GPU queue."""
        P, P_paper, labels = self.P, self.P_paper, self.labels
        self.paper_pairs = {t: c10_beyond.pairs_in(acc) for t, (_, acc, _) in self.big.items()}
        self.paper_metrics = {t: report.per_length(acc, P_paper.eval_lengths, self.paper_pairs[t])
                              for t, (_, acc, _) in self.big.items()}
        tables, notes = {}, []
        for t in self.big:
            tables[(t, f"paper ({self._paper_scale_text(t)})")] = report.pair_table(
                self.paper_metrics[t], self.paper_pairs[t], labels, P_paper.eval_lengths, P_paper.max_len)
            if self.pending[t]:
                notes.append(f"- **{t}** at the paper's scale: the pairs with {' and '.join(self.pending[t])} wait in "
                             "the GPU queue.")
        for t in self.tasks:
            tables[(t, f"this page ({P.n_seeds} paired seeds)")] = report.pair_table(
                self.metrics[t], PAIRS, labels, P.eval_lengths, P.max_len)
            notes.append(f"- **{t}** at this page's scale: "
                         + report.best_sentence(self.best[t], P.eval_lengths, P.max_len))
        show_table(pd.concat(tables, names=["task", "scale"]), "Each pair's verdict, per task and scale")
        display(Markdown("\n".join(notes)))

    def scale(self):
        shown = []
        if self.big:
            tasks = " and ".join(t if not self.pending[t] else t + " committed so far" for t in self.big)
            shown.append(f"the variants of {tasks} at the top")
        if self.slopes_shown:
            shown.append(f"{len(self.slopes_shown)} runs' slope probes, beside its own slopes")
        self.show_pending("; ".join(shown))

    def write(self):
        """results.json: every variant's scores per task, the slopes, the best per length, the paper scale's."""
        P, metrics = self.P, self.metrics
        results = {
            "accuracy": {t: m["accuracy"] for t, m in metrics.items()},
            "accuracy_sem": {t: m["accuracy_sem"] for t, m in metrics.items()},
            "p_value": {t: m["p_value"] for t, m in metrics.items()},
            "variance_slope": self.variance_slope,
            "mc_slope": beyond.mean_slope(self.mc_fits),
            "best": {t: {str(r.N): {"variant": r.best, "runner_up": r["runner-up"], "p_value": r.p}
                         for _, r in b.iterrows()} for t, b in self.best.items()},
            "n_seeds": P.n_seeds,
        }
        complete = [t for t in self.big if not self.pending[t]]  # the summary reads a task once every variant is in
        for t in complete:
            m, P_t = self.paper_metrics[t], self.big[t][0]
            results.setdefault("paper_scale", {})[t] = {"accuracy": m["accuracy"], "p_value": m["p_value"],
                                                        "n_seeds": self.P_paper.n_seeds, "steps": P_t.steps,
                                                        "device_type": "cuda"}
        self.write_results(results, self.task_sources(complete) | self.sources)  # and the rows of chapters 5 and 11
