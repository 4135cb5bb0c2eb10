"""python -m vvlib paper --for-minutes M --pack DIR: the next units of the paper plan, in the
queue's order, for as long as a lent GPU command may run.

A session holds a lent GPU for about a quarter of an hour, and one command may run 10 minutes:
after the GPU check, one command of this spends the rest.  Each unit not yet stored runs in turn
while its estimate fits in what is left of M minutes; the first that does not fit ends the command
(a later, smaller unit never jumps the queue).  The speeds are measured again before each unit,
from the store the last one wrote, so the first counter-stream unit corrects the estimates of the
next.  After each unit its small result files (records and tables, never weights or checkpoints)
are copied to DIR as the store lays them out, with queue.json saying what ran, estimated and
measured: a command stopped later still brings back every unit it finished.
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


def run_queue(names, overrides: dict, minutes: float, dest: Path | None = None, profile: str = PROFILE,
              clock=time.monotonic) -> list:
    """Run the plan's units in order while each one's estimate fits in what is left of `minutes`;
    [{unit, label, estimated and measured minutes}] of those that ran."""
    started, ran = clock(), []
    jobs = planned_jobs(names, overrides, profile)
    kinds = {job.kind for job in jobs}
    for k, unit in enumerate(units.units(jobs), 1):
        if unit.stored():
            continue
        device, rates, _ = unit_rates(overrides, None, kinds)
        seconds, untimed = unit.estimate_s(rates)
        left = minutes * 60 - (clock() - started)
        if seconds > left:
            print(f"unit {k} needs about {seconds / 60:.1f} min on {device}, {left / 60:.1f} left: stopping",
                  flush=True)
            break
        print(f"unit {k}: {unit.label()} (about {seconds / 60:.1f} min{'+' if untimed else ''})", flush=True)
        unit_started = clock()
        unit.run()
        ran.append({"unit": k, "label": unit.label(), "estimated_min": round(seconds / 60, 2), "untimed": untimed,
                    "minutes": round((clock() - unit_started) / 60, 2)})
        if dest is not None:
            pack(unit, Path(dest))
            store.write_json(Path(dest) / "queue.json", {"provenance": store.provenance(
                device, clock() - started), "units": ran})
        print(f"unit {k} done in {ran[-1]['minutes']:.1f} min", flush=True)
    else:
        print("every unit of the plan is stored", flush=True)
    return ran
