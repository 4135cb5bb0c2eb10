"""python -m vvlib paper: the chapters with a `paper` profile run in turn into its store (results/paper unless
-p store_dir says), resumably (stored entries are loaded, training resumes from its checkpoint), with one
progress bar drawn from the store (plan.py); and the plan's units, listed (--plan) or one run (--unit K)."""

import contextlib
import threading
from pathlib import Path

import torch
from tqdm import tqdm

from ... import distributed, philox, rng
from . import plan, units
from ...experiments.setups.params import ParameterError, Params
from ...experiments.storage.store import REPO_ROOT
from ..runner import checked_parameters, resolved, run_chapter
from ..chapters import CHAPTERS
from ...experiments.records.scales import BOOK_STORE, PAPER_SCALE_STORE
from ...experiments.setups.paper_tasks import ARGMAX, DICTIONARY

PROFILE = "paper"
# The order the plan lists the chapters in (a run shared by several is planned under the first).
QUEUE = ("05", "11", "04", "06", "07", "08", "10", "09")
# The order a lent GPU works through the units (--unit K numbers them so): the book's open questions first.  A unit
# takes the place of the first (chapter, task) its jobs match ("": any task); the rest follow in the plan's order.
QUEUE_FIRST = (("05", ""), ("09", DICTIONARY.name), ("07", ""), ("09", ARGMAX.name), ("11", ""), ("10", ""))
CHECKS = REPO_ROOT / "bench"  # the GPU checks' committed JSON (bench.gpu_check): speeds of runs no unit has timed yet


def paper_chapters(names=None) -> list[str]:
    """The chapters with a paper profile, in QUEUE's order; `names` picks some of them (e.g. ['04', '05'])."""
    queued = lambda name: QUEUE.index(name[:2]) if name[:2] in QUEUE else len(QUEUE)
    available = sorted((name for name, chapter in CHAPTERS.items() if PROFILE in chapter.profiles), key=queued)
    if not names:
        return available
    chosen = []
    for given in names:
        matches = [name for name in available if name == given or name.startswith(f"{given}_")]
        if len(matches) != 1:
            raise ParameterError(f"chapters: {given!r} is not a chapter with a paper profile; "
                                 f"expected some of {', '.join(available)} (or their numbers)")
        chosen.append(matches[0])
    return [name for name in available if name in chosen]


def planned_jobs(names, overrides: dict, profile: str = PROFILE, device: str | None = None) -> list[plan.Job]:
    """Every store entry the chapters compute at `profile`, each once, on the device in use or on
    `device` (cpu or cuda: a plan of another kind of device's entries, which nothing here runs);
    checks every chapter's parameters first, so a bad value stops everything before anything runs."""
    given = {name: checked_parameters(name, profile, overrides) for name in names}  # *_dir made absolute
    jobs = []
    for name in names:
        P = resolved(name, profile, {k: v for k, v in given[name].items() if k != "profile"})
        # the chapters run in the repository root, so a relative store_dir (the default) is read from there
        jobs += plan.chapter_jobs(name, Params({**P, "store_dir": str(REPO_ROOT / P.store_dir)}),
                                  torch.device(device) if device else None)
    return plan.unique(jobs)


def queue_rank(unit: units.Unit) -> int:
    """Where QUEUE_FIRST puts a unit: the first (chapter, task) any of its jobs matches, else after them all."""
    return min((i for i, (chapter, task) in enumerate(QUEUE_FIRST) for job in unit.jobs
                if job.chapter.startswith(chapter) and job.kind.startswith(task)), default=len(QUEUE_FIRST))


def queue_units(jobs: list[plan.Job]) -> list[units.Unit]:
    """The plan's units in the order a lent GPU runs them (QUEUE_FIRST); unit K is the K-th."""
    return sorted(units.units(jobs), key=queue_rank)


