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
command stopped later still brings back every unit it finished.  A unit that raises an error is recorded with
it (queue.json, and FAILED on this machine) and the queue goes on with the next unit, so one failure costs its
own minutes and not the command's: later commands on the same machine pass it over (a unit begun there would
otherwise come first and fail again) unless it failed after another unit had (failed_alone), while a fresh
machine, after a fix, tries it again.  If the device no longer computes after the failure (some CUDA errors
leave the process unable to), the command stops there.
"""

import json
import shutil
import time
import traceback
from pathlib import Path

import torch

from ... import train
from . import units
from ...experiments.storage import store
from .paper_run import CHECKS, PROFILE, planned_jobs, queue_units, unit_rates

RESUME_S = 30.0  # our allowance for the next command to take a paused unit up again (start, graphs, loading)
# the units that failed on this machine, by their store entries (git ignores _output/, so a lent GPU keeps the
# file between a session's commands and a fresh machine starts without it)
FAILED = store.REPO_ROOT / "_output" / "paper-queue" / "failed.json"


def pack(unit: units.Unit, dest: Path) -> list:
    """Copy the unit's result files to dest/<store folder>/<file>; their new paths."""
    copied = []
    for path in unit.result_files():
        target = dest / path.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        copied.append(target)
    return copied


def write_summary(dest, device, seconds: float, ran: list, passed: list, overrun: float, failed_before=()):
    """dest/queue.json: the units that ran (estimated and measured minutes; paused, resumed or the error that
    stopped it where so), those passed over for lack of time and those that failed here before, and the overrun
    a unit's estimate was multiplied by where nothing would resume it."""
    store.write_json(Path(dest) / "queue.json", {"provenance": store.provenance(device, seconds), "units": ran,
                                                 "passed": passed, "failed_before": list(failed_before),
                                                 "overrun": round(overrun, 3)})


def unit_key(unit: units.Unit) -> str:
    """A unit by its store entries: the same across commands and plans, unlike its number."""
    return " ".join(sorted(str(job.path.parent) for job in unit.jobs))


def failures(path: Path) -> dict:
    """{unit_key: {error, after_another}} of the units that failed on this machine (none where the file is missing
    or unreadable)."""
    try:
        return {key: dict(line) for key, line in json.loads(Path(path).read_text()).items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def failed_alone(path: Path) -> dict:
    """{unit_key: error} of the units to pass over: each failed as the first failure of its command.  One that failed
    after another unit's, in the same process, may have failed for that one's sake (a CUDA error can leave the
    process half usable), so a later command tries it again."""
    return {key: line["error"] for key, line in failures(path).items() if not line.get("after_another")}


def remember_failure(path: Path, unit: units.Unit, error: str, after_another: bool):
    known = failures(path) | {unit_key(unit): {"error": error, "after_another": after_another}}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    store.write_json(path, known)


def device_answers(device_type: str) -> bool:
    """Whether the device still computes after a unit's failure; an out-of-memory error's cached blocks freed."""
    if device_type != "cuda":
        return True
    try:
        torch.cuda.empty_cache()
        return torch.ones(2, device="cuda").sum().item() == 2.0
    except RuntimeError:
        return False


def in_order(cut: list) -> list:
    """(unit number, unit) of those not stored: the ones this machine began first, then the queue's order."""
    numbered = [(k, unit) for k, unit in enumerate(cut, 1) if not unit.stored()]
    return sorted(numbered, key=lambda pair: not pair[1].begun())


def run_queue(names, overrides: dict, minutes: float, dest: Path | None = None, profile: str = PROFILE,
              clock=time.monotonic, then_minutes: float = 0.0, overrun: float | None = None,
              failed_file: Path = FAILED) -> list:
    """Run the plan's units in order (module docstring), each whose estimate fits in what is left of `minutes`
    and `then_minutes` (the next command's, on this machine), or where then_minutes is 0, whose estimate times
    `overrun` (default: units.overrun of the committed queue records) fits in what is left; a unit still
    training at the end of `minutes` is paused there and ends the command; one listed in `failed_file` is
    passed over.  [{unit, label, estimated and measured minutes, paused, resumed or error where so}] of those
    that ran."""
    started, ran, passed, failed_before = clock(), [], [], []
    failed = failed_alone(failed_file)
    deadline = started + minutes * 60
    overrun = units.overrun(sorted(CHECKS.glob("gpu-queue-*.json"))) if overrun is None else overrun
    jobs = planned_jobs(names, overrides, profile)
    kinds = {job.kind for job in jobs}
    device, rates, _ = unit_rates(overrides, None, kinds)
    cut = queue_units(jobs)
    for k, unit in in_order(cut):
        if unit_key(unit) in failed:
            failed_before.append(k)
            print(f"unit {k} failed earlier on this machine ({failed[unit_key(unit)][:200]}); passed over (delete "
                  f"{failed_file} to try it again)", flush=True)
            continue
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
        except Exception as exc:  # one unit's failure must not cost the command's other units
            line = _ran(k, unit, seconds, untimed, clock() - unit_started, resumed)
            ran.append(_failed(line, unit, exc, failed_file, after_another=any("error" in r for r in ran)))
            if dest is not None:  # what it did finish (a run, its evaluations) comes back too
                pack(unit, Path(dest))
                write_summary(dest, device, clock() - started, ran, passed, overrun, failed_before)
            if not device_answers(device):
                print(f"unit {k} failed and the device no longer computes: the command stops here", flush=True)
                break
            print(f"unit {k} failed after {ran[-1]['minutes']:.1f} min ({ran[-1]['error'][:200]}); on to the next "
                  "unit", flush=True)
            continue
        ran.append(_ran(k, unit, seconds, untimed, clock() - unit_started, resumed))
        if dest is not None:
            pack(unit, Path(dest))
            write_summary(dest, device, clock() - started, ran, passed, overrun, failed_before)
        print(f"unit {k} done in {ran[-1]['minutes']:.1f} min", flush=True)
        device, rates, _ = unit_rates(overrides, None, kinds)  # its records time the next units
    if dest is not None:
        write_summary(dest, device, clock() - started, ran, passed, overrun, failed_before)
    paused = [r["unit"] for r in ran if r.get("paused")]
    if passed:
        print(f"{len(passed)} units passed over for lack of time (queue.json lists them); the next command starts "
              f"with unit {(paused or passed)[0]}", flush=True)
    elif all(unit.stored() for unit in cut):
        print("every unit of the plan is stored", flush=True)
    return ran


def _failed(line: dict, unit: units.Unit, exc: Exception, failed_file: Path, after_another: bool) -> dict:
    """A failed unit's queue.json line, with its error; the traceback printed and the failure remembered."""
    traceback.print_exc()
    error = f"{type(exc).__name__}: {exc}"[:1000]
    remember_failure(failed_file, unit, error, after_another)
    return line | {"error": error}


def _ran(k: int, unit: units.Unit, seconds: float, untimed: list, took_s: float, resumed: bool,
         paused: bool = False) -> dict:
    """queue.json's line for a unit that ran (whole, or paused, or resumed from an earlier command)."""
    line = {"unit": k, "label": unit.label(), "estimated_min": round(seconds / 60, 2), "untimed": untimed,
            "minutes": round(took_s / 60, 2)}
    return line | ({"resumed": True} if resumed else {}) | ({"paused": True} if paused else {})
