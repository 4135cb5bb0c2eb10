"""Chapters 6, 7, 8 and 10 reuse the runs chapters 4 and 5 trained: at every profile their
parameters must resolve to exactly those runs' training settings, or they would silently
train (and report) other models."""

import pytest

from vvlib import chapters, experiments

REUSERS = {"06_distribution_shift": ("argmax",), "07_dispersion": ("argmax",),
           "08_ablations": ("argmax", "dictionary"), "10_beyond": ("argmax", "dictionary")}
OWNER = {"argmax": "04_argmax_retrieval", "dictionary": "05_dictionary_lookup"}
PROFILES = sorted(set.intersection(*(set(chapters.get_chapter(c).profile_names()) for c in [*REUSERS, *OWNER.values()])))


def task_view(chapter: str, profile: str, task: str):
    """A chapter's parameters as its runs of `task` read them (a one-task chapter's are unchanged)."""
    return experiments.task_params(chapters.resolved(chapter, profile), task)


def trained(P, task: str, variant: str):
    return experiments.model_config(P, experiments.task_config(P, task), variant), experiments.train_config(P)


def test_every_profile_is_checked():
    assert {"default", "ci", "book", "paper"} <= set(PROFILES)  # default: the parameter cells' own literals


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("chapter", list(REUSERS))
def test_a_reusing_chapter_resolves_to_the_owning_chapters_runs(chapter, profile):
    for task in REUSERS[chapter]:
        mine, owner = task_view(chapter, profile, task), chapters.resolved(OWNER[task], profile)
        for variant in ("baseline", "layernorm"):
            assert trained(mine, task, variant) == trained(owner, task, variant), (chapter, profile, task, variant)
        if mine.get("long_steps"):  # chapter 8's longer training: some of chapters 4-5's runs
            owned = experiments.long_train_configs(owner)
            assert all(cfg in owned for cfg in experiments.long_train_configs(mine)), (chapter, profile, task)


def test_the_check_sees_a_differing_setting():
    P = chapters.resolved("08_ablations", "ci", {"argmax_steps": 7})
    owner = chapters.resolved(OWNER["argmax"], "ci")
    assert trained(experiments.task_params(P, "argmax"), "argmax", "baseline") != trained(owner, "argmax", "baseline")
