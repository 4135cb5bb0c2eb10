"""End to end: every chapter runs under papermill at its `ci` profile, and the book builds.

Slow (about two minutes on 2 CPU cores): each chapter is executed once per session.
"""

import html as html_lib
import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import papermill
import pytest

from vvlib.book.build import build_html, execute_chapters
from vvlib.book.readable import problems as readable_text_problems
from vvlib.book.runner import execute_notebook, run_chapter
from vvlib.book.chapters import CHAPTERS, get_chapter
from vvlib.experiments.records.scales import PAPER_SCALE_STORE
from vvlib.evaluate import PAPER_LENGTHS
from vvlib.experiments.storage.store import REPO_ROOT

pytestmark = pytest.mark.slow
# short for CI, and winning over the ci profile: two seeds, 400 and 300 steps (both tasks pass 90% at N = 16 there),
# 32 test sequences a length; the chapters reusing chapters 4 and 5's runs take the same values, so they find them
STEPS, SEQUENCES = {"argmax": 400, "dictionary": 300}, 32
OVERRIDES = {name: {"n_seeds": 2} for name in ("04_argmax_retrieval", "05_dictionary_lookup", "06_distribution_shift",
                                               "07_dispersion", "08_ablations", "10_beyond")}
for name in ("04_argmax_retrieval", "06_distribution_shift", "07_dispersion"):
    OVERRIDES[name]["steps"] = STEPS["argmax"]
OVERRIDES["05_dictionary_lookup"].update(steps=STEPS["dictionary"], n_eval_sequences=SEQUENCES)
for name in ("08_ablations", "10_beyond"):
    OVERRIDES[name].update(steps=STEPS, n_eval_sequences={"argmax": SEQUENCES, "dictionary": SEQUENCES})
# chapter 9's curriculum runs on up to 256 items: two thirds of its ci steps, its longer runs scored on 32 sequences
OVERRIDES["09_longer_training"] = {"steps": {"argmax": 100, "dictionary": 70},
                                   "long_eval_sequences": {"argmax": 0, "dictionary": SEQUENCES}}
# chapters 4 and 5 also load the committed paper-scale runs (results/paper: reading them is quick), so the
# pages, the summary and the browser test see the paper-scale sections as the published book shows them
for name in ("04_argmax_retrieval", "05_dictionary_lookup"):
    OVERRIDES[name]["paper_scale_dir"] = PAPER_SCALE_STORE

TRAINING_CHAPTERS = {"04_argmax_retrieval": 10, "05_dictionary_lookup": 64}  # chapter: number of classes
# started first (two at a time, as CI's two cores allow): chapter 5 and then chapter 10, which reads its runs, are
# the longest chain; then chapter 4 (chapters 6-8 and 10 read its runs) and chapter 9, the longest of the rest
FIRST = ("05_dictionary_lookup", "04_argmax_retrieval", "10_beyond", "09_longer_training")


PUBLISHED = [name for name, chapter in CHAPTERS.items() if chapter.in_book]
TRAINING_PAGES = [name for name in PUBLISHED if "04" <= name[:2] <= "11"]  # each opens with its answer


def executed_notebook(root, name):
    """Where the fixture left a chapter's executed notebook (unpublished ones are not book pages)."""
    return root / ("book/chapters" if get_chapter(name).in_book else "unpublished") / f"{name}.ipynb"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """Every chapter at its ci profile (the summary at its default), as `python -m vvlib book` runs them;
    then the chapters not yet in the book, the same way but outside it."""
    root = tmp_path_factory.mktemp("book")
    overrides = {name: {**OVERRIDES.get(name, {}), "store_dir": str(root / "store")}
                 for name in CHAPTERS if "store_dir" in get_chapter(name).parameters()}
    execute_chapters(root, "ci", root / "results", progress=False, overrides=overrides, workers=2,
                     first=FIRST)
    for name in CHAPTERS:
        if name not in PUBLISHED:
            run_chapter(name, "ci", overrides[name], output_dir=root / "results" / name,
                        notebook_out=executed_notebook(root, name), progress=False)
    return root, {name: json.loads((root / "results" / name / "results.json").read_text()) for name in CHAPTERS}


