import ast
import subprocess
import sys

import pytest
import torch

from vvlib.book.page import configure
from vvlib.book.runner import parse_overrides
from vvlib.book.chapters import get_chapter
from vvlib.experiments.setups.params import ParameterError, coerce, resolve

CHAPTER = get_chapter("04_argmax_retrieval")
CHAPTERS_08 = get_chapter("08_ablations")
SPEC = CHAPTER.parameters()
DEFAULTS = {n: p.default for n, p in SPEC.items()}


def resolved(explicit=(), **values):
    return resolve(SPEC, CHAPTER.profiles, {**DEFAULTS, **values}, set(explicit))


def test_profile_applies_and_explicit_values_win():
    ci = CHAPTER.profiles["ci"]
    assert resolved(["profile"], profile="ci")["n_seeds"] == ci["n_seeds"]
    assert resolved(["profile", "n_seeds"], profile="ci", n_seeds=7)["n_seeds"] == 7
    # an explicit value equal to the cell's default still beats the profile
    assert resolved(["profile", "n_seeds"], profile="ci", n_seeds=DEFAULTS["n_seeds"])["n_seeds"] == DEFAULTS["n_seeds"]
    assert resolved()["steps"] == DEFAULTS["steps"]


@pytest.mark.parametrize("name, value, message", [
    ("n_seeds", 0, "n_seeds: expected an int >= 1"),
    ("device", "tpu", "device: expected one of auto, cpu, cuda"),
    ("eval_lengths", [16, 0], "eval_lengths: expected a non-empty list of ints >= 1"),
    ("lr", -1.0, "lr: expected a number > 0"),
    ("draws", "philox", "draws: expected one of generators, counter, got 'philox'"),
    ("eval_seed", -1, "eval_seed: expected an int >= 0"),  # EvalConfig.seed's rule, under the cell's name
    ("profile", "huge", "profile: expected one of default, ci, book, paper"),
])
def test_bad_values_name_the_parameter_and_accepted_values(name, value, message):
    with pytest.raises(ParameterError, match=message):
        resolved([name], **{name: value})


def test_unknown_parameter_lists_the_valid_ones():
    with pytest.raises(ParameterError, match="unknown parameter 'n_heads'.*n_seeds"):
        resolved(["n_heads"], n_heads=2)


def test_command_line_strings_are_coerced_to_declared_types():
    assert coerce(SPEC["n_seeds"], "3") == 3
    assert coerce(SPEC["eval_lengths"], "[16, 32]") == [16, 32]
    assert coerce(SPEC["lr"], "1e-3") == 0.001
    assert coerce(SPEC["device"], "cpu") == "cpu"
    with pytest.raises(ParameterError, match=r"n_seeds: expected int \(a Python or JSON literal\), got 'three'"):
        coerce(SPEC["n_seeds"], "three")
    rows = get_chapter("11_sensitivity").parameters()["dictionary_rows"]  # JSON's true as well as Python's True
    assert coerce(rows, '[{"query_table": true}]') == coerce(rows, '[{"query_table": True}]') == [{"query_table": True}]
    with pytest.raises(ParameterError, match="unknown parameter 'bogus'"):
        parse_overrides(CHAPTER, [("bogus", "1")])


def test_a_configured_page_shows_every_row_and_cell_of_a_long_table():
    """After configure(), a page's table of 78 rows (chapter 11's dictionary configurations) renders every row,
    with no '...' row standing for hidden ones, and a long cell whole."""
    import pandas as pd

    with pd.option_context("display.max_rows", 60, "display.max_colwidth", 50):  # pandas' defaults, restored after
        configure("04_argmax_retrieval", {**DEFAULTS, "profile": "ci"})
        table = pd.DataFrame({"configuration": [f"row {i} " + "x" * 60 for i in range(78)], "value": range(78)})
        html = table._repr_html_()
        assert html.count("<tr>") == 78 and "..." not in html and "x" * 60 in html  # the header row has a style


