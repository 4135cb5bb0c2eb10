"""Blocks of docs rendered from records (vvlib.book.generated), and the run table they render."""

import json

import pytest

from vvlib.book import generated
from vvlib.experiments.reports import run_groups


def test_every_generated_block_is_what_its_records_give_now():
    """Edit a record, rerun `python -m vvlib.book.generated --write`."""
    assert generated.stale() == []


def test_a_block_is_replaced_between_its_markers_and_the_rest_is_kept():
    begin, end = generated.markers("table")
    text = f"head\n{begin}\nold\n{end}\ntail\n"
    assert generated.replaced(text, "table", "new") == f"head\n{begin}\n\nnew\n\n{end}\ntail\n"
    with pytest.raises(ValueError, match="'other' are missing"):
        generated.replaced(text, "other", "new", "doc.md")


def _run(tmp_path, name, created, model, train):
    folder = tmp_path / f"train-{name}"
    folder.mkdir()
    spec = {"model": {"task": {"name": "argmax"}, **model}, "train": {"steps": 100, "n_seeds": 4, **train}}
    record = {"spec": spec, "provenance": {"device": "NVIDIA H200", "git_commit": "0123456789", "created": created,
                                           "wall_time_s": 90.0}, "model_steps_per_s": 1234.5}
    (folder / "run.json").write_text(json.dumps(record))


def test_the_run_table_names_each_runs_variant_by_all_its_variant_settings(tmp_path):
    _run(tmp_path, "b", "2026-01-02T00:00:00", {"norm": "none", "logit_scale": "log_n"}, {"first_seed": 4})
    _run(tmp_path, "a", "2026-01-01T00:00:00", {"norm": "none"}, {})
    _run(tmp_path, "c", "2026-01-03T00:00:00", {"norm": "layernorm", "logit_scale": "log_n"}, {})
    rows = [line.split(" | ") for line in run_groups.run_table(tmp_path).splitlines()[2:]]
    assert [(r[0].strip("| "), r[2], r[4]) for r in rows] == [
        ("2026-01-01", "Baseline", "0-3"), ("2026-01-02", "log N logits", "4-7"),
        ("2026-01-03", "log N logits (+ LN)", "0-3")]
    assert rows[0][8:10] == ["1,234", "1.5"]  # model-steps/s; 90 s of training in minutes
