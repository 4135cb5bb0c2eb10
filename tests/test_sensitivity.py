"""Chapter 11's rows: checked before anything trains, and their numbers computed as the page says."""

import json
import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from vvlib.book import paper_scale
from vvlib.book import runner
from vvlib.book.chapters.c11_sensitivity import paper_rows, row_reports
from vvlib.experiments.setups import sensitivity, variants
from vvlib.experiments.records.scales import PAPER_SCALE_STORE
from vvlib.experiments.setups.params import ParameterError


def ci_params(**overrides):
    return runner.resolved("11_sensitivity", "ci", overrides)


def test_each_row_is_the_chapters_settings_with_its_changes():
    P = ci_params(argmax_rows=[{}, {"encoder_layers": 3, "lr": 0.003}, {"encode_query": False}])
    plan = sensitivity.check_rows(P)
    assert [(task, sensitivity.label(row)) for task, row, _ in plan] == [
        ("argmax", "defaults"), ("argmax", "encoder_layers=3, lr=0.003"), ("argmax", "encode_query=False"),
        ("dictionary", "defaults"), ("dictionary", "key_dim=16, value_dim=16"), ("dictionary", "n_seeds=3")]
    assert (plan[3][2].n_seeds, plan[5][2].n_seeds) == (P.n_seeds, 3)
    _, _, changed = plan[1]
    model = variants.model_config(changed, variants.task_config(changed, "argmax"), "layernorm")
    assert (model.encoder_layers, model.norm, model.hidden) == (3, "layernorm", P.hidden)
    assert variants.train_config(changed).lr == 0.003 and changed.steps == P.steps["argmax"]
    assert variants.model_config(plan[2][2], variants.task_config(P, "argmax"), "baseline").encode_query is False
    dictionary = plan[4][2]
    assert dictionary.steps == P.steps["dictionary"] and (dictionary.key_dim, dictionary.value_dim) == (16, 16)


@pytest.mark.parametrize("rows, message", [
    ({"argmax_rows": [{}, {}]}, "argmax_rows[1]: defaults is listed twice"),
    ({"argmax_rows": [{"n_keys": 100}]}, "argmax_rows[0]: cannot change 'n_keys'"),
    ({"argmax_rows": [{"min_len": 20}]}, "argmax_rows[0]: min_len (20) must be <= max_len (16)"),
    ({"dictionary_rows": [{"n_keys": 100}]}, "dictionary_rows[0]: eval_lengths must be <= 100"),
    ({"argmax_rows": [], "dictionary_rows": []}, "argmax_rows and dictionary_rows: expected at least one row in all"),
    ({"argmax_rows": [{"ln_affine": "no"}]}, "argmax_rows[0]: ln_affine must be true or false; got 'no'"),
])
def test_a_bad_row_is_refused_with_its_place_in_the_list(rows, message):
    with pytest.raises(ParameterError) as refused:
        sensitivity.check_rows(ci_params(**rows))
    assert message in str(refused.value)


