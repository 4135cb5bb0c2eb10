"""End to end: the chapter runs under papermill at its `ci` profile, and the book builds.

Slow (about two minutes on 2 CPU cores): the chapter is executed once per session.
"""

import json

import papermill
import pytest

from vvlib.book import build_html, copy_sources, hide_plumbing
from vvlib.chapters import get_chapter, run_chapter
from vvlib.evaluate import PAPER_LENGTHS

pytestmark = pytest.mark.slow
CHAPTER = "04_argmax_retrieval"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    root = tmp_path_factory.mktemp("book")
    out = root / "results"
    # profile ci, plus one explicit override that must win over the profile
    notebook = run_chapter(CHAPTER, "ci", {"n_seeds": 2, "store_dir": str(root / "store")}, output_dir=out,
                           notebook_out=root / "book" / "chapters" / f"{CHAPTER}.ipynb", progress=False)
    return root, notebook, json.loads((out / "results.json").read_text())


def test_results_json_is_complete_and_sane(executed):
    _, _, results = executed
    assert results["chapter"] == CHAPTER
    params = results["parameters"]
    assert params["profile"] == "ci" and params["n_seeds"] == 2
    assert params["steps"] == get_chapter(CHAPTER).profiles["ci"]["steps"]
    assert {"device", "torch", "git_commit", "wall_time_s"} <= set(results["provenance"])
    assert set(results["provenance"]["sources"]) == {"training/baseline", "training/layernorm"}
    lengths = {str(n) for n in PAPER_LENGTHS}
    accuracy = results["metrics"]["accuracy"]
    assert set(accuracy) == {"baseline", "layernorm"}
    for variant in accuracy.values():
        assert set(variant) == lengths and all(0 <= a <= 100 for a in variant.values())
    assert set(results["metrics"]["p_value"]) == lengths
    assert all(p is None or 0 <= p <= 1 for p in results["metrics"]["p_value"].values())
    # trained models must be far above chance (10%) inside the training lengths
    assert accuracy["baseline"]["16"] > 60 and accuracy["layernorm"]["16"] > 60


def test_book_builds_with_the_executed_chapter(executed):
    root, notebook, _ = executed
    hide_plumbing(notebook)
    copy_sources(root)
    index = build_html(root)
    assert index.exists()
    page = (root / "_build" / "html" / "book" / "chapters" / f"{CHAPTER}.html").read_text()
    assert "Baseline (+ LN) (paper)" in page  # the comparison table
    assert "<img" in page  # the figure
    assert "n_eval_sequences" in page  # the scale of the run is stated on the page
    assert "# Parameters" not in page  # papermill's injected cell is hidden


def test_bad_parameter_stops_in_the_first_cell_under_plain_papermill(tmp_path):
    with pytest.raises(papermill.PapermillExecutionError, match="n_seeds: expected an int >= 1"):
        papermill.execute_notebook(str(get_chapter(CHAPTER).notebook), str(tmp_path / "out.ipynb"),
                                   parameters={"n_seeds": 0, "output_dir": str(tmp_path / "o")}, progress_bar=False)
    assert not (tmp_path / "o").exists()
