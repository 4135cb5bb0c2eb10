"""Chapter 4's page once the GPU queue commits its counter-stream runs: argmax retrieval's paper profile
stores each variant's 100 seeds as two runs of 50 (seed_chunk), which the page reads joined.  The
records here are made up with the real store keys, so the page's paper-scale sections run on the CPU
before a GPU ever commits such runs (a joined record once had no spec, and the runs table needed one)."""

import matplotlib
import numpy as np
import pandas as pd
from IPython.display import Markdown

from tests.paper_records import made_up_runs
from vvlib.book import accuracy_page, paper_scale
from vvlib.book.accuracy_page import AccuracyPage
from vvlib.experiments.chapters import ARGMAX_RETRIEVAL
from vvlib.experiments.setups import variants
from vvlib.experiments.storage import runs

matplotlib.use("Agg")


def test_the_page_reads_runs_stored_in_parts_as_one_ensemble_and_shows_every_paper_scale_section(tmp_path,
                                                                                                    monkeypatch):
    made = {variant: accuracy for (_, variant), accuracy in made_up_runs(tmp_path, "04_argmax_retrieval").items()
            if variant in ("baseline", "layernorm")}  # fixed temperature
    draws, P, accuracy, records = paper_scale.latest_accuracy_runs("04_argmax_retrieval", "argmax", tmp_path)
    assert draws == "counter" and P.seed_chunk == 50 and len(variants.train_configs(P)) == 2
    assert all(np.array_equal(accuracy[v], made[v]) for v in made)
    assert [len(runs.run_records(records[v])) for v in made] == [2, 2]

    shown = []
    monkeypatch.setattr(accuracy_page, "display", lambda *objects: shown.extend(objects))
    page = AccuracyPage(ARGMAX_RETRIEVAL, {"profile": "ci", "paper_scale_dir": str(tmp_path)})
    page.answer()
    page.load_paper_scale()
    page.paper_scale_comparison(0)
    page.paper_scale_comparison(1)
    page.paper_scale_figure()
    said = " ".join(o.data for o in shown if isinstance(o, Markdown))
    assert "(100 seeds x 100,000 steps, GPU, counter stream)" in said and "Shown: the paper-scale runs on the" in said
    (table,) = [o for o in shown if isinstance(o, pd.DataFrame) and "seeds" in o.columns]
    assert list(table["seeds"]) == ["0..49", "50..99", "0..49", "50..99"]  # the runs table: one row per part
