"""The commands printed in the book's prose and the README stay valid: every
`python -m vvlib run ...` line names a real chapter, profile and parameters with values
of the right type (checked as the runner checks them, without running anything)."""

import re
import shlex

import pytest

from vvlib.book.build import github_repository, launch_links, page_header
from vvlib.book.runner import checked_parameters, parse_overrides
from vvlib.book.chapters import CHAPTERS, get_chapter
from vvlib.experiments.setups.params import ParameterError
from vvlib.experiments.storage.store import REPO_ROOT

PAGES = ["README.md", "docs/running.md", "book/intro.md", "book/scale.md", "book/exercises.md", "book/instructors.md"]


def run_commands():
    for page in PAGES:
        for line in (REPO_ROOT / page).read_text().replace("\\\n", " ").splitlines():  # joins continued lines
            match = re.search(r"python -m vvlib run (.*?)(?:#|`|$)", line)
            if match:
                yield page, match.group(1).strip()


def exercise_commands():
    """The exercises' commands: their pages show them from the registry (vvlib/book/exercises.py)."""
    from vvlib.book.exercises import EXERCISES

    for name, exercise in EXERCISES.items():
        yield f"exercise {name}", exercise.run.command().removeprefix("python -m vvlib run ")


COMMANDS = list(run_commands()) + list(exercise_commands())


def test_pages_show_commands():
    assert len(COMMANDS) >= 10


@pytest.mark.parametrize("page, command", COMMANDS, ids=[f"{p}: {c}" for p, c in COMMANDS])
def test_command_in_page_is_valid(page, command):
    words = shlex.split(command)
    name, profile, pairs, output = words[0], "default", [], None
    rest = iter(words[1:])
    for word in rest:
        if word == "--profile":
            profile = next(rest)
        elif word in ("-p", "--param"):
            pairs.append((next(rest), next(rest)))
        elif word == "--output":
            output = next(rest)
        else:
            pytest.fail(f"{page}: unexpected word {word!r} in `{command}`")
    checked_parameters(name, profile, parse_overrides(get_chapter(name), pairs), output)


def test_readme_images_and_local_links_exist():
    text = (REPO_ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not re.match(r"^[a-z]+:", t)]
    assert "docs/screenshot.png" in local
    for target in local:
        assert (REPO_ROOT / target).exists(), target


