"""Chapters 6, 7, 8 and 10 reuse the runs chapters 4 and 5 trained: at every profile their
parameters must resolve to exactly those runs' training settings, or they would silently
train (and report) other models."""

import shutil

import pytest

from vvlib.experiments import chapters, params, variants
from vvlib.book import defaults, runner
from vvlib.evaluate import EvalConfig
from vvlib.model import ModelConfig
from vvlib.train import TrainConfig

REUSERS = {"06_distribution_shift": ("argmax",), "07_dispersion": ("argmax",),
           "08_ablations": ("argmax", "dictionary"), "10_beyond": ("argmax", "dictionary")}
OWNER = {"argmax": "04_argmax_retrieval", "dictionary": "05_dictionary_lookup"}
PROFILES = sorted(set.intersection(*(set(chapters.get_chapter(c).profile_names()) for c in [*REUSERS, *OWNER.values()])))


def task_view(chapter: str, profile: str, task: str):
    """A chapter's parameters as its runs of `task` read them (a one-task chapter's are unchanged)."""
    return variants.task_params(runner.resolved(chapter, profile), task)


def trained(P, task: str, variant: str):
    return variants.model_config(P, variants.task_config(P, task), variant), variants.train_config(P)


def test_every_profile_is_checked():
    assert {"default", "ci", "book", "paper"} <= set(PROFILES)  # default: the parameter cells' own literals


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("chapter", list(REUSERS))
def test_a_reusing_chapter_resolves_to_the_owning_chapters_runs(chapter, profile):
    for task in REUSERS[chapter]:
        mine, owner = task_view(chapter, profile, task), runner.resolved(OWNER[task], profile)
        for variant in ("baseline", "layernorm"):
            assert trained(mine, task, variant) == trained(owner, task, variant), (chapter, profile, task, variant)
        if mine.get("long_steps"):  # chapter 8's longer training: some of chapters 4-5's runs
            owned = variants.long_train_configs(owner)
            assert all(cfg in owned for cfg in variants.long_train_configs(mine)), (chapter, profile, task)


def test_the_check_sees_a_differing_setting():
    P = runner.resolved("08_ablations", "ci", {"argmax_steps": 7})
    owner = runner.resolved(OWNER["argmax"], "ci")
    assert trained(variants.task_params(P, "argmax"), "argmax", "baseline") != trained(owner, "argmax", "baseline")


# Names the training chapters repeat that are not training defaults, each with its reason.
NOT_TRAINING_DEFAULTS = {"profile": "the profile mechanism itself", "device": "where to run, not what to train",
                         "output_dir": "each chapter's own folder",
                         "shown_seed": "which trained model a figure shows",
                         "n_probe_sequences": "each probing chapter's own sample size"}


def test_every_cell_holds_the_defaults_defined_in_code():
    assert defaults.differences() == []  # `python -m vvlib sync-defaults` writes them


def test_every_parameter_two_training_chapters_share_is_defined_once_in_code():
    seen = {}
    for chapter in defaults.TRAINING_CHAPTERS:
        for name in chapters.get_chapter(chapter).parameters():
            seen.setdefault(name, []).append(chapter)
    for name, where in seen.items():
        if len(where) > 1 and name not in NOT_TRAINING_DEFAULTS:
            defined = [c for c in where if name in defaults.expected_cell_values(c)]
            own = [c for c in where if name in chapters.get_chapter(c).own_values]
            assert sorted(defined + own) == sorted(where), name


def test_a_changed_default_is_found_in_every_cell_that_declares_it(monkeypatch):
    monkeypatch.setitem(defaults.TRAINING_DEFAULTS, "lr", 0.003)
    monkeypatch.setitem(defaults.TASK_DEFAULTS["dictionary"], "steps", 999)
    found = {(c, name): (cell, new) for c, name, cell, new in defaults.differences()}
    assert {c for c, name in found if name == "lr"} == set(defaults.TRAINING_CHAPTERS)
    assert found[("05_dictionary_lookup", "steps")] == (1500, 999)
    assert found[("08_ablations", "dictionary_steps")] == (1500, 999)
    assert ("09_longer_training", "dictionary_steps") not in found  # chapter 9 sets its own
    assert ("04_argmax_retrieval", "steps") not in found


def test_a_config_field_is_the_default_of_its_chapter_parameter():
    assert defaults.TRAINING_DEFAULTS["min_train_len"] == TrainConfig().min_len
    assert defaults.TRAINING_DEFAULTS["hidden"] == ModelConfig().hidden
    assert defaults.TASK_DEFAULTS["argmax"]["n_eval_sequences"] == EvalConfig().n_sequences


def test_writing_cell_values_changes_those_literals_and_nothing_else(tmp_path):
    source = chapters.get_chapter("08_ablations").notebook
    copy = tmp_path / "nb.ipynb"
    shutil.copy(source, copy)
    params.write_cell_values(copy, {"lr": 0.001})  # the value it has: the file stays byte for byte
    assert copy.read_bytes() == source.read_bytes()
    params.write_cell_values(copy, {"lr": 0.003, "store_dir": "elsewhere", "eval_lengths": [16, 32]})
    after, before = params.read_parameters(copy), params.read_parameters(source)
    assert (after["lr"].default, after["store_dir"].default, after["eval_lengths"].default) == (0.003, "elsewhere", [16, 32])
    assert after["lr"].help == before["lr"].help
    assert {n: p for n, p in after.items() if n not in ("lr", "store_dir", "eval_lengths")} == \
        {n: p for n, p in before.items() if n not in ("lr", "store_dir", "eval_lengths")}
    changed = [a for a, b in zip(copy.read_text().splitlines(), source.read_text().splitlines()) if a != b]
    assert len(changed) == 3
    with pytest.raises(params.ParameterError, match="no line for nonexistent"):
        params.write_cell_values(copy, {"nonexistent": 1})


def test_sync_defaults_check_exits_1_on_a_difference(monkeypatch, capsys):
    from vvlib.__main__ import main

    assert main(["sync-defaults", "--check"]) == 0
    monkeypatch.setitem(defaults.TRAINING_DEFAULTS, "hidden", 64)
    with pytest.raises(SystemExit) as exit_:
        main(["sync-defaults", "--check"])
    assert exit_.value.code == 1
    assert "04_argmax_retrieval: hidden = 128 in its cell, 64 in vvlib/book/defaults.py" in capsys.readouterr().out
