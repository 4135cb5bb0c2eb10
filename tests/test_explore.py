import pytest

from vvlib.experiments.reports import explore


class Marked:
    """Stands in for a figure: remembers which slider values made it."""

    def __init__(self, **values):
        self.values = values


@pytest.fixture
def fake_png(monkeypatch):
    monkeypatch.setattr(explore, "png", lambda fig: repr(sorted(fig.values.items())).encode())


def test_every_combination_is_rendered_once_and_stacked_where_the_sliders_point(fake_png):
    calls = []

    def render(**values):
        calls.append(values)
        return Marked(**values)

    axes = {"N": [16, 256, 4096], "beta": [0.5, 2.0]}
    box = explore.figure_explorer(render, axes)
    assert len(calls) == 6 and {tuple(c.values()) for c in calls} == {(n, b) for n in axes["N"] for b in axes["beta"]}
    n_slider, beta_slider, outer = box.children
    assert [v for _, v in n_slider.options] == axes["N"] and [v for _, v in beta_slider.options] == axes["beta"]
    for i, n in enumerate(axes["N"]):  # outer index follows N, inner index follows beta
        for j, beta in enumerate(axes["beta"]):
            assert outer.children[i].children[j].value == repr(sorted({"N": n, "beta": beta}.items())).encode()


def test_sliders_are_linked_to_their_stacks_in_the_browser(fake_png):
    box = explore.figure_explorer(lambda **v: Marked(**v), {"N": [1, 2], "beta": [1.0, 2.0, 3.0]})
    n_slider, beta_slider, outer = box.children
    pairs = {(link.source[0].model_id, link.source[1], link.target[0].model_id, link.target[1]) for link in box.links}
    assert (n_slider.model_id, "index", outer.model_id, "selected_index") in pairs
    assert all((beta_slider.model_id, "index", inner.model_id, "selected_index") in pairs for inner in outer.children)
    assert len(pairs) == 1 + len(outer.children)


@pytest.mark.parametrize("axes", [{}, {"N": []}])
def test_empty_axes_are_refused(axes):
    with pytest.raises(ValueError, match="axes"):
        explore.figure_explorer(lambda **v: None, axes)
