"""Chapter 11's rows of chapter 10's deep model with +LN's norm after the last layer only, and chapter 10's reading
of them beside the rows of the same rate with it after every layer."""

import numpy as np
from scipy import stats as scipy_stats

from vvlib.book import decay_rows, norm_rows, runner
from vvlib.compare import format_p
from vvlib.experiments.reports import layer_rows
from vvlib.experiments.setups import sensitivity

DEEP = {"heads": 2, "layers": 2}


def test_the_table_compares_the_last_layers_norm_with_every_layers_and_the_baseline_seed_by_seed():
    rng = np.random.default_rng(5)
    lengths = [16, 64, 256]
    every = {side: rng.uniform(0, 1, (6, 3)) for side in sensitivity.PAIR}
    last = {"baseline": every["baseline"], "layernorm": np.clip(every["layernorm"] + rng.normal(0.1, 0.05, (6, 3)), 0, 1)}
    table = layer_rows.norm_layers_table([("constant rate", every, last)], lengths, [64, 256])
    for j, n in ((1, 64), (2, 256)):
        ours = 100 * last["layernorm"][:, j]
        for other, shown in ((every["layernorm"], "+LN after every layer"), (every["baseline"], "Baseline")):
            diff = ours - 100 * other[:, j]
            half = scipy_stats.t.ppf(0.975, 5) * diff.std(ddof=1) / np.sqrt(6)
            p = scipy_stats.ttest_rel(ours, 100 * other[:, j]).pvalue
            assert table.loc[("constant rate", f"{n:,}", shown)].tolist() == [
                f"{ours.mean():.1f}", f"{100 * other[:, j].mean():.1f}",
                f"{diff.mean():+.1f} [{diff.mean() - half:+.1f}, {diff.mean() + half:+.1f}]", format_p(p)]


def test_chapter_10_pairs_each_last_layer_row_with_the_deep_row_of_its_rate_and_trains_nothing(tmp_path, monkeypatch):
    rows = [{**DEEP, "steps": 6}, {**DEEP, "steps": 6, "lr_schedule": "cosine"}, {**DEEP, "norm_layers": "last", "steps": 6},
            {**DEEP, "norm_layers": "last", "steps": 6, "lr_schedule": "cosine"}]
    P_rows = runner.resolved("11_sensitivity", "ci", {"store_dir": str(tmp_path), "argmax_rows": [], "dictionary_rows": rows,
                                                      "n_seeds": 2, "eval_lengths": [16, 64], "compared_lengths": [64]})
    P = runner.resolved("10_beyond", "ci", {"store_dir": str(tmp_path), "deep_heads": 2, "deep_layers": 2})
    monkeypatch.setattr(decay_rows, "scales", lambda P, device: {"this page's store": (P_rows, device)})
    pairs = norm_rows.stored_pairs(P, P_rows, "cpu")
    assert [(name, last[2], every[2]) for name, last, every in pairs] == [
        ("constant rate, 6 steps", None, None), ("lr_schedule=cosine, 6 steps", None, None)]
    assert norm_rows.show(P, "cpu") == {} and not list(tmp_path.glob("train-*"))  # reading trains nothing
    for _, row, P_row in sensitivity.check_rows(P_rows):
        if row.get("lr_schedule") is None:  # the constant rate's two rows
            sensitivity.train_row(P_row, "dictionary", "cpu")
    assert len(list(tmp_path.glob("train-*"))) == 3  # the Baseline is one run for both rows
    (name, last, every), (_, pending, _) = norm_rows.stored_pairs(P, P_rows, "cpu")
    assert name == "constant rate, 6 steps" and pending[2] is None
    assert np.array_equal(last[2]["baseline"], every[2]["baseline"])
    assert last[3]["layernorm"]["spec"]["model"]["norm_layers"] == "last"
    assert "norm_layers" not in every[3]["layernorm"]["spec"]["model"]
    sources = norm_rows.show(P, "cpu")
    assert set(sources) == {"norm_rows/this page's store/constant rate, 6 steps/baseline",
                            "norm_rows/this page's store/constant rate, 6 steps/layernorm"}  # not probed: no layers' sources
    assert sources["norm_rows/this page's store/constant rate, 6 steps/layernorm"] == last[3]["layernorm"]["provenance"]


def test_the_placement_sentence_pairs_the_first_layers_of_both_placements_seed_by_seed():
    import pandas as pd

    rng = np.random.default_rng(7)

    def frame():
        return pd.DataFrame([{"variant": v, "seed": s, "N": n, "layer": layer, "entropy": rng.uniform(0, 2.7),
                              "top1_weight": 0.5} for v in sensitivity.PAIR for s in (2, 0, 1, 3) for n in (16, 64)
                             for layer in (0, 1)])

    every, last = frame(), frame()
    table = layer_rows.placement_table([("constant rate", every, last)], 16)
    a, b = (f[(f["variant"] == "layernorm") & (f["layer"] == 0) & (f["N"] == 16)].sort_values("seed")["entropy"].to_numpy()
            for f in (every, last))
    d, p = b - a, scipy_stats.ttest_rel(b, a).pvalue
    half = scipy_stats.t.ppf(0.975, 3) * d.std(ddof=1) / 2
    assert table.loc["constant rate"].to_dict() == {
        "+LN, norm after every layer (nats)": f"{a.mean():.2f} ({a.mean() / np.log(16):.0%})",
        "+LN, norm after the last only (nats)": f"{b.mean():.2f} ({b.mean() / np.log(16):.0%})",
        "+LN, norm after the last only minus +LN, norm after every layer":
            f"{d.mean():+.2f} [{d.mean() - half:+.2f}, {d.mean() + half:+.2f}]",
        "p": format_p(p)}
