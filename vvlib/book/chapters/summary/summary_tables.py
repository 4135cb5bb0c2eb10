"""The summary page's tables and lines beside the claims: +LN against +std (Table 6), the slope of a fixed
component under +LN, chapter 11's rows counted by sign at the book's scale and the paper's, and what each
chapter's runs cost."""

import json
from collections import Counter

import pandas as pd

from ..c11_sensitivity import row_reports
from ....experiments.setups.paper_tasks import DICTIONARY
from ....experiments.setups.variants import NORMED
from ....compare import SUPPORTED, UNCLEAR, beyond_training as lengths_beyond_training
from ....experiments.reports.answers import scale_text
from ... import chapters as records
from .claims import ablation_views, beyond_training, load, scale


def equivalence(results_dir, task=DICTIONARY.name) -> dict:
    """Table 6's claim that +LN and +std are about equal, at each scale chapter 8 ran:
    {scale: {N: paired difference +LN - +std (points) with its 95% interval and p}} beyond the
    training length."""
    ablation = load(results_dir, records.ABLATIONS.name)
    return {where: {n: m["ln_minus_std"][n] for n in beyond_training(ablation)}
            for t, _, _, m, where, _, _ in ablation_views(ablation) if t == task and "ln_minus_std" in m}


def equivalence_text(differences: dict) -> str:
    """How close +LN and +std are: where the interval holds zero, and its widest reach."""
    holds_zero = [n for n, d in differences.items() if d["low"] is not None and d["low"] <= 0 <= d["high"]]
    reach = max(max(abs(d["low"]), abs(d["high"])) for d in differences.values() if d["low"] is not None)
    return (f"The 95% interval of +LN minus +std contains zero at {len(holds_zero)} of {len(differences)} lengths "
            f"beyond the training lengths; every interval lies within ±{reach:.1f} points. Differences larger "
            f"than that are ruled out at this scale; smaller ones are not.")


def table6_sentence(metrics: dict, lengths, in_distribution: int) -> str:
    """Table 6 reads "no significant difference" as "about equal"; the interval of +LN minus +std
    beyond training says how equal (chapter 8)."""
    differences = {str(n): metrics["ln_minus_std"][str(n)] for n in lengths_beyond_training(lengths, in_distribution)}
    return "**dictionary, +LN against +std (Table 6)**: " + equivalence_text(differences)


def slope_claim(results_dir) -> tuple:
    """Fixed components still shrink with LN: the +LN models' mean log-log slope of a component's std,
    its standard error over seeds, whether it is 2 s.e. below 0, and the scale that says so ('100 seeds x
    100,000 steps, GPU'): chapter 6's paper-scale probe where its results hold one, else its own runs'."""
    results = load(results_dir, records.DISTRIBUTION_SHIFT.name)
    m, P = results["metrics"], results["parameters"]
    big = m.get("paper_scale", {})
    if "component_std_slope" in big:  # the paper-scale probe, where committed
        m, scale = big, scale_text(big["n_seeds"], big["steps"], big["device_type"])
    else:
        scale = scale_text(P["n_seeds"], P["steps"], results["provenance"]["device"])
    slope, sem = m["component_std_slope"][NORMED], m["component_std_slope_sem"][NORMED]
    return slope, sem, SUPPORTED if slope + 2 * sem < 0 else UNCLEAR, scale


def sensitivity_table(results: dict) -> list:
    """Chapter 11 (its results.json) in one line per task and compared length: in how many of its
    configurations +LN is significantly ahead of the Baseline, significantly behind, or neither."""
    return _counted_by_sign(results["metrics"]["rows"], results["parameters"]["compared_lengths"])


def paper_scale_table(results: dict) -> list:
    """Chapter 11's rows at the paper's scale (its results.json's paper_scale, trained on a GPU) counted as
    sensitivity_table counts the book's, with each task's rows still pending; [] where none is committed."""
    rows = results["metrics"]["paper_scale"]
    pending = Counter(r["task"] for r in rows if r["difference"] is None)
    lines = _counted_by_sign([r for r in rows if r["difference"] is not None],
                             results["parameters"]["compared_lengths"])
    return [{**line, "pending in the GPU queue": pending[line["task"]]} for line in lines]


def _counted_by_sign(rows: list, lengths) -> list:
    lines = []
    for task in dict.fromkeys(r["task"] for r in rows):
        for n in lengths:
            groups = row_reports.sorted_by_sign(rows, task, n)
            lines.append({"task": task, "N": n, "configurations": sum(map(len, groups.values())),
                          "+LN significantly ahead": len(groups["ahead"]),
                          "+LN significantly behind": len(groups["behind"]),
                          "no significant difference": len(groups["cannot tell"])})
    return lines


def budget_table(results: dict, key: str = "rows") -> pd.DataFrame:
    """Chapter 11's rows (metrics[key]: the book's, or paper_scale) per task and budget (seeds, steps): how many
    configurations ran at it."""
    counts = Counter((r["task"], r["n_seeds"], f"{r['steps']:,}") for r in results["metrics"][key])
    return pd.DataFrame([(*k, n) for k, n in counts.items()], columns=["task", "seeds", "steps", "configurations"]
                        ).set_index(["task", "seeds", "steps"])


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
                     "device": "; ".join(sorted(minutes) or [res["provenance"]["device"]])})
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
