"""python -m vvlib paper --for-minutes M --pack DIR: the next units of the paper plan, in the
queue's order, for as long as a lent GPU command may run.

A session holds a lent GPU for about a quarter of an hour, and one command may run 10 minutes:
after the GPU check, one command of this spends the rest, and a second one what the session has left.
Units a command began and could not finish (a run's checkpoint, or weights a job still reads, on this
machine) come first; then each unit not yet stored, in the queue's order.  A unit runs if its estimate
fits in what is left of M minutes, or, where the session's next command on the same machine will have
N more (--then-minutes N), in what is left of both: training stops at the end of the M minutes with a
checkpoint (train.stopping_at) and the next command resumes it first.  Where no command follows, a
unit starts only if its estimate times the largest overrun the committed queue records show
(units.overrun) fits, since what it leaves unfinished is lost with the machine.  One that does not fit
is passed over for this command only, and the next that fits runs in its place: it uses time no
earlier unit could have used.  The speeds are measured again after each unit, from the store it wrote,
so the first counter-stream unit corrects the estimates of the next.  After each unit its small result
files (records and tables, never weights or checkpoints) are copied to DIR as the store lays them out,
with queue.json saying what ran, estimated and measured, what was paused and what was passed over: a
command stopped later still brings back every unit it finished.
"""

import shutil
import time
from pathlib import Path

from .. import train
from ..experiments.paper_scale import units
from ..experiments.storage import store
from .paper_run import CHECKS, PROFILE, planned_jobs, unit_rates

RESUME_S = 30.0  # our allowance for the next command to take a paused unit up again (start, graphs, loading)


def pack(unit: units.Unit, dest: Path) -> list:
    """Copy the unit's result files to dest/<store folder>/<file>; their new paths."""
    copied = []
    for path in unit.result_files():
        target = dest / path.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        copied.append(target)
    return copied


def write_summary(dest, device, seconds: float, ran: list, passed: list, overrun: float):
    """dest/queue.json: the units that ran (estimated and measured minutes; paused or resumed where so), those
    passed over, and the overrun a unit's estimate was multiplied by where nothing would resume it."""
    store.write_json(Path(dest) / "queue.json", {"provenance": store.provenance(device, seconds), "units": ran,
                                                 "passed": passed, "overrun": round(overrun, 3)})


def in_order(cut: list) -> list:
    """(unit number, unit) of those not stored: the ones this machine began first, then the queue's order."""
    numbered = [(k, unit) for k, unit in enumerate(cut, 1) if not unit.stored()]
    return sorted(numbered, key=lambda pair: not pair[1].begun())


def run_queue(names, overrides: dict, minutes: float, dest: Path | None = None, profile: str = PROFILE,
              clock=time.monotonic, then_minutes: float = 0.0, overrun: float | None = None) -> list:
    """Run the plan's units in order (module docstring), each whose estimate fits in what is left of `minutes`
    and `then_minutes` (the next command's, on this machine), or where then_minutes is 0, whose estimate times
    `overrun` (default: units.overrun of the committed queue records) fits in what is left; a unit still
    training at the end of `minutes` is paused there and ends the command.  [{unit, label, estimated and
    measured minutes, paused or resumed where so}] of those that ran."""
    started, ran, passed = clock(), [], []
    deadline = started + minutes * 60
    overrun = units.overrun(sorted(CHECKS.glob("gpu-queue-*.json"))) if overrun is None else overrun
    jobs = planned_jobs(names, overrides, profile)
    kinds, seeds = {job.kind for job in jobs}, units.run_seeds(jobs)
    device, rates, _ = unit_rates(overrides, None, kinds, seeds)
    for k, unit in in_order(units.units(jobs)):
        seconds, untimed = unit.estimate_s(rates)
        left = deadline - clock()
        room = max(left, left + then_minutes * 60 - RESUME_S) if then_minutes else left / overrun
        if seconds > room:
            passed.append(k)
            continue
        resumed = unit.begun()
        print(f"unit {k}: {unit.label()} (about {seconds / 60:.1f} min{'+' if untimed else ''}"
              f"{', resumed' if resumed else ''})", flush=True)
        unit_started = clock()
        try:
            with train.stopping_at(time.monotonic() + deadline - clock()):  # the trainer keeps real time
                unit.run()
        except train.TimeUp as stop:
            ran.append(_ran(k, unit, seconds, untimed, clock() - unit_started, resumed, paused=True))
            print(f"unit {k} paused at the end of the command's minutes ({stop}); the next command resumes it",
                  flush=True)
            break
        ran.append(_ran(k, unit, seconds, untimed, clock() - unit_started, resumed))
        if dest is not None:
            pack(unit, Path(dest))
            write_summary(dest, device, clock() - started, ran, passed, overrun)
        print(f"unit {k} done in {ran[-1]['minutes']:.1f} min", flush=True)
        device, rates, _ = unit_rates(overrides, None, kinds, seeds)  # its records time the next units
    if dest is not None:
        write_summary(dest, device, clock() - started, ran, passed, overrun)
    paused = [r["unit"] for r in ran if r.get("paused")]
    if passed:
        print(f"{len(passed)} units passed over for lack of time (queue.json lists them); the next command starts "
              f"with unit {(paused or passed)[0]}", flush=True)
    elif not paused:
        print("every unit of the plan is stored", flush=True)
    return ran


def _ran(k: int, unit: units.Unit, seconds: float, untimed: list, took_s: float, resumed: bool,
         paused: bool = False) -> dict:
    """queue.json's line for a unit that ran (whole, or paused, or resumed from an earlier command)."""
    line = {"unit": k, "label": unit.label(), "estimated_min": round(seconds / 60, 2), "untimed": untimed,
            "minutes": round(took_s / 60, 2)}
    return line | ({"resumed": True} if resumed else {}) | ({"paused": True} if paused else {})