def test_a_row_without_the_learned_scale_and_shift_trains_std_against_the_same_baseline(tmp_path):
    """ln_affine False: the +LN side is the standardize variant; the Baseline is the defaults' run."""
    P = ci_params(n_seeds=1, steps={"argmax": 3}, eval_lengths=[16, 64], compared_lengths=[64], n_eval_sequences={"argmax": 8},
                  argmax_rows=[{}, {"ln_affine": False}], store_dir=str(tmp_path))
    (_, _, defaults), (_, _, without) = sensitivity.check_rows(P)[:2]
    assert sensitivity.trained_variants(defaults) == ("baseline", "layernorm")
    assert sensitivity.trained_variants(without) == ("baseline", "standardize")
    accuracy, training = sensitivity.train_row(without, "argmax", "cpu")
    assert set(accuracy) == set(training) == set(sensitivity.PAIR)
    (run,) = variants.trained_models(without, variants.task_config(without, "argmax"), ["standardize"])["standardize"]
    assert training["layernorm"]["spec"] == run.record["spec"]  # the "+LN" side is the stored +std run
    stored = sorted(p.name for p in tmp_path.glob("train-*"))
    assert len(stored) == 2  # the Baseline and +std: no LayerNorm run
    again, _ = sensitivity.train_row(defaults, "argmax", "cpu")  # the defaults' Baseline is that same run
    assert np.array_equal(again["baseline"], accuracy["baseline"])
    assert len(list(tmp_path.glob("train-*"))) == 3
    # another chapter reads a row's training records from the store, and never trains one
    record, read = sensitivity.stored_row(P, "argmax", {"ln_affine": False}, [64], "cpu")
    assert {side: r["spec"] for side, r in read.items()} == {side: r["spec"] for side, r in training.items()}
    expected = sensitivity.row_record("argmax", {"ln_affine": False}, without, accuracy, training, [64])
    assert (record["accuracy"], record["runs"]) == (expected["accuracy"], expected["runs"])  # one seed: p is nan
    assert sensitivity.stored_row(P, "argmax", {"lr": 0.003}, [64], "cpu") is None
    assert len(list(tmp_path.glob("train-*"))) == 3


def test_a_rows_record_matches_an_independent_computation():
    P = ci_params()
    rng = np.random.default_rng(0)
    base, ln = rng.uniform(0, 1, (5, 3)), rng.uniform(0, 1, (5, 3))
    training = {v: {"spec": {"variant": v}, "provenance": {"wall_time_s": 1.5, "device": f"cpu ({v})"}}
                for v in sensitivity.PAIR}
    training["layernorm"]["resumed_from_step"] = 20
    row = {"hidden": 32}
    record = sensitivity.row_record("argmax", row, sensitivity.row_params(P, "argmax", row),
                                    {"baseline": base, "layernorm": ln}, training, [64, 256])
    d = 100 * (ln[:, 2] - base[:, 2])
    half = scipy_stats.t.ppf(0.975, 4) * d.std(ddof=1) / math.sqrt(5)
    got = record["difference"]["256"]
    assert got["diff"] == pytest.approx(d.mean()) and got["high"] - got["low"] == pytest.approx(2 * half)
    assert got["p"] == pytest.approx(scipy_stats.ttest_rel(100 * ln[:, 2], 100 * base[:, 2]).pvalue)
    assert set(record["difference"]) == {"64", "256"} and record["row"] == "hidden=32"
    ours = 100 * base.mean(0)
    theirs = [98.4, 93.7]  # the paper's argmax Baseline at N = 64 and 256 (16 too: 99.6)
    expected = math.sqrt(((ours - [99.6, *theirs]) ** 2).mean())
    assert record["distance_to_paper"] == pytest.approx(expected)
    assert (record["n_seeds"], record["steps"]) == (5, P.steps["argmax"])
    assert record["timed_steps"] == {"baseline": P.steps["argmax"], "layernorm": P.steps["argmax"] - 20}
    assert record["trained_on"] == ["cpu (baseline)", "cpu (layernorm)"]
    assert record["chance"] == pytest.approx(100 / P.n_classes)


