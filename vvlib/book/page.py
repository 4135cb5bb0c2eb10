"""What every chapter's page begins and ends with: its parameters (the profile and the notebook's overrides, each
checked), the device they name, the clock that times the run, the parameters shown, results.json written
with that time, and each figure shown with its caption.  A page class sets `chapter` (its record's name) and adds its own sections."""

import time

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from .. import rng
from ..experiments.reports import report
from ..experiments.storage import store
from . import runner


class ChapterPage:
    chapter: str  # the chapter's name, as its record (vvlib/experiments/chapters) gives it
    uses_device = True  # False: a page that reads results only, recorded as run on the CPU

    def __init__(self, namespace: dict):
        self.started = time.perf_counter()
        self.P = runner.configure(self.chapter, namespace)  # profile + overrides, every value checked
        self.device = rng.resolve_device(self.P.device) if self.uses_device else "cpu"

    def show_parameters(self):
        display(report.parameters_frame(self.P))
        print(f"device: {store.device_name(self.device)}")

    def write_results(self, metrics: dict, sources: dict | None = None):
        """results.json in the run's output_dir, with the time since the page began and where its inputs came from."""
        path = report.write_results(self.P.output_dir, self.chapter, self.P, self.device, metrics,
                                    wall_time_s=time.perf_counter() - self.started, sources=sources)
        print(f"wrote {path}")


def task_title(task) -> str:
    """A task's title as a heading begins it: "Argmax retrieval"."""
    return task.title[0].upper() + task.title[1:]


def show_figure(caption: str, figure=None):
    """A figure now, not when its cell ends, with its caption under it: what is plotted, at what scale, and what
    to look for.  Without `figure`, the one being drawn."""
    figure = figure or plt.gcf()
    display(figure, Markdown(f"**Figure.** {caption}"))
    plt.close(figure)
