"""Each chapter page's rerun block: the ci command with its measured time, the few parameters a reader would change,
and the rest collapsed."""

import json

import pytest

from bench import chapter_times
from vvlib.book import page
from vvlib.book import chapters


def test_the_ci_time_is_read_from_the_record_in_minutes_or_seconds_with_the_machine(tmp_path):
    record = tmp_path / "chapter-times-ci.json"
    record.write_text(json.dumps({"threads": 2, "seconds": {"08_ablations": 150.0, "11_sensitivity": 20.4},
                                  "provenance": {"cpu": "Test CPU"}}))
    took, timed_on = page.ci_time("08_ablations", record)
    assert took == "takes about 2 minutes on 2 CPU cores" and timed_on.startswith("Test CPU, 2 threads")
    assert page.ci_time("11_sensitivity", record)[0] == "takes about 20 seconds on 2 CPU cores"
    assert "not been timed" in page.ci_time("10_beyond", record)[0]
    assert "not been timed" in page.ci_time("10_beyond", tmp_path / "missing.json")[0]


@pytest.mark.parametrize("chapter", [c for c in chapters.CHAPTERS.values() if c.reader], ids=lambda c: c.name)
def test_a_chapters_reader_parameters_are_at_most_six_of_its_own(chapter):
    assert len(chapter.reader) <= 6 and set(chapter.reader) <= set(chapter.parameters())
    assert not {"seed_chunk", "seed_group", "draws", "tf32", "store_dir", "device"} & set(chapter.reader)


def test_the_page_shows_the_reader_parameters_then_every_other_setting_collapsed(monkeypatch):
    shown = []
    monkeypatch.setattr(page, "display", lambda *items, **_: shown.extend(items))
    chapter_page = page.ChapterPage.__new__(page.ChapterPage)
    chapter_page.chapter, chapter_page.device = "08_ablations", "cpu"
    record = chapters.get_chapter("08_ablations")
    chapter_page.P = {name: p.default for name, p in record.parameters().items()}
    chapter_page.show_parameters()
    command, rest = shown
    assert "python -m vvlib run 08_ablations --profile ci" in command.data
    assert all(f"`{name}` " in command.data for name in record.reader)
    assert rest.data.startswith("<details>") and "seed_group" in rest.data and "device" in rest.data
    assert ">n_seeds<" not in rest.data  # each parameter once


def test_timing_an_unknown_chapter_or_profile_stops_before_anything_runs(capsys):
    for argv in (["nope"], ["01_vanishing_variance_proof", "--profile", "book"]):
        with pytest.raises(SystemExit) as stopped:
            chapter_times.main(argv)
        assert stopped.value.code == 2
    assert "--profile: 01_vanishing_variance_proof has default, ci" in capsys.readouterr().err
