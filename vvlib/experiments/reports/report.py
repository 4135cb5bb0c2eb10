"""Tables beside the paper's, one-sentence verdicts, and the chapter's results.json."""

from pathlib import Path

import numpy as np
import pandas as pd

from . import provisional
from ..storage import runs, store
from ..setups import sensitivity
from ..chapters import check_metrics
from ...compare import (ALPHA, beyond_training, compare, format_interval, format_p, is_significant, pair_name,
                        power_of_two)
from ...stats import by_length, paired_difference, paired_ttest, welch


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
        return sensitivity.label(value)
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
    from ..setups.paper import column

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


def scales_table(columns: dict, lengths, pair, labels: dict, paper_table: dict, paper_p: str = "") -> pd.DataFrame:
    """One row per length: the paper's two runs of `pair`, then ours at each scale of `columns`
    ({scale label: per_length metrics}), each with its paired p-value, under a two-row header (the
    source over the runs' labels: give short ones), so that two scales beside the paper fit the text column."""
    from ..setups.paper import column

    rows = []
    for n in lengths:
        key, row = str(n), {"N": power_of_two(n)}
        for v in pair:
            paper = column(paper_table, v, n)
            row[("paper", labels[v])] = "n/a" if paper is None else f"{paper:.1f}"
        row[("paper", "p")] = format_p(column(paper_table, paper_p, n) if paper_p in paper_table else None)
        for scale, metrics in columns.items():
            for v in pair:
                row[(scale, labels[v])] = _pct(metrics["accuracy"][v][key], metrics["accuracy_sem"][v][key])
            row[(scale, "p")] = format_p(metrics["p_value"][pair_name(pair)][key])
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


def pair_sentences(metrics: dict, pairs, labels: dict, lengths, in_distribution: int) -> list:
    """Per pair (claimed, other), as chapter 10 lists them (the newer variant first): at how many
    lengths beyond training the claimed run is ahead, and significantly behind (paired t-test), from
    per_length's metrics."""
    ood = [str(n) for n in beyond_training(lengths, in_distribution)]
    lines = []
    for claimed, other in pairs:
        e = compare(metrics["accuracy"][claimed], metrics["accuracy"][other],
                    metrics["p_value"][pair_name((claimed, other))], ood)
        lines.append(f"{labels[claimed]} vs {labels[other]}: ahead at {e.ahead} of {len(ood)} lengths beyond training "
                     f"({e.ahead_significant} with p < {ALPHA}), significantly behind at {e.behind_significant}.")
    return lines


def best_sentence(best: pd.DataFrame, lengths, in_distribution: int) -> str:
    """Which variant leads at how many lengths beyond training, and how many of those leads are
    significant over the runner-up.  best: beyond.best_by_length's frame."""
    ood = beyond_training(lengths, in_distribution)
    b = best[best["N"].isin(ood)]
    wins, sure = b["label"].value_counts(), sum(is_significant(p) for p in b["p"])
    return ("Best beyond training: " + ", ".join(f"{label} at {k} of {len(ood)} lengths" for label, k in wins.items())
            + f" ({sure} of those leads with p < {ALPHA} over the runner-up).")


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


def ladder_frame(ladders: dict, lengths, pair) -> pd.DataFrame:
    """One row per (training step, test length): both runs' mean accuracy (%) and the paired
    difference second - first with its 95% interval and p-value, from
    ladders {variant: {step: per-seed accuracy (seeds, lengths)}}."""
    first, second = pair
    rows = []
    for step in sorted(ladders[first]):
        a, b = 100 * np.asarray(ladders[first][step]), 100 * np.asarray(ladders[second][step])
        for j, n in enumerate(lengths):
            rows.append({"step": step, "N": n, first: a[:, j].mean(), second: b[:, j].mean(),
                         **paired_difference(a[:, j], b[:, j])})
    return pd.DataFrame(rows)


def ladder_table(frame: pd.DataFrame, pair, labels: dict) -> pd.DataFrame:
    """ladder_frame for reading: one row per (step, N), accuracies and the difference in points."""
    first, second = pair
    return pd.DataFrame([{
        "step": f"{row.step:,}", "N": power_of_two(int(row.N)),
        labels[first]: f"{getattr(row, first):.1f}", labels[second]: f"{getattr(row, second):.1f}",
        "difference (points)": f"{row.diff:+.1f}", "95% interval": f"[{row.low:+.1f}, {row.high:+.1f}]",
        "p": format_p(row.p),
    } for row in frame.itertuples()]).set_index(["step", "N"])


