"""Chapters 8-10 once the GPU queue commits their runs (chapter 8's units 17-18, 10's 19-30, 9's 31-70): each
task is read at the paper's scale only when every run and evaluation of it is committed, each variant's seeds
joined from its runs, and chapter 10's pairs compared by paired t-tests.  The records are made up under the real
store keys (tests/paper_records.py)."""

import json

import numpy as np

from tests.paper_records import made_up_runs
from vvlib.book import paper_scale
from vvlib.experiments.setups import variants
from vvlib.experiments.storage import runs


def test_a_task_is_read_at_the_papers_scale_once_every_one_of_its_runs_is_committed(tmp_path):
    made = made_up_runs(tmp_path, "08_ablations", tasks=["dictionary"])
    P, found = paper_scale.trained("08_ablations", tmp_path)
    assert list(found) == ["dictionary"]  # argmax retrieval's runs all wait in the queue
    P_task, accuracy, records = found["dictionary"]
    assert (P.n_seeds, P_task.steps) == (100, 10_000)
    assert all(np.array_equal(accuracy[v], made["dictionary", v]) for v in ("baseline", "standardize", "layernorm"))
    made_up_runs(tmp_path, "08_ablations", tasks=["argmax"])
    P_argmax = variants.task_params(P, "argmax")
    (last,) = variants.train_configs(P_argmax)  # +std's evaluation: still in the queue
    model_cfg = variants.model_config(P_argmax, variants.task_config(P_argmax, "argmax"), "standardize")
    runs.eval_path(tmp_path, model_cfg, last, variants.eval_config(P_argmax), "cuda").unlink()
    assert list(paper_scale.trained("08_ablations", tmp_path)[1]) == ["dictionary"]


def test_chapter_10s_deep_argmax_variants_are_read_from_their_two_runs_of_fifty_seeds(tmp_path):
    """At the paper's scale chapter 10 stores argmax retrieval's deep variants as runs of 50 seeds (deep_seed_chunk)
    and its one-layer variants as one run of 100: the page reads each variant's 100 seeds joined."""
    made = made_up_runs(tmp_path, "10_beyond", tasks=["argmax"])
    P, found = paper_scale.trained("10_beyond", tmp_path)
    P_task, accuracy, records = found["argmax"]
    for variant in ("deep_baseline", "deep_layernorm", "rescale", "baseline"):
        assert accuracy[variant].shape[0] == 100 and np.array_equal(accuracy[variant], made["argmax", variant])
    assert [len(runs.run_records(records[v])) for v in ("deep_baseline", "deep_layernorm", "rescale")] == [2, 2, 1]


def test_chapter_10_compares_each_pair_at_the_papers_scale_once_both_its_variants_are_in(tmp_path):
    """The page's pair verdicts at the paper's scale: a pair is compared as soon as its two variants are committed
    (the deep +LN still in the queue leaves out only the deep pair), and each count is the paired t-test's over
    the 100 seeds at the lengths beyond training."""
    from scipy import stats as scipy_stats

    from vvlib.book.chapters import c10_beyond
    from vvlib.experiments.reports import report

    made = made_up_runs(tmp_path, "10_beyond", tasks=["dictionary"])
    noise = np.random.default_rng(1).normal(0, 0.01, made["dictionary", "baseline"].shape)
    made["dictionary", "log_n"] = made["dictionary", "baseline"] + 0.05 + noise  # ahead of the Baseline by 5 points
    P = paper_scale.trained("10_beyond", tmp_path)[0]
    P_task = variants.task_params(P, "dictionary")
    task_cfg = variants.task_config(P_task, "dictionary")
    (run,) = variants.train_configs(P_task)
    for variant in ("log_n", "deep_layernorm"):
        path = runs.eval_path(tmp_path, variants.model_config(P_task, task_cfg, variant), run,
                              variants.eval_config(P_task), "cuda")
        if variant == "log_n":  # rewrite its accuracy as made above
            record = json.loads(path.read_text())
            path.write_text(json.dumps({**record, "accuracy": made["dictionary", "log_n"].tolist()}))
        else:
            path.unlink()
    _, found = paper_scale.trained("10_beyond", tmp_path)
    _, accuracy, _ = found["dictionary"]
    assert "deep_layernorm" not in accuracy
    pairs = c10_beyond.pairs_in(accuracy)
    assert pairs == [p for p in c10_beyond.PAIRS if p != ("deep_layernorm", "deep_baseline")]
    table = report.pair_table(report.per_length(accuracy, P.eval_lengths, pairs), pairs, c10_beyond.labels(P),
                              P.eval_lengths, P.max_len)
    beyond = [j for j, n in enumerate(P.eval_lengths) if n > P.max_len]
    for (claimed, other), (_, row) in zip(pairs, table.iterrows()):
        a, b = accuracy[claimed][:, beyond], accuracy[other][:, beyond]
        p = scipy_stats.ttest_rel(a, b).pvalue
        ahead, behind = a.mean(0) > b.mean(0), a.mean(0) < b.mean(0)
        assert row.tolist() == [ahead.sum(), (ahead & (p < 0.05)).sum(), (behind & (p < 0.05)).sum()]
    assert len(beyond) == 10 and table.loc["log N logits vs Baseline"].tolist()[:2] == [10, 10]
