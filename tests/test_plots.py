import numpy as np
import pandas as pd

from vvlib import plots
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