def cli(*args):
    return subprocess.run([sys.executable, "-m", "vvlib", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, message", [
    (["run", "99_nothing"], "unknown chapter '99_nothing'; chapters: 01_vanishing_variance_proof, "),
    (["run", "04_argmax_retrieval", "-p", "bogus", "1"], "unknown parameter 'bogus'"),
    # TF32 is a GPU's format: refused wherever the chapter would run on a CPU (here, on any machine)
    (["run", "08_ablations", "-p", "device", "cpu", "-p", "tf32", "true"],
     "tf32: expected False without a CUDA GPU in use (TF32 is a GPU's tensor-core format), got True"),
    (["run", "03_pretrained_transformer", "-p", "models", '["bundled", "/no/such/model"]'],
     "models[1]: expected a Hugging Face model directory with a config.json"),
    (["run", "03_pretrained_transformer", "-p", "layer", "6"],
     "layer: expected an int from 0 to 5 (6 layers in all-MiniLM-L6-v2)"),
    (["run", "11_sensitivity", "-p", "argmax_rows", '[{}, {"hidden": 0}]'],
     "argmax_rows[1]: hidden must be an int >= 1; got 0"),
    (["run", "11_sensitivity", "-p", "dictionary_rows", '[{"width": 64}]'],
     "dictionary_rows[0]: cannot change 'width'; a dictionary row may change n_seeds, steps, batch_size"),
    # checks between parameters (each chapter's file in vvlib/book/chapters/), before papermill starts
    (["run", "05_dictionary_lookup", "-p", "eval_lengths", "[16,99999]"],
     "eval_lengths: expected lengths <= n_keys (16384), since keys are distinct, got [16, 99999]"),
    (["run", "07_dispersion", "-p", "eval_lengths", "[8,16,64]"], "eval_lengths: expected lengths >= 16, got [8, 16, 64]"),
    (["run", "10_beyond", "-p", "deep_heads", "3"], "deep_heads: expected a divisor of hidden (128), got 3"),
    (["run", "06_distribution_shift", "-p", "long_variants", '["layernorm", "standardize"]'],
     "long_variants: expected names from baseline, layernorm, got ['layernorm', 'standardize']"),
    (["run", "01_vanishing_variance_proof", "-p", "component", "999"], "component: expected an int < d_model"),
])
def test_cli_rejects_bad_input_with_status_2_and_writes_nothing(tmp_path, args, message):
    out = tmp_path / "out"
    result = cli(*args, "--output", str(out))
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="asks for CUDA where there is none")
def test_asking_for_a_gpu_where_there_is_none_is_refused_before_the_kernel(tmp_path):
    result = cli("run", "05_dictionary_lookup", "-p", "device", "cuda", "--output", str(tmp_path / "out"))
    assert result.returncode == 2 and not (tmp_path / "out").exists()
    assert result.stderr.strip() == ("error: device: expected auto or cpu on this machine (no CUDA GPU is available "
                                     "here), got 'cuda'")


def test_book_command_rejects_an_unknown_profile_before_running_anything():
    result = cli("book", "--profile", "huge")
    assert result.returncode == 2
    assert "profile: expected one of book, ci, default, paper, got 'huge'" in result.stderr


def test_metric_command_prints_a_value_or_names_the_keys(tmp_path):
    import json

    (tmp_path / "results.json").write_text(json.dumps({"metrics": {"accuracy": {"layernorm": {"1024": 41.5}}}}))
    assert cli("metric", str(tmp_path), "accuracy/layernorm/1024").stdout.strip() == "41.5"
    wrong = cli("metric", str(tmp_path), "accuracy/lyernorm")
    assert wrong.returncode == 2 and "'lyernorm' is not in accuracy of results.json; keys there: layernorm" in \
        wrong.stderr
    assert cli("metric", str(tmp_path / "nowhere"), "x").returncode == 2


def test_cli_lists_one_chapters_values_at_a_profile_flat_with_their_source():
    result = cli("list", "05_dictionary_lookup", "--profile", "book")
    book = get_chapter("05_dictionary_lookup").profiles["book"]
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and lines[0] == "05_dictionary_lookup at profile book:"
    assert f"  n_seeds = {book['n_seeds']}  (profile book)" in lines
    assert f"  lr = {DEFAULTS['lr']}  (notebook cell)" in lines
    assert len(lines) == len(get_chapter("05_dictionary_lookup").parameters())  # every one but `profile`, and the title
    wrong = cli("list", "01_vanishing_variance_proof", "--profile", "book")
    assert wrong.returncode == 2 and "profile: expected one of default, ci for 01_vanishing_variance_proof" in wrong.stderr


