"""Tables beside the paper's, one-sentence verdicts, and the chapter's results.json."""

from pathlib import Path

import numpy as np
import pandas as pd

from . import provisional
from ..storage import store
from ..setups.params import settings_label
from ..setups.paper import column
from ..setups.variants import ABLATION, Ablation, short_label
from ...compare import (ALPHA, beyond_training, compare, format_interval, format_p, is_significant, pair_name,
                        power_of_two)
from ...stats import by_length, paired_difference, paired_ttest, relative_difference


def _pct(mean, sem):
    return f"{mean:.1f}" if np.isnan(sem) else f"{mean:.1f} ± {sem:.1f}"


def shown_parameters(P) -> dict:
    """A chapter's parameters as its page shows them, {name: text}: a path inside the repository
    relative to it, so a built page never shows the directories of the machine that built it."""
    return {k: _relative_to_repository(v) if k.endswith(("_dir", "_path")) else shown_value(v) for k, v in P.items()}


def shown_value(value) -> str:
    """A value in words, never a Python repr: a list as its items joined ('16, 32, 64'), a row of
    changed settings as chapter 11 names it ('hidden=64', 'defaults'), one row per ';'."""
    if isinstance(value, dict):
        return settings_label(value)
    if isinstance(value, (list, tuple)):
        joiner = "; " if any(isinstance(v, dict) for v in value) else ", "
        return joiner.join(shown_value(v) for v in value) or "none"
    return str(value)


def _relative_to_repository(value) -> str:
    path = Path(str(value))
    inside = path.is_absolute() and path.is_relative_to(store.REPO_ROOT)
    return str(path.relative_to(store.REPO_ROOT)) if inside else str(value)


def parameters_frame(P) -> pd.DataFrame:
    """The 'Scale of this run' table: one row per parameter (shown_parameters)."""
    return pd.DataFrame({"value": shown_parameters(P)}).rename_axis("parameter")


def per_length(accuracy: dict, lengths, pairs) -> dict:
    """stats.by_length of accuracies {run: (seeds, lengths)} in percent, under the keys
    results.json uses: {"accuracy": {run: {N: mean}}, "accuracy_sem": ..., "p_value": {"a_vs_b":
    {N: p}}, "n_seeds"}."""
    per = {v: {n: 100 * np.asarray(a)[:, j] for j, n in enumerate(lengths)} for v, a in accuracy.items()}
    s = by_length(per, pairs)
    n_seeds = len(np.asarray(next(iter(accuracy.values())))) if accuracy else 0
    return {"accuracy": s["mean"], "accuracy_sem": s["sem"], "p_value": s["p_value"], "n_seeds": n_seeds}


def comparison_table(metrics: dict, lengths, pair, labels: dict, paper_table: dict | None,
                     paper_p: str = "") -> pd.DataFrame:
    """One row per length: ours (mean ± s.e. over seeds) for both runs of `pair` and our paired p,
    then the paper's numbers (`paper_p` names the paper's p-value row), under a two-row header
    ("ours, 20 seeds" / "paper" over the runs' labels), so the table fits the text column."""
    ours = f"ours, {metrics['n_seeds']} seeds" if "n_seeds" in metrics else "ours"
    rows = []
    for n in lengths:
        key, row = str(n), {"N": power_of_two(n)}
        for v in pair:
            row[(ours, labels[v])] = _pct(metrics["accuracy"][v][key], metrics["accuracy_sem"][v][key])
        row[(ours, "p")] = format_p(metrics["p_value"][pair_name(pair)][key])
        for v in pair:
            paper = column(paper_table, v, n) if paper_table and v in paper_table else None
            row[("paper", labels[v])] = "n/a" if paper is None else f"{paper:.1f}"
        row[("paper", "p")] = format_p(column(paper_table, paper_p, n) if paper_table and paper_p in paper_table else None)
        rows.append(row)
    table = pd.DataFrame(rows).set_index("N")
    table.columns = pd.MultiIndex.from_tuples(table.columns)
    return table


