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
    assert [(r[1], r[3]) for r in rows] == [  # oldest first, by each record's `created`
        ("Baseline", "0-3"), ("log N logits", "4-7"), ("log N logits, +LN", "0-3")]
    assert rows[0][7:9] == ["1,234", "1.5"]  # model-steps/s; 90 s of training in minutes


def test_pending_units_read_as_spans_and_add_up_to_the_introductions_line():
    from vvlib.book.gpu_queue.pending import Pending, markdown, sentence, spans

    assert spans([15, 16, 17, 20, 35, 36]) == "15-17, 20, 35-36" and spans([4]) == "4"
    rows = [Pending("11_sensitivity, 10_beyond", [15, 16], 1, 2.6), Pending("09_longer_training", [35, 36, 50], 3, 10.2)]
    assert "| 11 sensitivity, 10 beyond | 15-16 | 1 | 3 |" in markdown(rows)
    assert "5 GPU units" in sentence(rows) and "about 13 GPU minutes" in sentence(rows)  # 2 + 3 units, 2.6 + 10.2 min


def test_the_key_results_are_paired_differences_and_the_verdict_over_the_lengths_beyond_training(monkeypatch):
    """Two runs whose +LN is ahead by 2 points at every length, with noise: the box's interval is the paired t
    interval computed here by hand, and the verdict is supported at every length beyond training."""
    import numpy as np
    from scipy import stats as scipy_stats

    from types import SimpleNamespace

    from vvlib.book import key_results
    from vvlib.experiments.setups.paper_tasks import ARGMAX

    lengths = [16, 32, 1024, 16384]
    rng = np.random.default_rng(0)
    base = rng.uniform(0.2, 0.6, (30, 4))
    ln = base + 0.02 + rng.normal(0, 0.01, (30, 4))
    records = {"baseline": {"provenance": {"device": "GPU X"}}}
    P = SimpleNamespace(eval_lengths=lengths, max_len=16, n_seeds=30, steps=100)
    monkeypatch.setattr(key_results, "latest_accuracy_runs",
                        lambda name, task, store: ("counter", P, {"baseline": base, "layernorm": ln}, records))
    h = key_results.headline(ARGMAX, "store")
    d = 100 * (ln[:, 3] - base[:, 3])
    half = scipy_stats.t.ppf(0.975, 29) * d.std(ddof=1) / np.sqrt(30)
    got = h.differences[16384]
    assert np.isclose(got["diff"], d.mean()) and np.isclose(got["high"] - got["diff"], half)
    assert h.verdict == "supported" and h.counts == (3, 3, 0)
    assert h.paper[16384] == ARGMAX.accuracy["layernorm"][-1] - ARGMAX.accuracy["baseline"][-1]
