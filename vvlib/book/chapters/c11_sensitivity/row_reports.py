"""Chapter 11's rows as its page shows them: the row table, the distance to the paper's Baseline, the forest's
frame, the configurations by the sign of +LN minus Baseline, the closest row, and what the rows cost.  (What a row
is, and how it is trained and stored: experiments/setups/sensitivity.py.)"""

import pandas as pd

from ....compare import ALPHA, format_interval, format_p, is_significant, power_of_two
from ....experiments.setups import variants
from ....experiments.setups.sensitivity import BASE, PAIR, label, paper_gain
def row_table(records: list, task: str, at) -> pd.DataFrame:
    """Two index levels, the row of `task` then each N of `at`: its budget, both variants' accuracy and
    the paired difference (95% interval, p).  The lengths run down the rows, so the table keeps to the
    text column however many there are."""
    lines = []
    for r in (r for r in records if r["task"] == task):
        for n in map(str, at):
            d = r["difference"][n]
            lines.append({"configuration": r["row"], "N": power_of_two(int(n)),
                          "budget": f"{r['n_seeds']} x {r['steps']:,}",
                          **{variants.short_label(v): round(r["accuracy"][v][n], 1) for v in PAIR},
                          "+LN − Baseline [95%]": format_interval(d),
                          "p": format_p(d["p"])})
    return pd.DataFrame(lines).set_index(["configuration", "N"])


def distance_table(records: list, task: str) -> pd.DataFrame:
    """Every row of `task` with its Baseline's RMS distance to the paper's, closest first."""
    tried = pd.DataFrame([{"configuration": r["row"], "RMS distance to the paper's Baseline (points)":
                           round(r["distance_to_paper"], 1)} for r in records
                          if r["task"] == task and r["distance_to_paper"] is not None])
    return tried.sort_values(tried.columns[1]).set_index("configuration")


def forest_frame(records: list, task: str):
    """The rows of one task as plots.forest wants them: one line per (row, N)."""
    return pd.DataFrame([{"row": r["row"], "N": int(n), **d} for r in records if r["task"] == task
                         for n, d in r["difference"].items()])


def configuration(row: dict) -> dict:
    """A row less its number of seeds: a row run again with more seeds is the same configuration measured twice."""
    return {name: value for name, value in row.items() if name != "n_seeds"}


def most_seeded(records: list, task: str) -> list:
    """One record per configuration of `task`, in the rows' order: the one with the most seeds.
    A borderline row checked again with more seeds is thus counted once, at its better
    measurement; the tables still show both (more_seeds_table sets them side by side)."""
    best = {}
    for r in (r for r in records if r["task"] == task):
        key = frozenset(configuration(r["changes"]).items())  # the settings, in whatever order a row lists them
        if key not in best or r["n_seeds"] > best[key]["n_seeds"]:
            best[key] = r
    return list(best.values())


def sorted_by_sign(records: list, task: str, n: int) -> dict:
    """{"ahead": [...], "behind": [...], "cannot tell": [...]}: the configurations of `task` (each
    at its most seeds: most_seeded) where +LN is significantly ahead of the Baseline at N = n,
    significantly behind, or neither."""
    groups = {"ahead": [], "behind": [], "cannot tell": []}
    for r in most_seeded(records, task):
        d = r["difference"].get(str(n))
        if d is not None:
            groups[side_of(d)].append(_configuration_name(r))
    return groups


def _configuration_name(r: dict) -> str:
    """'hidden=64', or 'hidden=64 (20 seeds)' for a row that sets its seeds."""
    name = label(configuration(r["changes"]))
    return f"{name} ({r['n_seeds']} seeds)" if "n_seeds" in r["changes"] else name


def side_of(d: dict) -> str:
    """Where +LN stands in one paired difference: ahead, behind, or cannot tell (p >= ALPHA)."""
    return ("ahead" if d["diff"] > 0 else "behind") if is_significant(d["p"]) else "cannot tell"


def described(d: dict, aside: str = "") -> str:
    """'ahead (+1.5 points, 95% interval [+0.4, +3.4], p = 0.01)', or 'not significantly different (...)';
    `aside` is added inside the brackets."""
    side = side_of(d).replace("cannot tell", "not significantly different")
    return (f"{side} ({d['diff']:+.1f} points, 95% interval [{d['low']:+.1f}, {d['high']:+.1f}], "
            f"p = {format_p(d['p'])}{aside})")


def sign_table(groups_by_n: dict, paper: dict | None = None) -> pd.DataFrame:
    """A column per length n of {n: sorted_by_sign's groups}: how many configurations put +LN significantly ahead,
    behind or neither (those ahead or behind named where there are at most NAMED), and how many would pass by
    chance alone; with `paper` {n: (the paper's +LN minus Baseline, [rows whose 95% interval holds it])}, those."""
    table = {}
    for n, groups in groups_by_n.items():
        total = sum(map(len, groups.values()))
        row = {"configurations": total,
               **{f"+LN {side} (p < {ALPHA})": _listed(groups[side]) for side in ("ahead", "behind")},
               "neither": len(groups["cannot tell"]), "expected by chance": f"{ALPHA * total:.1f}"}
        if paper and paper.get(n) and paper[n][0] is not None:
            row |= {"the paper's +LN minus Baseline": f"{paper[n][0]:+.1f}",
                    "a 95% interval holding it": names(paper[n][1])}
        table[f"N = {int(n):,}"] = row
    return pd.DataFrame(table).fillna("")  # a column per length: the named rows need the width


