"""The book's two open questions as GPU queue units (issue 113): chapter 7's sharpness test and chapter 5's entropy
probe retrain chapter 4's and chapter 5's paper-scale runs under their committed keys and probe them in the same
unit; the plan lists them first with GPU estimates; a tiny version runs through the same queue, the same unpacking
of a command's archive and the same page code, on the CPU."""

import tarfile

import pytest
from IPython.display import Markdown

from tests.conftest import displayed, git, git_repo, gpu_unpack_module
from vvlib import evaluate
from vvlib.book.chapters.c07_dispersion import dispersion_page
from vvlib.book.gpu_queue import paper_queue, paper_run, pending
from vvlib.book import paper_scale
from vvlib.book.runner import resolved
from vvlib.book.gpu_queue import units
from vvlib.book.chapters.c07_dispersion import sharpness_probe
from vvlib.experiments.setups import variants
from vvlib.experiments.storage import runs
from vvlib.experiments.storage.store import REPO_ROOT

gpu_unpack = gpu_unpack_module()

CHAPTER = "07_dispersion"
# 2 seeds x 50 steps, a handful of test sequences: the paper profile's path at a size a CPU runs in seconds
TINY = {"n_seeds": 2, "steps": 50, "eval_lengths": [16, 32, 64], "heatmap_lengths": [16, 64], "n_probe_sequences": 8,
        "n_examples": 4, "sharpness_lengths": [32, 64], "sharpness_sequences": 8, "sharpness_betas": [0.5, 1.0, 2.0],
        "long_steps": 0, "device": "cpu"}


def kind_of(unit) -> str | None:
    """What a unit answers, read from its jobs' labels (independently of paper_run.QUEUE_FIRST)."""
    labels = " ".join(job.label for job in unit.jobs)
    chapters = unit.chapters()
    if "probe-adaptive" in labels:
        return "entropy"
    if "probe-sharpness" in labels:
        return "sharpness"
    if "09_longer_training" in chapters:
        return "dictionary curriculum" if "dictionary" in labels else "argmax curriculum"
    if "11_sensitivity" in chapters and "heads=4" in labels:
        return "deep rows"
    if chapters == ["10_beyond"] and "argmax deep_" in labels:
        return "deep argmax"
    return None


def test_the_queue_runs_the_open_questions_first_each_unit_retraining_a_committed_run_within_a_command(tmp_path):
    """The plan's units in the issue's order, on a machine that holds nothing as on one that holds the committed
    records; each probe unit trains one committed run again (its key is in results/paper) and probes it: that work,
    training included, estimated at the GPU's measured speeds within one command."""
    jobs = paper_run.planned_jobs(paper_run.paper_chapters(), {}, "paper", "cuda")
    cut = paper_run.queue_units(jobs)
    kinds = [kind_of(unit) for unit in cut]
    seen = [k for i, k in enumerate(kinds) if k and (i == 0 or kinds[i - 1] != k)]
    assert seen == ["entropy", "dictionary curriculum", "sharpness", "argmax curriculum", "deep rows", "deep argmax"]
    other_work = [i for i, (unit, k) in enumerate(zip(cut, kinds)) if k is None and not unit.stored()]
    assert all(i > kinds.index("deep argmax") for i in other_work)  # anything else left comes after them
    # estimated as on a machine that holds nothing (what a lent GPU starts from), whatever is committed by now
    fresh = paper_run.queue_units(paper_run.planned_jobs(paper_run.paper_chapters(), {"store_dir": str(tmp_path)},
                                                         "paper", "cuda"))
    assert [kind_of(unit) for unit in fresh] == kinds
    _, rates, _ = paper_run.unit_rates({}, "cuda")
    for kind, probe_name in (("entropy", "probe-adaptive"), ("sharpness", "probe-sharpness")):
        chosen = [unit for unit, k in zip(fresh, kinds) if k == kind]
        assert len(chosen) == 2  # Baseline and +LN, one run each
        for unit in chosen:
            (trained,) = [job for job in unit.jobs if job.steps]
            committed = REPO_ROOT / "results" / "paper" / trained.path.parent.name / "run.json"
            assert trained.n_seeds == 100 and committed.exists()  # a committed run's key
            parts = [job for job in unit.jobs if probe_name in job.label]
            assert parts and all(job.reads == (trained.path.parent,) for job in parts)
            seconds, untimed = units.Unit([trained, *parts]).estimate_s(rates)  # the rest of the unit is committed
            assert untimed == [] and trained.units / rates[trained.kind] < seconds <= units.UNIT_BUDGET_S