def describe(names, jobs: list[plan.Job]) -> str:
    """A table: per chapter, the store entries it computes first (a run another chapter
    computed before is counted there), how many are stored, and what is left to do."""
    lines = [f"{'chapter':<24}{'entries':>8}{'stored':>8}{'model-steps left':>18}{'items to evaluate':>19}"]
    for chapter in [*names, "total"]:
        mine = [job for job in jobs if chapter in (job.chapter, "total")]
        left = [job for job in mine if not job.path.exists()]
        steps = sum(job.units - job.done_units() for job in left if job.steps)
        items = sum(job.units - job.done_units() for job in left if not job.steps)
        lines.append(f"{chapter:<24}{len(mine):>8}{len(mine) - len(left):>8}{steps:>18,.0f}{items:>19,.0f}")
    return "\n".join(lines) + ("\n(a chapter with no entries of its own reuses earlier chapters' runs; "
                               "items to evaluate include the probes of chapters 6, 7 and 10)")


def unit_rates(overrides: dict, device: str | None = None) -> tuple[str, dict, list]:
    """(device type, {kind: units per second}, [kinds estimated]): measured on that kind of device (default: the
    one in use) in the committed stores and the chosen one (-p store_dir, else results/paper); a kind of training
    they have not timed on a GPU, by the committed GPU checks (units.check_rates); else by the other device's
    ratio (units.with_scaled_rates)."""
    device = device or rng.resolve_device(overrides.get("device", "auto")).type
    # a store given relative to the caller's folder is that folder's, as for the chapters (checked_parameters)
    chosen = Path(overrides["store_dir"]).absolute() if "store_dir" in overrides else REPO_ROOT / PAPER_SCALE_STORE
    named = (REPO_ROOT / PAPER_SCALE_STORE, REPO_ROOT / BOOK_STORE, chosen)
    stores = list(dict.fromkeys(path.resolve() for path in named))
    measured = units.measured_rates(stores, device)
    # the checks' real-loop records time a unit's runs (step.json times the step alone)
    checks = [path for name in ("loop", "curriculum") for path in CHECKS.glob(f"gpu-check-*-{name}.json")]
    checked = units.check_rates(sorted(checks) if device == "cuda" else [], philox.implementation())
    from_check = [kind for kind in checked if kind not in measured]
    elsewhere = units.measured_rates(stores, "cpu" if device == "cuda" else "cuda")
    rates, scaled = units.with_scaled_rates({**checked, **measured}, elsewhere)
    return device, rates, from_check + scaled


def describe_units(cut: list[units.Unit], rates: dict, device: str, budget_s: float = units.UNIT_BUDGET_S,
                   estimated: tuple = ()) -> str:
    """A table of the units: their chapters, runs and probes, and the minutes left at the speeds measured on this
    kind of device (~: some of its kinds `estimated`), against the budget of one GPU command."""
    run_one = "run one with --unit K" if device == "cuda" else "which --unit K enforces on a GPU only"
    lines = [f"units at the speeds measured on {device} (fits: within a GPU command's {budget_s / 60:.0f} minutes, "
             f"{run_one}; ~: estimated from the GPU check's short runs or the other device's ratios):",
             f"{'unit':>4}  {'minutes left':>14}  {'fits':<5} chapters: what"]
    for k, unit in enumerate(cut, 1):
        seconds, untimed = unit.estimate_s(rates)
        guessed = any(job.kind in estimated for job in unit.jobs)
        minutes = ("~" if guessed else "") + f"{seconds / 60:.1f}" + ("+" if untimed else "")
        fits = "no" if seconds > budget_s else "?" if untimed else "yes"
        lines.append(f"{k:>4}  {minutes:>14}  {fits:<5} {', '.join(unit.chapters())}: {unit.label()}"
                     + (f" (not yet timed: {', '.join(untimed)})" if untimed else ""))
    return "\n".join(lines)


def chosen_unit(cut: list[units.Unit], k: int, rates: dict, device: str, budget_s: float = units.UNIT_BUDGET_S):
    """Unit k (from 1), refused before anything runs when k is out of range or, on a GPU, its measured
    estimate exceeds the budget of one command.  The budget is the lent GPU's command limit: a CPU has
    none, and a long unit there only takes longer (it checkpoints and resumes like any run)."""
    if not 1 <= k <= len(cut):
        raise ParameterError(f"unit: expected a number from 1 to {len(cut)} (python -m vvlib paper --plan lists them), "
                             f"got {k}")
    seconds, _ = cut[k - 1].estimate_s(rates)
    if device == "cuda" and seconds > budget_s:
        raise ParameterError(f"unit: unit {k} needs about {seconds / 60:.1f} minutes on {device} at the measured "
                             f"speeds, more than the {budget_s / 60:.0f} a command may take; it fits once the step "
                             f"is faster or its runs are split by seeds")
    return cut[k - 1]


