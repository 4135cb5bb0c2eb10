"""Chapter 11's rows at the paper's scale (sensitivity.paper_scale_records), as the pages show them: a table, a
table of signs per length, the row closest to the paper's Baseline, each row's verdict over every length beyond
training (a table), and one line for another chapter's answer."""

import pandas as pd

from ....compare import ALPHA, compare, format_interval, format_p, power_of_two
from ....experiments.setups.params import Params
from ....experiments.setups.sensitivity import PENDING, budget, paper_gain, paper_scale_records
from .row_reports import closest_sentence, closest_to_paper, side_of, sign_table as counted_by_sign


def card(device: str) -> str:
    """A device as a table names it: 'NVIDIA H100 80GB HBM3' -> 'H100'; anything else as it is."""
    parts = device.split()
    return parts[1] if len(parts) > 1 and parts[0] == "NVIDIA" else device


def table(records: list, at) -> pd.DataFrame:
    """sensitivity.paper_scale_records as a table: per row its budget, the cards its two variants trained on (two
    where they differ: the same seeds, data and initial weights on two cards), and +LN minus Baseline at each N
    of `at` (the paired difference, its 95% interval and p), or PENDING where the row is not committed."""
    lines = []
    for r in records:
        line = {"task": r["task"], "configuration": r["row"], "seeds x steps": f"{r['n_seeds']} x {r['steps']:,}",
                "trained on": " and ".join(card(d) for d in r.get("trained_on", [])) or "—"}
        for n in at:
            d = None if r["difference"] is None else r["difference"][str(n)]
            shown = PENDING if d is None else f"{format_interval(d)}, p = {format_p(d['p'])}"
            line[f"+LN − Baseline, N = {n:,}"] = shown
        lines.append(line)
    return pd.DataFrame(lines).set_index(["task", "configuration"])


def status(P_paper: Params, task: str, n: int) -> str:
    """A few lines for another chapter's answer: at the paper's scale, what chapter 11's rows of `task`
    (P_paper: its paper profile, reading P_paper.store_dir) say of +LN minus Baseline at length n, row by
    row where committed, and which rows are still pending.  Nothing is trained or evaluated."""
    rows = [r for r in paper_scale_records(P_paper, [n]) if r["task"] == task]
    if not rows:
        return ""
    committed = [f"- {r['row']} {format_interval(r['difference'][str(n)])}" for r in rows
                 if r["difference"] is not None]
    pending = [r["row"] for r in rows if r["difference"] is None]
    said = [f"Chapter 11's rows ({budget(rows[0])}), +LN minus Baseline at N = {n:,}, points [95%]:\n\n"
            + "\n".join(committed)] if committed else []
    said += [f"Pending in the GPU queue: {'; '.join(pending)}."] if pending else []
    return "Which of the settings the paper leaves unstated decide the sign at its scale? " + "\n\n".join(said)


def sign_table(records: list, task: str, at) -> pd.DataFrame:
    """sensitivity.sign_table of `task`'s committed rows at the paper's scale (records:
    sensitivity.paper_scale_records) at each N of `at`, with the paper's +LN minus Baseline and the rows whose 95%
    interval holds it; an empty frame where no row of `task` is committed."""
    committed = [r for r in records if r["task"] == task and r["difference"] is not None]
    groups, paper = {}, {}
    for n in at:
        groups[n], gain = {"ahead": [], "behind": [], "cannot tell": []}, paper_gain(task, n)
        for r in committed:
            d = r["difference"][str(n)]
            groups[n][side_of(d)].append(f"{r['row']}: {d['diff']:+.1f}")
        paper[n] = (gain, [r["row"] for r in committed if gain is not None
                           and r["difference"][str(n)]["low"] <= gain <= r["difference"][str(n)]["high"]])
    return counted_by_sign(groups, paper) if committed else pd.DataFrame()


def pending(records: list, task: str) -> str:
    """'3 more rows of dictionary are pending in the GPU queue.', or '' where none is."""
    waiting = sum(r["task"] == task and r["difference"] is None for r in records)
    if not waiting:
        return ""
    return f"{waiting} more {'row of' if waiting == 1 else 'rows of'} {task} {'is' if waiting == 1 else 'are'} " \
           "pending in the GPU queue."


def closest(records: list, task: str, at) -> str:
    """closest_sentence among `task`'s committed paper-scale rows (records: sensitivity.paper_scale_records): the one
    whose Baseline comes closest to the paper's, and +LN minus Baseline there; '' where none is committed."""
    best = closest_to_paper([r for r in records if r["difference"] is not None], task)
    return "" if best is None else closest_sentence(best, at, among="Of the rows at the paper's scale, ")


def lengths_table(records: list, task: str, beyond) -> pd.DataFrame:
    """Each committed row of `task` (records: sensitivity.paper_scale_records at the lengths `beyond`, those past
    training) by the book's verdict rule over all of them (compare.Evidence): at how many +LN is significantly
    ahead and behind, and the verdict; an empty frame where none is committed.  A row judged at two lengths alone
    can read otherwise at the others."""
    rows = {}
    for r in (r for r in records if r["task"] == task and r["difference"] is not None):
        found = [n for n in map(str, beyond) if n in r["difference"]]
        gains = {n: r["difference"][n]["diff"] for n in found}
        evidence = compare(gains, dict.fromkeys(found, 0.0), {n: r["difference"][n]["p"] for n in found}, found)
        rows[r["row"]] = {f"+LN ahead (p < {ALPHA})": evidence.ahead_significant,
                          f"+LN behind (p < {ALPHA})": evidence.behind_significant,
                          "lengths": evidence.lengths, "verdict": evidence.verdict()}
    span = f"{power_of_two(min(map(int, beyond)))} to {power_of_two(max(map(int, beyond)))}"
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(f"{task}, every length from {span}")
