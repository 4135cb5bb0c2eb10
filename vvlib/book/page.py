"""What every chapter's page begins and ends with: its parameters (the notebook's cell, the profile and
papermill's injections, resolved and checked in the kernel by `configure`), the device they name, the clock that
times the run, the parameters shown, results.json written with that time, and each figure shown with its caption.
A page class sets `chapter` (its record's name) and adds its own sections."""

import base64
import html
import io
import json
import re
import time

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import HTML, Markdown, display

from . import colab, chapters, paper_scale
from .. import rng
from ..experiments.records import checks
from ..experiments.reports import report
from ..experiments.setups import paper_tasks, variants
from ..experiments.setups.params import Params, injected_names, resolve
from ..experiments.storage import store

CHAPTER_TIMES = store.REPO_ROOT / "bench" / "chapter-times-ci.json"  # written by python -m bench.chapter_times
FIGURE_DPI = 100  # the pixels per inch a figure is drawn at in the book
COLUMN_PX = 800  # about the width of the book's text column at a 1280 px window: a wider figure is shown shrunk
FIGURES = {"chapter": "", "shown": 0}  # the page being executed: its figures are numbered <chapter>.<shown>


def duration_words(seconds: float) -> str:
    """A run's time as a reader says it: 'about 4 minutes', or 'about 40 seconds' under a minute and a half."""
    return f"about {seconds / 60:.0f} minutes" if seconds >= 90 else f"about {seconds:.0f} seconds"


def ci_time(name: str, path=CHAPTER_TIMES) -> tuple[str, str]:
    """How long the chapter's ci run took a fresh clone: (the end of a sentence, 'takes about 2 minutes on 2 CPU
    cores'; the machine and record it was timed on, for the collapsed block), from bench/chapter_times.py's record,
    or how to measure it where the record has no such chapter."""
    record = json.loads(path.read_text()) if path.exists() else {"seconds": {}}
    if name not in record["seconds"]:
        return ("has not been timed on this book's machines yet", "`python -m bench.chapter_times --write` times it")
    seconds = record["seconds"][name]
    took = duration_words(seconds)
    return (f"takes {took} on {record['threads']} CPU cores",
            f"{record['provenance']['cpu']}, {record['threads']} threads, an empty store (bench/{path.name})")


def configure(chapter_name: str, namespace: dict) -> Params:
    """In a chapter notebook: resolve its parameters (cell + profile + papermill injections) and check them all.
    Values that differ from the cell's literal defaults also count as explicit, so interactive edits are respected."""
    chapter = chapters.get_chapter(chapter_name)
    spec = chapter.parameters()
    values = {name: namespace[name] for name in spec if name in namespace}
    injected = injected_names()
    in_colab = colab.colab_profile(chapter, namespace, injected)
    if in_colab:  # opened in Colab with nothing injected: ci on a CPU, paper with a GPU
        values["profile"] = in_colab
    explicit = injected | {n for n, v in values.items() if v != spec[n].default}
    P = Params(resolve(spec, chapter.profiles, values, explicit))
    checks.run_all(chapter.checks, P)  # as `vvlib run` does before the kernel, for plain papermill
    show_whole_tables()
    FIGURES.update(chapter=chapter_number(chapter_name), shown=0)
    return P


def chapter_number(name: str) -> str:
    """How a chapter's figures are numbered: by its name's leading number ("07_..." -> "7"), else by its initial ("S")."""
    lead = name.split("_")[0]
    return str(int(lead)) if lead.isdigit() else lead[:1].upper()


def next_figure_number() -> str:
    FIGURES["shown"] += 1
    return f"{FIGURES['chapter']}.{FIGURES['shown']}"


def show_whole_tables():
    """Every table a page displays, whole: each cell (pandas cuts one at 50 characters with "…") and each row
    (pandas shows 10 of a table over 60 rows, the rest as "...": chapter 11's 78 dictionary rows had 68 hidden)."""
    pd.set_option("display.max_colwidth", None)
    pd.set_option("display.max_rows", None)