@pytest.mark.parametrize("name", list(CHAPTERS))
def test_results_json_has_parameters_provenance_and_metrics(executed, name):
    results = executed[1][name]
    assert results["chapter"] == name
    profile = get_chapter(name).profile_or_default("ci")
    assert results["parameters"]["profile"] == profile
    for key, value in get_chapter(name).profiles.get(profile, {}).items():
        assert results["parameters"][key] == OVERRIDES.get(name, {}).get(key, value)
    assert {"device", "torch", "git_commit", "wall_time_s"} <= set(results["provenance"])
    assert results["metrics"]


@pytest.mark.parametrize("name", list(TRAINING_CHAPTERS))
def test_training_chapter_metrics(executed, name):
    results = executed[1][name]
    for scale, gaps in results["metrics"]["scales"].items():  # every scale's gap, as the scale page shows it
        assert all(g["low"] is None or g["low"] <= g["diff"] <= g["high"] for g in gaps.values()), scale
    lengths = {str(n) for n in PAPER_LENGTHS}
    accuracy = results["metrics"]["accuracy"]
    assert set(accuracy) == {"baseline", "layernorm", "adaptive_baseline", "adaptive_layernorm"}
    for variant in accuracy.values():
        assert set(variant) == lengths and all(0 <= a <= 100 for a in variant.values())
    for pair in results["metrics"]["p_value"].values():
        assert set(pair) == lengths and all(p is None or 0 <= p <= 1 for p in pair.values())
    # even the ci profile's models must beat chance by far inside the training lengths
    chance = 100 / TRAINING_CHAPTERS[name]
    assert accuracy["baseline"]["16"] > chance + 40 and accuracy["layernorm"]["16"] > chance + 40


def test_ablation_chapter_reuses_stored_models_and_reports_both_tasks(executed):
    results = executed[1]["08_ablations"]
    metrics, lengths = results["metrics"], {str(n) for n in PAPER_LENGTHS}
    for task in ("argmax", "dictionary"):
        assert set(metrics["relative_gain"][task]) == {"standardize", "layernorm"}
        assert all(set(g) == lengths for g in metrics["relative_gain"][task].values())
        assert set(metrics["p_value_ln_vs_std"][task]) == lengths
    # train once, probe many: the Baseline is chapter 4's stored run, not a new one
    sources, argmax = results["provenance"]["sources"], executed[1]["04_argmax_retrieval"]["provenance"]["sources"]
    assert sources["training/argmax/baseline"] == argmax["training/baseline"]


def test_ablation_chapter_at_the_longer_training_reuses_chapters_4_and_5s_runs(executed):
    """Table 3 and 6 at the ci profile's longer training: Baseline and +LN are chapters 4-5's
    long runs (both seed runs of each), only +std is new; numbers over the joined seeds."""
    results = executed[1]["08_ablations"]
    long, sources = results["metrics"]["long"], results["provenance"]["sources"]
    for task, chapter in (("argmax", "04_argmax_retrieval"), ("dictionary", "05_dictionary_lookup")):
        theirs = executed[1][chapter]
        assert long[task]["steps"] == theirs["parameters"]["long_steps"] and long[task]["n_seeds"] == 2
        for variant in ("baseline", "layernorm"):
            for first in (0, 1):
                assert sources[f"training/long/{task}/{variant}/{first}"] == \
                    theirs["provenance"]["sources"][f"training/long/{variant}/{first}"]
            assert long[task]["accuracy"][variant] == pytest.approx(theirs["metrics"]["long"]["accuracy"][variant])
        assert {f"training/long/{task}/standardize/{first}" for first in (0, 1)} <= set(sources)
        for n, d in long[task]["ln_minus_std"].items():
            diff = long[task]["accuracy"]["layernorm"][n] - long[task]["accuracy"]["standardize"][n]
            assert d["diff"] == pytest.approx(diff)


def test_pretrained_transformer_chapter_metrics(executed):
    results = executed[1]["03_pretrained_transformer"]
    models = results["metrics"]["models"]
    assert list(models) == ["all-MiniLM-L6-v2", "SmolLM2-135M-Instruct"]
    strategies = {"random_no_pe", "random_pe", "sentences_pe"}
    for name, m in models.items():
        assert set(m["slope"]) == set(m["std_by_length"]) == set(m["head_slope"]) == set(m["layer_slope"]) == strategies
        assert m["slope"]["random_no_pe"] < -0.1, name  # random tokens without positions: the std falls with N
        for strategy, (low, high) in m["slope_interval"].items():
            assert low <= m["slope"][strategy] <= high
        assert all(len(by_layer) == m["model"]["layers"] for by_layer in m["layer_slope"].values())
    minilm, smollm2 = models.values()
    assert "position table" in minilm["positions_removed"] and "rotary" in smollm2["positions_removed"]
    assert 22e6 < minilm["model"]["parameters"] < 23e6 and len(minilm["head_slope"]["random_pe"]) == 12