def ladder_records(frame: pd.DataFrame) -> dict:
    """ladder_frame for results.json: {N: {step: {column: value}}}."""
    return {str(n): {str(row["step"]): {k: v for k, v in row.items() if k not in ("N", "step")}
                     for row in rows.to_dict("records")} for n, rows in frame.groupby("N")}


def device_frame(runs: dict, shown) -> pd.DataFrame:
    """Per-seed accuracy (%) of the same variants trained on several devices, in long form for a
    figure: runs {device label: (lengths, {variant: (seeds, lengths)})}; rows at the lengths in
    `shown` that every device was tested at."""
    rows = []
    for where, (tested, accuracy) in runs.items():
        for variant, per_seed in accuracy.items():
            for n in shown:
                column = np.asarray(per_seed)[:, list(tested).index(n)]
                rows += [{"device": where, "variant": variant, "N": n, "accuracy": 100 * a} for a in column]
    return pd.DataFrame(rows)


def device_table(frame: pd.DataFrame, first: str, second: str, labels: dict) -> pd.DataFrame:
    """Each variant and length: the two devices' mean ± sd (seeds), second minus first and
    Welch's p-value (the devices' seeds are independent runs, not pairs)."""
    rows = []
    for (variant, n), group in frame.groupby(["variant", "N"], sort=False):
        w = welch(group[group.device == first].accuracy, group[group.device == second].accuracy)
        rows.append({"variant": labels[variant], "N": power_of_two(n),
                     first: f"{w['mean_a']:.1f} ± {w['sd_a']:.1f} ({w['n_a']})",
                     second: f"{w['mean_b']:.1f} ± {w['sd_b']:.1f} ({w['n_b']})",
                     f"{second} minus {first}": f"{w['diff']:+.1f}", "Welch p": format_p(w["p"])})
    return pd.DataFrame(rows).set_index(["variant", "N"])


def split_blocks(blocks, scored_blocks: int, block: int) -> tuple:
    """Per-seed accuracy (%) on a test set's first `scored_blocks` blocks and on the others, from the
    right answers per block (seeds, lengths, blocks) of `block` sequences each."""
    blocks = np.asarray(blocks, dtype=float)
    scored, rest = blocks[..., :scored_blocks], blocks[..., scored_blocks:]
    return 100 * scored.sum(-1) / (scored_blocks * block), 100 * rest.sum(-1) / (rest.shape[-1] * block)


def recheck_summary(blocks: dict, lengths, scored_blocks: int, block: int) -> dict:
    """{variant: {N: {"seeds", "scored", "others", "difference"}}}: the mean accuracy (%) over seeds on the
    test sequences a chapter scores (the first scored_blocks blocks) and on the others, and others minus
    scored per seed (paired_difference).  blocks: {variant: right answers (seeds, lengths, blocks)}."""
    summary = {}
    for variant, counts in blocks.items():
        scored, rest = split_blocks(counts, scored_blocks, block)
        summary[variant] = {str(n): {"seeds": len(scored), "scored": float(scored[:, j].mean()),
                                     "others": float(rest[:, j].mean()),
                                     "difference": paired_difference(scored[:, j], rest[:, j])}
                            for j, n in enumerate(lengths)}
    return summary


def recheck_table(summary: dict, scored: int, others: int, labels: dict) -> pd.DataFrame:
    """recheck_summary as a table; scored, others: how many test sequences each part holds."""
    rows = [{"variant": labels[variant], "N": power_of_two(int(n)), "seeds": r["seeds"],
             f"scored ({scored})": round(r["scored"], 1), f"others ({others})": round(r["others"], 1),
             "others minus scored": format_interval(r["difference"]),
             "p": format_p(r["difference"]["p"])}
            for variant, by_length in summary.items() for n, r in by_length.items()]
    return pd.DataFrame(rows).set_index(["variant", "N"])


def loss_rise(histories: dict) -> str:
    """A sentence per run: the lowest mean training loss, its step, and the last one."""
    parts = []
    for label, history in histories.items():
        means = [float(np.mean(losses)) for _, losses in history]
        best = int(np.argmin(means))
        if best == len(history) - 1:  # still falling at the end
            parts.append(f"{label}: lowest at the last step, {history[-1][0]:,}: {means[-1]:.2g}")
            continue
        parts.append(f"{label}: lowest {means[best]:.2g} at step {history[best][0]:,}, {means[-1]:.2g} at step "
                     f"{history[-1][0]:,} ({means[-1] / means[best]:.1f} times the lowest)")
    return "Mean training loss over seeds. " + "; ".join(parts) + "."