def test_rows_are_sorted_by_what_their_interval_says():
    def record(changes, diff, p, n_seeds=10):
        return {"task": "dictionary", "row": sensitivity.label(changes), "changes": changes, "n_seeds": n_seeds,
                "difference": {"1024": {"diff": diff, "p": p}}, "distance_to_paper": abs(diff)}

    records = [record({}, -3.0, 0.01), record({"lr": 0.003}, 2.0, 0.04), record({"hidden": 64}, 5.0, 0.2),
               record({"hidden": 256}, 1.0, float("nan"))]
    assert row_reports.sorted_by_sign(records, "dictionary", 1024) == {
        "ahead": ["lr=0.003"], "behind": ["defaults"], "cannot tell": ["hidden=64", "hidden=256"]}
    assert row_reports.sorted_by_sign(records, "argmax", 1024) == {"ahead": [], "behind": [], "cannot tell": []}
    signs = lambda rows: row_reports.sign_table({1024: row_reports.sorted_by_sign(rows, "dictionary", 1024)})
    assert signs(records)["N = 1,024"].tolist() == [4, "1: lr=0.003", "1: defaults", 2, "0.2"]  # 4 x 0.05 by chance
    many = [record({"lr": lr}, 2.0, 0.01) for lr in (0.1, 0.2, 0.3, 0.4, 0.5)]  # too many to list: the forest shows them
    assert signs(many)["N = 1,024"].tolist() == [5, "5", "0", 0, "0.2"]
    assert row_reports.closest_to_paper(records, "dictionary")["row"] == "hidden=256"

    # A configuration run again with more seeds counts once, at its most seeds, wherever it is listed.
    again = [record({"lr": 0.003, "n_seeds": 20}, 1.5, 0.6, 20), *records, record({"hidden": 256, "n_seeds": 5}, 0.1, 0.9, 5)]
    assert row_reports.sorted_by_sign(again, "dictionary", 1024) == {
        "ahead": [], "behind": ["defaults"], "cannot tell": ["lr=0.003 (20 seeds)", "hidden=64", "hidden=256"]}
    assert signs(again).loc["configurations", "N = 1,024"] == 4
    closest = row_reports.closest_to_paper(again, "dictionary")  # hidden=256 read at its 10 seeds, not its 5
    assert (closest["row"], closest["n_seeds"]) == ("hidden=256", 10)
    # the same settings listed in another order are the same configuration
    pair = [record({"key_dim": 16, "value_dim": 16}, -1.0, 0.5),
            record({"value_dim": 16, "key_dim": 16, "n_seeds": 20}, -2.0, 0.01, 20)]
    assert row_reports.sorted_by_sign(pair, "dictionary", 1024)["behind"] == ["value_dim=16, key_dim=16 (20 seeds)"]
    assert sum(map(len, row_reports.sorted_by_sign(pair, "dictionary", 1024).values())) == 1


def test_the_row_table_shows_each_rows_difference_and_budget():
    def record(task, row, diff, distance):
        accuracy = {"baseline": {"1024": 50.0}, "layernorm": {"1024": 50.0 + diff}}
        return {"task": task, "row": row, "n_seeds": 10, "steps": 4000, "accuracy": accuracy,
                "difference": {"1024": {"diff": diff, "low": diff - 1, "high": diff + 1, "p": 0.02}},
                "distance_to_paper": distance}

    records = [record("argmax", "defaults", 2.0, 7.0), record("dictionary", "defaults", -1.0, 9.0),
               record("argmax", "hidden=64", -3.25, 4.0)]
    table = row_reports.row_table(records, "argmax", [1024])
    assert table.loc[("hidden=64", "2¹⁰"), "+LN − Baseline [95%]"] == "-3.2 [-4.2, -2.2]"
    assert table.loc[("defaults", "2¹⁰"), "budget"] == "10 x 4,000" and table.loc[("defaults", "2¹⁰"), "p"] == "0.02"