def test_a_tiny_sharpness_unit_comes_back_in_the_archive_and_the_page_scores_it_as_evaluate_does(tmp_path, monkeypatch,
                                                                                                 one_thread):
    """The lent machine runs both units (retraining a run under its key is tests/test_store.py's); the archive
    gpu_session.sh makes (no weights) is unpacked into a fresh clone, whose page then shows the test, scored as
    evaluate scores the same weights."""
    machine = tmp_path / "machine"
    on_machine = {**TINY, "store_dir": str(machine / "results" / "paper")}
    cut = paper_run.queue_units(paper_run.planned_jobs([CHAPTER], on_machine, "ci"))
    assert [kind_of(unit) for unit in cut] == ["sharpness", "sharpness"]
    monkeypatch.setattr(paper_queue, "unit_rates", lambda overrides: ("cpu", {}, []))
    monkeypatch.setattr(units.Unit, "estimate_s", lambda unit, rates: (100.0, []))
    ticks = iter(range(0, 10_000, 10))
    ran = paper_queue.run_queue([CHAPTER], on_machine, 50.0, tmp_path / "pack", profile="ci", overrun=1.0,
                                clock=lambda: next(ticks))
    assert [r["unit"] for r in ran] == [1, 2] and all(unit.stored() for unit in cut)

    files = tmp_path / "files"  # what scripts/gpu_session.sh leaves in $OUT
    files.mkdir()
    with tarfile.open(files / "results.tgz", "w:gz") as archive:
        archive.add(machine / "results", arcname="results", filter=lambda m: None if m.name.endswith(".pt") else m)
    (files / "queue.json").write_bytes((tmp_path / "pack" / "queue.json").read_bytes())
    clone = git_repo(tmp_path / "clone", {"README.md": "a clone\n"})
    here = {**TINY, "store_dir": str(clone / "results" / "paper")}
    P = resolved(CHAPTER, "ci", here)
    queue = {"names": [CHAPTER], "overrides": here, "profile": "ci", "device": "cpu"}  # the tiny plan's numbers
    committed = gpu_unpack.unpack(files, clone)
    assert any(path.startswith("results/paper/probe-sharpness-") for path in committed)
    assert not list(clone.rglob("*.pt")) and git(clone, "status", "--porcelain") == ""
    shown = displayed(monkeypatch, dispersion_page)
    matched = dispersion_page.sharpness_at_scale(paper_scale.sharpness(P=P, device="cpu"), **queue)
    assert pending.units_computing([job.path for unit in cut for job in unit.jobs], [CHAPTER], here, "ci", "cpu") == []
    assert sorted(zip(matched["N"], matched["seed"])) == [(n, s) for n in (32, 64) for s in range(2)]
    assert not any("pending" in item.data for item in shown if isinstance(item, Markdown))
    # as trained (beta 1), each model scores what evaluate gives its weights on the same test sequences
    cfg = variants.eval_config(P, n_sequences=P.sharpness_sequences, lengths=P.sharpness_lengths)
    for variant, (run,) in sharpness_probe(P, "cpu", "main").models.items():
        weights = runs.TrainedRun(on_machine["store_dir"], run.model_cfg, run.train_cfg, "cpu").weights  # kept there
        scored = 100 * evaluate.accuracy(run.model_cfg, weights, cfg, progress=False)
        for j, n in enumerate((32, 64)):
            rows = matched[matched["N"] == n].sort_values("seed")
            assert rows[variant].tolist() == pytest.approx(scored[:, j].tolist())