def test_runner_makes_relative_paths_absolute_before_the_kernel_starts(tmp_path, monkeypatch):
    """The kernel runs in the repository root, so `-p store_dir here` must mean the caller's ./here."""
    import papermill

    from vvlib.book import runner

    seen = {}
    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **kw: seen.update(kw["parameters"]))
    monkeypatch.chdir(tmp_path)
    runner.run_chapter("04_argmax_retrieval", "ci", {"store_dir": "here"}, output_dir="out", progress=False)
    assert seen["store_dir"] == str(tmp_path / "here") and seen["output_dir"] == str(tmp_path / "out")


def test_runner_starts_a_kernel_again_only_when_it_died_before_running_a_cell(tmp_path, monkeypatch):
    """A kernel that died on start (a port taken by a kernel started at the same moment) ran nothing,
    so the runner starts another; any other failure, or a third death, reaches the caller."""
    import papermill

    from vvlib.book import runner

    def failing(*messages):
        calls = []

        def execute(*args, **kwargs):
            calls.append(1)
            if len(calls) <= len(messages):
                raise RuntimeError(messages[len(calls) - 1])
        return execute, calls

    died = "Kernel died before replying to kernel_info"
    run = lambda: runner.run_chapter("01_vanishing_variance_proof", "ci", output_dir=tmp_path, progress=False)
    execute, calls = failing(died)
    monkeypatch.setattr(papermill, "execute_notebook", execute)
    assert run() == tmp_path / "01_vanishing_variance_proof.ipynb" and len(calls) == 2
    for messages, tries in [(["a cell raised"], 1), ([died] * 3, 3)]:
        execute, calls = failing(*messages)
        monkeypatch.setattr(papermill, "execute_notebook", execute)
        with pytest.raises(RuntimeError, match=messages[-1]):
            run()
        assert len(calls) == tries


def test_every_chapter_documents_every_parameter_with_a_rule_or_type():
    from vvlib.book.chapters import CHAPTERS
    from vvlib.experiments.setups.params import PER_TASK, rule_of

    for chapter in CHAPTERS.values():
        spec = chapter.parameters()  # raises if papermill cannot read a line of the cell
        assert "profile" in spec and "output_dir" in spec
        assert "device" in spec or chapter.name == "summary", chapter.name  # the summary computes nothing
        assert all(p.help for p in spec.values()), chapter.name
        unchecked = [n for n in spec if rule_of(n) is None and n != "profile"]
        assert not unchecked, f"{chapter.name}: no range rule for {unchecked}"
        per_task = {n: p.default for n, p in spec.items() if p.type == "dict"}  # one value per task
        assert set(per_task) <= set(PER_TASK), f"{chapter.name}: a dict that is not a per-task setting"
        assert all(list(d) == list(chapter.tasks) for d in per_task.values()), chapter.name
        for profile in chapter.profiles.values():
            assert set(profile) <= set(spec), f"{chapter.name}: profile sets unknown parameters"


def test_every_chapters_cell_is_written_from_its_declaration_and_papermill_reads_it_so():
    """The declaration in a chapter's file is the one source: its notebook's cell says the same (else
    `python -m vvlib.book.generated --write`), and papermill, which runs the chapters, reads the same names,
    types, defaults and help from that cell."""
    from papermill.inspection import inspect_notebook

    from vvlib.book import generated
    from vvlib.book.chapters import CHAPTERS

    assert [c.name for c in generated.stale_cells()] == []
    for chapter in CHAPTERS.values():
        declared, theirs = chapter.parameters(), inspect_notebook(str(chapter.notebook))
        assert list(declared) == list(theirs), chapter.name
        for name, p in theirs.items():
            assert (declared[name].type, declared[name].default, declared[name].help) == (
                p["inferred_type_name"], ast.literal_eval(p["default"]), p["help"]), (chapter.name, name)


