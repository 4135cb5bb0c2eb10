"""Build the Jupyter Book: execute every chapter into book/chapters/, then Sphinx.

The book is built with notebook execution off (papermill already ran the chapters)
and with warnings as errors, so a broken page fails the build instead of shipping.
"""

import json
import os
import re
import subprocess
import sys
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from urllib.parse import quote

import matplotlib.pyplot as plt

from . import colab, key_results, webassets
from .gpu_queue import pending
from .paper_scale import latest_accuracy_runs
from .runner import resolved, run_chapter
from .chapters import BY_TASK, CHAPTERS, SUMMARY, get_chapter
from ..experiments.records.scales import BOOK_STORE, PAPER_SCALE_STORE
from .gpu_queue.plan import chapter_entries
from ..experiments.setups import paper
from ..experiments.reports import plots, report, run_groups
from .chapters.summary import claims
from ..experiments.reports.report import power_of_two
from ..experiments.setups.paper_tasks import TASKS
from ..experiments.setups.variants import LABELS, PAIR
from ..experiments.setups.params import DEFAULT_PROFILE, ParameterError
from ..experiments.storage.store import REPO_ROOT

CLAIMS_TABLE = Path("book") / "chapters" / "claims-table.md"  # written by the build, included by book/intro.md
ANSWER_FIGURE = Path("book") / "chapters" / "answer.png"  # written by the build, the intro's first figure
STREAM_WORDS = {"counter": "counter stream", "generators": "a generator per seed"}  # a panel's data, in its title
RUN_GROUPS = Path("book") / "chapters" / "run-groups.md"  # written by the build, included by book/scale.md
PENDING = Path("book") / "chapters" / "pending.md"  # the same, what of the paper's scale is still to run
SCALE_GAPS = Path("book") / "chapters" / "scale-gaps.md"  # the same, the scale page's table of every scale
KEY_RESULTS = Path("book") / "chapters" / "key-results.md"  # the same, the box book/intro.md opens with


def github_repository(environ=os.environ, root: Path = REPO_ROOT) -> tuple[str, str] | None:
    """("owner/name", branch) of the book's GitHub repository, or None when unknown (no launch buttons): from
    _config.yml, else the git remote `origin`, else VVLIB_REPOSITORY or GITHUB_REPOSITORY."""
    configured = colab.configured_url(root)
    found = github_name(configured) or github_name(_origin(root))
    if configured and not github_name(configured):
        raise ParameterError(f"_config.yml repository url: expected https://github.com/OWNER/NAME, got {configured!r}")
    if not found:
        found = environ.get("VVLIB_REPOSITORY") or environ.get("GITHUB_REPOSITORY")
        if not found:
            return None
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", found):
            raise ParameterError(f"VVLIB_REPOSITORY: expected owner/name of a GitHub repository, got {found!r}")
    branch = (environ.get("VVLIB_BRANCH") or environ.get("GITHUB_REF_NAME") or colab.configured_url(root, "branch")
              or "main")
    return found, branch


def github_name(url: str | None) -> str | None:
    """'owner/name' of a GitHub url (https or ssh, with or without .git), else None."""
    found = re.fullmatch(r"(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)([\w.-]+/[\w.-]+?)(?:\.git)?/?",
                         (url or "").strip())
    return found.group(1) if found else None


def _origin(root: Path) -> str | None:
    """The url of the checkout's remote `origin`, or None (no git, no such remote)."""
    try:
        done = subprocess.run(["git", "-C", str(root), "remote", "get-url", "origin"], capture_output=True, text=True)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def launch_links(name: str, repository: str, branch: str) -> dict:
    """Binder and Colab links that open chapter `name`'s source notebook (notebooks/, no
    outputs, default parameters).  Not the theme's launch buttons: those point at the page's
    own file, the executed copy in book/chapters/, which is built, not committed."""
    path = f"notebooks/{name}.ipynb"
    return {"Binder": f"https://mybinder.org/v2/gh/{repository}/{quote(branch, safe='')}?labpath={quote(path, safe='')}",
            "Colab": f"https://colab.research.google.com/github/{repository}/blob/{branch}/{path}"}


def launch_buttons(name: str, where: tuple[str, str] | None) -> str:
    """The launch links as buttons (the theme's own button style), or "" where no repository is known.  In Colab
    the notebook's first cell installs the project and the chapter runs at ci, or at paper with a GPU."""
    if not where:
        return ""
    buttons = " ".join(f'<a class="btn btn-sm btn-outline-primary" href="{url}" target="_blank" rel="noopener">'
                       f"Open in {service}</a>" for service, url in launch_links(name, *where).items())
    return f'<p class="vv-launch">{buttons}</p>'


