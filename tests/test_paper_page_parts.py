"""Chapter 4's page once the GPU queue commits its counter-stream runs (each variant's 100 seeds in one
run).  The records here are made up with the real store keys, so the page's paper-scale sections run on
the CPU before a GPU ever commits such runs.  (Runs stored in parts of seeds, as a `seed_chunk` makes
them, are read joined: tests/test_store.py.)"""

import matplotlib
import numpy as np
import pandas as pd
from IPython.display import HTML

from tests.conftest import displayed
from tests.paper_records import made_up_runs
from vvlib.book.chapters import accuracy_page
from vvlib.book import paper_scale
from vvlib.book.chapters.accuracy_page import AccuracyPage
from vvlib.book.chapters import ARGMAX_RETRIEVAL
from vvlib.experiments.setups import variants
from vvlib.experiments.storage import runs

matplotlib.use("Agg")


def test_the_page_reads_the_counter_streams_paper_runs_and_shows_every_paper_scale_section(tmp_path, monkeypatch):
    made = {variant: accuracy for (_, variant), accuracy in made_up_runs(tmp_path, "04_argmax_retrieval").items()
            if variant in ("baseline", "layernorm")}  # fixed temperature
    draws, P, accuracy, records = paper_scale.latest_accuracy_runs("04_argmax_retrieval", "argmax", tmp_path)
    assert draws == "counter" and P.seed_chunk == 0 and len(variants.train_configs(P)) == 1
    assert all(np.array_equal(accuracy[v], made[v]) for v in made)
    assert [len(runs.run_records(records[v])) for v in made] == [1, 1]

    shown = displayed(monkeypatch, accuracy_page)
    page = AccuracyPage(ARGMAX_RETRIEVAL, {"profile": "ci", "paper_scale_dir": str(tmp_path)})
    page.answer()
    page.load_paper_scale()
    page.paper_scale_comparison(0)
    page.paper_scale_comparison(1)
    page.paper_scale_figure()
    (verdicts,) = [o for o in shown if isinstance(o, pd.DataFrame) and "verdict" in o.columns]
    assert list(verdicts.index) == ["100 seeds x 100,000 steps, GPU, counter stream"]
    (table,) = [o.data for o in shown if isinstance(o, HTML) and "stored runs behind" in o.data]
    assert table.startswith("<details>") and table.count("<td>0..99</td>") == 2  # collapsed, one row per run