def test_a_cell_edited_by_hand_is_found_and_written_back(tmp_path, monkeypatch):
    import json
    import shutil

    from vvlib.book import generated
    from vvlib.book.chapters import ARGMAX_RETRIEVAL

    committed = ARGMAX_RETRIEVAL.notebook
    monkeypatch.setattr("vvlib.experiments.records.record.NOTEBOOKS", tmp_path)
    shutil.copy(committed, ARGMAX_RETRIEVAL.notebook)
    notebook = json.loads(ARGMAX_RETRIEVAL.notebook.read_text())
    cell = next(c for c in notebook["cells"] if "parameters" in c["metadata"].get("tags", []))
    cell["source"] = [line.replace("lr: float = 0.001", "lr: float = 0.003") for line in cell["source"]]
    ARGMAX_RETRIEVAL.notebook.write_text(json.dumps(notebook))
    chapters = {ARGMAX_RETRIEVAL.name: ARGMAX_RETRIEVAL}
    assert generated.stale_cells(chapters) == [ARGMAX_RETRIEVAL]
    generated.write_cell(ARGMAX_RETRIEVAL)
    assert generated.stale_cells(chapters) == []
    assert "lr: float = 0.001  # AdamW learning rate" in ARGMAX_RETRIEVAL.notebook.read_text()


@pytest.mark.parametrize("name, value, message", [
    ("vocab_size", 1, "vocab_size: expected an int >= 2"),
    ("lengths", [], "lengths: expected a non-empty list of ints >= 1"),
    ("n_sequences", 1, "n_sequences: expected an int >= 2"),
    ("components", [-1], "components: expected a non-empty list of ints >= 0"),
    ("stickiness", 1.0, "stickiness: expected a float in"),
])
def test_monte_carlo_chapter_rejects_bad_values(name, value, message):
    chapter = get_chapter("02_monte_carlo")
    spec = chapter.parameters()
    values = {**{n: p.default for n, p in spec.items()}, name: value}
    with pytest.raises(ParameterError, match=message):
        resolve(spec, chapter.profiles, values, {name})


def test_a_chapter_names_the_paper_scale_entries_the_queue_has_committed(tmp_path):
    """Read from the store, never assumed: once a unit of the queue lands, the page stops saying there is none."""
    import shutil

    from vvlib.book.paper_scale import entries as paper_scale_entries
    from vvlib.book.runner import resolved
    from vvlib.book.gpu_queue import plan

    P_paper = resolved("10_beyond", "paper", {"store_dir": str(tmp_path)})
    first = plan.chapter_jobs("10_beyond", P_paper, torch.device("cuda"))[0]
    first.path.parent.mkdir(parents=True)
    first.path.write_text("{}")  # only its existence is read
    committed, pending = paper_scale_entries("10_beyond", tmp_path)
    assert committed == [first.label] and first.label not in pending and len(pending) > 10
    # chapter 10's first entry is chapter 4's Baseline run, which chapter 4 counts too (1 of its 6); an empty store, none
    committed, pending = paper_scale_entries("04_argmax_retrieval", tmp_path)
    assert committed == [first.label] and len(committed) + len(pending) == 6
    committed, pending = paper_scale_entries("04_argmax_retrieval", tmp_path / "empty")
    assert committed == [] and len(pending) == 6
    shutil.rmtree(first.path.parent)
    assert paper_scale_entries("10_beyond", tmp_path)[0] == []


def test_a_per_task_setting_changes_the_tasks_it_names_and_checks_each_value_by_its_rule():
    """A two-task chapter's per-task dict: the cell's, under the profile's, under the given (a dict changes the
    tasks it names, a plain value every task); each task's value is checked by the setting's rule."""
    from vvlib.book.runner import resolved as chapter_params

    ci, cell = CHAPTERS_08.profiles["ci"], CHAPTERS_08.parameters()
    assert chapter_params("08_ablations", "ci", {"steps": {"dictionary": 7}}).steps == {
        "argmax": ci["steps"]["argmax"], "dictionary": 7}
    assert chapter_params("08_ablations", "ci", {"steps": 9}).steps == {"argmax": 9, "dictionary": 9}
    assert chapter_params("08_ablations", "default", {"long_steps": {"argmax": 5}}).long_steps == {
        "argmax": 5, "dictionary": cell["long_steps"].default["dictionary"]}
    with pytest.raises(ParameterError, match=r"steps\['dictionary'\]: expected an int >= 1, got 0"):
        chapter_params("08_ablations", "ci", {"steps": {"dictionary": 0}})
    with pytest.raises(ParameterError, match=r"long_steps\['argmax'\]: expected an int >= 0, got -1"):
        chapter_params("08_ablations", "ci", {"long_steps": {"argmax": -1}})
    with pytest.raises(ParameterError, match="steps: expected a value for each of argmax, dictionary, got"):
        chapter_params("08_ablations", "ci", {"steps": {"argmin": 5}})