def last_mean_loss(history: list) -> float:
    """The mean over seeds of a loss history's last logged loss."""
    return float(np.mean(history[-1][1]))


def rise_rows_sentence(found: list, constant_accuracy: dict, constant_runs: dict, n: str, constant_seeds: int) -> str:
    """A sentence per row of `found` [(row record, training records {side: record})], trained as long as
    the constant-rate runs {side: [run record]} (accuracy {side: {N: %}}, constant_seeds seeds): its last
    training loss, both sides' accuracy at N = n and +LN minus Baseline there, the constant rate's beside."""
    constant_loss = {v: last_mean_loss(runs.joined_history(rs)) for v, rs in constant_runs.items()}
    parts = []
    for row, training in found:
        loss = {v: last_mean_loss(r["loss_history"]) for v, r in training.items()}
        parts.append(f"*{row['row']}* ({row['n_seeds']} seeds): last training loss {loss['baseline']:.2g} (Baseline) "
                     f"and {loss['layernorm']:.2g} (+LN); at N = {int(n):,}, Baseline {row['accuracy']['baseline'][n]:.1f}%, "
                     f"+LN {row['accuracy']['layernorm'][n]:.1f}%: +LN is {sensitivity.described(row['difference'][n])}")
    return (f"At the constant rate ({constant_seeds} seeds) the last training loss is {constant_loss['baseline']:.2g} "
            f"(Baseline) and {constant_loss['layernorm']:.2g} (+LN), and at N = {int(n):,} the Baseline reaches "
            f"{constant_accuracy['baseline'][n]:.1f}% and +LN {constant_accuracy['layernorm'][n]:.1f}%. "
            + "; ".join(parts) + ".")


def schedule_sentence(rows: list, lengths, at) -> str:
    """rows [(label, accuracy {side: (seeds, lengths) array over `lengths`})] of one model on the same seeds,
    the first the reference (the constant rate): per later row, each side's mean accuracy (%) at each N of
    `at` against the reference's there, with the paired difference over the seeds (the row minus the
    reference: the same seeds draw the same data and start from the same weights in every row)."""
    (reference, base), parts = rows[0], []
    for name, accuracy in rows[1:]:
        said = []
        for side, shown in (("baseline", "Baseline"), ("layernorm", "+LN")):
            at_n = []
            for n in at:
                j = list(lengths).index(n)
                d = paired_difference(100 * base[side][:, j], 100 * accuracy[side][:, j])
                at_n.append(f"{100 * accuracy[side][:, j].mean():.1f}% at N = {n:,} against "
                            f"{100 * base[side][:, j].mean():.1f}% ({format_interval(d)} points, p = {format_p(d['p'])})")
            said.append(f"{shown} {' and '.join(at_n)}")
        parts.append(f"*{name}* against *{reference}* ({len(base['baseline'])} seeds, row minus reference with its "
                     f"95% interval): " + "; ".join(said))
    return ". ".join(parts) + "."


def norm_layers_sentence(rows: list, lengths, at) -> str:
    """rows [(rate name, accuracy {side: (seeds, lengths)} of the deep row with +LN's norm after every layer, the
    same of the row with it after the last layer only)], both on the same seeds and with the same Baseline run:
    paired_rows_sentence of +LN after the last layer only against +LN after every layer."""
    return paired_rows_sentence(rows, lengths, at, "+LN after the last layer only", "+LN after every layer's")


def paired_rows_sentence(rows: list, lengths, at, ours: str, theirs: str) -> str:
    """rows [(name, accuracy {side: (seeds, lengths)} of a reference row, the same of a row compared with it)], both
    on the same seeds and with the same Baseline run: at each N of `at`, the compared row's +LN mean accuracy (%)
    (`ours` names it) against the reference row's +LN (`theirs`) and the Baseline, with the paired differences (the
    compared row minus the other, 95% interval, p)."""
    parts = []
    for name, reference, compared in rows:
        at_n = []
        for n in at:
            j = list(lengths).index(n)
            mine = 100 * compared["layernorm"][:, j]
            against = []
            for other, shown in ((reference["layernorm"], theirs), (reference["baseline"], "the Baseline's")):
                d = paired_difference(100 * other[:, j], mine)
                against.append(f"{shown} {100 * other[:, j].mean():.1f}% ({format_interval(d)} points, p = {format_p(d['p'])})")
            at_n.append(f"{mine.mean():.1f}% at N = {n:,} against " + " and ".join(against))
        parts.append(f"*{name}* ({len(mine)} seeds), {ours}: " + "; ".join(at_n))
    return ". ".join(parts) + "."


