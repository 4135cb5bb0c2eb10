"""scripts/gpu_session.sh, the one command a lent GPU runs, checked here with every python3 it calls
stubbed: what comes back must fit what the device tool returns (at most 8 files, no deeper than
$OUT/a/b/file), hold every result file and never a weight.  The first GPU session lost two units'
records to that limit."""

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from vvlib.experiments.storage.store import REPO_ROOT

# Stands in for python3: each module the script runs writes what the real one would, instantly.
FAKE_PYTHON = r"""#!/usr/bin/env bash
echo "$*" >> "$OUT/../calls"
case "$*" in
  -c*) echo "torch 0.0 fake GPU" ;;
  "-m bench.gpu_check --out "*) mkdir -p "$4" && for f in tests step loop curriculum; do echo {} > "$4/$f.json"; done ;;
  "-m vvlib paper "*) find results/paper -type f | sort > "$OUT/../tree"
      pack=$(echo "$*" | sed 's/.*--pack \([^ ]*\) .*/\1/'); mkdir -p "$pack" results/paper/train-new
      echo {} > results/paper/train-new/run.json; echo {} > results/paper/train-new/eval-1.json
      echo weights > results/paper/train-new/weights.pt; echo '{"units": []}' > "$pack/queue.json" ;;
  "-m bench.tf32_ab --out "*) for t in argmax dictionary; do echo {} > "$4/tf32-ab-$t.json"; done ;;
  *) echo "unexpected: $*" >&2; exit 1 ;;
esac
"""


@pytest.fixture
def session(tmp_path):
    bin_dir, repo, out = tmp_path / "bin", tmp_path / "repo", tmp_path / "out"
    for folder in (bin_dir, repo / "results" / "paper" / "train-old", out):
        folder.mkdir(parents=True)
    (bin_dir / "python3").write_text(FAKE_PYTHON)
    (bin_dir / "python3").chmod(0o755)
    (repo / "results" / "paper" / "train-old" / "run.json").write_text("{}")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "OUT": str(out), "VVLIB_GIT_COMMIT": "abc"}
    return repo, out, env


def session_run(repo, env, *args):
    done = subprocess.run(["bash", str(REPO_ROOT / "scripts" / "gpu_session.sh"), *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60)
    calls = Path(env["OUT"]).parent / "calls"  # each python3 call, as the stub logged it
    lines = calls.read_text().splitlines() if calls.exists() else []
    return done, [line.split()[1] for line in lines if line.startswith("-m")]


def test_what_comes_back_fits_the_device_tools_limits_and_holds_every_result_but_no_weights(session):
    repo, out, env = session
    done, modules = session_run(repo, env, "570")
    assert done.returncode == 0, done.stderr
    # no TF32 comparison committed yet: it runs between the check and the queue
    assert modules == ["bench.gpu_check", "bench.tf32_ab", "vvlib"]
    files = [p for p in out.rglob("*") if p.is_file()]
    assert sorted(p.name for p in files) == ["check.tgz", "queue.json", "results.tgz"]
    assert len(files) <= 8 and all(len(p.relative_to(out).parts) <= 3 for p in files)
    with tarfile.open(out / "results.tgz") as archive:
        names = archive.getnames()
    assert "results/paper/train-new/run.json" in names and "results/paper/train-new/eval-1.json" in names
    assert "results/paper/train-old/run.json" in names and not any(n.endswith(".pt") for n in names)
    with tarfile.open(out / "check.tgz") as archive:
        checked = {Path(n).name for n in archive.getnames()}
    assert {"tests.json", "step.json", "loop.json", "curriculum.json", "tf32-ab-argmax.json"} <= checked


def test_the_next_commands_seconds_reach_the_queue_as_its_minutes(session):
    repo, out, env = session
    done, _ = session_run(repo, env, "570", "full", "250")
    assert done.returncode == 0, done.stderr
    queue = next(line for line in (out.parent / "calls").read_text().splitlines() if line.startswith("-m vvlib"))
    assert "--then-minutes 4.16 " in queue  # 250 s; the last command of a session is given none
    done, _ = session_run(repo, env, "200", "queue")
    last = (out.parent / "calls").read_text().splitlines()[-1]
    assert done.returncode == 0 and "--then-minutes 0.00 " in last


def test_a_paused_units_checkpoint_stays_on_the_machine_between_commands():
    """The device tool keeps, between a session's commands, the files git ignores: a paused unit's checkpoint
    (and a finished run's weights) under results/paper must be ignored, and so never committed either."""
    for path in ("results/paper/train-0123/checkpoint.pt", "results/paper/train-0123/weights.pt"):
        assert subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO_ROOT).returncode == 0, path
    assert subprocess.run(["git", "check-ignore", "-q", "results/paper/train-0123/run.json"],
                          cwd=REPO_ROOT).returncode == 1


def test_an_unknown_mode_is_refused_before_anything_runs(session):
    repo, out, env = session
    done, modules = session_run(repo, env, "200", "check")
    assert done.returncode == 2 and "mode" in done.stderr and modules == [] and not any(out.iterdir())
    done, modules = session_run(repo, env, "200", "queue", "4m")
    assert done.returncode == 2 and "NEXT" in done.stderr and modules == [] and not any(out.iterdir())


def test_it_refuses_to_run_without_the_commit_its_records_will_name(session):
    repo, out, env = session
    env.pop("VVLIB_GIT_COMMIT")
    done = subprocess.run(["bash", str(REPO_ROOT / "scripts" / "gpu_session.sh")], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "VVLIB_GIT_COMMIT" in done.stderr and not any(out.iterdir())


def test_a_later_command_finds_the_units_an_earlier_one_finished_before_they_are_unpacked(session):
    """The session's second command starts at once: its copy of the tree lacks the first command's new records
    (not yet unpacked and committed here), which the machine's stash puts back; a file the tree has wins."""
    repo, out, env = session
    done, _ = session_run(repo, env, "570")
    assert done.returncode == 0, done.stderr
    # the next command's fresh copy of the tree: the new records gone, the ignored weights kept, a file changed
    for name in ("run.json", "eval-1.json"):
        (repo / "results" / "paper" / "train-new" / name).unlink()
    (repo / "results" / "paper" / "train-old" / "run.json").write_text('{"committed": 1}')
    shutil.rmtree(out)
    out.mkdir()
    done, _ = session_run(repo, env, "200", "queue")
    assert done.returncode == 0, done.stderr
    tree = (out.parent / "tree").read_text().split()  # the tree as the queue found it
    assert "results/paper/train-new/run.json" in tree and "results/paper/train-new/eval-1.json" in tree
    assert (repo / "results" / "paper" / "train-old" / "run.json").read_text() == '{"committed": 1}'
    assert not list((repo / "_output").rglob("*.pt"))  # the stash holds records, never weights
