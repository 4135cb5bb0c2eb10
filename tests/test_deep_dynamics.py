"""Chapter 5's measured runs of chapter 10's deep model, and chapter 10's reading of them."""

import dataclasses

import matplotlib
import numpy as np
import pandas as pd
import pytest

from vvlib import compare, handover
from vvlib.book import deep_dynamics, norm_rows, page, runner
from vvlib.experiments.reports import along_training, dynamics_plots, layer_rows
from vvlib.experiments.setups import dynamics_runs, sensitivity, variants

matplotlib.use("Agg")
DEEP = {"heads": 2, "layers": 2}


def test_the_book_measures_the_deep_baseline_and_both_placements_of_its_norm_at_the_constant_rate():
    P = runner.resolved("10_beyond", "book")
    P_measured = runner.resolved("05_dictionary_lookup", "book")
    rows = deep_dynamics.deep_rows(P, P_measured)
    deep, ln, last = {"heads": 4, "layers": 2}, {"variant": "layernorm"}, {"norm_layers": "last"}
    assert rows == [deep, {**deep, **ln}, {**deep, **ln, **last}, {**deep, **ln, "start_from_step": 400},
                    {**deep, **ln, **last, "start_from_step": 400}, *({**deep, **ln, "start_from_step": step}
                                                                       for step in (50, 100, 200, 300))]
    assert [deep_dynamics.row_label(r) for r in rows] == [
        "Deep", "Deep (+ LN)", norm_rows.LAST_LABEL, "Deep (+ LN), from the Baseline's step 400",
        f"{norm_rows.LAST_LABEL}, from the Baseline's step 400",
        *(f"Deep (+ LN), from the Baseline's step {step}" for step in (50, 100, 200, 300))]
    task = variants.task_config(P_measured, "dictionary")
    models = [dynamics_runs.row_configs(P_measured, task, r)[0] for r in rows]
    assert [(m.heads, m.layers, m.norm, m.norm_layers) for m in models] == [
        (4, 2, "none", "all"), (4, 2, "layernorm", "all"), (4, 2, "layernorm", "last"), (4, 2, "layernorm", "all"),
        (4, 2, "layernorm", "last"), *[(4, 2, "layernorm", "all")] * 4]
    starts = [dynamics_runs.row_configs(P_measured, task, r)[1].start_from_step for r in rows]
    assert starts == [0, 0, 0, 400, 400, 50, 100, 200, 300]
    # and, in a figure of their own, +LN taking over only the Baseline's weights or only its AdamW moments
    assert list(deep_dynamics.PART_NAMES) == list(handover.HANDOVERS)  # the page names every handover train.py knows
    parts = deep_dynamics.part_rows(P, P_measured)
    handed = lambda step, **more: {**deep, **ln, "start_from_step": step, **more}
    assert parts == [[handed(100), handed(100, handover="weights"), handed(100, handover="moments")],
                     [handed(100, n_seeds=12), handed(100, n_seeds=12, handover="weights"),
                      handed(100, n_seeds=12, handover="weights and second moments"),
                      *(handed(100, n_seeds=12, handover="weights", handover_warmup_steps=n) for n in (100, 1000)),
                      *(handed(100, n_seeds=12, handover_warmup_steps=n) for n in (100, 20, 5)),
                      handed(100, n_seeds=12, handover="all, first moments negated"),
                      handed(100, n_seeds=12, handover_data="fresh")],
                     *([handed(100, n_seeds=12, first_seed=first),
                        handed(100, n_seeds=12, first_seed=first, handover="weights and second moments"),
                        handed(100, n_seeds=12, first_seed=first, handover_warmup_steps=20),
                        handed(100, n_seeds=12, first_seed=first, handover="all, first moments negated"),
                        handed(100, n_seeds=12, first_seed=first, handover_data="fresh")]
                       for first in (12, 24, 36)),
                     [handed(100, n_seeds=12, first_seed=48), handed(100, n_seeds=12, first_seed=48, handover_data="fresh")],
                     [handed(200), handed(200, handover="weights"), handed(200, handover="moments")],
                     [handed(200, handover=part) for part in ("weights", "input weights", "attention weights",
                                                              "readout weights")],
                     [handed(200, handover=part) for part in ("attention weights", "first layer weights",
                                                              "later layer weights",
                                                              "first layer query and key weights",
                                                              "first layer value weights")]]
    # every partial handover has its panel, once
    assert sorted(deep_dynamics.PANEL_OF) == sorted(set(handover.HANDOVERS) - {"all"})
    assert sum(len(splits) for _, _, splits in deep_dynamics.PANELS.values()) == len(handover.HANDOVERS) - 1
    assert [deep_dynamics.row_label(r) for r in parts[6]] == [
        "Deep (+ LN), from the Baseline's step 200", "Deep (+ LN), from the Baseline's step 200, its weights only (AdamW "
        "afresh)", "Deep (+ LN), from the Baseline's step 200, its AdamW moments only (on the initial weights)"]
    assert deep_dynamics.row_label(parts[1][1]) == ("Deep (+ LN), from the Baseline's step 100, its weights only (AdamW "
                                                    "afresh), 12 seeds")
    assert [dynamics_runs.row_configs(P_measured, task, r)[1].handover for r in parts[0]] == ["all", "weights", "moments"]
    assert [dynamics_runs.row_configs(P_measured, task, r)[1].n_seeds for r in parts[1]] == [12] * 10
    assert [dynamics_runs.row_configs(P_measured, task, r)[1].handover_warmup_steps for r in parts[1]] == [
        0, 0, 0, 100, 1000, 100, 20, 5, 0, 0]
    assert [dynamics_runs.row_configs(P_measured, task, r)[1].handover_data for r in parts[1]] == [
        "carried"] * 9 + ["fresh"]
    # seeds 12-23, 24-35 and 36-47 of five of them, each drawn with the seeds before it as one run of 24, 36 or 48
    configs = [dynamics_runs.row_configs(P_measured, task, r)[1] for r in parts[2] + parts[3] + parts[4]]
    assert [(c.first_seed, c.n_seeds) for c in configs] == [(12, 12)] * 5 + [(24, 12)] * 5 + [(36, 12)] * 5
    assert [deep_dynamics.seed_runs(P_measured, r) for r in parts[2]] == [
        [{k: v for k, v in r.items() if k != "first_seed"}, r] for r in parts[2]]
    assert [deep_dynamics.seed_runs(P_measured, r) for r in parts[3]] == [
        [parts[1][0], parts[2][0], parts[3][0]], [parts[1][2], parts[2][1], parts[3][1]],
        [parts[1][6], parts[2][2], parts[3][2]], [parts[1][8], parts[2][3], parts[3][3]],
        [parts[1][9], parts[2][4], parts[3][4]]]
    assert [deep_dynamics.seed_runs(P_measured, r)[-2:] for r in parts[4]] == [[a, b] for a, b in zip(parts[3], parts[4])]
    # and seeds 48-59 of all of it, carried and fresh, each the fifth of its chain
    assert [deep_dynamics.seed_runs(P_measured, r)[-2:] for r in parts[5]] == [[parts[4][0], parts[5][0]],
                                                                              [parts[4][4], parts[5][1]]]
    assert [len(deep_dynamics.seed_runs(P_measured, r)) for r in parts[5]] == [5, 5]
    assert deep_dynamics.row_label(parts[2][1]) == ("Deep (+ LN), from the Baseline's step 100, its weights and AdamW's "
                                                    "second moments only (its first moments afresh), seeds 12-23")
    assert all(handover.baseline_of(m) == models[0] for m in models[3:])
    # the same runs as chapter 11's rows of the model, but for their number of seeds
    P_rows = runner.resolved("11_sensitivity", "book")
    row11 = sensitivity.rows_of_model(P_rows, "dictionary", {"heads": 4, "layers": 2})[0]
    P_row = sensitivity.row_params(P_rows, "dictionary", row11)
    train_cfg = dynamics_runs.row_configs(P_measured, task, rows[0])[1]
    assert train_cfg == dataclasses.replace(variants.train_config(P_row), n_seeds=P_measured.dynamics_seeds)
    assert models[0] == variants.model_config(P_row, variants.task_config(P_row, "dictionary"), "baseline")


