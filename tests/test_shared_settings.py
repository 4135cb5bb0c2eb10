"""Chapters 6, 7, 8 and 10 reuse the runs chapters 4 and 5 trained: at every profile their
parameters must resolve to exactly those runs' training settings, or they would silently
train (and report) other models."""

import pytest

from vvlib.book import chapters
from vvlib.experiments.setups import params, variants
from vvlib.book import runner
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
    """The model and the stored runs (seeds cut by seed_chunk) a chapter's `variant` of `task` reads."""
    return variants.model_config(P, variants.task_config(P, task), variant), variants.train_configs(P, variant)


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
    P = runner.resolved("08_ablations", "ci", {"steps": {"argmax": 7}})
    owner = runner.resolved(OWNER["argmax"], "ci")
    assert trained(variants.task_params(P, "argmax"), "argmax", "baseline") != trained(owner, "argmax", "baseline")
    # the same runs' seeds stored in other runs are other store entries
    P = runner.resolved("06_distribution_shift", "paper", {"seed_chunk": 25})
    owner = runner.resolved(OWNER["argmax"], "paper")
    assert trained(P, "argmax", "baseline") != trained(owner, "argmax", "baseline")


# Names the training chapters repeat that are not training defaults, each with its reason.
NOT_TRAINING_DEFAULTS = {"profile": "the profile mechanism itself", "device": "where to run, not what to train",
                         "output_dir": "each chapter's own folder",
                         "shown_seed": "which trained model a figure shows",
                         "n_probe_sequences": "each probing chapter's own sample size"}


def shared_defaults(chapter) -> dict:
    """{(task, name): the cell's literal} for one task's setting (steps in chapter 5, whose only task is
    dictionary lookup; each task's value of a two-task chapter's per-task dict, written "steps[dictionary]"
    in own_values), and {(None, name): literal} for a setting every task shares (lr, hidden, ...)."""
    found = {}
    for name, param in chapter.parameters().items():
        if name in NOT_TRAINING_DEFAULTS or name in chapter.own_values:
            continue
        if param.type == "dict":
            found.update({(task, name): v for task, v in param.default.items()
                          if f"{name}[{task}]" not in chapter.own_values})
        elif name in params.PER_TASK and len(chapter.tasks) == 1:  # differs between the tasks
            found[(chapter.tasks[0], name)] = param.default
        else:
            found[(None, name)] = param.default
    return found


def cell_differences() -> dict:
    """{(task, name): {chapter: the literal in its cell}} wherever the training chapters' cells disagree on a
    setting they share (a chapter's own_values and NOT_TRAINING_DEFAULTS apart)."""
    seen = {}
    for chapter in chapters.TRAINING.values():
        for key, value in shared_defaults(chapter).items():
            seen.setdefault(key, {})[chapter.name] = value
    return {key: cells for key, cells in seen.items() if len({repr(v) for v in cells.values()}) > 1}


def test_the_training_chapters_declare_one_value_for_a_default_they_share():
    """A default two training chapters share has one value in every chapter that declares it (most are written
    once, in declare.DEFAULTS; a per-task value such as steps[dictionary] sits in each two-task chapter's dict):
    to change one for every chapter, change it where this test names."""
    assert cell_differences() == {}


def test_a_config_field_is_the_default_of_its_chapter_parameter():
    """Where a cell's parameter sets a config field, the cell holds that field's default: a chapter that
    leaves a setting alone trains what the configs alone would."""
    cell = chapters.ARGMAX_RETRIEVAL.parameters()
    assert cell["min_len"].default == TrainConfig().min_len and cell["lr"].default == TrainConfig().lr
    assert cell["hidden"].default == ModelConfig().hidden
    assert cell["n_eval_sequences"].default == EvalConfig().n_sequences
    assert cell["eval_lengths"].default == list(EvalConfig().lengths)