def means_by_length(frame: pd.DataFrame, column: str, variants, lengths) -> dict:
    """{variant: {N: mean of `column` over the frame's rows (one per seed)}} for results.json; frame
    labels its variants as `variants` does (keys, not display labels)."""
    table = frame.groupby(["variant", "N"])[column].mean()
    return {v: {str(n): float(table[(v, n)]) for n in lengths} for v in variants}


def quantity_table(summary: dict, runs, pairs, labels: dict, lengths, digits: int = 3, mean: str = "mean",
                   sem: str = "sem") -> pd.DataFrame:
    """One row per length: each of `runs`' mean ± its standard error over seeds, then the paired
    t-test's p of each of `pairs`.  summary: stats.by_length's {"mean", "sem", "p_value"} (chapter 7's
    probes), or per_length's metrics with mean="accuracy", sem="accuracy_sem"."""
    rows = {}
    for n in lengths:
        key = str(n)
        row = {labels[r]: f"{summary[mean][r][key]:.{digits}f} ± {summary[sem][r][key]:.{digits}f}" for r in runs}
        row.update({f"p, {labels[b]} vs {labels[a]}": format_p(summary["p_value"][pair_name((a, b))][key])
                    for a, b in pairs})
        rows[power_of_two(n)] = row
    return pd.DataFrame(rows).T.rename_axis("N")


def pair_table(metrics: dict, pairs, labels: dict, lengths, in_distribution: int) -> pd.DataFrame:
    """A row per pair (claimed, other), as chapter 10 lists them (the newer variant first): at how many lengths
    beyond training the claimed run is ahead, how many of those leads are significant, and at how many it is
    significantly behind (paired t-test), from per_length's metrics."""
    ood = [str(n) for n in beyond_training(lengths, in_distribution)]
    rows = {}
    for claimed, other in pairs:
        e = compare(metrics["accuracy"][claimed], metrics["accuracy"][other],
                    metrics["p_value"][pair_name((claimed, other))], ood)
        rows[f"{labels[claimed]} vs {labels[other]}"] = {f"ahead (of {len(ood)} lengths beyond training)": e.ahead,
                                                         f"of those, p < {ALPHA}": e.ahead_significant,
                                                         "significantly behind": e.behind_significant}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("pair")


def best_sentence(best: pd.DataFrame, lengths, in_distribution: int) -> str:
    """Which variant leads at how many lengths beyond training, and how many of those leads are
    significant over the runner-up.  best: beyond.best_by_length's frame."""
    ood = beyond_training(lengths, in_distribution)
    b = best[best["N"].isin(ood)]
    wins, sure = b["label"].value_counts(), sum(is_significant(p) for p in b["p"])
    return ("Best beyond training: " + ", ".join(f"{label} at {k} of {len(ood)} lengths" for label, k in wins.items())
            + f". {sure} of those leads are significant over the runner-up (p < {ALPHA}).")


def differences_by_scale(scales: dict, pair) -> pd.DataFrame:
    """One row per test length the scales share, one column per scale: the paired difference
    second - first of `pair` in points with its 95% interval, from scales {label: (lengths,
    {run: per-seed accuracy (seeds, lengths)})}.  Each scale pairs its own seeds."""
    first, second = pair
    shared = sorted(set.intersection(*(set(lengths) for lengths, _ in scales.values())))
    rows = []
    for n in shared:
        row = {"N": power_of_two(n)}
        for label, (lengths, accuracy) in scales.items():
            j = list(lengths).index(n)
            d = paired_difference(100 * np.asarray(accuracy[first])[:, j], 100 * np.asarray(accuracy[second])[:, j])
            row[label] = format_interval(d)
        rows.append(row)
    return pd.DataFrame(rows).set_index("N")


def run_sources(prefix: str, runs: dict) -> dict:
    """results.json's sources for stored runs of several seeds ({variant: [run record]}): each run's provenance
    under "{prefix}/{variant}/{its first seed}"."""
    return {f"{prefix}/{v}/{r['spec']['train']['first_seed']}": r["provenance"] for v, records in runs.items()
            for r in records}