def reproduce_note(name: str, profile: str, overrides: dict | None = None, book_profile: str | None = None) -> str:
    """'Reproduce this page': the command that made the page.  A page built from the other
    chapters' results (the summary) names the book build and its profile."""
    shown = {k: v for k, v in (overrides or {}).items() if not k.endswith("_dir")}  # paths are the reader's own
    command = " ".join([f"python -m vvlib run {name} --profile {profile}",
                        *(f"-p {k} {json.dumps(v) if not isinstance(v, str) else v}" for k, v in shown.items())])
    if "results_dir" in get_chapter(name).parameters() and book_profile:
        return (f"**Reproduce this page:** `python -m vvlib book --profile {book_profile}` (it reruns the chapters "
                f"whose results this page reads; with them in `_output/`, `{command}` redoes this page alone).")
    return f"**Reproduce this page:** `{command}` (its numbers land in `_output/{name}/results.json`)."


def _default_text(value) -> str:
    """A parameter's default in the header's table: a list or a row in words (report.shown_value), else its literal."""
    return report.shown_value(value) if isinstance(value, (list, tuple, dict)) else repr(value)


def page_header(name: str, profile: str, overrides: dict | None = None, where=None, book_profile=None) -> str:
    """MyST for the top of a chapter page, in one paragraph under its answer: the command that
    reproduces it, where its results are committed, the paper's scale and launch links, then the
    chapter's parameters in a collapsed box.  where: github_repository()'s answer, for the launch
    links; book_profile: the profile the whole book was built at."""
    chapter = get_chapter(name)
    line = [reproduce_note(name, profile, overrides, book_profile)]
    committed = chapter.profiles.get(profile, {}).get("store_dir") == BOOK_STORE
    if committed and chapter.tasks:  # it trains or reuses models
        line.append(f"Its models' results are committed in `{BOOK_STORE}/` and loaded ({{doc}}`../scale` says why "
                    "this scale).")
    elif committed:  # chapters 2-3: no models, only tables
        line.append(f"Its tables are committed in `{BOOK_STORE}/` and read from there, not computed again.")
    if "paper" in chapter.profiles:
        line.append("The paper's scale: `--profile paper`, on a GPU.")
    rows = "\n".join(f"| `{p.name}` | {p.type} | `{_default_text(p.default)}` | {p.help} |"
                     for p in chapter.parameters().values())
    box = ("```{admonition} Parameters of this chapter\n:class: dropdown\n"
           f"Profiles: {', '.join(chapter.profile_names())}.\n\n"
           "| parameter | type | default | meaning |\n| --- | --- | --- | --- |\n" + rows + "\n```")
    buttons = launch_buttons(name, where)
    return (buttons + "\n\n" if buttons else "") + " ".join(line) + "\n\n" + box


