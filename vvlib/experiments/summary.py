"""The paper's claims, one by one, against the numbers the chapters wrote to results.json.

Every claim compares two runs length by length beyond the training length, by the rule of
`compare` (paired t-test over seeds, p < ALPHA, a verdict fixed in advance and printed on the
summary page).
"""

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from . import schema, sensitivity
from ..compare import SUPPORTED, UNCLEAR, Evidence, compare, is_significant, pair_name
from ..compare import beyond_training as lengths_beyond_training


@dataclass
class Claim:
    """One of the paper's claims against one of our results."""
    claim: str
    results: dict  # the results.json of the chapter that tests it
    source: str  # the paper's table or figure
    evidence: Evidence
    scale: str  # the scale of the runs compared (seeds x steps, profile)


def load(results_dir, chapter: str) -> dict:
    path = Path(results_dir) / chapter / "results.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run `python -m vvlib run {chapter}` (or build the book) first")
    results = json.loads(path.read_text())
    schema.check(chapter, results["metrics"])  # one written by older code fails here, not deep in a claim
    return results


def beyond_training(results: dict) -> list:
    """The test lengths (as str) above the chapter's longest training length."""
    P = results["parameters"]
    return [str(n) for n in lengths_beyond_training(P["eval_lengths"], P["max_train_len"])]


def scale(results: dict) -> str:
    """'20 seeds x 4000 steps (profile book)' from a chapter's parameters."""
    P = results["parameters"]
    steps = [f"{P[k]} {k.removesuffix('_steps')}" for k in ("argmax_steps", "dictionary_steps") if k in P]
    steps = f"{P['steps']}" if "steps" in P else " / ".join(steps)
    return f"{P['n_seeds']} seeds x {steps} steps (profile {P['profile']})"


def long_scale(results: dict, task: str = "") -> str:
    """The scale of a chapter's longer training, like scale(): chapters 4-5's long_* parameters,
    or chapter 8's {task}_long_* ones."""
    P, prefix = results["parameters"], f"{task}_" if task else ""
    return f"{P[prefix + 'long_seeds']} seeds x {P[prefix + 'long_steps']} steps (profile {P['profile']})"


def paper_scale(metrics: dict) -> str:
    """The scale of chapters 4-5's paper-profile runs (their metrics["paper_scale"]), like scale()."""
    return f"{metrics['n_seeds']} seeds x {metrics['steps']} steps (profile paper, {metrics['device_type']})"


PAPER_SCALE_LABEL = ", at the paper's scale"
HEADLINE = "+LN is more accurate than the Baseline"


def _accuracy_claims(task, results, table) -> list:
    """Chapters 4-5's three comparisons, at the book's scale, at the longer training's and at
    the paper's scale (where each ran): each pair of runs with the chapter's paired p-values."""
    pairs = [(HEADLINE, "baseline", "layernorm"),
             ("with adaptive θ, +LN is more accurate than without LN", "adaptive_baseline", "adaptive_layernorm"),
             ("adaptive θ improves +LN further", "layernorm", "adaptive_layernorm")]
    scales = [("", results["metrics"], scale(results))]
    if "long" in results["metrics"]:
        steps = results["metrics"]["long"]["steps"]
        scales.append((f", at {steps:,} steps", results["metrics"]["long"], long_scale(results)))
    if "paper_scale" in results["metrics"]:
        m = results["metrics"]["paper_scale"]
        scales.append((PAPER_SCALE_LABEL, m, paper_scale(m)))
    return [Claim(f"{task}{label}: {text}", results, table,
                  compare(m["accuracy"][claimed], m["accuracy"][other], m["p_value"][pair_name((other, claimed))],
                          [n for n in beyond_training(results) if n in m["accuracy"][claimed]]), where)
            for label, m, where in scales for text, other, claimed in pairs]


def headline(rows: list) -> str:
    """The paper's headline (+LN more accurate than the Baseline) per task, at every scale a row
    tests it, from the rows' verdicts: a Markdown list, one item per task."""
    items = []
    for task in ("argmax", "dictionary"):
        found = [f"{c.evidence.verdict()} at {c.scale}" for c in rows
                 if c.claim.split(":")[0].split(",")[0] == task and c.claim.endswith(HEADLINE)]
        if found:
            items.append(f"- **{task}**: " + "; ".join(found) + ".")
    return "\n".join(items)