def test_chapter_10_reads_the_measured_runs_and_trains_nothing(tmp_path, monkeypatch):
    P = runner.resolved("10_beyond", "ci", {"store_dir": str(tmp_path), "deep_heads": 2, "deep_layers": 2})
    measured = {"store_dir": str(tmp_path), "dynamics_rows": [{}, DEEP, {**DEEP, "variant": "layernorm"},
                                                              {**DEEP, "lr": 0.01}]}
    P_measured = runner.resolved("05_dictionary_lookup", "ci", measured)
    assert deep_dynamics.deep_rows(P, P_measured) == [DEEP, {**DEEP, "variant": "layernorm"}]  # not the other rate
    monkeypatch.setattr(deep_dynamics, "resolved",
                        lambda name, profile, overrides: runner.resolved(name, profile, {**measured, **overrides}))
    _, tables, provenance, missing = deep_dynamics.stored_tables(P, "cpu")
    assert (tables, provenance, missing) == ({}, {}, ["Deep", "Deep (+ LN)"])
    assert deep_dynamics.show(P, "cpu") == {} and not list(tmp_path.iterdir())  # reading trains nothing
    task = variants.task_config(P_measured, "dictionary")
    model_cfg, train_cfg = dynamics_runs.row_configs(P_measured, task, DEEP)
    computed, _ = dynamics_runs.measured(str(tmp_path), model_cfg, train_cfg, P_measured.dynamics_every, "cpu",
                                         progress=False)
    _, tables, provenance, missing = deep_dynamics.stored_tables(P, "cpu")
    assert list(tables) == ["Deep"] and missing == ["Deep (+ LN)"]
    assert np.allclose(tables["Deep"]["entropy_layer2"], computed["entropy_layer2"])
    assert set(deep_dynamics.show(P, "cpu")) == {"deep_dynamics/Deep"}