def prepare_page(notebook: Path, name: str, profile: str = DEFAULT_PROFILE, overrides: dict | None = None,
                 where: tuple[str, str] | None = None, book_profile: str | None = None):
    """Make an executed chapter a book page: tag the parameters cell and papermill's injected
    cell `remove-cell` (the header shows the parameters instead) and put page_header(...)
    under the answer (or the title)."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if {"parameters", "injected-parameters"} & set(tags) and "remove-cell" not in tags:
            tags.append("remove-cell")
    header = nbformat.v4.new_markdown_cell(page_header(name, profile, overrides, where, book_profile))
    header.metadata["tags"] = ["page-header"]
    nb.cells = [c for c in nb.cells if "page-header" not in c.metadata.get("tags", [])]  # idempotent
    # under the chapter's answer where it opens with one (its cells tagged `answer`), else under its title (cell 0)
    answer = max((i for i, c in enumerate(nb.cells) if "answer" in c.metadata.get("tags", [])), default=0)
    nb.cells.insert(answer + 1, header)
    nbformat.write(nb, notebook)


def execute_chapters(root: Path, profile: str = DEFAULT_PROFILE, output_root: Path | None = None, progress=True,
                     overrides: dict | None = None, workers: int = 1, first: tuple = ()):
    """Run every chapter at `profile` (or its default, if it has no such profile); executed
    notebooks land in root/book/chapters/, results.json files in output_root/<chapter>/.
    overrides: {chapter: {parameter: value}} on top of the profile.  workers: chapters run at once,
    each its own kernel, started in the book's order with the chapters in `first` moved ahead; a
    chapter waits for those before it that share its store entries (plan.chapter_entries), and the
    summary for all of them."""
    known = sorted({p for chapter in CHAPTERS.values() for p in chapter.profile_names()})
    if profile not in known:
        raise ParameterError(f"profile: expected one of {', '.join(known)}, got {profile!r}")
    output_root = Path(output_root or REPO_ROOT / "_output")
    where = github_repository()  # checked before any chapter runs

    def settings(name):
        """(the profile chapter `name` runs at, its parameters on top of it)."""
        extra = dict((overrides or {}).get(name, {}))
        if "results_dir" in CHAPTERS[name].parameters():  # the summary reads the results.json files written before it
            extra["results_dir"] = str(output_root)
        return CHAPTERS[name].profile_or_default(profile), extra

    def execute(name):
        chosen, extra = settings(name)
        notebook = run_chapter(name, chosen, extra, output_dir=output_root / name,
                               notebook_out=Path(root) / "book" / "chapters" / f"{name}.ipynb", progress=progress)
        prepare_page(notebook, name, chosen, extra, where, book_profile=profile)

    published = [name for name, chapter in CHAPTERS.items() if chapter.in_book]
    reads_all = {name for name in published if "results_dir" in CHAPTERS[name].parameters()}  # the summary
    order = sorted(published, key=lambda name: (name in reads_all, name not in first,
                                                first.index(name) if name in first else 0))
    # what each chapter computes or reads: needed only when chapters run at once
    entries = {name: chapter_entries(name, resolved(name, *settings(name))) for name in order} if workers > 1 else {}
    waits = first_owners(order, entries)
    for name in reads_all:
        waits[name] = set(order) - {name}
    run_when_ready(order, waits, execute, workers)
    write_claims_table(root, output_root)
    write_scale_gaps(root, output_root)
    write_answer_figure(root)
    write_run_groups(root)
    write_status(root, results_dir=output_root)


def first_owners(order: list, entries: dict) -> dict:
    """{chapter: the chapters it waits for}: a store entry is computed by the first chapter in `order` that
    names it, and every later chapter naming it waits for that one."""
    owner = {}
    for name in order:
        for entry in entries.get(name, ()):
            owner.setdefault(entry, name)
    return {name: {owner[entry] for entry in entries.get(name, ())} - {name} for name in order}


def run_when_ready(order: list, waits: dict, execute, workers: int):
    """execute(name) for every name, at most `workers` at once, each started in `order` as soon as every name in
    waits[name] is done.  A failure starts nothing more and is raised once the running ones end."""
    done, running, pending = set(), {}, list(order)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        while pending or running:
            for name in [n for n in pending if waits[n] <= done][:workers - len(running)]:
                pending.remove(name)
                running[pool.submit(execute, name)] = name
            if not running:
                raise ValueError(f"chapters waiting on each other: {pending}")
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                done.add(running.pop(future))
                future.result()  # raises the chapter's error


def write_run_groups(root: Path, stores=(REPO_ROOT / PAPER_SCALE_STORE, REPO_ROOT / BOOK_STORE)):
    """The scale page's table of every committed training run, grouped, from the run records."""
    (Path(root) / RUN_GROUPS).parent.mkdir(parents=True, exist_ok=True)
    (Path(root) / RUN_GROUPS).write_text(run_groups.markdown(run_groups.groups(run_groups.committed_runs(stores))) + "\n")


def write_status(root: Path, store_dir: Path = REPO_ROOT / PAPER_SCALE_STORE, results_dir: Path | None = None):
    """The introduction's findings box (at the paper's scale, from store_dir and the chapters' results.json in
    results_dir, and what is still to run) and the scale page's table of the GPU queue's units not yet stored."""
    rows = pending.pending()
    (Path(root) / PENDING).parent.mkdir(parents=True, exist_ok=True)
    (Path(root) / PENDING).write_text(pending.markdown(rows) + "\n")
    more = [key_results.schedule_finding(results_dir or REPO_ROOT / "_output"), key_results.mechanism_finding(store_dir),
            key_results.beyond_finding(store_dir)]
    (Path(root) / KEY_RESULTS).write_text(key_results.markdown(key_results.headlines(store_dir),
                                                               pending.sentence(rows), more) + "\n")


