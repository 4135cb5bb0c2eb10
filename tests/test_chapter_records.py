import json
import re
from pathlib import Path

import pytest

from vvlib.experiments import chapter_records, report, summary
from vvlib.book import chapters

GOOD = {"top1_weight": {}, "entropy": {}, "p_value_top1_weight": {}, "p_value_entropy": {}}


def test_the_book_registers_every_chapter_record_in_order():
    assert list(chapters.CHAPTERS) == list(chapter_records.RECORDS)
    assert all(c.title == chapter_records.get(name).title for name, c in chapters.CHAPTERS.items())


@pytest.mark.parametrize("metrics, named", [({**GOOD, "entropy_sem": {}}, "entropy_sem"),
                                            ({k: v for k, v in GOOD.items() if k != "entropy"}, "entropy")])
def test_results_with_a_key_off_the_schema_are_refused_and_good_ones_kept(tmp_path, metrics, named):
    path = report.write_results(tmp_path, "07_dispersion", {"profile": "ci"}, "cpu", GOOD)
    before = path.read_text()
    with pytest.raises(ValueError, match=named):
        report.write_results(tmp_path, "07_dispersion", {"profile": "ci"}, "cpu", metrics)
    assert path.read_text() == before


def test_optional_keys_may_be_left_out_or_written():
    required = {k: {} for k in chapter_records.ARGMAX_RETRIEVAL.metrics.required}
    chapter_records.check_metrics("04_argmax_retrieval", required)
    chapter_records.check_metrics("04_argmax_retrieval", {**required, "long": {}, "ladder": {}})
    with pytest.raises(ValueError, match="chapter: expected one of"):
        chapter_records.check_metrics("11_unknown", required)


def test_the_summary_refuses_a_results_file_off_the_schema(tmp_path):
    folder = tmp_path / "07_dispersion"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps({"chapter": "07_dispersion", "metrics": {"entropy": {}}}))
    with pytest.raises(ValueError, match="missing"):
        summary.load(tmp_path, "07_dispersion")


PACKAGE = Path(chapter_records.__file__).parents[1]


def quoted(name: str, files) -> dict:
    """{file: how many times name appears in quotes in it}, for the files where it does."""
    found = {f: len(re.findall(rf"([\"']){re.escape(name)}\1", f.read_text())) for f in files}
    return {f.relative_to(PACKAGE.parent).as_posix(): n for f, n in found.items() if n}


def test_a_chapter_is_named_in_one_module():
    """Adding or renaming a chapter is one record (chapter_records.py), not five registries."""
    for name in chapter_records.RECORDS:
        assert list(quoted(name, PACKAGE.rglob("*.py"))) == ["vvlib/experiments/chapter_records.py"], name


def test_the_layers_above_the_science_loop_over_the_task_records():
    """Task names are quoted in the task records (paper_tasks.py) and seldom elsewhere above the science."""
    files = [*(PACKAGE / "experiments").glob("*.py"), *(PACKAGE / "book").glob("*.py")]
    counts = {task: quoted(task, files) for task in ("argmax", "dictionary")}
    assert sum(n for found in counts.values() for n in found.values()) <= 10, counts


def test_each_training_chapter_record_says_what_it_trains():
    for name, record in chapter_records.TRAINING.items():
        assert record.tasks and set(record.tasks) <= {"argmax", "dictionary"}, name
        assert record.work is None or {"baseline", "layernorm"} <= set(record.work.variants), name
    assert chapter_records.BY_TASK["dictionary"] is chapter_records.DICTIONARY_LOOKUP
    with pytest.raises(ValueError, match="chapter: expected one of 01_vanishing_variance_proof"):
        chapter_records.get("12_unknown")