def test_rows_left_out_and_the_cost_of_more_steps():
    planned = [{}, {"hidden": 64}, {"lr": 0.003, "hidden": 64}]
    assert row_reports.not_run([{}, {"hidden": 64, "lr": 0.003}], planned) == ["hidden=64"]
    assert row_reports.not_run(planned, planned) == []
    def record(task, steps, runs, seconds, timed):
        return {"task": task, "steps": steps, "runs": dict(zip(sensitivity.PAIR, runs)),
                "training_s": dict(zip(sensitivity.PAIR, seconds)), "timed_steps": dict(zip(sensitivity.PAIR, timed))}

    records = [record("argmax", 4000, "ab", (1800.0, 900.0), (4000, 2000)),  # b resumed at step 2,000: 1,800 s in all
               record("argmax", 2000, "cd", (360.0, 0.0), (2000, 2000)),
               record("argmax", 4000, "ae", (1800.0, 0.0), (4000, 4000)),  # shares run a: counted once
               record("dictionary", 1500, "fg", (9e9, 9e9), (1500, 1500))]
    # runs a and b: 1 hour at 4,000 steps is 2 at 8,000; c: 0.1 hour at 2,000 steps is 0.4 at 8,000
    assert row_reports.hours_at(records, "argmax", 8000) == pytest.approx(2.4)
    assert row_reports.hours_at(records, "argmax") == pytest.approx(1.1)  # as recorded, the resumed run scaled
    assert row_reports.hours_at(records) == pytest.approx(1.1 + 2 * 9e9 / 3600)
    assert len(row_reports.trained_runs(records, "argmax")) == 5


def test_the_summary_counts_each_tasks_rows_by_sign():
    from vvlib.book.chapters.summary import summary_tables

    def record(task, changes, p_by_n):
        return {"task": task, "row": sensitivity.label(changes), "changes": changes,
                "n_seeds": changes.get("n_seeds", 10),
                "difference": {n: {"diff": diff, "p": p} for n, (diff, p) in p_by_n.items()}}

    results = {"parameters": {"compared_lengths": [1024, 16384]}, "metrics": {"rows": [
        record("argmax", {}, {"1024": (2.0, 0.01), "16384": (-1.0, 0.5)}),
        record("argmax", {"hidden": 64}, {"1024": (-3.0, 0.001), "16384": (-2.0, 0.03)}),
        record("dictionary", {}, {"1024": (-1.0, 0.2), "16384": (-4.0, 0.001)}),
        record("dictionary", {"n_seeds": 20}, {"1024": (-1.0, 0.01), "16384": (-3.0, 0.001)})]}}
    lines = summary_tables.sensitivity_table(results)
    counts = [(l["task"], l["N"], l["configurations"], l["+LN significantly ahead"], l["+LN significantly behind"],
               l["no significant difference"]) for l in lines]
    assert counts == [("argmax", 1024, 2, 1, 1, 0), ("argmax", 16384, 2, 0, 1, 1),
                      ("dictionary", 1024, 1, 0, 1, 0), ("dictionary", 16384, 1, 0, 1, 0)]


def test_the_summary_counts_the_paper_scale_rows_committed_by_sign_beside_those_pending():
    """Chapter 11's results.json keeps its paper-profile rows (sensitivity.paper_scale_records); the summary
    counts the committed ones as it counts the book's, and says how many wait in the GPU queue."""
    from vvlib.book.chapters.summary import summary_tables

    P = runner.resolved("11_sensitivity", "paper", {"store_dir": PAPER_SCALE_STORE})
    records = sensitivity.paper_scale_records(P, [1024, 16384])
    assert [r["row"] for r in records] == [sensitivity.label(row) for row in P.dictionary_rows]
    assert all((r["task"], r["n_seeds"], r["steps"]) == ("dictionary", 100, r["changes"].get("steps", 10_000))
               for r in records)  # the paper's 10,000 steps, but in the row that stops chapter 10's deep model early
    committed = [r for r in records if r["difference"] is not None]
    assert committed[0]["row"] == "defaults" and len(committed) >= 4  # units 1-8 of the queue
    sources = sensitivity.paper_scale_sources(P)  # each committed row's two runs, for the summary's training time
    assert sorted(sources) == sorted(f"paper_scale/dictionary/{r['row']}/{side}" for r in committed
                                     for side in sensitivity.PAIR)
    assert all(s["device"].startswith("NVIDIA") for s in sources.values())
    made_up = [{"task": "dictionary", "row": "defaults", "changes": {}, "n_seeds": 100, "steps": 10_000,
                "difference": {"16384": {"diff": -1.5, "p": 0.04}}},
               {"task": "dictionary", "row": "grad_clip=1.0", "changes": {"grad_clip": 1.0}, "n_seeds": 100,
                "steps": 10_000, "difference": {"16384": {"diff": 0.8, "p": 0.3}}},
               {"task": "dictionary", "row": "dropout=0.1", "changes": {"dropout": 0.1}, "n_seeds": 100,
                "steps": 10_000, "difference": None}]
    results = {"parameters": {"compared_lengths": [16384], "profile": "book"},
               "metrics": {"rows": [], "paper_scale": made_up}}
    assert summary_tables.paper_scale_table(results) == [
        {"task": "dictionary", "N": 16384, "configurations": 2, "+LN significantly ahead": 0,
         "+LN significantly behind": 1, "no significant difference": 1, "pending in the GPU queue": 1}]
    assert summary_tables.paper_scale_table({**results, "metrics": {"rows": [], "paper_scale": []}}) == []