NAMED = 4  # a side with more rows than this is read off the forest and the row table, not listed


def _listed(rows: list) -> str:
    return f"{len(rows)}: {names(rows)}" if 0 < len(rows) <= NAMED else f"{len(rows)}"


def unlearned_sentence(records: list, task: str) -> str:
    """The rows where neither variant learned the task at the shortest test length (under twice a guess); '' if none."""
    found = []
    for r in (r for r in records if r["task"] == task and "chance" in r):
        shortest = min(r["accuracy"][BASE], key=int)
        accuracy = [r["accuracy"][side][shortest] for side in PAIR]
        if max(accuracy) < 2 * r["chance"]:
            found.append(f"{r['row']} (N = {shortest}: {accuracy[0]:.1f}% and {accuracy[1]:.1f}%, a guess "
                         f"{r['chance']:.1f}%)")
    if not found:
        return ""
    return (f"Neither variant learned the task at the training lengths in {names(found)}: "
            f"{'that row compares' if len(found) == 1 else 'those rows compare'} two models that guess, and "
            "say nothing about +LN.")


def names(labels: list) -> str:
    return "; ".join(labels) if labels else "none"


def closest_to_paper(records: list, task: str) -> dict | None:
    """The configuration of `task` (at its most seeds) whose Baseline comes closest to the
    paper's (smallest RMS distance)."""
    candidates = [r for r in most_seeded(records, task) if r["distance_to_paper"] is not None]
    return min(candidates, key=lambda r: r["distance_to_paper"]) if candidates else None


def closest_sentence(best: dict, at, among: str = "") -> str:
    """What the configuration closest to the paper's Baseline says about +LN, beside the paper's gain
    (`among`: which rows it was chosen from, opening the sentence)."""
    parts = []
    for n in at:
        theirs = paper_gain(best["task"], n)
        aside = "; the paper: " + ("not reported" if theirs is None else f"{theirs:+.1f}")
        parts.append(f"At N = {n:,} +LN is {described(best['difference'][str(n)], aside)}.")  # a sentence each
    opening = f"{among}the configuration" if among else "The configuration"
    return (f"{opening} closest to the paper's Baseline, *{best['row']}*, lies "
            f"{best['distance_to_paper']:.1f} points from it (root mean square). " + " ".join(parts))


def more_seeds_table(records: list, task: str, at) -> pd.DataFrame:
    """Each row of `task` that repeats another with more seeds (a borderline result checked again) beside that
    row, at each N of `at`: +LN minus Baseline with its 95% interval, p and where +LN stands; empty if none."""
    rows, table = [r for r in records if r["task"] == task], {}
    for again in (r for r in rows if "n_seeds" in r["changes"]):
        first = next((r for r in rows if r["changes"] == configuration(again["changes"])), None)
        if first is None:
            continue
        for n, r in ((n, r) for n in at for r in (again, first)):  # per length, the repeat above its first run
            d = r["difference"][str(n)]
            table[(first["row"], f"{n:,}", r["n_seeds"])] = {
                "+LN minus Baseline [95%]": format_interval(d), "p": format_p(d["p"]),
                f"+LN (p < {ALPHA})": side_of(d).replace("cannot tell", "neither")}
    frame = pd.DataFrame.from_dict(table, orient="index")
    return frame.rename_axis(["configuration", "N", "seeds"]) if table else frame


def not_run(rows: list, planned: list) -> list:
    """Labels of the planned rows (e.g. the chapter's own list) that `rows` leaves out."""
    return [label(row) for row in planned if row not in rows]


def trained_runs(records: list, task: str | None = None) -> dict:
    """{run: (record, side)} for the rows of `task` (or all), each run once (the ln_affine row
    shares the defaults' Baseline)."""
    return {r["runs"][v]: (r, v) for r in records if task in (None, r["task"]) for v in r["runs"]}


def hours_at(records: list, task: str | None = None, steps: int | None = None) -> float:
    """Hours of training of the rows' runs (of `task`, or all) at their own steps, or at `steps`
    each: each run's recorded time per step it timed (a resumed run timed only the steps after
    its checkpoint), times the steps (a step of a row costs the same however many there are)."""
    return sum(r["training_s"][v] / r["timed_steps"][v] * (steps or r["steps"])
               for r, v in trained_runs(records, task).values()) / 3600


def devices(records: list, task: str | None = None) -> str:
    """The devices the rows (of `task`, or all) were trained on, as their records name them ("1 threads" in older)."""
    named = {d.replace(" 1 threads)", " 1 thread)") for r in records if task in (None, r["task"]) for d in r["trained_on"]}
    return ", ".join(sorted(named))