# layer_table's columns: (how a value is shown, its reference row's name, the reference at N, as a value)
LAYER_VALUES = {"entropy": (lambda v: round(v, 3), "uniform weights (ln N)", np.log),
                "on_answer": (lambda v: round(100 * v, 2), "largest weight on a random item (%)", lambda n: 1 / n)}


def layer_table(probed: list, labels: dict, column: str = "entropy") -> pd.DataFrame:
    """probed [(row name, probing.layer_frame's rows of its two sides)]: each row's, side's and layer's mean over the
    seeds of `column` (entropy in nats, or on_answer in %) at every length probed, with the value a uniform
    attention gives beside them (ln N; a largest weight on the answer 1 time in N)."""
    shown, reference_name, reference = LAYER_VALUES[column]
    rows = []
    for name, frame in probed:
        means = frame.groupby(["variant", "layer", "N"])[column].mean()
        for (variant, layer), per_n in means.groupby(level=[0, 1], sort=False):
            rows.append({"row": name, "variant": labels[variant], "layer": int(layer) + 1,
                         **{f"N = {n:,}": shown(float(v)) for (_, _, n), v in per_n.items()}})
    table = pd.DataFrame(rows)
    uniform = {c: shown(float(reference(int(c[4:].replace(",", ""))))) for c in table.columns[3:]}
    uniform_row = pd.DataFrame([{"row": reference_name, "variant": "", "layer": "", **uniform}])
    return pd.concat([table, uniform_row], ignore_index=True).set_index(["row", "variant", "layer"])


def first_layer_entropy(frame: pd.DataFrame, side: str, n: int) -> np.ndarray:
    """One side's first-layer attention entropy at N = n from probing.layer_frame's rows, per seed in seed order."""
    rows = frame[(frame["layer"] == 0) & (frame["N"] == n) & (frame["variant"] == side)]
    return rows.sort_values("seed")["entropy"].to_numpy()


def _entropy_pair(a: np.ndarray, b: np.ndarray, names: tuple, n: int) -> str:
    """'x nats (A, p% of ln n) and y (B, q%); B minus A d [low, high], p = ...', paired seed by seed."""
    d = paired_difference(a, b)
    return (f"{a.mean():.2f} nats ({names[0]}, {a.mean() / np.log(n):.0%} of ln N) and {b.mean():.2f} ({names[1]}, "
            f"{b.mean() / np.log(n):.0%}); {names[1]} minus {names[0]} {format_interval(d, 2)}, p = {format_p(d['p'])}")


def layer_sentence(probed: list, n: int, labels: dict | None = None) -> str:
    """Per row of `probed` (as layer_table's): the first layer's mean entropy at N = n for both sides, as a share
    of ln n, with the second side minus the first paired over the seeds (nats, 95% interval, p); `labels`
    {side: its name}, default Baseline and +LN."""
    names = tuple((labels or {"baseline": "Baseline", "layernorm": "+LN"})[side] for side in sensitivity.PAIR)
    parts = [f"*{name}*: " + _entropy_pair(*(first_layer_entropy(frame, side, n) for side in sensitivity.PAIR), names, n)
             for name, frame in probed]
    return (f"The first layer's attention entropy at N = {n:,} (ln N = {np.log(n):.2f}, uniform weights), means over "
            "the seeds, paired seed by seed: " + "; ".join(parts) + ".")


def placement_sentence(rows: list, n: int) -> str:
    """rows [(rate name, layer_frame rows of the row with +LN's norm after every layer, the same with it after the
    last layer only)]: +LN's first-layer entropy at N = n in both, paired seed by seed (the same seeds and data)."""
    parts = [f"*{name}*: " + _entropy_pair(first_layer_entropy(every, "layernorm", n),
                                           first_layer_entropy(last, "layernorm", n),
                                           ("norm after every layer", "after the last only"), n)
             for name, every, last in rows]
    return f"+LN's first layer at N = {n:,}, by where its norm is: " + "; ".join(parts) + "."


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