def test_the_summary_counts_each_tasks_rows_by_budget():
    from vvlib.book.chapters.summary import summary_tables

    rows = [{"task": "argmax", "n_seeds": 10, "steps": 4000}, {"task": "argmax", "n_seeds": 20, "steps": 4000},
            {"task": "argmax", "n_seeds": 10, "steps": 4000}, {"task": "dictionary", "n_seeds": 10, "steps": 1500}]
    results = {"parameters": {"profile": "book"}, "metrics": {"rows": rows}}
    table = summary_tables.budget_table(results)
    assert table["configurations"].to_dict() == {("argmax", 10, "4,000"): 2, ("argmax", 20, "4,000"): 1,
                                                 ("dictionary", 10, "1,500"): 1}


def test_a_row_with_more_seeds_is_read_beside_the_row_it_repeats():
    def record(row, changes, n_seeds, diff, p):
        return {"task": "argmax", "row": row, "changes": changes, "n_seeds": n_seeds,
                "difference": {"1024": {"diff": diff, "low": diff - 1, "high": diff + 1, "p": p}}}

    records = [record("defaults", {}, 10, 4.0, 0.048), record("n_seeds=20", {"n_seeds": 20}, 20, 1.5, 0.27),
               record("hidden=64", {"hidden": 64}, 10, -3.0, 0.01)]
    table = row_reports.more_seeds_table(records, "argmax", [1024])
    assert table.to_dict("index") == {
        ("defaults", "1,024", 20): {"+LN minus Baseline [95%]": "+1.5 [+0.5, +2.5]", "p": "0.3", "+LN (p < 0.05)": "neither"},
        ("defaults", "1,024", 10): {"+LN minus Baseline [95%]": "+4.0 [+3.0, +5.0]", "p": "0.048", "+LN (p < 0.05)": "ahead"}}
    assert row_reports.more_seeds_table(records[:1] + records[2:], "argmax", [1024]).empty
    assert row_reports.more_seeds_table(records, "dictionary", [1024]).empty


def test_the_paper_scale_rows_read_what_is_committed_and_mark_the_rest_pending():
    """Chapter 11's paper-profile rows from results/paper: the defaults on the earlier stream are chapter 5's
    committed GPU runs (the same difference as chapter 5's answer), a row not trained is pending."""
    from vvlib.book import runner
    from vvlib.stats import paired_difference

    P = runner.resolved("11_sensitivity", "paper", {"store_dir": PAPER_SCALE_STORE, "draws": "generators",
                                                      "dictionary_rows": [{}, {"grad_clip": 1.0}]})
    table = paper_rows.table(sensitivity.paper_scale_records(P, [1024]), [1024])
    column = "+LN − Baseline, N = 1,024"
    assert table.loc[("dictionary", "grad_clip=1.0"), column] == sensitivity.PENDING
    P5, accuracy, _ = paper_scale.accuracy_runs("05_dictionary_lookup", "dictionary", PAPER_SCALE_STORE)
    j = P5.eval_lengths.index(1024)
    d = paired_difference(100 * accuracy["baseline"][:, j], 100 * accuracy["layernorm"][:, j])
    assert table.loc[("dictionary", "defaults"), column].startswith(f"{d['diff']:+.1f} [{d['low']:+.1f}, {d['high']:+.1f}]")


