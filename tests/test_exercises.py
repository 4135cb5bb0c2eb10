"""The exercises: references computed (never typed) and holding their own value, the checker's answers and exit
statuses, one exercise recomputed end to end, the Colab install cell inert outside Colab, and the extensions on."""

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from vvlib.__main__ import main
from vvlib.book import colab, exercises
from vvlib.book.chapters import CHAPTERS
from vvlib.experiments.storage.store import REPO_ROOT


@pytest.mark.parametrize("name", list(exercises.EXERCISES))
def test_each_exercise_has_a_committed_reference_inside_its_own_range(name):
    ref = exercises.reference(name)
    low, high = ref["range"]
    assert low <= ref["reference"] <= high
    assert ref["key"] == exercises.EXERCISES[name].key and ref["command"] == exercises.EXERCISES[name].run.command()
    assert ref["seconds"] > 0 and ref["provenance"]["torch"]


def fake_run(tmp_path, metrics) -> Path:
    (tmp_path / "results.json").write_text(json.dumps({"chapter": "x", "metrics": metrics}))
    return tmp_path


def nested(key: str, value) -> dict:
    for part in reversed(key.split("/")):
        value = {part: value}
    return value


@pytest.mark.parametrize("shift, status", [(0.0, 0), (1.0, 1)])
def test_the_checker_exits_0_in_range_and_1_outside(tmp_path, capsys, shift, status):
    low, high = exercises.reference("2.1")["range"]
    value = (low + high) / 2 + shift * (high - low)
    folder = fake_run(tmp_path, nested(exercises.EXERCISES["2.1"].key, value))
    assert main(["check", "2.1", str(folder)]) == status
    said = capsys.readouterr().out
    assert f"{low:.4g}" in said and exercises.reference("2.1")["rule"] in said


def test_the_checker_reads_a_key_inside_a_list(tmp_path):
    key = exercises.EXERCISES["11.2"].key  # rows/0/...: chapter 11's rows are a list
    low, high = exercises.reference("11.2")["range"]
    rows = nested("/".join(key.split("/")[2:]), (low + high) / 2)
    assert main(["check", "11.2", str(fake_run(tmp_path, {"rows": [rows]}))]) == 0


@pytest.mark.parametrize("args, said", [
    (["9.9", "."], "expected one of 1.1, 1.2"),  # a wrong name lists the accepted ones
    (["2.1", "nowhere"], "no results.json in nowhere"),
    (["2.1", "RUN"], "'loglog_slope' is not in metrics"),  # the run lacks the key
])
def test_the_checker_exits_2_with_one_line_on_bad_input(tmp_path, capsys, args, said):
    fake_run(tmp_path, {"other": 1.0})
    assert main(["check", *[str(tmp_path) if a == "RUN" else a for a in args]]) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1


@pytest.mark.slow
def test_one_exercise_recomputed_end_to_end_lands_in_its_range(tmp_path, one_thread):
    """Exercise 1.1 (chapter 1 at ci, seconds) run as a student runs it, then checked."""
    import subprocess

    run = exercises.EXERCISES["1.1"].run
    out = tmp_path / "ex"
    subprocess.run([sys.executable, *run.argv(output=str(out))[1:]], cwd=REPO_ROOT, check=True,
                   env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, capture_output=True)
    ok, said = exercises.check("1.1", out)
    assert ok, said


def install_cells():
    for chapter in CHAPTERS.values():
        cells = json.loads(chapter.notebook.read_text())["cells"]
        codes = [c for c in cells if c["cell_type"] == "code"]
        yield chapter.name, codes[0], codes[1]


@pytest.mark.parametrize("name, install, parameters", list(install_cells()), ids=lambda x: x if isinstance(x, str) else "")
def test_the_install_cell_comes_first_hidden_and_before_the_parameters(name, install, parameters):
    assert "".join(install["source"]) == colab.install_source(colab.configured_url())
    assert {"remove-cell", colab.TAG} <= set(install["metadata"]["tags"])
    assert "parameters" in parameters["metadata"]["tags"]  # papermill injects after it, so after the install


def test_the_install_cell_does_nothing_outside_colab(tmp_path, monkeypatch):
    import subprocess

    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    called = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: called.append(a))
    namespace = {}
    path_before = list(sys.path)
    exec(colab.install_source("https://github.com/owner/repo"), namespace)
    assert called == [] and os.getcwd() == str(tmp_path) and sys.path == path_before
    assert "COLAB_PROFILE" not in namespace and list(tmp_path.iterdir()) == []


def test_in_colab_a_chapter_runs_at_ci_on_a_cpu_and_paper_with_a_gpu_unless_told_otherwise():
    chapter = CHAPTERS["04_argmax_retrieval"]
    default = chapter.parameters()["profile"].default
    assert colab.colab_profile(chapter, {"profile": default}, set()) is None  # not in Colab
    assert colab.colab_profile(chapter, {"profile": default, "COLAB_PROFILE": "paper"}, set()) == "paper"
    assert colab.colab_profile(CHAPTERS["01_vanishing_variance_proof"], {"profile": default, "COLAB_PROFILE": "paper"},
                               set()) == default  # a chapter without that profile keeps its default
    assert colab.colab_profile(chapter, {"profile": "ci", "COLAB_PROFILE": "paper"}, set()) is None  # edited cell
    assert colab.colab_profile(chapter, {"profile": default, "COLAB_PROFILE": "ci"}, {"profile"}) is None  # -p wins


@pytest.mark.heavy
def test_requirements_install_into_a_fresh_python_3_11_venv(tmp_path):
    """What Binder does (runtime.txt: python-3.11, then postBuild): every pin of requirements.txt installs, with the
    two book extensions, and vvlib imports.  Minutes, and network to PyPI."""
    import shutil
    import subprocess

    python = shutil.which("python3.11")
    if python is None:
        pytest.skip("no python3.11 on this machine")
    subprocess.run([python, "-m", "venv", str(tmp_path / "venv")], check=True)
    bin_ = tmp_path / "venv" / "bin"
    for step in (["pip", "install", "-q", "-r", str(REPO_ROOT / "requirements.txt")],
                 ["pip", "install", "-q", "--no-deps", "-e", str(REPO_ROOT)],  # postBuild
                 ["python", "-c", "import vvlib.book.exercises, sphinx_exercise, sphinx_proof"]):
        done = subprocess.run([str(bin_ / step[0]), *step[1:]], capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]


def test_a_shown_command_is_the_command_split_over_lines_that_fit_the_column():
    for exercise in exercises.EXERCISES.values():
        shown = exercise.run.shown()
        assert shlex.split(shown.replace("\\\n", " ")) == exercise.run.argv()
        assert max(len(line) for line in shown.splitlines()) <= 72  # the text column holds about 75 characters of code
