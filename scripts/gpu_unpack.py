"""What a lent GPU's command brought back, put where it belongs and committed, in one short step.

    .venv/bin/python scripts/gpu_unpack.py FILES_AT        # FILES_AT: the device tool's folder of $OUT's files

Run after each of a session's GPU commands (the next command need not wait for it: scripts/gpu_session.sh puts
back the units an earlier command finished from the machine's own stash).  It places scripts/gpu_session.sh's
archives and commits them:

- results.tgz: results/paper/ as the queue left it (no weights), unpacked at the repository root, over the tree
  (the device's copy of it is the tree's with the new units added);
- check.tgz: bench.gpu_check's parts as bench/gpu-check-<gpu>-<date>-<part>.json (with the check's time of day
  where that day's name is taken), loop and curriculum also as bench/gpu-check-this-session-<part>.json (git
  ignores those; a later command on a fresh machine estimates by them), and bench.tf32_ab's as
  bench/tf32-ab-<gpu>-<task>.json;
- queue.json: as bench/gpu-queue-<gpu>-<date>-<time>.json;

and prints the command for the session's next queue.  Where the session's check's tests did not all pass (this
command's, or the first command's for a later one), the units' results are unpacked but left uncommitted, for a
person to judge.  A name under bench/ already taken stops it
(exit status 2) before anything is unpacked.
"""

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHECK_PARTS = ("tests", "step", "loop", "curriculum", "kernels")
THIS_SESSION = ("loop", "curriculum")  # what units.check_rates reads for the next command's estimates
LEASE = timedelta(minutes=30)  # a lent machine goes back within this: a session's commands fall inside it