def test_the_paper_scale_verdict_counts_committed_rows_by_sign_and_tests_the_papers_gain_against_each_interval(
        monkeypatch):
    """Under chapter 11's paper-scale table: of the rows committed, how many +LN is significantly ahead in,
    behind in, or neither, and whether a row's interval holds the paper's +LN minus Baseline (Table 2, +4.6
    points at N = 16,384)."""
    P = runner.resolved("11_sensitivity", "paper", {"store_dir": PAPER_SCALE_STORE})
    assert sensitivity.paper_gain("dictionary", 16384) == pytest.approx(4.6)
    made_up = {"{}": (-1.5, -2.9, -0.1, 0.04), '{"lr_schedule": "cosine"}': (3.0, 1.0, 5.0, 0.001),
               '{"grad_clip": 1.0}': (0.2, -0.5, 0.9, 0.6)}

    def stored(P_, task, row, at, device="cpu"):
        d = made_up.get(json.dumps(row))
        diff, low, high, p = d if d else (None,) * 4
        return None if d is None else ({"difference": {"16384": dict(diff=diff, low=low, high=high, p=p)}}, {})

    monkeypatch.setattr(sensitivity, "stored_row", stored)
    signs = lambda: paper_rows.sign_table(sensitivity.paper_scale_records(P, [16384]), "dictionary", [16384])
    row = signs()["N = 16,384"]
    assert row[["configurations", "neither", "expected by chance"]].tolist() == [3, 1, "0.2"]  # 3 x 0.05
    assert (row["+LN ahead (p < 0.05)"], row["+LN behind (p < 0.05)"]) == ("1: lr_schedule=cosine: +3.0", "1: defaults: -1.5")
    assert (row["the paper's +LN minus Baseline"], row["a 95% interval holding it"]) == ("+4.6", "lr_schedule=cosine")
    waiting = len(P.dictionary_rows) - 3
    assert paper_rows.pending(sensitivity.paper_scale_records(P, [16384]), "dictionary") == \
        f"{waiting} more rows of dictionary are pending in the GPU queue."
    made_up['{"lr_schedule": "cosine"}'] = (0.8, 0.4, 1.3, 0.0001)  # ahead, but short of the paper's gain
    assert signs().loc["a 95% interval holding it", "N = 16,384"] == "none"
    monkeypatch.setattr(sensitivity, "stored_row", lambda *a, **k: None)
    assert signs().empty  # nothing committed: nothing shown


def test_the_paper_scale_row_closest_to_the_papers_baseline_is_named_with_its_difference():
    """Among the committed paper-scale rows, the smallest RMS distance to the paper's Baseline wins; a pending
    row (no difference) and another task's rows are not candidates; nothing committed, nothing said."""
    def record(row, distance, diff=None):
        d = None if diff is None else {"1024": {"diff": diff, "low": diff - 1, "high": diff + 1, "p": 0.001}}
        return {"task": "dictionary", "row": row, "changes": {}, "n_seeds": 100, "steps": 10_000, "difference": d,
                "distance_to_paper": distance}

    records = [record("defaults", 11.1, -1.8), record("weight_decay=0.1", 6.9, -15.6), record("pending", None)]
    records[1]["changes"] = {"weight_decay": 0.1}
    said = paper_rows.closest(records, "dictionary", [1024])
    assert "*weight_decay=0.1*, lies 6.9 points" in said and said.endswith("the paper: +4.1).")
    assert paper_rows.closest(records, "argmax", [1024]) == ""
    assert paper_rows.closest([record("pending", None)], "dictionary", [1024]) == ""