def test_distribution_shift_metrics(executed):
    results = executed[1]["06_distribution_shift"]
    metrics, lengths = results["metrics"], {str(n) for n in PAPER_LENGTHS}
    for key in ("global_mean", "global_variance", "global_mean_drift", "relative_global_variance"):
        assert set(metrics[key]) == {"baseline", "layernorm"} and all(set(v) == lengths for v in metrics[key].values())
    reference = str(results["parameters"]["max_len"])
    assert all(v[reference] == pytest.approx(1) for v in metrics["relative_global_variance"].values())
    n_components = len(results["parameters"]["components"])
    assert all(len(stds) == n_components for v in metrics["component_std"].values() for stds in v.values())
    # fixed components concentrate as N grows, with or without LN (the paper's Figure 2)
    assert all(-1 < s < 0 for s in metrics["component_std_slope"].values())


def test_dispersion_metrics(executed):
    metrics = executed[1]["07_dispersion"]["metrics"]
    runs = {"baseline", "layernorm", "adaptive_baseline", "adaptive_layernorm"}
    assert set(metrics["entropy"]) == set(metrics["top1_weight"]) == runs
    for run in runs:
        for n in PAPER_LENGTHS:
            assert 0 <= metrics["entropy"][run][str(n)] <= math.log(n)
            assert 1 / n <= metrics["top1_weight"][run][str(n)] <= 1
        # dispersion: the largest weight falls as the set grows
        assert metrics["top1_weight"][run]["16384"] < metrics["top1_weight"][run]["16"]
    assert set(metrics["p_value_entropy"]) == {"baseline_vs_layernorm", "adaptive_baseline_vs_adaptive_layernorm"}


@pytest.mark.parametrize("name", ["08_ablations", "09_longer_training"])
def test_a_two_task_page_opens_with_its_runs_at_the_papers_scale_once_committed(executed, tmp_path, name):
    """Chapters 8 and 9 beside a paper store holding all their runs (made up under the real store keys): each
    task's answer at the paper's scale comes first, then the page's own, and results.json keeps it for the
    summary."""
    from tests.paper_records import GPU, made_up_runs

    made_up_runs(tmp_path / "paper", name)
    given = {**OVERRIDES.get(name, {}), "store_dir": str(executed[0] / "store"),
             "paper_scale_dir": str(tmp_path / "paper")}
    notebook = run_chapter(name, "ci", given, output_dir=tmp_path / "out", progress=False)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    big = results["metrics"]["paper_scale"]
    assert {t: (v["n_seeds"], v["steps"]) for t, v in big.items()} == {"argmax": (100, 100_000),
                                                                      "dictionary": (100, 10_000)}
    assert results["provenance"]["sources"]["training/paper_scale/dictionary/baseline"]["device"] == GPU
    cells = json.loads(notebook.read_text())["cells"]
    captions = ["".join(out["data"]["text/html"]) for c in cells if "answer" in c["metadata"].get("tags", [])
                for out in c.get("outputs", []) if "<figcaption>" in "".join(out.get("data", {}).get("text/html", ""))]
    # per task: the paper's scale, then the page's; chapter 8 draws each task's at the paper's scale too
    assert len(captions) == (2 if name == "08_ablations" else 0) and all("GPU" in text for text in captions)
    # the verdict table(s): a row per task and scale, the paper's scale first (chapter 8 one table, chapter 9 one a task)
    tables = ["".join(out["data"]["text/html"]) for c in cells if "answer" in c["metadata"].get("tags", [])
              for out in c.get("outputs", []) if "ahead" in "".join(out.get("data", {}).get("text/html", ""))]
    verdicts = "".join(tables)
    assert len(tables) == (1 if name == "08_ablations" else 2) and verdicts.count(" seeds x ") == 4, verdicts
    assert -1 < verdicts.find("100 seeds x 100,000 steps") < verdicts.find("100 seeds x 10,000 steps")


