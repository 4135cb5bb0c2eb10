"""scripts/gpu_session.sh, the one command a lent GPU runs, checked here with every python3 it calls
stubbed: what comes back must fit what the device tool returns (at most 8 files, no deeper than
$OUT/a/b/file), hold every result file and never a weight.  The first GPU session lost two units'
records to that limit."""

import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from vvlib.experiments.storage.store import REPO_ROOT

# Stands in for python3: each module the script runs writes what the real one would, instantly.
FAKE_PYTHON = r"""#!/usr/bin/env bash
case "$*" in
  -c*) echo "torch 0.0 fake GPU" ;;
  "-m bench.gpu_check --out "*) mkdir -p "$4" && for f in tests step loop curriculum; do echo {} > "$4/$f.json"; done ;;
  "-m vvlib paper "*) pack=$(echo "$*" | sed 's/.*--pack \([^ ]*\) .*/\1/'); mkdir -p "$pack" results/paper/train-new
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


def test_what_comes_back_fits_the_device_tools_limits_and_holds_every_result_but_no_weights(session):
    repo, out, env = session
    done = subprocess.run(["bash", str(REPO_ROOT / "scripts" / "gpu_session.sh"), "570"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "gpu_session:" in done.stdout, done.stderr
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


def test_it_refuses_to_run_without_the_commit_its_records_will_name(session):
    repo, out, env = session
    env.pop("VVLIB_GIT_COMMIT")
    done = subprocess.run(["bash", str(REPO_ROOT / "scripts" / "gpu_session.sh")], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "VVLIB_GIT_COMMIT" in done.stderr and not any(out.iterdir())
