"""What of the paper's scale is still to run: the GPU queue's units not yet stored, per chapter, with the
minutes they are estimated at on a GPU, read from the store and the committed speed records (never typed)."""

from dataclasses import dataclass
from pathlib import Path

from .paper_run import PROFILE, paper_chapters, planned_jobs, queue_units, unit_rates


@dataclass(frozen=True)
class Pending:
    chapters: str  # the chapters a unit computes for, the first one's first ("11_sensitivity, 10_beyond")
    units: list    # the queue's numbers of its units not yet stored (1 is the first a lent GPU runs)
    runs: int      # training runs among them
    minutes: float  # estimated GPU minutes, at the speeds measured on a GPU


def open_units(names=None, overrides=None, profile: str = PROFILE, device: str = "cuda") -> list:
    """(queue number, unit) of the GPU queue's units not yet stored (names, overrides and profile as planned_jobs
    takes them: the tests' tiny plans)."""
    cut = queue_units(planned_jobs(paper_chapters(names), overrides or {}, profile, device))
    return [(k, unit) for k, unit in enumerate(cut, 1) if not unit.stored()]


def pending(device: str = "cuda") -> list[Pending]:
    """The units not yet stored, grouped by the chapters they serve, in the queue's order."""
    _, rates, _ = unit_rates({}, device)
    groups: dict[str, Pending] = {}
    for k, unit in open_units(device=device):
        key = ", ".join(unit.chapters())
        seconds, _ = unit.estimate_s(rates)
        runs = sum(1 for job in unit.jobs if job.steps and not job.path.exists())
        was = groups.get(key, Pending(key, [], 0, 0.0))
        groups[key] = Pending(key, was.units + [k], was.runs + runs, was.minutes + seconds / 60)
    return list(groups.values())


def units_computing(paths, names=None, overrides=None, profile: str = PROFILE, device: str = "cuda") -> list[int]:
    """The queue's numbers (python -m vvlib paper --plan) of the units not yet stored (open_units) that compute any
    of the store entries `paths`."""
    wanted = {Path(p).resolve() for p in paths}
    return [k for k, unit in open_units(names, overrides, profile, device)
            if wanted & {job.path.resolve() for job in unit.jobs}]


def note(what: str, paths, **plan) -> str:
    """A page's line for a result still to come from the GPU queue, naming the units that compute its store entries
    `paths` (plan: units_computing's names, overrides, profile and device)."""
    left = units_computing(paths, **plan)
    where = f"GPU queue unit{'s' if len(left) > 1 else ''} {spans(left)}" if left else "no unit of the GPU queue"
    return f"*{what} is pending: {where} (`python -m vvlib paper --plan --speeds-of cuda`).*"


def spans(numbers: list[int]) -> str:
    """[15, 16, 17, 20] -> '15-17, 20'."""
    parts, start = [], None
    for i, n in enumerate(numbers):
        start = n if start is None else start
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            parts.append(str(n) if n == start else f"{start}-{n}")
            start = None
    return ", ".join(parts)


def markdown(rows: list[Pending]) -> str:
    """The scale page's table of what is pending, and its total."""
    if not rows:
        return "Nothing: every unit of the paper's scale is stored in `results/paper/`."
    lines = ["| chapters | queue units | training runs | estimated GPU minutes |", "|---|---|---|---|"]
    lines += [f"| {r.chapters.replace('_', ' ')} | {spans(r.units)} | {r.runs} | {r.minutes:.0f} |" for r in rows]
    return "\n".join(lines) + "\n\n" + sentence(rows)


def sentence(rows: list[Pending]) -> str:
    """One line for the introduction: how much of the paper's scale is still to run, and for which chapters."""
    if not rows:
        return "Every run of the paper's scale is committed."
    chapters = sorted({name.split("_")[0] for r in rows for name in r.chapters.split(", ")})
    return (f"Still to run at the paper's scale: {sum(len(r.units) for r in rows)} GPU units for chapters "
            f"{', '.join(chapters)}, about {sum(r.minutes for r in rows):.0f} GPU minutes "
            f"(`python -m vvlib paper --plan --speeds-of cuda`).")
