import json

import pytest

from vvlib.experiments import report, schema, summary
from vvlib.book import chapters

GOOD = {"top1_weight": {}, "entropy": {}, "p_value_top1_weight": {}, "p_value_entropy": {}}


def test_every_chapter_has_a_schema():
    assert set(schema.METRICS) == set(chapters.CHAPTERS)


@pytest.mark.parametrize("metrics, named", [({**GOOD, "entropy_sem": {}}, "entropy_sem"),
                                            ({k: v for k, v in GOOD.items() if k != "entropy"}, "entropy")])
def test_results_with_a_key_off_the_schema_are_refused_and_good_ones_kept(tmp_path, metrics, named):
    path = report.write_results(tmp_path, "07_dispersion", {"profile": "ci"}, "cpu", GOOD)
    before = path.read_text()
    with pytest.raises(ValueError, match=named):
        report.write_results(tmp_path, "07_dispersion", {"profile": "ci"}, "cpu", metrics)
    assert path.read_text() == before


def test_optional_keys_may_be_left_out_or_written():
    required = {k: {} for k in schema.METRICS["04_argmax_retrieval"].required}
    schema.check("04_argmax_retrieval", required)
    schema.check("04_argmax_retrieval", {**required, "long": {}, "ladder": {}})
    with pytest.raises(ValueError, match="chapter: expected one of"):
        schema.check("11_unknown", required)


def test_the_summary_refuses_a_results_file_off_the_schema(tmp_path):
    folder = tmp_path / "07_dispersion"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps({"chapter": "07_dispersion", "metrics": {"entropy": {}}}))
    with pytest.raises(ValueError, match="missing"):
        summary.load(tmp_path, "07_dispersion")