def _ablation_views(ablation: dict) -> list:
    """Chapter 8's comparisons per task and scale: [(task, label, metrics, scale)], the longer
    training's (where it ran) after the book scale's; metrics hold accuracy, p_value_vs_baseline,
    p_value_ln_vs_std and ln_minus_std of that task alone."""
    m = ablation["metrics"]
    keys = ("accuracy", "p_value_vs_baseline", "p_value_ln_vs_std", "ln_minus_std")
    views = [(task, "", {k: m[k][task] for k in keys}, scale(ablation)) for task in ("argmax", "dictionary")]
    return views + [(task, f", at {v['steps']:,} steps", v, long_scale(ablation, task))
                    for task, v in m.get("long", {}).items()]


def _ablation_claims(ablation: dict) -> list:
    """Tables 3 and 6: +std against the Baseline on both tasks, +LN against +std on argmax."""
    lengths, rows = beyond_training(ablation), []
    for task, label, m, where in _ablation_views(ablation):
        table = {"argmax": "Table 3", "dictionary": "Table 6"}[task]
        rows.append(Claim(f"{task}{label}: +std is more accurate than the Baseline", ablation, table,
                          compare(m["accuracy"]["standardize"], m["accuracy"]["baseline"],
                                  m["p_value_vs_baseline"]["standardize"], lengths), where))
        if task == "argmax":  # Table 6 claims no difference between +LN and +std: see equivalence()
            rows.append(Claim(f"argmax{label}: +LN is more accurate than +std", ablation, table,
                              compare(m["accuracy"]["layernorm"], m["accuracy"]["standardize"],
                                      m["p_value_ln_vs_std"], lengths), where))
    return rows


def claims(results_dir) -> list:
    """[Claim] for every claim of the paper that a chapter tests."""
    r = {c: load(results_dir, c) for c in ("04_argmax_retrieval", "05_dictionary_lookup", "06_distribution_shift",
                                           "07_dispersion", "08_ablations", "09_longer_training")}
    rows = []
    for task, chapter, table in (("argmax", "04_argmax_retrieval", "Table 1"),
                                 ("dictionary", "05_dictionary_lookup", "Table 2")):
        rows += _accuracy_claims(task, r[chapter], table)
    rows += _ablation_claims(r["08_ablations"])
    longer = r["09_longer_training"]
    for task, table in (("argmax", "Table 4"), ("dictionary", "Table 5")):
        m = longer["metrics"]
        rows.append(Claim(f"{task}, trained up to N = {longer['parameters']['max_train_len']}: +LN beats the Baseline",
                          longer, table, compare(m["accuracy"][task]["layernorm"], m["accuracy"][task]["baseline"],
                                                 m["p_value"][task], beyond_training(longer)), scale(longer)))
    return rows + _figure_claims(r)


def _figure_claims(r: dict) -> list:
    """Figures 3 and 4 (chapters 6 and 7, probing chapter 4's models), and Figure 3 against Table 1."""
    shift, shift_m = r["06_distribution_shift"], r["06_distribution_shift"]["metrics"]
    lengths = beyond_training(shift)
    drift = shift_m["global_mean_drift"]["baseline"]
    rows = [Claim("the Baseline's global mean drifts away from its value at the training length", shift, "Figure 3",
                  compare({n: abs(drift[n]) for n in lengths}, {n: 0.0 for n in lengths},
                          shift_m["p_value_mean_drift"]["baseline"], lengths), scale(shift)),
            Claim("+LN keeps more of the global variance of the readout's input", shift, "Figure 3",
                  compare(shift_m["relative_global_variance"]["layernorm"],
                          shift_m["relative_global_variance"]["baseline"],
                          shift_m["p_value_relative_global_variance"], lengths), scale(shift))]
    dispersion = r["07_dispersion"]
    d = dispersion["metrics"]
    rows.append(Claim("+LN makes the attention less dispersed (lower entropy)", dispersion, "Figure 4",
                      compare(d["entropy"]["layernorm"], d["entropy"]["baseline"],
                              d["p_value_entropy"][pair_name(("baseline", "layernorm"))], beyond_training(dispersion),
                              higher_is_better=False), scale(dispersion)))
    argmax = r["04_argmax_retrieval"]
    kept = [n for n in lengths if is_significant(shift_m["p_value_relative_global_variance"].get(n))
            and shift_m["relative_global_variance"]["layernorm"][n] > shift_m["relative_global_variance"]["baseline"][n]]
    if scale(argmax) == scale(shift):  # the same models: chapter 6 probes chapter 4's runs
        m = argmax["metrics"]
        rows.append(Claim("where +LN keeps more global variance, it is more accurate", argmax, "Figure 3, Table 1",
                          compare(m["accuracy"]["layernorm"], m["accuracy"]["baseline"],
                                  m["p_value"][pair_name(("baseline", "layernorm"))], kept), scale(argmax)))
    return rows