def test_repository_comes_from_the_config_then_the_origin_remote_then_the_environment(tmp_path):
    import subprocess

    env = {"GITHUB_REPOSITORY": "env/repo"}
    (tmp_path / "_config.yml").write_text("title: t\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert github_repository(env, tmp_path) == ("env/repo", "main")
    with pytest.raises(ParameterError, match="VVLIB_REPOSITORY.*owner/name"):
        github_repository({"VVLIB_REPOSITORY": "https://github.com/c/d"}, tmp_path)
    subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", "https://gitlab.com/x/y.git"], check=True)
    assert github_repository(env, tmp_path) == ("env/repo", "main")  # an origin off GitHub: not a launch target
    subprocess.run(["git", "-C", str(tmp_path), "remote", "set-url", "origin", "git@github.com:git/origin.git"],
                   check=True)
    assert github_repository(env, tmp_path) == ("git/origin", "main")
    (tmp_path / "_config.yml").write_text("repository:\n  url: https://github.com/conf/book\n  branch: pages\n")
    assert github_repository(env, tmp_path) == ("conf/book", "pages")
    (tmp_path / "_config.yml").write_text("repository:\n  url: https://example.org/conf/book\n")
    with pytest.raises(ParameterError, match="repository url"):
        github_repository(env, tmp_path)


@pytest.mark.parametrize("name", [n for n in CHAPTERS if n != "summary"])
def test_launch_links_open_the_chapters_source_notebook(name):
    links = launch_links(name, "owner/repo", "main")
    assert links["Colab"] == f"https://colab.research.google.com/github/owner/repo/blob/main/notebooks/{name}.ipynb"
    assert links["Binder"].endswith(f"?labpath=notebooks%2F{name}.ipynb")
    assert (REPO_ROOT / "notebooks" / f"{name}.ipynb").exists()  # the committed, output-free source
    assert links["Binder"] in page_header(name, "default", where=("owner/repo", "main"))
    assert "mybinder" not in page_header(name, "default")  # no repository known: no dead links


def test_pages_show_paths_relative_to_the_repository(tmp_path):
    """checked_parameters makes *_dir absolute for the kernel; the page turns them back."""
    from vvlib.experiments.reports.report import parameters_frame

    given = checked_parameters("04_argmax_retrieval", "ci", {"store_dir": "results/book", "output_dir": str(tmp_path)})
    assert given["store_dir"] == str(REPO_ROOT / "results/book")
    shown = parameters_frame({"n_seeds": 3, **given})["value"].to_dict()
    assert shown == {"n_seeds": "3", "profile": "ci", "store_dir": "results/book", "output_dir": str(tmp_path)}


def test_the_intros_figure_is_drawn_from_the_committed_paper_scale_runs(tmp_path):
    """Each panel names the data of the runs it plots, read from their records: chapter 4's may be the earlier
    runs (a generator per seed) while chapter 5's are the counter stream's, so no one stream is named for both."""
    from vvlib.book.build import ANSWER_FIGURE, STREAM_WORDS, answer_panels, write_answer_figure
    from vvlib.book.paper_scale import latest_accuracy_runs
    from vvlib.book.chapters import BY_TASK
    from vvlib.experiments.setups.paper_tasks import TASKS
    from vvlib.experiments.storage.runs import run_records

    write_answer_figure(tmp_path)
    assert (tmp_path / ANSWER_FIGURE).stat().st_size > 20_000
    n_seeds, panels = answer_panels(REPO_ROOT / "results" / "paper")
    assert n_seeds == 100 and len(panels) == len(TASKS)
    for task, panel in zip(TASKS, panels):
        *_, records = latest_accuracy_runs(BY_TASK[task.name].name, task.name, REPO_ROOT / "results" / "paper")
        (draws,) = {r["spec"]["train"].get("draws", "generators") for v in ("baseline", "layernorm")
                    for r in run_records(records[v])}
        assert panel["title"] == f"{task.table}: {task.title} ({STREAM_WORDS[draws]})"


def test_the_scale_page_lists_every_committed_run(tmp_path):
    """The run groups come from the run records (every run.json in the committed stores, in one
    group each)."""
    from vvlib.book.build import RUN_GROUPS, write_run_groups
    from vvlib.experiments.reports import run_groups

    stores = [REPO_ROOT / "results" / "paper", REPO_ROOT / "results" / "book"]
    rows = run_groups.committed_runs(stores)
    assert len(rows) == sum(len(list(s.glob("train-*/run.json"))) for s in stores)
    groups = run_groups.groups(rows)
    assert groups["runs"].sum() == len(rows)
    write_run_groups(tmp_path)
    table = (tmp_path / RUN_GROUPS).read_text()
    body = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| task |")]
    assert len(body) == len(groups) and table.count("`results/") == 2  # a table per store
    assert max(len(line.split(" | ")) for line in body) == 7  # seven columns: narrow enough for the page
    assert "{include} chapters/run-groups.md" in (REPO_ROOT / "book" / "scale.md").read_text()


def fake_book_build(monkeypatch, chapters, seconds, fails=()):
    """execute_chapters over `chapters` alone, each kernel replaced by a wait of seconds(name) that raises for the
    names in `fails` (a set the test may change between builds): ([("start", name, on the main thread?), ("end",
    name), ...] in the order they happened, [the chapters made pages])."""
    import threading
    import time

    from vvlib.book import build

    events, pages = [], []

    def run_chapter(name, profile, extra, output_dir, notebook_out, progress):
        events.append(("start", name, threading.current_thread() is threading.main_thread()))
        time.sleep(seconds(name))
        if name in fails:
            raise RuntimeError("kernel died")
        events.append(("end", name))
        return notebook_out

    monkeypatch.setattr(build, "run_chapter", run_chapter)
    monkeypatch.setattr(build, "prepare_page", lambda notebook, name, *args, **kwargs: pages.append(name))
    for step in ("write_claims_table", "write_answer_figure", "write_run_groups", "write_status"):
        monkeypatch.setattr(build, step, lambda *args, **kwargs: None)
    monkeypatch.setattr(build, "CHAPTERS", {name: CHAPTERS[name] for name in chapters})
    return events, pages


def test_chapters_run_at_once_in_the_given_order_and_the_summary_waits_for_all(tmp_path, monkeypatch):
    """execute_chapters(workers=2): two chapters at a time, `first` started ahead of the book's order, each made a
    page; the summary starts only once every other chapter is done, and a chapter's failure is raised."""
    from vvlib.book import build

    fails = set()
    events, pages = fake_book_build(monkeypatch, ("01_vanishing_variance_proof", "02_monte_carlo",
                                                  "03_pretrained_transformer", "04_argmax_retrieval", "summary"),
                                    lambda name: 0.6 if name == "03_pretrained_transformer" else 0.2, fails)
    build.execute_chapters(tmp_path, "ci", tmp_path / "results", progress=False, workers=2,
                           first=("03_pretrained_transformer", "summary"))
    assert sorted(pages) == sorted(build.CHAPTERS)
    order = [(kind, name) for kind, name, *_ in events]
    starts = [name for kind, name in order if kind == "start"]
    assert starts[:2] == ["03_pretrained_transformer", "01_vanishing_variance_proof"] and starts[-1] == "summary"
    assert order.index(("start", "04_argmax_retrieval")) < order.index(("end", "03_pretrained_transformer"))
    assert order.index(("end", "03_pretrained_transformer")) < order.index(("start", "summary"))

    fails.add("03_pretrained_transformer")
    events[:] = []
    with pytest.raises(RuntimeError, match="kernel died"):
        build.execute_chapters(tmp_path, "ci", tmp_path / "results", progress=False, workers=2)
    assert ("start", "summary", False) not in events


def test_a_chapter_waits_only_for_the_chapters_that_compute_its_store_entries(tmp_path, monkeypatch):
    """Chapter 8 reuses chapters 4 and 5's runs, so it starts only once both are done, and chapter 9 (runs of its
    own) overtakes it.  The entries are the plan's, at the ci profile, not a list kept here."""
    from vvlib.book import build

    events, _ = fake_book_build(monkeypatch, ("02_monte_carlo", "04_argmax_retrieval", "05_dictionary_lookup",
                                              "08_ablations", "09_longer_training"),
                                lambda name: 0.6 if name == "05_dictionary_lookup" else 0.1)
    store = {"store_dir": str(tmp_path / "store")}
    build.execute_chapters(tmp_path, "ci", tmp_path / "results", progress=False, workers=2,
                           first=("05_dictionary_lookup",),
                           overrides={name: store for name in build.CHAPTERS if name != "02_monte_carlo"})
    order = [(kind, name) for kind, name, *_ in events]
    assert order.index(("start", "04_argmax_retrieval")) < order.index(("end", "05_dictionary_lookup"))
    assert order.index(("start", "09_longer_training")) < order.index(("end", "05_dictionary_lookup"))
    assert order.index(("end", "05_dictionary_lookup")) < order.index(("start", "08_ablations"))


def test_an_entry_belongs_to_the_first_chapter_that_names_it():
    from vvlib.book.build import first_owners, run_when_ready

    entries = {"a": {1, 2}, "b": {2, 3}, "c": {3, 4}, "d": {5}}
    assert first_owners(list("abcd"), entries) == {"a": set(), "b": {"a"}, "c": {"b"}, "d": set()}
    assert first_owners(list("cba"), entries) == {"c": set(), "b": {"c"}, "a": {"b"}}
    with pytest.raises(ValueError, match="waiting on each other"):
        run_when_ready(["a", "b"], {"a": {"b"}, "b": {"a"}}, print, workers=2)


def test_the_intros_findings_match_the_committed_runs_by_hand():
    """The beyond-the-paper finding's difference is the paired mean over seeds of the two variants' committed
    accuracies at 2^14, recomputed here from the arrays with numpy alone."""
    import numpy as np
    from vvlib.book import key_results, paper_scale
    from vvlib.book.chapters import BEYOND

    store = REPO_ROOT / "results" / "paper"
    line = key_results.beyond_finding(store)
    if line is None:
        pytest.skip("chapter 10's dictionary runs are not committed")
    P, big = paper_scale.trained(BEYOND.name, store)
    acc = big["dictionary"][1]
    j = list(P.eval_lengths).index(2**14)
    d = 100 * (acc[key_results.BEST][:, j] - acc["baseline"][:, j])
    half = 1.984 * d.std(ddof=1) / np.sqrt(len(d))  # t(0.975, 99)
    assert f"{d.mean():+.1f} ({d.mean() - half:+.1f} to {d.mean() + half:+.1f})" in line


def test_a_long_table_is_shown_collapsed_under_what_it_holds(monkeypatch):
    import pandas as pd
    from vvlib.book import page

    shown = []
    monkeypatch.setattr(page, "display", lambda *items, **_: shown.extend(items))
    page.show_table(pd.DataFrame({"x": range(page.LONG_TABLE)}), "short")
    page.show_table(pd.DataFrame({"x": range(page.LONG_TABLE + 1)}), "Every row")
    assert isinstance(shown[0], pd.DataFrame)
    assert shown[1].data.startswith("<details><summary>Every row (16 rows)</summary><table")