def test_longer_training_chapter_trains_with_a_curriculum_on_both_tasks(executed):
    """The main runs of both tasks, and (the ci profile) dictionary lookup's longer training as two runs of one
    seed each, its curriculum stretched over its own 40 steps."""
    root, found = executed
    results = found["09_longer_training"]
    assert results["parameters"]["max_len"] == 256
    lengths = {str(n) for n in PAPER_LENGTHS}
    for task in ("argmax", "dictionary"):
        assert set(results["metrics"]["accuracy"][task]) == {"baseline", "layernorm"}
        assert set(results["metrics"]["p_value"][task]) == lengths
    long = results["metrics"]["long"]
    assert list(long) == ["dictionary"] and (long["dictionary"]["n_seeds"], long["dictionary"]["steps"]) == (2, 40)
    assert set(long["dictionary"]["p_value"]) == lengths
    specs = [json.loads(path.read_text())["spec"]["train"] for path in (root / "store").glob("train-*/run.json")]
    stretched = [(t["first_seed"], t["n_seeds"], t["curriculum_steps"]) for t in specs
                 if (t["steps"], t["max_len"]) == (40, 256)]
    assert sorted(stretched) == [(0, 1, 40), (0, 1, 40), (1, 1, 40), (1, 1, 40)]  # two variants, two runs each


def test_every_figure_is_numbered_described_and_legible(executed):
    """Each figure a chapter shows is numbered in order (Figure <chapter>.<k>), has alt text that is not a file name,
    and, per axes, at most 6 legend entries, no colour shared by two of them and no text under 9 px as shown
    (page.figure_facts, recorded with the figure)."""
    import nbformat
    from vvlib.book.page import chapter_number

    root, _ = executed
    for name in CHAPTERS:
        outputs = [o for cell in nbformat.read(executed_notebook(root, name), as_version=4).cells
                   for o in cell.get("outputs", [])]
        captions = ["".join(o.get("data", {}).get(kind, "")) for o in outputs for kind in ("text/html", "text/markdown")]
        every = [m.group(1) for text in captions for m in re.finditer(r"(?:<strong>|\*\*)Figure ([\d.A-Z]+)\.", text)]
        assert every == [f"{chapter_number(name)}.{k}" for k in range(1, len(every) + 1)], name  # a slider's too
        shown = [o for o in outputs if "vvlib_figure" in o.get("metadata", {})]
        numbers = [re.search(r"<strong>Figure ([\w.]+)\.</strong>", "".join(o["data"]["text/html"])).group(1)
                   for o in shown]
        for number, output in zip(numbers, shown):
            alt = re.search(r'alt="([^"]*)"', "".join(output["data"]["text/html"])).group(1)
            assert len(alt.split()) >= 3 and not alt.endswith(".png"), (name, number, alt)
            for facts in output["metadata"]["vvlib_figure"]:
                assert facts["entries"] <= 6 and facts["repeated_colours"] == 0, (name, number, facts)
                assert facts["smallest_px"] is None or facts["smallest_px"] >= 9, (name, number, facts)