def test_the_layer_figure_has_each_layers_entropy_and_share_on_the_answer_beside_the_loss():
    steps = np.arange(1, 6) * 10
    frame = pd.DataFrame({"step": steps, "seed": 0, "train_loss": 1.0 / steps, "probe_loss": 2.0 / steps,
                          "grad_norm": 3.0, "weight_norm": 4.0,
                          **{f"{c}_layer{k}": np.linspace(2.0, 0.5, 5) for c in ("entropy", "on_answer", "qk_grad",
                                                                                  "qk_norm") for k in (1, 2)}})
    figure = dynamics_plots.layer_dynamics({"Deep": frame}, 2, 16)
    axes = figure.axes
    assert [ax.get_title() for ax in axes] == [
        "training loss", "layer 1: attention entropy (nats)", "layer 2: attention entropy (nats)",
        "probe loss", "layer 1: share of largest weights on the answer", "layer 2: share of largest weights on the answer",
        "gradient norm, all weights", "layer 1: gradient norm, query and key", "layer 2: gradient norm, query and key",
        "weight norm, all weights", "layer 1: norm of query and key weights", "layer 2: norm of query and key weights"]
    assert np.allclose(axes[1].get_ylim(), (0, 1.05 * np.log(16))) and np.allclose(axes[4].get_ylim(), (0, 1))
    assert np.allclose(axes[11].lines[0].get_ydata(), np.linspace(2.0, 0.5, 5))  # layer 2's weight norm, by step
    uniform = [line.get_ydata()[0] for line in axes[1].lines if line.get_linestyle() == "--"]
    assert np.allclose(uniform, [np.log(16)])
    assert np.allclose([line.get_ydata()[0] for line in axes[4].lines if line.get_linestyle() == "--"], [1 / 16])


def test_chapter_10_reads_the_rows_that_take_the_baselines_run_over_beside_their_own_start(tmp_path, monkeypatch):
    """Chapter 11's handover rows of the deep model: each paired with the same row from its own start (the same
    Baseline run), left out of the rate rows, shown from the store only; what is missing is named."""
    from vvlib.book import decay_rows

    rows = [{**DEEP, "steps": 6}, {**DEEP, "norm_layers": "last", "steps": 6}, {**DEEP, "steps": 6, "start_from_step": 2},
            {**DEEP, "norm_layers": "last", "steps": 6, "start_from_step": 2}]
    P_rows = runner.resolved("11_sensitivity", "ci", {"store_dir": str(tmp_path), "argmax_rows": [], "dictionary_rows": rows,
                                                      "n_seeds": 2, "eval_lengths": [16, 64], "compared_lengths": [64]})
    P = runner.resolved("10_beyond", "ci", {"store_dir": str(tmp_path), "deep_heads": 2, "deep_layers": 2})
    monkeypatch.setattr(decay_rows, "scales", lambda P, device: {"this page's store": (P_rows, device)})
    assert deep_dynamics.handover_rows(P, P_rows) == [(rows[2], rows[0]), (rows[3], rows[1])]
    assert [name for name, *_ in decay_rows.stored_rows(P, P_rows, "cpu")] == ["constant rate, 6 steps"]  # not a rate
    assert deep_dynamics.show_handover(P, "cpu") == {} and not list(tmp_path.glob("train-*"))  # reading trains nothing
    trained = {}
    for _, row, P_row in sensitivity.check_rows(P_rows)[::2]:  # the every-layer rows, from the start and taken over
        trained[row.get("start_from_step", 0)] = sensitivity.train_row(P_row, "dictionary", "cpu")
    assert len(list(tmp_path.glob("train-*"))) == 3  # one Baseline run for both rows
    assert np.array_equal(trained[0][0]["baseline"], trained[2][0]["baseline"])
    shown = []
    monkeypatch.setattr(deep_dynamics, "display", shown.append)
    monkeypatch.setattr(page, "display", lambda *items: shown.extend(items))  # show_figure's
    monkeypatch.setattr(decay_rows, "display", shown.append)  # each layer's attention (decay_rows.show_layers)
    sources = deep_dynamics.show_handover(P, "cpu")
    label = "Deep (+ LN), from the Baseline's step 2"
    said = " ".join(item.data for item in shown if isinstance(getattr(item, "data", None), str))
    tables = [item for item in shown if isinstance(item, pd.DataFrame)]
    expected = layer_rows.paired_rows_table([(label, trained[0][0], trained[2][0])], [16, 64], [64],
                                            "+LN from its own start")  # the row taken over against its own start
    assert any(t.equals(expected) for t in tables)
    assert f"not stored yet: {norm_rows.LAST_LABEL}, from the Baseline's step 2" in said
    assert f"Each layer's attention not probed yet: {label} (" in said
    assert set(sources) == {f"handover/this page's store/{label}/{side}" for side in sensitivity.PAIR}
    assert sources[f"handover/this page's store/{label}/layernorm"] == trained[2][1]["layernorm"]["provenance"]