def eta_text(seconds: float, untimed: list) -> str:
    """'ETA 0:41:10', or with a '+' and the kinds still untimed when some have not run yet."""
    seconds = round(seconds)
    text = f"ETA {seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    return f"{text}+ (not yet timed: {', '.join(untimed)})" if untimed else text


@contextlib.contextmanager
def progress_bar(jobs: list[plan.Job], rates: dict, every: float = 5.0):
    """A bar of the training model-steps the store shows done, with the share evaluated beside it and an ETA at the
    units' `rates`, redrawn by a thread every `every` seconds; yields the bar (its description: the chapter)."""
    training = list(dict.fromkeys(job.kind for job in jobs if job.steps))
    bar = tqdm(total=sum(job.units for job in jobs if job.steps), unit=" model-steps", unit_scale=True,
               bar_format="{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt}{unit} [{elapsed}] {postfix}")
    stop = threading.Event()

    def refresh():
        done, total = plan.progress(jobs)
        evaluated = [k for k in total if k not in training]
        share = sum(done[k] for k in evaluated) / max(sum(total[k] for k in evaluated), 1.0)
        eta = eta_text(*units.seconds_for({kind: total[kind] - done[kind] for kind in total}, rates))
        bar.n = sum(done[k] for k in training)
        bar.set_postfix_str(f"evaluated {share:.0%} · {eta}", refresh=False)

    def loop():
        while not stop.wait(every):
            refresh()
            bar.refresh()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield bar
    finally:
        stop.set()
        thread.join()
        refresh()
        bar.close()  # draws the last state


def run_paper(names=None, parameters: dict | None = None, output_root=None, dry_run: bool = False,
              every: float = 5.0, profile: str = PROFILE, unit: int | None = None,
              speeds_of: str | None = None) -> list[plan.Job]:
    """Run the chosen chapters (all with a paper profile if `names` is None) at `profile` with `parameters` set in
    each, and return the plan; dry_run: print the plan and its units and stop; unit: compute only that unit's store
    entries; speeds_of: estimate the units at the speeds of this kind of device (cpu or cuda)."""
    names = paper_chapters(names)
    overrides = dict(parameters or {})
    # a plan at another device's speeds lists that device's entries: a GPU's runs are stored under its own keys
    jobs = planned_jobs(names, overrides, profile, speeds_of if dry_run and unit is None else None)
    shown = distributed.env_rank() == 0  # under torchrun, rank 0 alone prints
    device, rates, estimated = unit_rates(overrides, speeds_of if unit is None else None)
    if unit is not None:
        chosen = chosen_unit(queue_units(jobs), unit, rates, device)
        if shown:
            print(f"unit {unit}: {chosen.label()}")
        chosen.run()
        return chosen.jobs
    if shown:
        print(describe(names, jobs))
        print(describe_units(queue_units(jobs), rates, device, estimated=estimated))
        if profile == PROFILE and rng.resolve_device(overrides.get("device", "auto")).type == "cpu":
            print("no GPU in use: at the paper's scale this trains for hours to days on a CPU (the ETA is at the "
                  "committed records' speeds); Ctrl-C stops it and the same command resumes")
    if dry_run:
        return jobs
    output_root = Path(output_root or REPO_ROOT / "_output" / profile)
    try:
        with progress_bar(jobs, rates, every) if shown else contextlib.nullcontext() as bar:
            for name in names:
                if bar is not None:
                    bar.set_description_str(name, refresh=False)
                run_chapter(name, profile, overrides, output_dir=output_root / name, progress=False)
    except KeyboardInterrupt:
        print("\ninterrupted: the same command resumes (stored entries are kept; training resumes from its "
              "last checkpoint)")
        raise
    if shown:
        print(f"done: executed notebooks and results.json in {output_root}/<chapter>/")
    return jobs