def equivalence(results_dir, task="dictionary") -> dict:
    """Table 6's claim that +LN and +std are about equal, at each scale chapter 8 ran:
    {scale: {N: paired difference +LN - +std (points) with its 95% interval and p}} beyond the
    training length."""
    ablation = load(results_dir, "08_ablations")
    return {where: {n: m["ln_minus_std"][n] for n in beyond_training(ablation)}
            for t, _, m, where in _ablation_views(ablation) if t == task}


def equivalence_text(differences: dict) -> str:
    """How close +LN and +std are: where the interval holds zero, and its widest reach."""
    holds_zero = [n for n, d in differences.items() if d["low"] is not None and d["low"] <= 0 <= d["high"]]
    reach = max(max(abs(d["low"]), abs(d["high"])) for d in differences.values() if d["low"] is not None)
    return (f"The 95% interval of +LN minus +std contains zero at {len(holds_zero)} of {len(differences)} lengths "
            f"beyond the training lengths; every interval lies within ±{reach:.1f} points. Differences larger "
            f"than that are ruled out at this scale; smaller ones are not.")


def slope_claim(results_dir) -> tuple:
    """Fixed components still shrink with LN: the +LN models' mean log-log slope of a
    component's std, its standard error over seeds, and whether it is 2 s.e. below 0."""
    m = load(results_dir, "06_distribution_shift")["metrics"]
    slope, sem = m["component_std_slope"]["layernorm"], m["component_std_slope_sem"]["layernorm"]
    return slope, sem, SUPPORTED if slope + 2 * sem < 0 else UNCLEAR


def sensitivity_table(results: dict) -> list:
    """Chapter 11 (its results.json) in one line per task and compared length: in how many of its
    configurations +LN is significantly ahead of the Baseline, significantly behind, or neither."""
    rows, lines = results["metrics"]["rows"], []
    for task in dict.fromkeys(r["task"] for r in rows):
        for n in results["parameters"]["compared_lengths"]:
            groups = sensitivity.sorted_by_sign(rows, task, n)
            lines.append({"task": task, "N": n, "configurations": sum(map(len, groups.values())),
                          "+LN significantly ahead": len(groups["ahead"]),
                          "+LN significantly behind": len(groups["behind"]),
                          "no significant difference": len(groups["cannot tell"])})
    return lines


def sensitivity_budgets(results: dict) -> str:
    """Chapter 11's rows counted by budget, per task: 'argmax: 14 of 10 seeds x 4,000 steps, 1 of
    20 seeds x 4,000 steps; dictionary: ... (profile book)' (a row may set its seeds or steps)."""
    rows, parts = results["metrics"]["rows"], []
    for task in dict.fromkeys(r["task"] for r in rows):
        budgets = Counter((r["n_seeds"], r["steps"]) for r in rows if r["task"] == task)
        parts.append(f"{task}: " + ", ".join(f"{count} of {seeds} seeds x {steps:,} steps"
                                             for (seeds, steps), count in budgets.items()))
    return "; ".join(parts) + f" (profile {results['parameters']['profile']})"


def compute_table(results_dir, chapters) -> list:
    """Per chapter: its profile, scale, the training time of the models it used (from the
    training records it cites), per device where they ran on more than one, and its own run
    time, for the summary's scale table."""
    rows = []
    for chapter in chapters:
        res = load(results_dir, chapter)
        runs = _distinct_runs(res["provenance"].get("sources", {}))
        minutes = Counter()
        for s in runs:
            minutes[s["device"]] += (s.get("wall_time_s") or 0) / 60
        rows.append({"chapter": chapter, "scale": scale(res), "training runs": len(runs),
                     "training time (min)": _per_device(minutes),
                     "page run time (min)": round((res["provenance"]["wall_time_s"] or 0) / 60, 1),
                     "device": sorted(minutes) or [res["provenance"]["device"]]})
    return rows


def _distinct_runs(sources: dict) -> list:
    """Each training record once: a chapter may cite one run under several names (chapter 11's
    ln_affine rows share the defaults' Baseline), and a record's provenance says when and where it
    was made, so equal provenance means one run."""
    return list({json.dumps(s, sort_keys=True): s for s in sources.values()}.values())


def _per_device(minutes: Counter):
    """A total in minutes, or one per device ('312.4 on cpu (...); 16.1 on NVIDIA H100 ...'):
    minutes of different machines are not added up."""
    if len(minutes) <= 1:
        return round(sum(minutes.values()), 1)
    return "; ".join(f"{m:.1f} on {device}" for device, m in sorted(minutes.items()))