def overtaking(frame: pd.DataFrame, pair, labels: dict, in_distribution: int, alpha=ALPHA) -> str:
    """Per test length beyond training: from which rung on (if any) the second run of `pair`
    is significantly ahead at every later rung, and at how many rungs it is significantly behind.
    A lead seen at the last rung alone is reported as that, not as one that lasts."""
    first, second = pair
    sentences, lasting, last_only = [], [], []
    for n, rows in frame[frame["N"] > in_distribution].groupby("N"):
        rows, name = rows.sort_values("step"), f"N = {power_of_two(int(n))}"
        significant = rows["p"].map(lambda p: is_significant(p, alpha))
        ahead = (rows["diff"] > 0) & significant
        behind = int(((rows["diff"] < 0) & significant).sum())
        since = [s for i, s in enumerate(rows["step"]) if ahead.iloc[i:].all()]
        if since and since[0] == rows["step"].iloc[-1]:
            last_only.append(name)
        elif since:
            lasting.append(f"{name} from step {since[0]:,}")
        lead = (f"ahead from step {since[0]:,} on" if since else
                f"not significantly ahead at the last rung (step {rows['step'].iloc[-1]:,})")
        sentences.append(f"at {name}, {lead}, significantly behind at {behind} of {len(rows)} rungs")
    last = f"{frame['step'].max():,}"
    question = f"**Does {labels[second]} overtake {labels[first]}?** "
    where = f", at {', '.join(last_only)}: whether that lead lasts, these rungs cannot tell."
    if lasting:
        answer = f"Yes, for good, at {', '.join(lasting)}." + (
            f" Ahead at the last rung (step {last}) only{where}" if last_only else "")
    elif last_only:
        answer = f"Only at the last rung (step {last}){where}"
    else:
        answer = f"Not within the {last} steps of the ladder, at any test length beyond the training lengths."
    return (f"{question}{answer} In detail, {labels[second]} against {labels[first]} (p < {alpha}, paired over "
            f"seeds): " + "; ".join(sentences) + ".")


def ablation_metrics(accuracy: dict, lengths, variants=("standardize", "layernorm")) -> dict:
    """{"relative_gain": {variant: {N: %}}, "p_value_vs_baseline": ..., and where both +std and +LN are in
    `accuracy`, "p_value_ln_vs_std": {N: p} and "ln_minus_std": {N: paired_difference}}.  Of `variants`, those
    `accuracy` holds (at the paper's scale +LN's runs may still wait in the GPU queue: paper_scale.trained)."""
    from ...stats import relative_difference

    variants = [v for v in variants if v in accuracy]
    base = np.asarray(accuracy["baseline"])
    gain = {v: {str(n): relative_difference(base[:, j], np.asarray(accuracy[v])[:, j]) for j, n in enumerate(lengths)}
            for v in variants}
    metrics = {
        "relative_gain": gain,
        "p_value_vs_baseline": {v: {str(n): paired_ttest(np.asarray(accuracy[v])[:, j], base[:, j])
                                    for j, n in enumerate(lengths)} for v in variants},
        "n_seeds": len(base),
    }
    if not {"standardize", "layernorm"} <= set(variants):
        return metrics
    ln, std = np.asarray(accuracy["layernorm"]), np.asarray(accuracy["standardize"])
    return metrics | {
        "p_value_ln_vs_std": {str(n): paired_ttest(ln[:, j], std[:, j]) for j, n in enumerate(lengths)},
        # +LN minus +std in points with its 95% interval: Table 6 reads "no significant difference" as "about equal"
        "ln_minus_std": {str(n): paired_difference(100 * std[:, j], 100 * ln[:, j]) for j, n in enumerate(lengths)},
    }


