"""Slider explorations that also work on the static web page.

A callback widget (`interact`) needs a running kernel: on the published HTML its slider
would move and nothing would change.  Instead we render every view in advance and stack
them; each slider is linked to its stack *in the browser* (`jslink`), so moving it shows
the precomputed view, live in Jupyter and offline on the page alike.  Cost: one figure per
combination of slider values, so keep the grids small.
"""

import io
from itertools import product

import ipywidgets as widgets
import matplotlib.pyplot as plt


def png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def figure_explorer(render, axes: dict, labels: dict | None = None) -> widgets.VBox:
    """One slider per entry of `axes` ({name: values}) over stacked images of
    render(**{name: value}) -> matplotlib Figure, for every combination of values.
    The returned box's `links` are the browser-side slider -> stack links."""
    if not axes or any(len(values) == 0 for values in axes.values()):
        raise ValueError("axes: expected a non-empty {name: non-empty list of values}")
    names, labels = list(axes), labels or {}
    sliders = {name: widgets.SelectionSlider(options=[(f"{v:g}" if isinstance(v, float) else str(v), v) for v in axes[name]],
                                            description=labels.get(name, name), continuous_update=True,
                                            style={"description_width": "initial"}, layout={"width": "420px"})
               for name in names}
    links = []  # kept on the result: the links are what makes the static page interactive
    images = {combo: widgets.Image(value=png(render(**dict(zip(names, combo)))), format="png")
              for combo in product(*axes.values())}

    def stack(depth: int, prefix: tuple):
        """Stack over names[depth]'s values; its children fix that value (leaves: images)."""
        if depth == len(names):
            return images[prefix]
        level = widgets.Stack([stack(depth + 1, prefix + (v,)) for v in axes[names[depth]]], selected_index=0)
        links.append(widgets.jslink((sliders[names[depth]], "index"), (level, "selected_index")))
        return level

    box = widgets.VBox([*sliders.values(), stack(0, ())])
    box.links = links
    return box