def write_answer_figure(root: Path, store_dir: Path = REPO_ROOT / PAPER_SCALE_STORE):
    """The figure the introduction opens with: Tables 1 and 2 at the paper's scale, ours against the paper's."""
    n_seeds, panels = answer_panels(store_dir)
    fig = plots.answer(panels, {v: LABELS[v] for v in PAIR}, paper.LENGTHS,
                       title=f"{n_seeds} seeds per variant at the paper's steps, on a GPU")
    (Path(root) / ANSWER_FIGURE).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(Path(root) / ANSWER_FIGURE, dpi=110)
    plt.close(fig)


def answer_panels(store_dir: Path) -> tuple[int, list]:
    """(seeds per variant, the answer figure's panels): per task the runs its chapter leads with, each panel
    naming its own data (the counter stream, or the earlier per-seed generators)."""
    panels = []
    for task in TASKS:
        draws, P, accuracy, _ = latest_accuracy_runs(BY_TASK[task.name].name, task.name, store_dir)
        panels.append({"title": f"{task.table}: {task.title} ({STREAM_WORDS[draws]})", "lengths": P.eval_lengths,
                       "ours": {v: 100 * accuracy[v] for v in PAIR},
                       "paper": {v: task.accuracy[v] for v in PAIR}})
    return P.n_seeds, panels


def write_claims_table(root: Path, results_dir: Path):
    """The summary's verdicts as the Markdown table the introduction includes, so that the book's
    first page shows the numbers the chapters computed in this build."""
    records = claims.load(results_dir, SUMMARY.name)["metrics"]["claims"]
    (Path(root) / CLAIMS_TABLE).write_text(claims.claims_table(records) + "\n")


def write_scale_gaps(root: Path, results_dir: Path):
    """The scale page's table: chapters 4 and 5's +LN minus the Baseline at every scale they computed, read from
    their results.json."""
    rows = []
    for task in TASKS:
        path = Path(results_dir) / BY_TASK[task.name].name / "results.json"
        if path.exists():
            scales = json.loads(path.read_text())["metrics"].get("scales", {})
            rows += [(f"{task.table}, {task.title}", scale, gaps) for scale, gaps in scales.items()]
    (Path(root) / SCALE_GAPS).parent.mkdir(parents=True, exist_ok=True)
    (Path(root) / SCALE_GAPS).write_text(scale_gaps_markdown(rows) + "\n")


def scale_gaps_markdown(rows: list) -> str:
    """rows [(table, scale in words, {N: paired difference})] as one Markdown table, a column per length."""
    if not rows:
        return "*Chapters 4 and 5 have not run in this build.*"
    lengths = sorted({n for _, _, gaps in rows for n in gaps}, key=int)
    head = "| table | scale | " + " | ".join(f"N = {power_of_two(int(n))}" for n in lengths) + " |"
    lines = [head, "|---|---|" + "---|" * len(lengths)]
    lines += [f"| {table} | {scale} | " + " | ".join(gap_cell(gaps.get(n)) for n in lengths) + " |"
              for table, scale, gaps in rows]
    return "\n".join(lines)


def gap_cell(d: dict | None) -> str:
    """A paired difference as the scale page's cell: with its interval where the scale had seeds enough for one."""
    if not d:
        return "not tested"
    if d["low"] is None or d["low"] != d["low"]:  # one seed: results.json keeps no interval (None; nan in memory)
        return f"{d['diff']:+.1f}"
    return f"{d['diff']:+.1f} [{d['low']:+.1f}, {d['high']:+.1f}]"


def build_html(root: Path) -> Path:
    """jupyter-book build of `root` (holding _config.yml, _toc.yml, book/); returns index.html."""
    root = Path(root)
    webassets.install(root)  # MathJax and the widget manager, served locally
    command = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(root), "-W", "--keep-going"]
    subprocess.run(command, check=True)
    return root / "_build" / "html" / "index.html"


def build_book(profile: str = DEFAULT_PROFILE, stored_only: bool = False) -> Path:
    """Execute every chapter and build the HTML.  stored_only: a chapter whose results are
    not in the store fails instead of computing them (runs.stored_only)."""
    from ..experiments.storage.runs import stored_only as stored_only_mode

    with stored_only_mode(stored_only):  # papermill's kernels inherit it
        execute_chapters(REPO_ROOT, profile)
    return build_html(REPO_ROOT)
