import importlib
import json
import re
from pathlib import Path

import pytest

from vvlib.book import chapters
from vvlib.book.chapters.summary import claims as summary

GOOD = {"top1_weight": {}, "entropy": {}, "p_value_top1_weight": {}, "p_value_entropy": {}}


def test_each_chapter_is_one_place_in_the_package_and_the_registry_lists_them_all_in_order():
    """c07_dispersion/ defines the chapter 07_dispersion, as CHAPTER, and nothing else defines a chapter."""
    folder = Path(chapters.__file__).parent
    files = sorted(p for p in folder.glob("*") if re.match(r"c\d\d_", p.name)) + [folder / "summary"]
    assert [chapters.chapter_file(name).split("/")[0] for name in chapters.CHAPTERS] == [p.name for p in files]
    for path in files:
        module = importlib.import_module(f"vvlib.book.chapters.{path.stem}")
        assert module.CHAPTER is chapters.get_chapter(module.CHAPTER.name), path.name
        assert module.CHAPTER.notebook.exists(), path.name


def test_every_notebook_cell_has_a_unique_id():
    """nbformat 4.5 wants an id on each cell (a missing one is a warning now, an error in later nbformat):
    a cell added by hand to a notebook's JSON must carry one."""
    for chapter in chapters.CHAPTERS.values():
        notebook = json.loads(chapter.notebook.read_text())
        ids = [cell.get("id") for cell in notebook["cells"]]
        assert None not in ids and len(set(ids)) == len(ids), chapter.notebook.name


@pytest.mark.parametrize("metrics, named", [({**GOOD, "entropy_sem": {}}, "entropy_sem"),
                                            ({k: v for k, v in GOOD.items() if k != "entropy"}, "entropy")])
def test_results_with_a_key_off_the_schema_are_refused(metrics, named):
    chapters.check_metrics("07_dispersion", GOOD)
    with pytest.raises(ValueError, match=named):
        chapters.check_metrics("07_dispersion", metrics)  # ChapterPage.write_results checks before writing


def test_optional_keys_may_be_left_out_or_written():
    required = {k: {} for k in chapters.ARGMAX_RETRIEVAL.metrics.required}
    chapters.check_metrics("04_argmax_retrieval", required)
    chapters.check_metrics("04_argmax_retrieval", {**required, "long": {}, "scales": {}})
    with pytest.raises(ValueError, match="unknown chapter '11_unknown'; chapters: 01_vanishing_variance_proof"):
        chapters.check_metrics("11_unknown", required)


def test_the_summary_refuses_a_results_file_off_the_schema(tmp_path):
    folder = tmp_path / "07_dispersion"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps({"chapter": "07_dispersion", "metrics": {"entropy": {}}}))
    with pytest.raises(ValueError, match="missing"):
        summary.load(tmp_path, "07_dispersion")


PACKAGE = Path(chapters.__file__).parents[2]


def quoted(name: str, files) -> dict:
    """{file: how many times name appears in quotes in it}, for the files where it does."""
    found = {f: len(re.findall(rf"([\"']){re.escape(name)}\1", f.read_text())) for f in files}
    return {f.relative_to(PACKAGE.parent).as_posix(): n for f, n in found.items() if n}


def test_a_chapter_is_named_in_one_module():
    """Adding or renaming a chapter is one record (book/chapters/cNN_name.py or cNN_name/__init__.py), not five registries."""
    for name in chapters.CHAPTERS:
        own_file = f"vvlib/book/chapters/{chapters.chapter_file(name)}"
        assert list(quoted(name, PACKAGE.rglob("*.py"))) == [own_file], name


def test_a_third_task_registered_before_the_chapters_runs_through_chapters_8_to_11(tmp_path):
    """tests/third_task_chapters.py registers argmin (its class and its record, nothing else) and runs chapters 8-11's
    pages as their notebooks call them: each chapter trains it beside the paper's two tasks, its defaults come from
    its record, and its results land under its name (2 seeds x 8 test sequences: scores in steps of 100/16)."""
    import os
    import subprocess
    import sys

    from vvlib.experiments.storage.store import REPO_ROOT

    env = {**os.environ, "TQDM_DISABLE": "1", "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "tests/third_task_chapters.py", str(tmp_path)], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))[len("RESULT "):])
    assert set(found) == {"08_ablations", "09_longer_training", "10_beyond", "11_sensitivity"}
    for name, chapter in found.items():
        assert chapter["tasks"] == ["argmax", "dictionary", "argmin"] and chapter["default_steps"] == 30, name
    m8, m9, m10 = (found[n]["metrics"] for n in ("08_ablations", "09_longer_training", "10_beyond"))
    assert set(m8["accuracy"]["argmin"]) == {"baseline", "standardize", "layernorm"} and "argmin" in m8["long"]
    assert set(m9["long"]) == {"argmin"} and {"baseline", "layernorm"} <= set(m10["accuracy"]["argmin"])
    scores = [s for m in (m8, m9, m10) for by_length in m["accuracy"]["argmin"].values() for s in by_length.values()]
    assert scores and all(0 <= s <= 100 and (s * 16 / 100).is_integer() for s in scores)
    rows = [(r["task"], r["row"]) for r in found["11_sensitivity"]["metrics"]["rows"]]
    assert rows == [("argmax", "defaults"), ("dictionary", "defaults"), ("argmin", "defaults"), ("argmin", "hidden=4")]


def test_a_task_is_registered_once_with_its_class_and_before_the_chapters_are_imported(argmin_task):
    from tests.argmin_task import record
    from vvlib.experiments.setups import paper_tasks

    with pytest.raises(ValueError, match="'dictionary' is registered already"):
        paper_tasks.register(paper_tasks.DICTIONARY)
    with pytest.raises(ValueError, match=r"task must be one of .*; got 'argmax2'"):
        paper_tasks.register(paper_tasks.PaperTask("argmax2", "", "", {}, "", {}, False, "", {}))
    with pytest.raises(RuntimeError, match="register 'argmin' before importing vvlib.book.chapters"):
        paper_tasks.register(record({}))
    assert paper_tasks.NAMES == ("argmax", "dictionary")