def runs_table(runs: dict, labels: dict) -> pd.DataFrame:
    """The stored runs behind a result ({variant: [run record]}): seeds, time, speed, provenance."""
    rows = []
    for variant, records in runs.items():
        for r in records:
            train_spec, prov = r["spec"]["train"], r["provenance"]
            first = train_spec["first_seed"]
            rows.append({"variant": labels[variant], "seeds": f"{first}..{first + train_spec['n_seeds'] - 1}",
                         "steps": f"{train_spec['steps']:,}",
                         "training wall time (min)": round(prov["wall_time_s"] / 60, 1),
                         "model-steps per second": r["model_steps_per_s"], "trained on": prov["device"],
                         "torch": prov["torch"], "commit": prov["git_commit"][:12]})
    return pd.DataFrame(rows).set_index("variant")


def ablation_metrics(accuracy: dict, lengths, ablation: Ablation = ABLATION) -> dict:
    """{"relative_gain": {variant: {N: %}}, "p_value_vs_baseline": ..., and where both norms are in `accuracy`,
    "p_value_ln_vs_std": {N: p} and "ln_minus_std": {N: paired_difference}} (the learned norm against the plain
    one).  Of the two norms, those `accuracy` holds (at the paper's scale the learned one's runs may still wait in
    the GPU queue: paper_scale.trained)."""
    norms = [v for v in (ablation.plain, ablation.learned) if v in accuracy]
    base = np.asarray(accuracy[ablation.base])
    gain = {v: {str(n): relative_difference(base[:, j], np.asarray(accuracy[v])[:, j]) for j, n in enumerate(lengths)}
            for v in norms}
    metrics = {
        "relative_gain": gain,
        "p_value_vs_baseline": {v: {str(n): paired_ttest(np.asarray(accuracy[v])[:, j], base[:, j])
                                    for j, n in enumerate(lengths)} for v in norms},
        "n_seeds": len(base),
    }
    if len(norms) < 2:
        return metrics
    learned, plain = np.asarray(accuracy[ablation.learned]), np.asarray(accuracy[ablation.plain])
    return metrics | {
        "p_value_ln_vs_std": {str(n): paired_ttest(learned[:, j], plain[:, j]) for j, n in enumerate(lengths)},
        # learned minus plain in points with its 95% interval: Table 6 reads "no significant difference" as "about equal"
        "ln_minus_std": {str(n): paired_difference(100 * plain[:, j], 100 * learned[:, j]) for j, n in enumerate(lengths)},
    }


def ablation_row(task: str, metrics: dict, lengths, in_distribution: int, scale: str, steps: int,
                 ln_over_std_claimed: bool = True, ablation: Ablation = ABLATION) -> dict:
    """Chapter 8's verdict table, a line per task and scale: at how many lengths beyond training each norm is ahead
    of the Baseline and the learned norm of the plain one (how many of those with p < ALPHA in brackets, paired
    over seeds), with the verdicts on the plain norm beating the Baseline and on the learned one beating the plain
    one where the paper claims it (Table 6 claims the two about equal: summary_tables.table6_sentence reads that).
    A norm whose runs wait in the GPU queue reads 'pending'."""
    ood = [str(n) for n in beyond_training(lengths, in_distribution)]
    gain, none = metrics["relative_gain"], dict.fromkeys(ood, 0.0)
    base, plain, learned = (short_label(v) for v in ablation.variants)
    said = lambda e: f"{e.ahead} ({e.ahead_significant}): {provisional.qualified(e.verdict(), task, steps)}"
    helps = {v: compare(gain[v], none, metrics["p_value_vs_baseline"][v], ood) for v in gain}
    over = (compare(gain[ablation.learned], gain[ablation.plain], metrics["p_value_ln_vs_std"], ood)
            if ablation.learned in gain else None)
    if over is None:  # the learned norm's runs at this scale wait in the GPU queue
        learned_cells = ("pending", "pending")
    else:
        learned_cells = (said(helps[ablation.learned]), said(over) if ln_over_std_claimed else
                         f"{over.ahead} ({over.ahead_significant}): claimed about equal, below")
    return {"task": task, "scale": scale,
            f"{plain} ahead of the {base}, of {len(ood)} lengths (p < {ALPHA})": said(helps[ablation.plain]),
            f"{learned} ahead of the {base}": learned_cells[0], f"{learned} ahead of {plain}": learned_cells[1]}