class ChapterPage:
    chapter: str  # the chapter's name, as its record (vvlib/book/chapters) gives it
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
        took, timed_on = ci_time(self.chapter)
        values = "; ".join(f"`{name}` {value}" for name, value in report.shown_parameters(
            {name: self.P[name] for name in reader}).items())  # in a line: a table of six rows is a screen's third
        display(Markdown(f"`{command}` {took}. Change a parameter with `-p NAME VALUE` (`python -m vvlib list` names "
                         f"them all). This run's values: {values}."))
        rest = report.parameters_frame({**{k: v for k, v in self.P.items() if k not in reader},
                                        "device": store.device_name(self.device), "ci run timed on": timed_on})
        show_collapsed(f"The other {len(rest)} settings of this run (seeds per stored run, the store, the device, ...)",
                       rest.to_html())

    def write_results(self, metrics: dict, sources: dict | None = None):
        """results.json in the run's output_dir, with the time since the page began and where its inputs came from,
        once the metrics' keys are what the chapter's record promises (nothing is written otherwise)."""
        chapters.check_metrics(self.chapter, metrics)
        path = report.write_results(self.P.output_dir, self.chapter, self.P, self.device, metrics,
                                    wall_time_s=time.perf_counter() - self.started, sources=sources)
        print(f"wrote {path}")

    def show_pending(self, shows: str = ""):
        """Which of the paper profile's store entries are committed, and what this page shows of them (`shows`)."""
        display(Markdown(paper_scale.pending(self.chapter, self.P, self.P.paper_scale_dir, shows=shows)))


class TasksPage(ChapterPage):
    """A page over every paper task (chapters 8-10): each task's parameters, as chapters 4-5 name them, its runs
    trained or read, its longer training's where it has one, and the paper scale's runs where committed."""
    trained: tuple = ()  # the variants each task trains

    def __init__(self, namespace: dict):
        super().__init__(namespace)
        P = self.P
        self.tasks = {t.name: variants.task_params(P, t.name) for t in paper_tasks.TASKS}
        self.long_tasks = [t for t, P_task in self.tasks.items() if P_task.get("long_steps")]
        self.accuracy, self.training, self.long_accuracy, self.long_runs = {}, {}, {}, {}
        self.P_paper, self.big = (paper_scale.trained(self.chapter, P.paper_scale_dir) if P.paper_scale_dir
                                  else (None, {}))

    def train_tasks(self):
        """Each task's variants, trained or read from the store, and evaluated."""
        for name, P_task in self.tasks.items():
            self.accuracy[name], self.training[name] = variants.train_and_evaluate(
                P_task, variants.task_config(P_task, name), list(self.trained), ["fixed"], self.device)

    def train_longer_tasks(self):
        """The longer training, where the profile has one."""
        for name in self.long_tasks:
            P_task = self.tasks[name]
            self.long_accuracy[name], self.long_runs[name] = variants.long_training(
                P_task, variants.task_config(P_task, name), list(self.trained), ["fixed"], self.device)

    def task_sources(self, paper_tasks_shown=None) -> dict:
        """results.json's sources: each task's runs, its longer training's and the paper scale's (of the tasks
        `paper_tasks_shown`, default all committed)."""
        sources = {f"training/{t}/{v}": r["provenance"] for t, found in self.training.items() for v, r in found.items()}
        for t, found in self.long_runs.items():
            sources.update(report.run_sources(f"training/long/{t}", found))
        for t in self.big if paper_tasks_shown is None else paper_tasks_shown:
            sources.update({f"training/paper_scale/{t}/{v}": r["provenance"] for v, r in self.big[t][2].items()})
        return sources


def show_collapsed(summary: str, body: str):
    """A block shown by its one-line summary and opened on a click (body: HTML): what a reader who checks wants and
    one who reads on does not (readable.py and the word budgets leave it out of the prose)."""
    display(HTML(f"<details><summary>{summary}</summary>{body}</details>"))


LONG_TABLE = 15  # rows: a longer table is detail, shown by its one-line summary and opened on a click


def show_table(table, what: str):
    """A table: whole where it is short, else collapsed under `what` (what it holds, in a few words)."""
    if len(table) <= LONG_TABLE:
        display(table)
    else:
        show_collapsed(f"{what} ({len(table)} rows)", table.to_html())


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
    """A caption under a figure drawn another way (a slider view), numbered as show_figure numbers."""
    return Markdown(f"**Figure {next_figure_number()}.** {text}")


