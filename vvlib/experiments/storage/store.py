"""Results on disk: atomic JSON with provenance, keyed by the settings that made them.

A result is stored under a directory named by a hash of its `spec` (the settings
that determine it).  Loading checks that the stored spec equals the requested one;
an unreadable or mismatched file raises StoreError and is left untouched, so good
results are never silently replaced.
"""

import datetime
import hashlib
import json
import math
import os
import platform
import subprocess
from pathlib import Path

import torch

from ...atomic import atomic_write, save_torch  # noqa: F401  (in the science layer, which writes checkpoints)

STORE_FORMAT = 2  # 2: specs name every config field
MIGRATED_AT = "b0a05a1"  # the last commit with `python -m vvlib migrate-store`, which rewrites format 1 as 2
REPO_ROOT = Path(__file__).resolve().parents[3]


class StoreError(RuntimeError):
    pass


def spec_hash(spec: dict) -> str:
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _finite(value):
    """JSON has no NaN: store it as null (e.g. a p-value of two identical samples)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def write_json(path: Path, payload: dict):
    text = json.dumps(_finite(payload), indent=1, allow_nan=False) + "\n"
    atomic_write(path, lambda tmp: tmp.write_text(text))


def read_json(path: Path) -> dict:
    path = Path(path)
    try:
        payload = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise StoreError(f"{path} is unreadable or corrupt ({exc}); move it away to recompute") from exc
    if not isinstance(payload, dict):
        raise StoreError(f"{path} does not hold a JSON object; move it away to recompute")
    return payload


def check_format(store_dir):
    """Raise StoreError where the store's runs have an older spec format: today's keys would never find them."""
    run = next(Path(store_dir).glob("train-*/run.json"), None)
    found = None if run is None else read_json(run).get("spec", {}).get("format")
    if found not in (None, STORE_FORMAT):
        raise StoreError(f"{store_dir} holds runs of spec format {found}, which this code no longer reads; rewrite it "
                         f"with the tool at commit {MIGRATED_AT}: git worktree add /tmp/vv-{MIGRATED_AT} {MIGRATED_AT} "
                         f"&& cd /tmp/vv-{MIGRATED_AT} && python -m vvlib migrate-store {Path(store_dir).resolve()}")


def load_matching(path: Path, spec: dict) -> dict | None:
    """The stored payload if `path` exists and was made with `spec`; None if absent."""
    path = Path(path)
    if not path.exists():
        return None
    payload = read_json(path)
    if payload.get("spec") != _finite(json.loads(json.dumps(spec))):
        raise StoreError(f"{path} was made with other settings than requested; move it away to recompute")
    return payload


def git_commit() -> str:
    """The VVLIB_GIT_COMMIT the command was given, else HEAD (with '+dirty' if tracked code differs),
    else 'unknown'.  The variable comes first: a lent GPU's copy of the working tree carried a .git
    whose HEAD was an earlier commit than the code it ran (its records said 19296dc for ad1ad0e)."""
    given = os.environ.get("VVLIB_GIT_COMMIT")
    if given:
        return given
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
        # results/ is data, not code: a run writing its own records is no reason to call the code dirty
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results"],
                               cwd=REPO_ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "") if out.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def device_name(device) -> str:
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    threads = torch.get_num_threads()
    return f"cpu ({platform.processor() or platform.machine()}, {threads} thread{'s' if threads != 1 else ''})"


def cpu_description() -> str:
    """The CPU's model (Linux: /proc/cpuinfo) and the instruction set torch's CPU kernels use on it: the same
    code, settings and seeds can round differently on another CPU (chapter 4's first longer run, trained again
    on another machine in 2026-11, gave other weights), so a CPU result names the CPU it came from."""
    model = platform.processor() or platform.machine()
    try:
        model = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}; torch kernels: {torch.backends.cpu.get_cpu_capability()}"


def provenance(device, wall_time_s: float | None = None, commit: str | None = None) -> dict:
    """Where and how a result was computed; `commit`: the code's commit when the computation
    started (default: now), since a long run may end after later commits."""
    return {
        "device": device_name(device),
        "cpu": cpu_description(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "git_commit": commit or git_commit(),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "wall_time_s": None if wall_time_s is None else round(wall_time_s, 2),
    }