def ablation_sentence(task: str, metrics: dict, lengths, in_distribution: int, n_seeds: int, steps: int,
                      ln_over_std_claimed: bool = True, device: str = "") -> str:
    """Chapter 8's reading of one task at one scale: at how many lengths beyond training +std and +LN
    beat the Baseline, and +LN beats +std (paired), with the verdict on that where the paper claims it
    (PaperTask.ln_beats_std; on dictionary lookup it claims the two about equal: summary.table6_sentence).
    device: where the runs trained ('GPU'), named beside the scale where given."""
    ood = [str(n) for n in beyond_training(lengths, in_distribution)]
    gain = metrics["relative_gain"]
    scale = f"**{task}** ({n_seeds} seeds x {steps:,} steps{', ' + device if device else ''})"
    if "layernorm" not in gain:  # +LN's runs at this scale wait in the GPU queue: +std against the Baseline alone
        e = compare(gain["standardize"], dict.fromkeys(ood, 0.0), metrics["p_value_vs_baseline"]["standardize"], ood)
        return (f"{scale}: beyond the training lengths, +std is ahead of the Baseline at {e.ahead} of {len(ood)} "
                f"lengths ({e.ahead_significant} with p < {ALPHA}), behind at {e.behind} ({e.behind_significant} with "
                f"p < {ALPHA}), paired t-test over {n_seeds} seeds: that +std is more accurate than the Baseline is "
                f"{provisional.qualified(e.verdict(), task, steps)}. +LN's runs at this scale are still in the GPU "
                f"queue.")
    std_up, ln_up = (sum(gain[v][n] > 0 for n in ood) for v in ("standardize", "layernorm"))
    ln_over_std = compare(gain["layernorm"], gain["standardize"], metrics["p_value_ln_vs_std"], ood)
    return (f"{scale}: beyond the training "
            f"lengths, +std beats the Baseline at "
            f"{std_up} of {len(ood)} lengths and +LN at {ln_up}; +LN beats +std at {ln_over_std.ahead} "
            f"({ln_over_std.ahead_significant} with p < {ALPHA}, paired t-test over {n_seeds} seeds)"
            + (f": that +LN is more accurate than +std is {provisional.qualified(ln_over_std.verdict(), task, steps)}."
               if ln_over_std_claimed else "."))


def ablation_table(metrics: dict, lengths, labels: dict, paper_table: dict) -> pd.DataFrame:
    """One row per length: relative gains over Baseline (ours, paper) and LN-vs-std p-values."""
    from ..setups.paper import column

    rows, gain = [], metrics["relative_gain"]
    for n in lengths:
        key, row = str(n), {"N": power_of_two(n)}
        for v in ("standardize", "layernorm"):  # a variant still in the GPU queue (ablation_metrics): 'pending'
            row[f"Δ {labels[v]} (ours, {metrics['n_seeds']} seeds)"] = f"{gain[v][key]:+.2f}" if v in gain else "pending"
        row["p, LN vs std (ours)"] = format_p(metrics["p_value_ln_vs_std"][key]) if "p_value_ln_vs_std" in metrics \
            else "pending"
        for v in ("standardize", "layernorm"):
            paper = column(paper_table, v, n)
            row[f"Δ {labels[v]} (paper)"] = "n/a" if paper is None else f"{paper:+.2f}"
        row["p, LN vs std (paper)"] = format_p(column(paper_table, "p_value", n))
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
            f"p < {alpha}) and less accurate at {e.behind} ({e.behind_significant} with p < {alpha}); "
            f"paired t-test over {n_seeds} seeds.")
    if paper_table is not None:
        from ..setups.paper import column

        compared = [n for n in ood if column(paper_table, first, int(n)) is not None
                    and column(paper_table, second, int(n)) is not None]
        paper_better = [n for n in compared if column(paper_table, second, int(n)) > column(paper_table, first, int(n))]
        diff = {n: acc[second][n] - acc[first][n] for n in compared}
        agree = [n for n in compared if (diff[n] > 0) == (n in paper_better) and diff[n] != 0]
        text += (f" The paper has {labels[second]} ahead at {len(paper_better)} of those {len(compared)} lengths; "
                 f"our difference points the same way at {len(agree)} of them.")
    return text


def verdicts_by_scale(scales: dict, pair, labels: dict, in_distribution: int, task: str) -> str:
    """One sentence: the summary's verdict on `pair` (the second run claimed better) at each scale,
    in the order given, provisional below the paper's steps for `task` (provisional.py).
    scales: {label: (lengths, per_length metrics, training steps)}."""
    first, second = pair
    parts = []
    for label, (lengths, m, steps) in scales.items():
        ood = [str(n) for n in beyond_training(lengths, in_distribution)]
        e = compare(m["accuracy"][second], m["accuracy"][first], m["p_value"][pair_name(pair)], ood)
        note = provisional.note(task, steps)
        parts.append(f"*{e.verdict()}*{f' ({note})' if note else ''} at {label}")
    return (f"That {labels[second]} is more accurate than {labels[first]} beyond the training lengths, by the "
            f"summary's rule: " + "; ".join(parts) + ".")


def write_results(output_dir, chapter: str, parameters: dict, device, metrics: dict, wall_time_s=None,
                  sources: dict | None = None) -> Path:
    """results.json: {"chapter", "parameters", "provenance", "metrics"}, written atomically
    once the metrics' keys match what the chapter's record promises (its file in chapters/).

    `sources` records where cached inputs came from (e.g. each variant's training
    provenance), since a chapter that loads stored models runs in seconds."""
    check_metrics(chapter, metrics)  # before anything is written
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