def alt_text(caption: str) -> str:
    """What a figure shows, for a reader who cannot see it: its caption's first sentence."""
    return re.split(r"(?<=\w\w\.)\s", caption.strip(), maxsplit=1)[0].rstrip(".")  # "s.e." ends none


def figure_html(png: bytes, number: str, caption: str) -> str:
    """A numbered figure a link can cite (#figure-10-2), its image inline with alt text, its caption under it."""
    image = base64.b64encode(png).decode("ascii")
    return (f'<figure id="figure-{number.replace(".", "-")}" class="vv-figure">'
            f'<img src="data:image/png;base64,{image}" alt="{html.escape(alt_text(caption))}" style="max-width:100%"/>'
            f'<figcaption><p><strong>Figure {number}.</strong> {html.escape(caption)}</p></figcaption></figure>')


def figure_facts(figure, dpi: int = FIGURE_DPI) -> list[dict]:
    """Per axes: its legend's entries, how many of them share a colour with another, and its smallest text (ticks,
    labels, legend) in pixels as shown, drawn at `dpi` and shrunk to the text column: what tests/test_chapters.py
    holds every book figure to."""
    facts, shrink = [], min(1.0, COLUMN_PX / (figure.get_size_inches()[0] * dpi))
    for ax in figure.axes:
        legend = ax.get_legend()
        texts = [*ax.get_xticklabels(), *ax.get_yticklabels(), ax.xaxis.label, ax.yaxis.label]
        entries, colours = [], []
        if legend is not None:
            texts += legend.get_texts()
            entries = [t.get_text() for t in legend.get_texts()]
            colours = [_handle_colour(h) for h in legend.legend_handles]
        sizes = [t.get_fontsize() for t in texts if t.get_text() and t.get_visible()]
        known = [c for c in colours if c is not None]
        facts.append({"entries": len(entries), "repeated_colours": len(known) - len(set(known)),
                      "smallest_px": round(float(min(sizes) * dpi / 72 * shrink), 1) if sizes else None})
    return facts


def _handle_colour(handle):
    """A legend handle's colour as a hex string (a line's, else a patch's or a collection's face), or None."""
    from matplotlib.colors import to_hex
    for getter in ("get_color", "get_facecolor"):
        if hasattr(handle, getter):
            colour = getattr(handle, getter)()
            if hasattr(colour, "ndim") and colour.ndim == 2:  # a collection's array of colours
                colour = colour[0] if len(colour) else None
            return None if colour is None else to_hex(colour, keep_alpha=False)
    return None


def legible(figure, dpi: int = FIGURE_DPI, smallest_px: float = 9.0):
    """Every text of the figure at least `smallest_px` pixels as shown (drawn at `dpi`, shrunk to the text column),
    then laid out again unless the figure lays itself out (constrained layout)."""
    import warnings
    from matplotlib.layout_engine import ConstrainedLayoutEngine
    from matplotlib.text import Text

    shrink = min(1.0, COLUMN_PX / (figure.get_size_inches()[0] * dpi))
    floor = smallest_px * 72 / (dpi * shrink)  # in points
    for text in figure.findobj(Text):
        if text.get_text() and text.get_fontsize() < floor:
            text.set_fontsize(floor)
    if not isinstance(figure.get_layout_engine(), ConstrainedLayoutEngine):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tight_layout warns where axes cannot be fitted; they still draw
            figure.tight_layout()


def show_figure(caption: str, figure=None):
    """A figure now, not when its cell ends, numbered, with its caption under it: what is plotted, at what scale,
    and what to look for.  Without `figure`, the one being drawn.  Its legends and text sizes go with it, in the
    output's metadata (figure_facts)."""
    figure = figure or plt.gcf()
    legible(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=FIGURE_DPI, bbox_inches="tight")
    facts = figure_facts(figure)
    plt.close(figure)
    display(HTML(figure_html(buffer.getvalue(), next_figure_number(), caption)), metadata={"vvlib_figure": facts})