def test_a_training_parameter_reaches_the_config_field_of_its_name():
    """train_config reads every TrainConfig field by name: a setting added to the cells (tf32) needs no
    mapping, and at its default it leaves the store key as it was."""
    from vvlib.book import runner
    from vvlib.experiments.setups import variants
    from vvlib.train import weight_settings

    default = variants.train_config(runner.resolved("04_argmax_retrieval", "ci"))
    asked = variants.train_config(runner.resolved("04_argmax_retrieval", "ci", {"tf32": True, "min_len": 3}))
    assert (default.tf32, asked.tf32, default.min_len, asked.min_len) == (False, True, 5, 3)
    assert "tf32" not in weight_settings(default) and weight_settings(asked)["tf32"] is True
    with pytest.raises(ValueError, match="task_params"):  # a two-task chapter's raw parameters: steps per task
        variants.train_config(runner.resolved("08_ablations", "ci"))


def test_a_longer_training_stretches_chapter_9s_curriculum_over_its_own_steps():
    """Chapter 9's main and longer runs each double the length cap over curriculum_fraction of their own steps;
    chapters without a curriculum train their longer runs at full length from step 0, as before."""
    from vvlib.book import runner
    from vvlib.experiments.setups import variants
    from vvlib.train import max_len_at

    P = variants.task_params(runner.resolved("09_longer_training", "book", {"curriculum_fraction": 0.5}), "dictionary")
    main, (longer, *more) = variants.train_config(P), variants.long_train_configs(P)  # four runs of 4 seeds
    assert (main.steps, main.curriculum_steps, longer.steps, longer.curriculum_steps) == (600, 300, 10_000, 5_000)
    assert [max_len_at(longer, s) for s in (0, 999, 1000, 3999, 4000, 5000, 9999)] == [16, 16, 32, 128, 256, 256, 256]
    assert (longer.n_seeds, longer.seed_group, longer.max_len) == (4, 0, 256)
    assert [(c.first_seed, c.curriculum_steps) for c in more] == [(s, longer.curriculum_steps) for s in (4, 8, 12)]
    # argmax retrieval's longer runs: a tenth of its paper's steps, the curriculum over all of them (fraction 1)
    argmax = variants.task_params(runner.resolved("09_longer_training", "book"), "argmax")
    assert [(c.steps, c.curriculum_steps, c.n_seeds, c.first_seed, c.max_len) for c in variants.long_train_configs(argmax)] \
        == [(10_000, 10_000, 4, s, 256) for s in (0, 4, 8, 12, 16, 20)]
    for chapter in ("04_argmax_retrieval", "05_dictionary_lookup"):
        assert {c.curriculum_steps for c in variants.long_train_configs(runner.resolved(chapter, "book"))} == {0}


def test_chapter_10_reads_the_committed_slope_probes_of_the_variants_whose_parts_are_all_in():
    """Each committed slopes probe (results/paper) gives its variant's mean slope over seeds, the mean of its
    slopes.csv; a variant whose probe is still to run has none.  Read from the store, so it holds whatever
    the GPU queue has committed."""
    import pandas as pd

    from vvlib.book.paper_scale import slopes as paper_scale_slopes
    from vvlib.experiments.storage.store import REPO_ROOT, read_json

    asked = {"argmax": ["baseline", "layernorm"], "dictionary": ["baseline", "layernorm", "log_n", "rescale"]}
    table, P = paper_scale_slopes("10_beyond", asked)
    assert list(table.index) == ["baseline", "layernorm", "log_n", "rescale"] and P.n_seeds == 100
    committed = {}
    for folder in (REPO_ROOT / "results" / "paper").glob("probe-slopes-*"):
        ((variant, run),) = read_json(folder / "tables.json")["spec"]["runs"].items()
        committed[run["model"]["task"]["name"], variant] = pd.read_csv(folder / "slopes.csv")
    assert ("dictionary", "baseline") in committed  # the queue's first units (2026-11-26)
    for task, variants in asked.items():
        for variant in variants:
            csv = committed.get((task, variant))
            if csv is None:
                assert pd.isna(table.loc[variant, task]), (task, variant)
            else:
                assert len(csv) == 100 and table.loc[variant, task] == pytest.approx(csv["slope"].mean())
    assert pd.isna(table.loc["log_n", "argmax"])  # not asked for argmax
