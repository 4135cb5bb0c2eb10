"""python -m vvlib paper --for-minutes M --pack DIR: the next units of the paper plan, in the
queue's order, for as long as a lent GPU command may run.

A session holds a lent GPU for about a quarter of an hour, and one command may run 10 minutes:
after the GPU check, one command of this spends the rest.  Each unit not yet stored runs in the
queue's order if its estimate fits in what is left of M minutes; one that does not fit is passed over
for this command only, and the next that fits runs in its place: it uses time no earlier unit could
have used, and the next command starts again from the first unit not stored.  The speeds are measured
again after each unit, from the store it wrote, so the first counter-stream unit corrects the
estimates of the next.  After each unit its small result files (records and tables, never weights or
checkpoints) are copied to DIR as the store lays them out, with queue.json saying what ran, estimated
and measured, and what was passed over: a command stopped later still brings back every unit it finished.
"""

import shutil
import time
from pathlib import Path

from ..experiments.paper_scale import units
from ..experiments.storage import store
from .paper_run import PROFILE, planned_jobs, unit_rates


def pack(unit: units.Unit, dest: Path) -> list:
    """Copy the unit's result files to dest/<store folder>/<file>; their new paths."""
    copied = []
    for path in unit.result_files():
        target = dest / path.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        copied.append(target)
    return copied


def write_summary(dest, device, seconds: float, ran: list, passed: list):
    """dest/queue.json: the units that ran (estimated and measured minutes) and those passed over."""
    store.write_json(Path(dest) / "queue.json", {"provenance": store.provenance(device, seconds), "units": ran,
                                                 "passed": passed})


def run_queue(names, overrides: dict, minutes: float, dest: Path | None = None, profile: str = PROFILE,
              clock=time.monotonic) -> list:
    """Run the plan's units in order, each whose estimate fits in what is left of `minutes` (one that does
    not is passed over); [{unit, label, estimated and measured minutes}] of those that ran."""
    started, ran, passed = clock(), [], []
    jobs = planned_jobs(names, overrides, profile)
    kinds, seeds = {job.kind for job in jobs}, units.run_seeds(jobs)
    device, rates, _ = unit_rates(overrides, None, kinds, seeds)
    for k, unit in enumerate(units.units(jobs), 1):
        if unit.stored():
            continue
        seconds, untimed = unit.estimate_s(rates)
        left = minutes * 60 - (clock() - started)
        if seconds > left:
            passed.append(k)
            continue
        print(f"unit {k}: {unit.label()} (about {seconds / 60:.1f} min{'+' if untimed else ''})", flush=True)
        unit_started = clock()
        unit.run()
        ran.append({"unit": k, "label": unit.label(), "estimated_min": round(seconds / 60, 2), "untimed": untimed,
                    "minutes": round((clock() - unit_started) / 60, 2)})
        if dest is not None:
            pack(unit, Path(dest))
            write_summary(dest, device, clock() - started, ran, passed)
        print(f"unit {k} done in {ran[-1]['minutes']:.1f} min", flush=True)
        device, rates, _ = unit_rates(overrides, None, kinds, seeds)  # its records time the next units
    if dest is not None:
        write_summary(dest, device, clock() - started, ran, passed)
    if passed:
        print(f"{len(passed)} units passed over for lack of time (queue.json lists them); the next command starts "
              f"with unit {passed[0]}", flush=True)
    else:
        print("every unit of the plan is stored", flush=True)
    return ran