def ablation_table(metrics: dict, lengths, labels: dict, paper_table: dict, ablation: Ablation = ABLATION) -> pd.DataFrame:
    """One row per length: relative gains over the Baseline (ours, paper) and the two norms' p-values."""
    rows, gain = [], metrics["relative_gain"]
    norms = (ablation.plain, ablation.learned)
    learned, plain = short_label(ablation.learned).lstrip("+"), short_label(ablation.plain).lstrip("+")
    for n in lengths:
        key, row = str(n), {"N": power_of_two(n)}
        for v in norms:  # a variant still in the GPU queue (ablation_metrics): 'pending'
            row[f"Δ {labels[v]} (ours, {metrics['n_seeds']} seeds)"] = f"{gain[v][key]:+.2f}" if v in gain else "pending"
        row[f"p, {learned} vs {plain} (ours)"] = format_p(metrics["p_value_ln_vs_std"][key]) \
            if "p_value_ln_vs_std" in metrics else "pending"
        for v in norms:
            paper = column(paper_table, v, n) if v in paper_table else None  # a norm the paper did not ablate
            row[f"Δ {labels[v]} (paper)"] = "n/a" if paper is None else f"{paper:+.2f}"
        row[f"p, {learned} vs {plain} (paper)"] = format_p(column(paper_table, "p_value", n))
        rows.append(row)
    return pd.DataFrame(rows).set_index("N")


def verdict(metrics: dict, lengths, pair, labels: dict, in_distribution: int, n_seeds: int, alpha=ALPHA,
            paper_table: dict | None = None) -> str:
    """Sentences computed from the numbers: where the second variant beats the first, and
    where it loses, each with how many of those differences are significant."""
    first, second = pair
    p_values = metrics["p_value"][pair_name(pair)]
    ood = [str(n) for n in beyond_training(lengths, in_distribution)]
    if not ood:
        return "No test length lies beyond the training lengths."
    acc = metrics["accuracy"]
    e = compare(acc[second], acc[first], p_values, ood, alpha=alpha)
    text = (f"Beyond the training lengths (N > {in_distribution}), {labels[second]} is more accurate than "
            f"{labels[first]} at {e.ahead} of {len(ood)} lengths ({e.ahead_significant} with "
            f"p < {alpha}) and less accurate at {e.behind} ({e.behind_significant} with p < {alpha}). Each "
            f"difference is tested by a paired t-test over {n_seeds} seeds.")
    if paper_table is not None:
        compared = [n for n in ood if column(paper_table, first, int(n)) is not None
                    and column(paper_table, second, int(n)) is not None]
        paper_better = [n for n in compared if column(paper_table, second, int(n)) > column(paper_table, first, int(n))]
        diff = {n: acc[second][n] - acc[first][n] for n in compared}
        agree = [n for n in compared if (diff[n] > 0) == (n in paper_better) and diff[n] != 0]
        text += (f" The paper has {labels[second]} ahead at {len(paper_better)} of those {len(compared)} lengths; "
                 f"our difference points the same way at {len(agree)} of them.")
    return text


def write_results(output_dir, chapter: str, parameters: dict, device, metrics: dict, wall_time_s=None,
                  sources: dict | None = None) -> Path:
    """results.json: {"chapter", "parameters", "provenance", "metrics"}, written atomically (the page checks
    the metrics' keys against its chapter's record first: ChapterPage.write_results).

    `sources` records where cached inputs came from (e.g. each variant's training
    provenance), since a chapter that loads stored models runs in seconds."""
    path = Path(output_dir) / "results.json"
    provenance = store.provenance(device, wall_time_s)
    if sources:
        provenance["sources"] = sources
    store.write_json(path, {
        "chapter": chapter,
        "parameters": dict(parameters),
        "provenance": provenance,
        "metrics": metrics,
    })
    return path
