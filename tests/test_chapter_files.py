import importlib
import json
import re
from pathlib import Path

import pytest

from vvlib.experiments import chapters, report, summary

GOOD = {"top1_weight": {}, "entropy": {}, "p_value_top1_weight": {}, "p_value_entropy": {}}


def test_each_chapter_is_one_file_of_the_package_and_the_registry_lists_them_all_in_order():
    """c07_dispersion.py defines the chapter 07_dispersion, as CHAPTER, and nothing else defines a chapter."""
    folder = Path(chapters.__file__).parent
    files = sorted(p for p in folder.glob("*.py") if re.match(r"c\d\d_|summary_page", p.name))
    assert [chapters.chapter_file(name) for name in chapters.CHAPTERS] == [p.name for p in files]
    for path in files:
        module = importlib.import_module(f"vvlib.experiments.chapters.{path.stem}")
        assert module.CHAPTER is chapters.get_chapter(module.CHAPTER.name), path.name
        assert module.CHAPTER.notebook.exists(), path.name


@pytest.mark.parametrize("metrics, named", [({**GOOD, "entropy_sem": {}}, "entropy_sem"),
                                            ({k: v for k, v in GOOD.items() if k != "entropy"}, "entropy")])
def test_results_with_a_key_off_the_schema_are_refused_and_good_ones_kept(tmp_path, metrics, named):
    path = report.write_results(tmp_path, "07_dispersion", {"profile": "ci"}, "cpu", GOOD)
    before = path.read_text()
    with pytest.raises(ValueError, match=named):
        report.write_results(tmp_path, "07_dispersion", {"profile": "ci"}, "cpu", metrics)
    assert path.read_text() == before


def test_optional_keys_may_be_left_out_or_written():
    required = {k: {} for k in chapters.ARGMAX_RETRIEVAL.metrics.required}
    chapters.check_metrics("04_argmax_retrieval", required)
    chapters.check_metrics("04_argmax_retrieval", {**required, "long": {}, "ladder": {}})
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
    """Adding or renaming a chapter is one file (experiments/chapters/cNN_name.py), not five registries."""
    for name in chapters.CHAPTERS:
        assert list(quoted(name, PACKAGE.rglob("*.py"))) == [f"vvlib/experiments/chapters/{chapters.chapter_file(name)}"], name


def test_the_layers_above_the_science_loop_over_the_task_records():
    """Task names are quoted in the task records (paper_tasks.py) and seldom elsewhere above the science."""
    files = [*(PACKAGE / "experiments").rglob("*.py"), *(PACKAGE / "book").glob("*.py")]
    counts = {task: quoted(task, files) for task in ("argmax", "dictionary")}
    assert sum(n for found in counts.values() for n in found.values()) <= 10, counts


def test_each_training_chapter_record_says_what_it_trains():
    for name, record in chapters.TRAINING.items():
        assert record.tasks and set(record.tasks) <= {"argmax", "dictionary"}, name
        assert record.work is None or {"baseline", "layernorm"} <= set(record.work.variants), name
    assert chapters.BY_TASK["dictionary"] is chapters.DICTIONARY_LOOKUP
    with pytest.raises(ValueError, match="unknown chapter '12_unknown'; chapters: 01_vanishing_variance_proof"):
        chapters.get_chapter("12_unknown")
