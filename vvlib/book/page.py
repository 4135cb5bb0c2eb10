"""What every chapter's page begins and ends with: its parameters (the notebook's cell, the profile and
papermill's injections, resolved and checked in the kernel by `configure`), the device they name, the clock that
times the run, the parameters shown, results.json written with that time, and each figure shown with its caption.
A page class sets `chapter` (its record's name) and adds its own sections."""

import time

import json

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import HTML, Markdown, display

from .. import rng
from ..experiments import chapters
from ..experiments.chapters import checks
from ..experiments.reports import report
from ..experiments.setups.params import Params, injected_names, resolve
from ..experiments.storage import store

CHAPTER_TIMES = store.REPO_ROOT / "bench" / "chapter-times-ci.json"  # written by python -m bench.chapter_times


def ci_time(name: str, path=CHAPTER_TIMES) -> str:
    """How long the chapter's ci run took a fresh clone, as a sentence's end: from bench/chapter_times.py's
    record, with its threads and CPU, or how to measure it where the record has no such chapter."""
    record = json.loads(path.read_text()) if path.exists() else {"seconds": {}}
    if name not in record["seconds"]:
        return "has not been timed on this book's machines yet (`python -m bench.chapter_times --write` times it)"
    seconds = record["seconds"][name]
    took = f"about {seconds / 60:.0f} minutes" if seconds >= 90 else f"about {seconds:.0f} seconds"
    return (f"takes {took} with {record['threads']} threads on a {record['provenance']['cpu']} "
            f"(bench/{path.name}: an empty store, so it trains all it needs)")


def configure(chapter_name: str, namespace: dict) -> Params:
    """In a chapter notebook: resolve its parameters (cell + profile + papermill injections) and check them all.
    Values that differ from the cell's literal defaults also count as explicit, so interactive edits are respected."""
    chapter = chapters.get_chapter(chapter_name)
    spec = chapter.parameters()
    values = {name: namespace[name] for name in spec if name in namespace}
    explicit = injected_names() | {n for n, v in values.items() if v != spec[n].default}
    P = Params(resolve(spec, chapter.profiles, values, explicit))
    checks.run_all(chapter.checks, P)  # as `vvlib run` does before the kernel, for plain papermill
    show_whole_tables()
    return P


def show_whole_tables():
    """Every table a page displays, whole: each cell (pandas cuts one at 50 characters with "…") and each row
    (pandas shows 10 of a table over 60 rows, the rest as "...": chapter 11's 78 dictionary rows had 68 hidden)."""
    pd.set_option("display.max_colwidth", None)
    pd.set_option("display.max_rows", None)


class ChapterPage:
    chapter: str  # the chapter's name, as its record (vvlib/experiments/chapters) gives it
    uses_device = True  # False: a page that reads results only, recorded as run on the CPU

    def __init__(self, namespace: dict):
        self.started = time.perf_counter()
        self.P = configure(self.chapter, namespace)  # profile + overrides, every value checked
        self.device = rng.resolve_device(self.P.device) if self.uses_device else "cpu"

    def show_parameters(self):
        """The rerun block: the ci command with its measured time, this run's values of the parameters a reader
        would change (the record's `reader`), and every other setting in a collapsed table."""
        reader = chapters.get_chapter(self.chapter).reader
        command = f"python -m vvlib run {self.chapter} --profile ci --output out/{self.chapter[:2]}"
        display(Markdown(f"`{command}` {ci_time(self.chapter)}. Change a parameter with "
                         "`-p NAME VALUE` (`python -m vvlib list` names them all); this run's values:"))
        display(report.parameters_frame({name: self.P[name] for name in reader}))
        rest = report.parameters_frame({**{k: v for k, v in self.P.items() if k not in reader},
                                        "device": store.device_name(self.device)})
        show_collapsed(f"The other {len(rest)} settings of this run (seeds per stored run, the store, the device, ...)",
                       rest.to_html())

    def write_results(self, metrics: dict, sources: dict | None = None):
        """results.json in the run's output_dir, with the time since the page began and where its inputs came from."""
        path = report.write_results(self.P.output_dir, self.chapter, self.P, self.device, metrics,
                                    wall_time_s=time.perf_counter() - self.started, sources=sources)
        print(f"wrote {path}")


def show_collapsed(summary: str, body: str):
    """A block shown by its one-line summary and opened on a click (body: HTML): what a reader who checks wants and
    one who reads on does not (readable.py and the word budgets leave it out of the prose)."""
    display(HTML(f"<details><summary>{summary}</summary>{body}</details>"))


def show_runs(runs: dict, labels: dict):
    """The stored runs behind a result ({variant: [run record]}: seeds, steps, wall time, device, commit), collapsed:
    their provenance."""
    table = report.runs_table(runs, labels)
    show_collapsed(f"The {len(table)} stored runs behind this result (seeds, steps, wall time, device, commit)",
                   table.to_html())


def task_title(task) -> str:
    """A task's title as a heading begins it: "Argmax retrieval"."""
    return task.title[0].upper() + task.title[1:]


def figure_caption(text: str) -> Markdown:
    """A caption as every figure's reads (readable.py finds captions by their "Figure." lead)."""
    return Markdown(f"**Figure.** {text}")


def show_figure(caption: str, figure=None):
    """A figure now, not when its cell ends, with its caption under it: what is plotted, at what scale, and what
    to look for.  Without `figure`, the one being drawn."""
    figure = figure or plt.gcf()
    display(figure, figure_caption(caption))
    plt.close(figure)
