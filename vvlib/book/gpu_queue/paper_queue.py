"""python -m vvlib paper --for-minutes M --pack DIR: the plan's next units, in the queue's order, for as long as
one lent GPU command may run.  Units this machine began come first; a unit runs if its estimate fits what is left of
M minutes, or with --then-minutes N of M + N (its training stops with a checkpoint at the end of M for the next
command to resume), or where no command follows, its estimate times the largest overrun seen (units.overrun).  One
that does not fit is passed over.  After each unit its small result files (never weights) go to DIR with
queue.json; a unit that fails is recorded (queue.json, FAILED) and the queue goes on with the next.
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
# the units that failed on this machine (git ignores _output/: a lent GPU keeps it between a session's commands)
FAILED = store.REPO_ROOT / "_output" / "paper-queue" / "failed.json"


def pack(unit: units.Unit, dest: Path):
    """Copy the unit's result files to dest/<store folder>/<file>."""
    for path in unit.result_files():
        (dest / path.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest / path.parent.name / path.name)


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


def failed_alone(path: Path) -> dict:
    """{unit_key: error} of the units that failed on this machine as the first failure of their command, to pass over
    (one after another's may have failed for that one's sake, a CUDA error leaving the process half usable)."""
    try:
        return {key: str(error) for key, error in json.loads(Path(path).read_text()).items()}
    except (OSError, ValueError, TypeError, AttributeError):  # none yet, or unreadable
        return {}


def remember_failure(path: Path, unit: units.Unit, error: str):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    store.write_json(path, failed_alone(path) | {unit_key(unit): error})


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
    """Run the plan's units in order, as the module docstring says (`overrun` default: units.overrun of the
    committed queue records): [{unit, label, estimated and measured minutes, paused, resumed or error}] of those
    that ran."""
    started, ran, passed, failed_before = clock(), [], [], []
    failed = failed_alone(failed_file)
    deadline = started + minutes * 60
    overrun = units.overrun(sorted(CHECKS.glob("gpu-queue-*.json"))) if overrun is None else overrun
    device, rates, _ = unit_rates(overrides)
    cut = queue_units(planned_jobs(names, overrides, profile))
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
        ran.append(_run_one(k, unit, (seconds, untimed), deadline, clock, failed_file, any("error" in r for r in ran)))
        if ran[-1].get("paused"):
            break
        if dest is not None:  # a failed unit's finished part (a run, its evaluations) comes back too
            pack(unit, Path(dest))
            write_summary(dest, device, clock() - started, ran, passed, overrun, failed_before)
        if "error" not in ran[-1]:
            print(f"unit {k} done in {ran[-1]['minutes']:.1f} min", flush=True)
            device, rates, _ = unit_rates(overrides)  # its records time the next units
        elif not device_answers(device):
            print(f"unit {k} failed and the device no longer computes: the command stops here", flush=True)
            break
        else:
            print(f"unit {k} failed after {ran[-1]['minutes']:.1f} min ({ran[-1]['error'][:200]}); on to the next "
                  "unit", flush=True)
    if dest is not None:
        write_summary(dest, device, clock() - started, ran, passed, overrun, failed_before)
    paused = [r["unit"] for r in ran if r.get("paused")]
    if passed:
        print(f"{len(passed)} units passed over for lack of time (queue.json lists them); the next command starts "
              f"with unit {(paused or passed)[0]}", flush=True)
    elif all(unit.stored() for unit in cut):
        print("every unit of the plan is stored", flush=True)
    return ran


def _run_one(k: int, unit: units.Unit, estimate: tuple, deadline: float, clock, failed_file: Path,
             after_another: bool) -> dict:
    """Run one unit until `deadline`: its queue.json line (estimated and measured minutes; resumed, paused at the
    deadline, or the error it raised, which failed_file remembers where no other unit failed before it)."""
    seconds, untimed = estimate
    resumed, extra = unit.begun(), {}
    print(f"unit {k}: {unit.label()} (about {seconds / 60:.1f} min{'+' if untimed else ''}"
          f"{', resumed' if resumed else ''})", flush=True)
    started = clock()
    try:
        with train.stopping_at(time.monotonic() + deadline - clock()):  # the trainer keeps real time
            unit.run()
    except train.TimeUp as stop:
        print(f"unit {k} paused at the end of the command's minutes ({stop}); the next command resumes it", flush=True)
        extra = {"paused": True}
    except Exception as exc:  # one unit's failure must not cost the command's other units
        traceback.print_exc()
        extra = {"error": f"{type(exc).__name__}: {exc}"[:1000]}
        if not after_another:
            remember_failure(failed_file, unit, extra["error"])
    line = {"unit": k, "label": unit.label(), "estimated_min": round(seconds / 60, 2), "untimed": untimed,
            "minutes": round((clock() - started) / 60, 2)}
    return line | ({"resumed": True} if resumed else {}) | extra
