import numpy as np
import pandas as pd
import pytest

from vvlib.experiments.reports import along_training, plots
from vvlib.book.chapters.c07_dispersion import attention_plots
from vvlib.stats import long_form


def test_accuracy_figure_has_ours_and_the_papers_lines_on_a_log2_axis():
    acc = {"baseline": np.full((3, 2), 0.9), "layernorm": np.full((3, 2), 0.8)}
    labels = {"baseline": "B", "layernorm": "L"}
    fig = plots.accuracy_vs_length(long_form(acc, [16, 32]), labels,
                                   paper={"lengths": [16, 32], "rows": {"baseline": [99, 98], "layernorm": [99, 97]}})
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_ylabel() == "accuracy (%)"
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"B", "L", "B (paper)", "L (paper)"} <= set(texts)
    paper_line = [line for line in ax.get_lines() if line.get_label() == "B (paper)"][0]
    assert list(paper_line.get_ydata()) == [99, 98]


def test_std_figure_is_log_log_with_a_reference_slope():
    df = pd.DataFrame({"N": [16, 64, 256] * 2, "std": [1, 0.5, 0.25, 2, 1, 0.5], "setting": ["a"] * 3 + ["b"] * 3})
    ax = plots.std_vs_length(df).axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    guide = [line for line in ax.get_lines() if line.get_label() == "N^-0.5"][0]
    assert np.allclose(guide.get_ydata(), [1.5, 0.75, 0.375])  # anchored at the median std of the first N


def test_heatmaps_share_one_colour_scale_from_zero_to_one():
    weights = {v: {n: np.sort(np.random.default_rng(1).dirichlet(np.ones(n), 4))[:, ::-1][:, :16] for n in (16, 64)}
               for v in ("B", "L")}
    fig = attention_plots.attention_heatmaps(weights)
    meshes = [ax.collections[0] for ax in fig.axes if ax.get_title()]  # colour bars have no title
    assert len(meshes) == 4 and all(m.get_clim() == (0, 1) for m in meshes)


def test_loss_curves_join_runs_by_seed_and_band_the_seeds_spread():
    from vvlib.experiments.storage import runs

    first = {"loss_history": [(100, [1.0, 3.0]), (200, [0.5, 0.7])]}
    second = {"loss_history": [(100, [2.0]), (200, [0.9])]}
    joined = runs.joined_history([first, second])
    assert joined == [(100, [1.0, 3.0, 2.0]), (200, [0.5, 0.7, 0.9])]
    fig = plots.training_curves({"B": joined}, band=True)
    ax = fig.axes[0]
    assert np.allclose(ax.get_lines()[0].get_ydata(), [2.0, 0.7])
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert np.isclose(band.min(), np.percentile([0.5, 0.7, 0.9], 10))
    assert np.isclose(band.max(), np.percentile([1.0, 3.0, 2.0], 90))
    rising = [(100, [0.04, 0.04]), (200, [0.03, 0.03]), (300, [0.09, 0.09])]
    falling = [(100, [0.5]), (200, [0.0014])]
    table = along_training.loss_rise_table({"B": rising, "C": falling})
    assert table.loc["B"].tolist() == ["0.03", "200", "0.09", "300", "3.0"]
    assert table.loc["C"].tolist() == ["0.0014", "200", "0.0014", "200", "1.0"]  # still falling at the end
    with pytest.raises(ValueError, match="different steps"):
        runs.joined_history([first, {"loss_history": [(50, [1.0])]}])


def test_the_papers_difference_is_its_second_row_minus_its_first_where_it_has_both():
    from vvlib.experiments.setups import paper

    table, pair = paper.TABLE5_DICTIONARY_LONG, ("baseline", "layernorm")
    assert round(paper.difference(table, pair, 2 ** 14), 6) == round(82.6 - 77.8, 6)
    assert round(paper.difference(table, pair, 128), 6) == round(99.8 - 99.7, 6)
    assert paper.difference(table, pair, 512) is None  # a middle column our copy lost
    assert paper.difference(table, pair, 3) is None  # a length the paper does not test