def gpu_name(device: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'h100', as the committed checks are named."""
    words = [w for w in device.lower().split() if w != "nvidia"]
    return words[0] if words else "gpu"


def stamp(record: dict) -> tuple[str, str, str]:
    """(gpu, date, time of day) of a check part's or queue.json's provenance."""
    provenance = record["provenance"]
    created = provenance["created"]  # 2026-11-27T05:33:19+00:00
    return gpu_name(provenance["device"]), created[:10], created[11:16].replace(":", "")


def check_files(folder: Path, bench: Path) -> dict:
    """{source: destination under bench/} for the JSON of an unpacked check.tgz."""
    parts = {p: folder / f"{p}.json" for p in CHECK_PARTS if (folder / f"{p}.json").exists()}
    moves = {}
    if parts:
        gpu, day, time_of_day = stamp(json.loads(next(iter(parts.values())).read_text()))
        name = f"gpu-check-{gpu}-{day}"
        if any((bench / f"{name}-{p}.json").exists() for p in CHECK_PARTS):
            name = f"{name}-{time_of_day}"  # a second session on that GPU that day
        moves = {source: bench / f"{name}-{part}.json" for part, source in parts.items()}
    for source in sorted(folder.glob("tf32-ab-*.json")):
        task = source.stem.removeprefix("tf32-ab-")
        moves[source] = bench / f"tf32-ab-{gpu_name(json.loads(source.read_text())['device'])}-{task}.json"
    return moves


def queue_file(path: Path, bench: Path) -> Path:
    gpu, day, time_of_day = stamp(json.loads(path.read_text()))
    return bench / f"gpu-queue-{gpu}-{day}-{time_of_day}.json"


def failed_tests(moves: dict, bench: Path) -> str:
    """The summary of the session's check's tests where they did not all pass (a failure, an error, a timeout),
    else ''.  The session's check: this call's, or for a later command of the session (which runs none), the
    one committed here within a lease before that command's queue record."""
    tests = next((dest for dest in moves.values() if dest.name.startswith("gpu-check-") and dest.stem.endswith("-tests")),
                 None) or earlier_check(moves, bench)
    if tests is None:
        return ""
    rows = json.loads(tests.read_text())["rows"]
    return "" if rows.get("exit_status") == 0 else f"{rows.get('summary', '')}, exit status {rows.get('exit_status')}"


def earlier_check(moves: dict, bench: Path) -> Path | None:
    """The newest bench/gpu-check-*-tests.json made within a lease before this call's queue.json, if any."""
    queue = next((source for source, dest in moves.items() if dest.name.startswith("gpu-queue-")), None)
    if queue is None:
        return None
    until = created(json.loads(queue.read_text()))
    found = []
    for path in bench.glob("gpu-check-*-tests.json"):
        try:
            when = created(json.loads(path.read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if until - LEASE <= when <= until:
            found.append((when, path))
    return max(found)[1] if found else None


def created(record: dict) -> datetime:
    return datetime.fromisoformat(record["provenance"]["created"])


def commit_message(queue: Path | None, files: int, held: str = "") -> str:
    """'results/paper: GPU units 15, 19 on h200 2026-11-28 (<label>: 5.4 min, estimated 5.5; ...)'; `held`: why the
    units' results were left out of the commit."""
    if queue is None or held:
        return f"GPU command: {files} records under bench/" + (f"; results/paper left uncommitted ({held})" if held else "")
    record = json.loads(queue.read_text())
    gpu, day, _ = stamp(record)
    units = record["units"]
    said = "; ".join(f"{u['label']}: {unit_outcome(u)}" for u in units)
    if not units:
        return f"GPU command on {gpu} {day}: no unit finished; its records under bench/"
    numbers = ", ".join(str(u["unit"]) for u in units)  # each unit the command ran; `said` tells how each ended
    return f"results/paper: GPU units {numbers} on {gpu} {day} ({said}), and the command's records under bench/"


def unit_outcome(unit: dict) -> str:
    """How one unit of the command ended: finished, failed, or paused at the deadline (its checkpoint stays on the
    machine for the next command; only its records so far came back)."""
    if "error" in unit:
        return f"FAILED after {unit['minutes']} min ({unit['error'][:100]})"
    if unit.get("paused"):
        return f"paused after {unit['minutes']} min of an estimated {unit['estimated_min']}, resumed by the next command"
    return f"{unit['minutes']} min, estimated {unit['estimated_min']}"


def refuse(message: str):
    print(f"error: {message}; nothing unpacked", file=sys.stderr)
    raise SystemExit(2)


def git(repo: Path, *args) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def unpack(files_at: Path, repo: Path) -> list:
    """Put what came back in place (see the module's docstring) and commit it; the paths committed."""
    bench = repo / "bench"
    archives = {name: files_at / name for name in ("check.tgz", "results.tgz", "queue.json")}
    if not any(path.exists() for path in archives.values()):
        refuse(f"files_at: expected check.tgz, results.tgz or queue.json in {files_at}, found none")
    with tempfile.TemporaryDirectory() as scratch:
        moves = {}
        try:
            if archives["check.tgz"].exists():
                with tarfile.open(archives["check.tgz"]) as archive:
                    archive.extractall(scratch, filter="data")
                moves |= check_files(Path(scratch) / "check", bench)
            if archives["queue.json"].exists():
                moves[archives["queue.json"]] = queue_file(archives["queue.json"], bench)
        except (tarfile.TarError, ValueError, KeyError, TypeError) as exc:  # json's errors are ValueErrors
            refuse(f"files_at: not what scripts/gpu_session.sh writes ({type(exc).__name__}: {exc})")
        taken = [str(dest.relative_to(repo)) for dest in moves.values() if dest.exists()]
        if taken:
            refuse(f"would overwrite {', '.join(taken)}")
        for source, dest in moves.items():
            dest.write_bytes(source.read_bytes())
            part = dest.stem.rsplit("-", 1)[-1]
            if dest.name.startswith("gpu-check-") and part in THIS_SESSION:
                (bench / f"gpu-check-this-session-{part}.json").write_bytes(source.read_bytes())
    if archives["results.tgz"].exists():
        with tarfile.open(archives["results.tgz"]) as archive:
            archive.extractall(repo, filter="data")
    paths = [str(dest.relative_to(repo)) for dest in moves.values()]
    failed = failed_tests(moves, bench)
    if failed:  # results made by code the check found wrong on this GPU are for a person to look at first
        print(f"warning: the check's tests did not pass ({failed}); results/paper/ is unpacked but not committed: "
              "read the check's tests.json tail before committing it (and any later command's units)", file=sys.stderr)
    else:
        paths.append("results/paper")
    git(repo, "add", "--", *paths)
    staged = git(repo, "diff", "--cached", "--name-only", "--", *paths).split()
    if staged:  # these paths only: whatever else was staged stays staged
        queue = next((dest for dest in moves.values() if dest.name.startswith("gpu-queue-")), None)
        git(repo, "commit", "-q", "-m", commit_message(queue, len(staged), failed), "--", *paths)
    return staged


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files_at", type=Path, help="the folder the device tool copied $OUT's files into")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to unpack into (default: this one)")
    args = parser.parse_args(argv)
    committed = unpack(args.files_at, args.repo)
    print("\n".join(["committed:", *committed]) if committed else "nothing new to commit")
    head = git(args.repo, "rev-parse", "HEAD").strip()
    print(f"the session's next command, if it has minutes left: VVLIB_GIT_COMMIT={head} bash scripts/gpu_session.sh "
          "<its budget_left_s less about 30> queue")
    return 0


if __name__ == "__main__":
    sys.exit(main())