def test_no_figure_is_shown_twice(executed):
    import nbformat

    root, _ = executed
    for name in CHAPTERS:
        nb = nbformat.read(executed_notebook(root, name), as_version=4)
        for cell in nb.cells:
            images = [o["data"]["image/png"] for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
            images += re.findall(r'src="data:image/png;base64,([^"]+)"', "".join(
                "".join(o.get("data", {}).get("text/html", "")) for o in cell.get("outputs", [])))
            assert len(images) == len(set(images)), f"{name}: a figure is displayed twice in one cell"


def test_proof_chapter_metrics(executed):
    metrics = executed[1]["01_vanishing_variance_proof"]["metrics"]
    assert -1.1 < metrics["variance_slope"] < -0.9  # Var ~ 1/N
    assert metrics["bounds_hold"]["efron_stein_bound"]
    for row in metrics["chain"].values():
        assert row["variance"] <= row["second_moment"] <= row["line4"] <= row["line5"]
    # N Var(O) approaches the sharp constant (2,000 sequences at the ci profile: a few % of noise)
    last = metrics["n_times_variance"][str(max(map(int, metrics["n_times_variance"])))]
    assert abs(last / metrics["sharp_constant"] - 1) < 0.15


def test_monte_carlo_chapter_metrics(executed):
    metrics = executed[1]["02_monte_carlo"]["metrics"]
    # -1/2 is the large-N law; 1/N corrections at short N shift a fit over all N by a little
    assert all(abs(s["slope"] + 0.5) < 0.05 for s in metrics["slope_by_feature"].values())
    low, high = metrics["slope_ci"]
    assert low <= metrics["loglog_slope"] <= high and abs(metrics["loglog_slope"] + 0.5) < 0.05
    assert set(metrics["std_by_length"]) == {str(n) for n in get_chapter("02_monte_carlo").profiles["ci"]["lengths"]}
    assert all({"exact", "monte_carlo", "standard_error"} <= set(row) for row in metrics["exact_check"].values())
    assert all(abs(row["z"]) < 4 for row in metrics["exact_check"].values())
    broken = metrics["broken_assumptions"]
    assert abs(broken["query drawn from the sequence"]["slope (longest 3 N)"]) < 0.2  # no longer vanishing


def test_beyond_chapter_metrics(executed):
    results = executed[1]
    m = results["10_beyond"]["metrics"]
    lengths = [str(n) for n in get_chapter("10_beyond").profiles["ci"]["eval_lengths"]]
    variants = {"baseline", "layernorm", "rescale", "log_n", "log_n_layernorm", "deep_baseline", "deep_layernorm"}
    for task in ("argmax", "dictionary"):
        accuracy = m["accuracy"][task]
        assert set(accuracy) == variants and all(list(a) == lengths for a in accuracy.values())
        assert set(m["variance_slope"][task]) == variants
        assert all(p is None or 0 <= p <= 1 for pair in m["p_value"][task].values() for p in pair.values())
        for n, best in m["best"][task].items():  # the best is the highest mean, the runner-up the next
            ranked = sorted(variants, key=lambda v: accuracy[v][n], reverse=True)
            assert accuracy[best["variant"]][n] == accuracy[ranked[0]][n]
            assert accuracy[best["runner_up"]][n] == accuracy[ranked[1]][n]
        # the Baseline and +LN are chapter 8's ci runs, loaded from the store: same test sequences, same numbers
        assert accuracy["layernorm"]["16"] == results["08_ablations"]["metrics"]["accuracy"][task]["layernorm"]["16"]
    assert abs(m["mc_slope"]["plain"] + 0.5) < 0.1 and abs(m["mc_slope"]["rescale"]) < 0.1


def test_sensitivity_chapter_reports_every_row_with_its_paired_difference(executed):
    results = executed[1]["11_sensitivity"]
    m, P = results["metrics"], results["parameters"]
    expected = [("argmax", row) for row in P["argmax_rows"]] + [("dictionary", row) for row in P["dictionary_rows"]]
    assert [(r["task"], r["changes"]) for r in m["rows"]] == expected
    for r in m["rows"]:
        assert set(r["difference"]) == {str(n) for n in P["compared_lengths"]}
        for n, d in r["difference"].items():
            assert d["diff"] == pytest.approx(r["accuracy"]["layernorm"][n] - r["accuracy"]["baseline"][n])
            assert d["low"] <= d["diff"] <= d["high"]
        assert r["n_seeds"] == r["changes"].get("n_seeds", P["n_seeds"]) and r["distance_to_paper"] >= 0
    assert m["closest"]["argmax"] in {r["row"] for r in m["rows"] if r["task"] == "argmax"}
    # the dictionary defaults are also run with more seeds, as a run of their own
    defaults, again = (r for r in m["rows"] if r["task"] == "dictionary" and set(r["changes"]) <= {"n_seeds"})
    assert (defaults["n_seeds"], again["n_seeds"]) == (P["n_seeds"], 3) and defaults["runs"] != again["runs"]


def test_summary_verdicts_follow_from_the_chapters_numbers(executed):
    """Recompute one claim by hand from chapter 4's results.json and check the summary's row."""
    from vvlib import compare

    root, results = executed
    claims = results["summary"]["metrics"]["claims"]
    # one row per claim: chapters 4-5 three each; chapter 8 three; chapter 9 two; chapters 6-7 four
    assert len(claims) == 15 and all(c["verdict"] in (compare.SUPPORTED, compare.CONTRADICTED, compare.MIXED,
                                                      compare.UNCLEAR) for c in claims.values())
    m = results["04_argmax_retrieval"]["metrics"]
    ood = [str(n) for n in PAPER_LENGTHS if n > 16]
    ahead = [n for n in ood if m["accuracy"]["layernorm"][n] > m["accuracy"]["baseline"][n]]
    significant = [n for n in ahead if (m["p_value"]["baseline_vs_layernorm"][n] or 1) < 0.05]
    row = claims["argmax: +LN is more accurate than the Baseline"]
    # the committed paper-scale runs (100 seeds x 100,000 steps, GPU) decide; the ci profile's own runs
    # (STEPS) and its longer training (60 steps) stand beside them as evidence
    assert (row["n_seeds"], row["steps"], row["profile"], row["paper"]) == (100, 100_000, "paper", "Table 1")
    assert not row["device"].startswith("cpu")
    own, longer = row["smaller_scales"]
    assert own["evidence"].startswith(f"ahead at {len(ahead)} of {len(ood)} lengths ({len(significant)} with p < 0.05)")
    assert (own["n_seeds"], own["steps"], own["profile"]) == (2, STEPS["argmax"], "ci")
    long = results["04_argmax_retrieval"]["metrics"]["long"]
    behind = [n for n in ood if long["accuracy"]["layernorm"][n] < long["accuracy"]["baseline"][n]]
    assert f"behind at {len(behind)} (" in longer["evidence"] and (longer["n_seeds"], longer["steps"]) == (2, 60)
    equivalences = results["summary"]["metrics"]["ln_minus_std_dictionary"]
    assert len(equivalences) == 2 and all(set(by_length) == set(ood) for by_length in equivalences.values())
    ablation = results["08_ablations"]["metrics"]["long"]["argmax"]
    (smaller,) = claims["argmax: +std is more accurate than the Baseline"]["smaller_scales"]
    ahead = [n for n in ood if ablation["accuracy"]["standardize"][n] > ablation["accuracy"]["baseline"][n]]
    assert smaller["evidence"].startswith(f"ahead at {len(ahead)} of {len(ood)} lengths")


@pytest.fixture(scope="module")
def built(executed):
    """The book's HTML, built once from the executed chapters (warnings are errors)."""
    root, _ = executed
    shutil.copytree(REPO_ROOT / "book", root / "book", ignore=shutil.ignore_patterns("chapters"), dirs_exist_ok=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(REPO_ROOT / name, root / name)
    index = build_html(root)
    assert index.exists()
    return root


def test_book_builds_with_every_executed_chapter(built):
    root = built
    for name in PUBLISHED:
        page = (root / "_build" / "html" / "book" / "chapters" / f"{name}.html").read_text()
        assert "<img" in page, name  # every chapter has a figure
        assert "# Parameters" not in page, name  # papermill's injected cell and the parameters cell are hidden
        text = re.sub(r"<[^>]+>", "", page)  # inline code is split into one span per word
        profile = get_chapter(name).profile_or_default("ci")
        made_by = "python -m vvlib book --profile ci" if name == "summary" else f"python -m vvlib run {name} --profile {profile}"
        assert made_by in text and "output_dir" in page, name
    references = (root / "_build" / "html" / "book" / "references.html").read_text()
    assert "Veli" in references and "Layer normalization" in references


def test_pages_show_table_cells_whole_and_no_markup_leaks(built):
    html = built / "_build" / "html" / "book"
    for page in [html / "intro.html", *(html / "chapters" / f"{n}.html" for n in PUBLISHED)]:
        assert readable_text_problems(page.read_text()) == [], page.name


def test_each_page_keeps_to_its_word_budget(built):
    """Prose as a reader reads it (written and generated, tables, code and collapsed blocks left out): at most
    2,500 words a chapter and 700 on the introduction."""
    from vvlib.book.readable import article_prose

    html = built / "_build" / "html" / "book"
    budgets = {html / "intro.html": 700, **{html / "chapters" / f"{n}.html": 2500 for n in PUBLISHED}}
    over = {page.stem: words for page, most in budgets.items() if (words := len(article_prose(page.read_text()).split())) > most}
    assert over == {}


def test_the_page_check_catches_each_problem_it_names(tmp_path, capsys):
    from vvlib.book import readable

    assert readable_text_problems("<td>ahead at 0 of 10 lengths (0 with p &lt; 0.05), be…</td>")[0].startswith("cut")
    # a long table pandas cut: its rows of "..." (chapter 11's 78 dictionary rows showed 10 in the published book)
    (tmp_path / "book" / "chapters").mkdir(parents=True)
    (tmp_path / "book" / "intro.html").write_text("<table><tr><td>2¹⁰</td><td>-3.3 [-7.4, +0.8]</td></tr></table>")
    (tmp_path / "book" / "chapters" / "11.html").write_text("<tr><td>76.3</td></tr><tr><td>...</td><td>...</td></tr>")
    assert readable.book_problems(tmp_path) == {"book/chapters/11.html": ["cut short: '...'"] * 2}
    assert readable.main([str(tmp_path)]) == 1 and "book/chapters/11.html: cut short" in capsys.readouterr().out
    (tmp_path / "book" / "chapters" / "11.html").write_text("<tr><td>76.3</td></tr>")
    assert readable.main([str(tmp_path)]) == 0
    with pytest.raises(SystemExit) as stopped:
        readable.main([str(tmp_path / "nowhere")])
    assert stopped.value.code == 2 and "build the book first" in capsys.readouterr().err
    assert readable_text_problems("<td>[{}, {'min_len': 1}]</td>")[0].startswith("a Python list")
    assert readable_text_problems("<p>Chance is $100/\\text{n\\_classes}$</p>")[0].startswith("TeX outside math")
    drawn = '<img src="a.png"/><p>text</p><img src="b.png"/><p><strong>Figure.</strong> b</p>'
    assert readable_text_problems(drawn) == ["a figure without its caption: a.png"]  # b's caption is not a's
    assert readable_text_problems('<figure><img src="c.png"/><figcaption>c</figcaption></figure>') == []
    long = "<p><strong>Figure.</strong> " + " ".join(["Word"] * 41) + ".</p>"
    assert readable_text_problems('<img src="d.png"/>' + long)[0].startswith("a long caption sentence")
    assert readable_text_problems("<td>[NVIDIA H100 80GB HBM3, cpu (x86_64, 2 threads)]</td>")[0].startswith("a Python")
    assert readable_text_problems('<span class="math notranslate">\\(n\\_c\\)</span><td>-2.6 [-4.0, -1.2]</td>') == []


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  # no network: every host resolves nowhere and any proxy use fails
                  "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
                  "--virtual-time-budget=15000"]
SCREENSHOTS = REPO_ROOT / "_build" / "screenshots"


def chromium():
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if found is None:
        message = "headless Chromium is needed (Debian: apt-get install chromium)"
        pytest.fail(message) if os.environ.get("CI") else pytest.skip(message)
    return found


def rendered_dom(browser, page) -> str:
    done = subprocess.run([browser, *CHROMIUM_FLAGS, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "</html>" in done.stdout, done.stderr[-2000:]
    return done.stdout


def local_targets(dom: str, page):
    """Files that the page's images and links point at inside the book (no URLs, no anchors)."""
    for attribute in ("src", "href"):
        for target in re.findall(rf'<(?:img|a)\b[^>]*\b{attribute}="([^"#?]+)', dom):
            if not re.match(r"^[a-z]+:", target):
                yield attribute, (page.parent / target).resolve()


def opening(dom: str) -> tuple[int, bool]:
    """(words of text before the first table or figure of a page's article, whether a note box comes
    before it): how much a reader reads before the answer."""
    article = dom[dom.index("<article"):]
    first = min(i for i in (article.find("<table"), article.find("<img")) if i >= 0)
    before = re.sub(r"<(script|style)\b.*?</\1>", "", article[:first], flags=re.S)
    return len(re.sub(r"<[^>]+>", " ", before).split()), "admonition note" in before


# measures, once the page has laid out at 1280 px, every shown table and code block of the article against the
# text column; a code block also against its own box (a line longer than the box hides behind a scroll bar)
SCREEN_PX, MAX_SCREENS = 900, 12  # a 1280 x 900 window; a chapter's budget in screens
WIDTH_PROBE = """<script>window.addEventListener("load", () => {
  const column = document.querySelector("article").getBoundingClientRect().width;
  const blocks = [...document.querySelectorAll("article table, article pre")]  // those shown: a collapsed one has no text
      .filter(b => b.offsetParent !== null && (b.innerText || "").trim() !== "");
  // a block's box against the column; a code block's lines (scrollWidth) against its box inside the borders
  const overflow = b => Math.max(b.getBoundingClientRect().width - column,
      b.tagName === "PRE" ? b.scrollWidth - b.clientWidth : 0);
  const wide = blocks.filter(b => overflow(b) > 1).map(b => [Math.round(b.getBoundingClientRect().width +
      Math.max(0, b.scrollWidth - b.clientWidth)), (b.innerText || "").trim().slice(0, 80)]);
  const out = document.createElement("pre"); out.id = "block-widths";
  const height = document.documentElement.scrollHeight;  // the page's length, for the screens budget
  out.textContent = JSON.stringify({column: Math.round(column), wide, height}); document.body.appendChild(out);
});</script>"""


def wide_blocks(browser, page) -> dict:
    """{"column": the article's width in px, "wide": [[width, first words] of each table or code block wider than
    it, or code block whose lines are wider than the block], "height": the page's length in px} at a 1280 px
    window: a copy of the page beside it (same assets) with WIDTH_PROBE added."""
    probe = page.with_name(f"_width-{page.name}")
    probe.write_text(page.read_text().replace("</body>", WIDTH_PROBE + "</body>"))
    try:
        done = subprocess.run([browser, *CHROMIUM_FLAGS, "--window-size=1280,1600", "--dump-dom", probe.as_uri()],
                              capture_output=True, text=True, timeout=120)
    finally:
        probe.unlink()
    found = re.search(r'<pre id="block-widths"[^>]*>(.*?)</pre>', done.stdout, flags=re.S)
    assert found, done.stderr[-2000:]
    return json.loads(html_lib.unescape(found.group(1)))


def test_pages_render_offline_in_chromium(built):
    """Every page, opened from disk with the network blocked: MathJax typeset the math,
    every image and internal link points at a file that exists, the widgets render."""
    browser = chromium()
    html = built / "_build" / "html"
    pages = [html / "book" / "intro.html", *(html / "book" / "chapters" / f"{n}.html" for n in PUBLISHED)]
    with_widgets, raw = set(), {}
    for page in pages:
        source, dom = page.read_text(), rendered_dom(browser, page)
        raw[page.stem] = dom
        if "SelectionSliderModel" in source:  # a saved slider exploration (vvlib.experiments.explore): it must come alive
            assert "widget-slider" in dom and "widget-image" in dom, f"{page.name}: the slider exploration did not render"
            with_widgets.add(page.stem)
        if "math notranslate" in source:
            assert "<mjx-container" in dom, f"{page.name}: math was not typeset (MathJax did not load offline)"
        for attribute, target in local_targets(dom, page):
            assert target.exists(), f"{page.name}: {attribute} {target} does not exist"
        if "<img" in source:
            assert "<img" in dom, page.name
    assert {"02_monte_carlo", "06_distribution_shift"} <= with_widgets
    # result first: the answer's table or figure before any note box, after at most 150 words
    for name in TRAINING_PAGES:
        words, note_first = opening(raw[name])
        assert words <= 150 and not note_first, (name, words, note_first)
    # no table or code block wider than the text column at 1280 px (its right end would be off the edge or
    # behind a scroll bar); the pages include the summary and its claims table
    measured = {page.stem: wide_blocks(browser, page) for page in pages}
    assert {name: m["wide"] for name, m in measured.items() if m["wide"]} == {}
    # a chapter reads in at most 12 screens of a 1280 x 900 window (collapsed blocks closed)
    assert {name: round(m["height"] / SCREEN_PX, 1) for name, m in measured.items()
            if name != "intro" and m["height"] > MAX_SCREENS * SCREEN_PX} == {}
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for name in ("intro", "chapters/02_monte_carlo", "chapters/05_dictionary_lookup", "chapters/11_sensitivity"):
        shot = SCREENSHOTS / f"{Path(name).name}.png"
        subprocess.run([browser, *CHROMIUM_FLAGS, "--window-size=1280,1600", f"--screenshot={shot}",
                        (html / "book" / f"{name}.html").as_uri()], capture_output=True, timeout=120)
        assert shot.exists() and shot.stat().st_size > 10_000, name


def test_bad_parameter_stops_in_the_first_cell_under_plain_papermill(tmp_path):
    with pytest.raises(papermill.PapermillExecutionError, match="n_seeds: expected an int >= 1"):
        execute_notebook(str(get_chapter("04_argmax_retrieval").notebook), str(tmp_path / "out.ipynb"),
                         parameters={"n_seeds": 0, "output_dir": str(tmp_path / "o")}, progress_bar=False)
    assert not (tmp_path / "o").exists()