def test_chapter_10_draws_each_seed_of_the_partial_handovers_and_counts_those_that_attend(tmp_path, monkeypatch):
    """show_parts: per step, the row taking all of the Baseline's run over and those taking part of it, read from the
    store only (what is missing named); each seed a line of its own; the sentence counts, per run, the seeds whose
    first layer ends below half of ln N, as computed here from the table."""
    ln = {**DEEP, "variant": "layernorm", "start_from_step": 20}
    rows = [ln, {**ln, "handover": "weights"}, {**ln, "handover": "moments"}, {**DEEP, "variant": "layernorm"}]
    measured = {"store_dir": str(tmp_path), "dynamics_rows": rows, "dynamics_seeds": 2}
    P = runner.resolved("10_beyond", "ci", {"store_dir": str(tmp_path), "deep_heads": 2, "deep_layers": 2})
    monkeypatch.setattr(deep_dynamics, "resolved",
                        lambda name, profile, overrides: runner.resolved(name, profile, {**measured, **overrides}))
    P_measured = deep_dynamics.measured_params(P)
    assert deep_dynamics.part_rows(P, P_measured) == [rows[:3]]
    shown = []
    monkeypatch.setattr(deep_dynamics, "display", shown.append)
    monkeypatch.setattr(page, "display", lambda *items: shown.extend(items))  # show_figure's
    assert deep_dynamics.show_parts(P, "cpu") == {} and not list(tmp_path.iterdir())  # reading trains nothing
    task = variants.task_config(P_measured, "dictionary")
    computed = {r.get("handover", "all"): dynamics_runs.measured_row(P_measured, task, r, "cpu", progress=False)[0]
                for r in rows[:2]}
    shown.clear()
    sources = deep_dynamics.show_parts(P, "cpu")
    assert set(sources) == {f"handover_parts/{deep_dynamics.row_label(r)}" for r in rows[:2]}
    figure = next(item for item in shown if isinstance(item, matplotlib.figure.Figure))
    (ax,) = figure.axes
    assert ax.get_title() == "+LN from the Baseline's step 20, 2 seeds"
    seed_lines = [line for line in ax.lines if line.get_linestyle() == "-"]
    assert len(seed_lines) == 2 * 2  # two runs stored, two seeds each
    said = " ".join(item.data for item in shown if isinstance(getattr(item, "data", None), str))
    (counts,) = [item for item in shown if isinstance(item, pd.DataFrame) and "seeds that attend" in item]
    length = P_measured.max_len
    for part, table in computed.items():
        entropy = table.pivot(index="step", columns="seed", values="entropy_layer1")
        end = entropy.iloc[-max(1, len(entropy) // 10):].mean()  # the last tenth of the measurements
        counted = int((end < np.log(length) / 2).sum())
        assert counts.loc[deep_dynamics.PART_NAMES[part], "seeds that attend"] == f"{counted} of 2"
    assert f"Not stored yet: {deep_dynamics.row_label(rows[2])}" in said


def test_rows_on_later_seeds_are_drawn_with_the_rows_on_the_seeds_before_them_as_one_run(tmp_path, monkeypatch, one_thread):
    """A row on later seeds (first_seed) is read with the row of the same settings on the seeds before it: its panel
    draws and counts both rows' seeds as one run, which measures what one run of all those seeds measures (the same
    batches, data and initial weights per seed); the panel of the first seeds stays as it was."""
    ln = {**DEEP, "variant": "layernorm", "start_from_step": 20, "n_seeds": 1}
    rows = [ln, {**ln, "handover": "weights"}, {**ln, "first_seed": 1}, {**ln, "first_seed": 1, "handover": "weights"}]
    measured = {"store_dir": str(tmp_path), "dynamics_rows": rows}
    P = runner.resolved("10_beyond", "ci", {"store_dir": str(tmp_path), "deep_heads": 2, "deep_layers": 2})
    monkeypatch.setattr(deep_dynamics, "resolved",
                        lambda name, profile, overrides: runner.resolved(name, profile, {**measured, **overrides}))
    P_measured = deep_dynamics.measured_params(P)
    assert deep_dynamics.part_rows(P, P_measured) == [rows[:2], rows[2:]]
    assert deep_dynamics.seed_runs(P_measured, rows[3]) == [rows[1], rows[3]] and deep_dynamics.seed_runs(
        P_measured, rows[1]) == [rows[1]]
    assert deep_dynamics.row_label(rows[3]).endswith("its weights only (AdamW afresh), seed 1")
    task = variants.task_config(P_measured, "dictionary")
    for row in rows[:3]:  # the last row not stored: its pooled run is left out whole, and named
        dynamics_runs.measured_row(P_measured, task, row, "cpu", progress=False)
    shown = []
    monkeypatch.setattr(deep_dynamics, "display", shown.append)
    monkeypatch.setattr(page, "display", lambda *items: shown.extend(items))  # show_figure's
    sources = deep_dynamics.show_parts(P, "cpu")
    assert set(sources) == {f"handover_parts/{deep_dynamics.row_label(r)}" for r in rows[:3]}
    figure = next(item for item in shown if isinstance(item, matplotlib.figure.Figure))
    assert [ax.get_title() for ax in figure.axes] == ["+LN from the Baseline's step 20, 1 seed",
                                                      "+LN from the Baseline's step 20, 2 seeds"]
    pooled = figure.axes[1]
    assert len([line for line in pooled.lines if line.get_linestyle() == "-"]) == 2  # one run of two seeds
    said = " ".join(item.data for item in shown if isinstance(getattr(item, "data", None), str))
    assert f"Not stored yet: {deep_dynamics.row_label(rows[3])}" in said
    # the two rows of one seed each measure what one row of both seeds measures
    both, _ = dynamics_runs.measured_row(P_measured, task, {**ln, "n_seeds": 2}, "cpu", progress=False)
    tables, _, missing = deep_dynamics.read_pooled(P_measured, [rows[2]], "cpu")
    assert missing == [] and list(tables) == [deep_dynamics.row_label(rows[2])]
    joined = tables[deep_dynamics.row_label(rows[2])].sort_values(["step", "seed"]).reset_index(drop=True)
    both = both.sort_values(["step", "seed"]).reset_index(drop=True)
    assert list(joined["seed"].unique()) == [0, 1] and joined[["step", "seed"]].equals(both[["step", "seed"]])
    assert np.allclose(joined["entropy_layer1"], both["entropy_layer1"], rtol=1e-4, atol=1e-5)
    assert np.allclose(joined["train_loss"], both["train_loss"], rtol=1e-4, atol=1e-6)


def test_rows_that_split_the_weights_form_panels_of_their_own_after_the_whole_they_split(tmp_path, monkeypatch):
    """part_rows: the rows splitting the weights by part of the model follow the row of all the weights (which also
    sits in its step's panel of the state's parts), and those splitting the attention layers' weights follow the row
    of those (which also sits in the panel of the model's parts), panel after panel; a step with no row of the whole
    has its panels all the same."""
    ln = {**DEEP, "variant": "layernorm"}
    at = lambda step, part: {**ln, "start_from_step": step, **({} if part == "all" else {"handover": part})}
    rows = [at(20, "first layer weights"), at(20, "attention weights"), at(20, "all"), at(20, "weights"),
            at(10, "input weights"), at(20, "readout weights"), at(10, "moments"), at(10, "later layer weights")]
    P = runner.resolved("10_beyond", "ci", {"store_dir": str(tmp_path), "deep_heads": 2, "deep_layers": 2})
    monkeypatch.setattr(deep_dynamics, "resolved", lambda name, profile, overrides: runner.resolved(
        name, profile, {"dynamics_rows": rows, "dynamics_seeds": 2, **overrides}))
    assert deep_dynamics.part_rows(P, deep_dynamics.measured_params(P)) == [
        [at(10, "moments")], [at(10, "input weights")], [at(10, "later layer weights")],
        [at(20, "all"), at(20, "weights")], [at(20, "weights"), at(20, "attention weights"), at(20, "readout weights")],
        [at(20, "attention weights"), at(20, "first layer weights")]]
    assert [deep_dynamics.row_label(at(20, part)) for part in handover.PART_HANDOVERS] == [
        "Deep (+ LN), from the Baseline's step 20, its embeddings' and encoder's weights only (AdamW afresh)",
        "Deep (+ LN), from the Baseline's step 20, its attention layers' weights only (AdamW afresh)",
        "Deep (+ LN), from the Baseline's step 20, its first attention layer's weights only (AdamW afresh)",
        "Deep (+ LN), from the Baseline's step 20, its first attention layer's query and key weights only (AdamW "
        "afresh)", "Deep (+ LN), from the Baseline's step 20, its first attention layer's value weights only (AdamW "
        "afresh)", "Deep (+ LN), from the Baseline's step 20, its later attention layers' weights only (AdamW afresh)",
        "Deep (+ LN), from the Baseline's step 20, its readout's weights only (AdamW afresh)"]


def test_rows_that_warm_the_rate_up_again_after_the_handover_share_its_panel_under_names_of_their_own(tmp_path,
                                                                                                        monkeypatch):
    """A row that differs from another only in handover_warmup_steps is drawn in the same panel, after it, and named
    apart (all of the run so warmed up too, beside all of it without) (the panel's legend and the sentence are keyed by these names, so two alike would hide a run)."""
    at = lambda **kw: {**DEEP, "variant": "layernorm", "start_from_step": 20, "n_seeds": 3, **kw}
    rows = [at(), at(handover="weights"), at(handover="weights", handover_warmup_steps=10),
            at(handover="weights", handover_warmup_steps=1000), at(handover_warmup_steps=10)]
    P = runner.resolved("10_beyond", "ci", {"store_dir": str(tmp_path), "deep_heads": 2, "deep_layers": 2})
    monkeypatch.setattr(deep_dynamics, "resolved", lambda name, profile, overrides: runner.resolved(
        name, profile, {"dynamics_rows": rows, "dynamics_seeds": 2, **overrides}))
    assert deep_dynamics.part_rows(P, deep_dynamics.measured_params(P)) == [rows]
    assert [deep_dynamics.part_name(row) for row in rows[1:]] == [
        "its weights only (AdamW afresh)", "its weights only (AdamW afresh), the rate warmed up again over 10 steps",
        "its weights only (AdamW afresh), the rate warmed up again over 1,000 steps",
        "its weights and AdamW moments, the rate warmed up again over 10 steps"]
    assert deep_dynamics.row_label(rows[3]) == ("Deep (+ LN), from the Baseline's step 20, its weights only (AdamW "
                                                "afresh), the rate warmed up again over 1,000 steps, 3 seeds")
    assert deep_dynamics.row_label(rows[0]) == "Deep (+ LN), from the Baseline's step 20, 3 seeds"


def test_four_panels_of_seeds_or_more_are_drawn_two_to_a_row_and_a_run_keeps_its_colour_in_every_panel():
    frame = pd.DataFrame({"step": [100, 100, 200, 200], "seed": [0, 1] * 2, "entropy_layer1": [2.0, 2.5, 0.5, 2.4]})
    for n, shape in ((3, (1, 3)), (4, (2, 2)), (5, (3, 2))):
        figure = dynamics_plots.seed_entropy_lines({f"panel {i}": {"all": frame} for i in range(n)}, 1, 16)
        assert len(figure.axes) == n  # no empty axes left
        assert [ax.get_title() for ax in figure.axes] == [f"panel {i}" for i in range(n)]
        grid = figure.axes[0].get_subplotspec().get_gridspec()
        assert (grid.nrows, grid.ncols) == shape
        labelled = [ax.get_ylabel() != "" for ax in figure.axes]
        assert labelled == [i % shape[1] == 0 for i in range(n)]
        matplotlib.pyplot.close(figure)
    # a title too long for half the figure's width is drawn in two lines
    long = "+LN from the Baseline's step 200, 4 seeds, which part's weights"
    figure = dynamics_plots.seed_entropy_lines({long: {"all": frame}, "short": {"all": frame}}, 1, 16)
    assert [ax.get_title() for ax in figure.axes] == ["+LN from the Baseline's step 200, 4 seeds, which\npart's weights",
                                                      "short"]
    matplotlib.pyplot.close(figure)
    # a run keeps its colour from panel to panel, whichever runs a panel has
    figure = dynamics_plots.seed_entropy_lines({"a": {"all": frame, "weights": frame}, "b": {"weights": frame, "moments": frame}}, 1, 16)
    colour = lambda ax, label: next(line.get_color() for line in ax.lines if line.get_label() == label)
    a, b = figure.axes
    assert colour(a, "weights") == colour(b, "weights") and len({colour(a, "all"), colour(a, "weights"), colour(b, "moments")}) == 3
    matplotlib.pyplot.close(figure)
    # more runs than the default palette's 10 colours (chapter 10 has 13), some in two panels: no two runs of a
    # panel alike, each run one colour throughout
    many = {f"panel {i}": {f"run {j}": frame for j in range(3 * i, 3 * i + 5)} for i in range(4)}
    figure = dynamics_plots.seed_entropy_lines(many, 1, 16)
    seen = [{line.get_label(): tuple(line.get_color()) for line in ax.lines if line.get_label().startswith("run")}
            for ax in figure.axes]
    assert [len(set(panel.values())) for panel in seen] == [5] * 4
    assert all(panel[run] == other[run] for panel in seen for other in seen for run in set(panel) & set(other))
    assert len({run for panel in seen for run in panel}) == 14
    matplotlib.pyplot.close(figure)
    # a panel of more runs than the palette has colours still gets one colour each
    crowded = dynamics_plots.run_colours({"a": {f"run {j}": None for j in range(20)}})
    assert len(set(crowded.values())) == 20
    with pytest.raises(ValueError, match="at most 20 runs apart; 'run 20' is one too many"):
        dynamics_plots.run_colours({"a": {f"run {j}": None for j in range(21)}})


def test_the_seed_figure_draws_every_seed_in_its_runs_colour_with_uniform_and_half_of_it_marked():
    steps = np.arange(1, 5) * 100
    frame = lambda values: pd.DataFrame({"step": np.repeat(steps, 2), "seed": [0, 1] * 4, "entropy_layer1": values})
    panels = {"from step 100": {"all": frame([2.0, 2.5, 1.0, 2.5, 0.5, 2.4, 0.1, 2.4]), "weights": frame([2.7] * 8)}}
    figure = dynamics_plots.seed_entropy_lines(panels, 1, 16)
    (ax,) = figure.axes
    seeds = [line for line in ax.lines if line.get_linestyle() == "-"]
    assert [list(line.get_ydata()) for line in seeds[:2]] == [[2.0, 1.0, 0.5, 0.1], [2.5, 2.5, 2.4, 2.4]]
    assert seeds[0].get_color() == seeds[1].get_color() != seeds[2].get_color()
    marks = sorted(line.get_ydata()[0] for line in ax.lines if line.get_linestyle() in ("--", ":"))
    assert np.allclose(marks, [np.log(16) / 2, np.log(16)])
    assert np.allclose(along_training.entropy_at_end(panels["from step 100"]["all"], 1), [0.1, 2.4])  # the last of 4
    table = along_training.seeds_below_table(panels["from step 100"], 1, 16)
    assert table.to_dict("index") == {"all": {"seeds that attend": "1 of 2", "count against the first's": "",
                                              "same seeds as the first's": ""},
                                      "weights": {"seeds that attend": "0 of 2", "count against the first's": "p = 1",
                                                  "same seeds as the first's": ""}}
    # one run attending in some seeds only: nothing to coincide with


def test_the_seed_table_says_whether_a_panels_runs_attend_in_the_same_seeds():
    """shared_hits_p of the runs' attending seeds, where at least two runs on the same seeds attend in some but not
    all: for each run with the first, and across a panel of more than two; nothing where the runs' seeds differ."""
    from vvlib.stats import shared_hits_p

    ends = {"a": [0.1, 0.1, 0.1, 2.5, 2.5, 2.5], "b": [0.1, 0.1, 0.1, 2.5, 2.5, 2.5], "c": [0.1, 0.1, 2.5, 0.1, 2.5, 2.5]}
    run = lambda end, seeds=range(6): pd.DataFrame({"step": [100] * 6, "seed": list(seeds), "entropy_layer1": end})
    table = along_training.seeds_below_table({label: run(end) for label, end in ends.items()}, 1, 16)
    hits = {label: [e < np.log(16) / 2 for e in end] for label, end in ends.items()}
    p, with_b, with_c = (shared_hits_p(h) for h in (list(hits.values()), [hits["a"], hits["b"]], [hits["a"], hits["c"]]))
    assert 0 < p < 0.1 and table.loc["a", "same seeds across the panel"] == f"p = {compare.format_p(p)}"
    assert list(table.loc["c"]) == ["3 of 6", "p = 1", f"p = {compare.format_p(with_c)}", ""]
    # a and b attend in the same 3 of 6 seeds (by chance 1 in 20), a and c in 2 of their 3 (as often as not)
    assert with_b == pytest.approx(1 / 20, abs=0.01) and with_c > 0.3
    assert table.loc["b", "same seeds as the first's"] == f"p = {compare.format_p(with_b)}"
    apart = along_training.seeds_below_table({"a": run(ends["a"]), "b": run(ends["b"], range(6, 12))}, 1, 16)
    assert list(apart.loc["b"]) == ["3 of 6", "p = 1", ""]
    # two runs: the pair's p alone, not again across the panel
    pair = along_training.seeds_below_table({"a": run(ends["a"]), "c": run(ends["c"])}, 1, 16)
    assert pair.loc["c", "same seeds as the first's"] == f"p = {compare.format_p(with_c)}"
    assert "same seeds across the panel" not in pair
    # three runs attending in the same 6 of 12 seeds: by chance 1 in 924 x 924, so none of the 20,000 draws is as
    # large, and the table gives the least p the draws can give as a bound
    same = pd.DataFrame({"step": [100] * 12, "seed": range(12), "entropy_layer1": [0.1] * 6 + [2.5] * 6})
    table = along_training.seeds_below_table({label: same for label in "abc"}, 1, 16)
    assert table.loc["a", "same seeds across the panel"] == "p < 0.0001 (no draw as large)"
    assert "1.39 nats, half of ln 16" in along_training.seeds_below_note(1, 16)


def test_the_seed_grid_colours_each_seeds_entropy_at_the_end_and_dots_the_seeds_that_attend(monkeypatch):
    """shared_seed_ends: runs by seeds of entropy_at_end where the runs share their seeds and two of them attend in
    some but not all; seed_grid draws it cell for cell, a dot where a seed attends and each run's count by its
    name; show_parts' grid holds the panels that can be asked, and only those."""
    ends = {"a": [0.1, 0.1, 0.1, 2.5, 2.5, 2.5], "b": [0.1, 2.6, 0.1, 2.5, 2.5, 2.7], "c": [2.6] * 6}
    run = lambda end, seeds=range(6): pd.DataFrame({"step": [100] * 6, "seed": list(seeds), "entropy_layer1": end})
    tables = {label: run(end) for label, end in ends.items()}
    grid = along_training.shared_seed_ends(tables, 1, 16)
    assert list(grid.index) == ["a", "b", "c"] and list(grid.columns) == list(range(6))
    assert np.allclose(grid.to_numpy(), list(ends.values()))
    assert along_training.shared_seed_ends({"a": tables["a"], "c": tables["c"]}, 1, 16) is None  # one run to place
    assert along_training.shared_seed_ends({"a": tables["a"], "b": run(ends["b"], range(6, 12))}, 1, 16) is None  # other seeds
    figure = dynamics_plots.seed_grid({"panel": grid}, 16)
    ax = figure.axes[0]
    assert ax.get_title() == "panel" and np.allclose(ax.images[0].get_array(), grid.to_numpy())
    dots = ax.collections[0].get_offsets()
    assert sorted(map(tuple, np.asarray(dots).astype(int))) == [(0, 0), (0, 1), (1, 0), (2, 0), (2, 1)]  # (seed, run)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a: 3 of 6", "b: 2 of 6", "c: 0 of 6"]
    matplotlib.pyplot.close(figure)
    shown = []
    monkeypatch.setattr(deep_dynamics, "display", shown.append)
    monkeypatch.setattr(page, "display", lambda *items: shown.extend(items))  # show_figure's
    deep_dynamics._show_seed_grid({"asked": tables, "not asked": {"a": tables["a"], "c": tables["c"]}}, 16)
    figure, caption = shown
    assert caption.data.startswith("**Figure.**")
    assert [ax.get_title() for ax in figure.axes if ax.images] == ["asked"]
    shown.clear()
    deep_dynamics._show_seed_grid({"not asked": {"a": tables["a"], "c": tables["c"]}}, 16)
    assert shown == []


def test_a_row_on_fresh_batches_after_its_handover_is_named_so_and_drawn_beside_the_whole_handover():
    row = {**DEEP, "variant": "layernorm", "start_from_step": 100, "n_seeds": 12, "handover_data": "fresh"}
    assert deep_dynamics.part_name(row) == "its weights and AdamW moments, fresh batches after it"
    assert deep_dynamics.part_name({**row, "handover_warmup_steps": 20}) == (
        "its weights and AdamW moments, the rate warmed up again over 20 steps, fresh batches after it")
    assert deep_dynamics.panel_of(row) == "state"
    P = runner.resolved("10_beyond", "ci", {"deep_heads": DEEP["heads"], "deep_layers": DEEP["layers"]})
    whole = {k: v for k, v in row.items() if k != "handover_data"}
    P_measured = runner.resolved("05_dictionary_lookup", "ci", {"dynamics_rows": [whole, row]})
    assert deep_dynamics.part_rows(P, P_measured) == [[whole, row]]


def test_a_panel_whose_runs_a_later_panel_shows_on_more_seeds_is_left_out():
    """Step 100's five runs on 24, 36 and 48 seeds (each the first seeds of the next): only the 48 is drawn.  A
    panel of other runs, another split or another start stays, however few its seeds."""
    Panel = deep_dynamics.Panel
    five = dict.fromkeys(["all", "second moments", "warm-up", "negated", "fresh batches"])
    panels = [Panel(100, 4, "", {"all": None, "weights": None}), Panel(100, 24, "", five), Panel(100, 36, "", five),
              Panel(100, 48, "", five), Panel(100, 60, "", {"all": None, "fresh batches": None}),
              Panel(200, 4, "", {"all": None, "weights": None}), Panel(200, 4, ", which part", {"weights": None})]
    assert [(p.start, p.seeds, p.which) for p in deep_dynamics.widest(panels)] == [
        (100, 4, ""), (100, 48, ""), (100, 60, ""), (200, 4, ""), (200, 4, ", which part")]
