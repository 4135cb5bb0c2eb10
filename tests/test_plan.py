"""The plan of what the training chapters compute (vvlib/book/gpu_queue/plan.py) and the
`python -m vvlib paper` command built on it."""

import json
import subprocess
import sys

import pytest
import torch

from vvlib.book.gpu_queue import paper_run
from vvlib.book.runner import resolved
from vvlib.experiments.records.scales import BOOK_STORE, PAPER_SCALE_STORE
from vvlib.experiments.setups import variants
from vvlib.experiments.storage import runs
from vvlib.experiments.storage.store import REPO_ROOT
from vvlib.book.gpu_queue import plan
from vvlib.experiments.setups.params import ParameterError


def _book_plan() -> set:
    """Store entries the book profile of every training chapter computes on the CPU."""
    jobs = []
    for chapter in [*plan.CHAPTER_WORK, plan.SENSITIVITY]:
        P = resolved(chapter, "book", {"device": "cpu", "store_dir": str(REPO_ROOT / BOOK_STORE)})
        jobs += plan.chapter_jobs(chapter, P)
    return {job.path for job in plan.unique(jobs)}


# the tables of chapters 2 and 3, which train nothing (setups/computed.py, c03_pretrained_transformer/pretrained_probe.py): not planned
UNTRAINED_KINDS = {"computed": "02_monte_carlo", "pretrained": "03_pretrained_transformer"}


def _committed_entries() -> dict:
    """{path: spec} of every committed store entry of the book profile."""
    files = subprocess.run(["git", "ls-files", BOOK_STORE], capture_output=True, text=True, cwd=REPO_ROOT,
                           check=True).stdout.split()
    paths = {REPO_ROOT / f for f in files if f.rsplit("/", 1)[-1].startswith(("run.json", "eval-", "ladder-"))
             or f.endswith("/tables.json")}
    return {path: json.loads(path.read_text())["spec"] for path in paths}


def _archived() -> set:
    """The committed entries of investigations the book no longer shows (results/book/archived.json)."""
    record = json.loads((REPO_ROOT / BOOK_STORE / "archived.json").read_text())
    return {name for found in record["investigations"].values() for name in found["entries"]}


def test_the_plan_names_exactly_the_entries_the_books_chapters_load():
    """Every entry the book profile plans is committed (the stored-only book build loads them all), and every
    committed entry is planned or archived: the plan mirrors what the notebooks train."""
    committed = {path for path, spec in _committed_entries().items() if spec.get("kind") not in UNTRAINED_KINDS}
    assert committed, "no committed results found"
    planned, archived = _book_plan(), _archived()
    assert planned - committed == set()
    assert {str(path.relative_to(REPO_ROOT / BOOK_STORE)) for path in committed - planned} == archived


def _job(tmp_path, kind="argmax training", **fields):
    folder = tmp_path / "train-x"
    folder.mkdir(exist_ok=True)
    defaults = {"chapter": "04", "kind": kind, "label": "a job", "path": folder / "run.json", "units": 3 * 1000}
    return plan.Job(**{**defaults, **fields})


def test_a_training_job_counts_the_steps_of_its_checkpoint_until_its_record_exists(tmp_path):
    job = _job(tmp_path, steps=1000, n_seeds=3)
    assert job.done_units() == 0
    torch.save({"step": 400}, job.path.parent / "checkpoint.pt")
    torch.save({"step": 300}, job.path.parent / "checkpoint-rank1-of-2.pt")
    assert job.done_units() == 3 * 400
    job.path.write_text("{}")
    assert job.done_units() == job.units


def test_the_paper_plan_counts_the_papers_runs():
    """Chapter 4 at the paper profile: Baseline and +LN, 100 seeds x 100,000 steps (each variant one run),
    each evaluated with fixed and adaptive temperature on 1,024 sequences at 2^4..2^14."""
    P = resolved("04_argmax_retrieval", "paper", {"device": "cpu"})
    jobs = plan.chapter_jobs("04_argmax_retrieval", P)
    training = [job for job in jobs if job.steps]
    assert [(job.n_seeds, job.steps) for job in training] == [(100, 100_000)] * 2
    assert [(job.path.parent, job.label.split(", ")[1]) for job in training] == [
        (runs.run_dir(P.store_dir, variants.model_config(P, variants.task_config(P, "argmax"), v), cfg, "cpu"),
         "seeds 0-99 x 100,000 steps")
        for v in ("baseline", "layernorm") for cfg in variants.train_configs(P)]
    evaluations = [job for job in jobs if not job.steps]
    assert [job.units for job in evaluations] == [100 * 1024 * sum(2**k for k in range(4, 15))] * 4


def test_the_plan_reads_the_store_the_chapters_write_from_any_folder(tmp_path, monkeypatch):
    """The chapters run in the repository root: the paper profile's store is results/paper there, and
    a store given relative to the caller's folder is that folder's."""
    monkeypatch.chdir(tmp_path)
    default = paper_run.planned_jobs(["04_argmax_retrieval"], {"device": "cpu"})
    assert all(job.path.is_relative_to(REPO_ROOT / PAPER_SCALE_STORE) for job in default)
    given = paper_run.planned_jobs(["04_argmax_retrieval"], {"device": "cpu", "store_dir": "mine"})
    assert all(job.path.is_relative_to(tmp_path.resolve() / "mine") for job in given)


def test_chapters_that_reuse_runs_add_only_their_probe_tables():
    names = paper_run.paper_chapters(["04", "06", "07"])
    jobs = paper_run.planned_jobs(names, {"device": "cpu"})
    assert {job.chapter for job in jobs if job.kind != "argmax probing"} == {"04_argmax_retrieval"}
    probe_jobs = [job for job in jobs if job.kind == "argmax probing"]  # one per probe and run probed
    # chapter 4's Baseline and +LN, each stored as one run of 100 seeds; chapter 7's sharpness test a part per beta
    betas = len(resolved("07_dispersion", "paper").sharpness_betas)
    assert [job.chapter for job in probe_jobs] == ["06_distribution_shift"] * 2 + ["07_dispersion"] * (2 + 2 * betas)
    main_runs = {job.reads for job in jobs if job.steps and job.chapter == "04_argmax_retrieval"}
    assert len(main_runs) == 2 and {job.reads for job in probe_jobs} == main_runs  # each reads one run's weights


def test_chapter_names_are_checked():
    assert paper_run.paper_chapters(["04_argmax_retrieval", "05"]) == ["05_dictionary_lookup", "04_argmax_retrieval"]
    with pytest.raises(ParameterError, match="chapters: '03'.*04_argmax_retrieval"):
        paper_run.paper_chapters(["03"])
    with pytest.raises(ValueError, match="trains nothing"):
        plan.chapter_jobs("02_monte_carlo", None)


def test_the_command_refuses_a_bad_chapter_with_exit_2_and_writes_nothing(tmp_path):
    result = subprocess.run([sys.executable, "-m", "vvlib", "paper", "--chapters", "99", "-p", "store_dir",
                             str(tmp_path / "store")], capture_output=True, text=True, cwd=REPO_ROOT)
    assert result.returncode == 2 and "chapters: '99'" in result.stderr
    assert not (tmp_path / "store").exists()


def test_a_plan_at_a_gpus_speeds_lists_the_gpus_entries_so_its_committed_runs_count_as_stored():
    """Chapter 5's paper-scale runs were trained on a GPU and committed where every chapter's paper
    profile stores (results/paper, with no -p store_dir): keyed by the device type, they are stored
    for a plan of cuda's entries and absent from a plan of this CPU's.  Its probe of where adaptive temperature
    acts (one part per variant) waits in the GPU queue."""
    on_gpu = paper_run.run_paper(["05"], {}, dry_run=True, speeds_of="cuda")
    on_cpu = paper_run.run_paper(["05"], {"device": "cpu"}, dry_run=True)
    assert len(on_gpu) == len(on_cpu) == 8
    runs = [job for job in on_gpu if not job.kind.endswith("probing")]
    assert len(runs) == 6 and all(job.path.exists() for job in runs)
    assert not any(job.path.exists() for job in on_cpu)
    assert {job.path.parents[1] for job in on_gpu} == {REPO_ROOT / PAPER_SCALE_STORE}
    assert {resolved(name, "paper")["store_dir"] for name in paper_run.paper_chapters()} == {PAPER_SCALE_STORE}

SMALL = {"device": "cpu", "n_seeds": 2, "steps": 40, "long_steps": 20, "long_seeds": 2, "long_seed_chunk": 1,
         "eval_lengths": [16, 32, 64], "n_eval_sequences": 16}


@pytest.mark.slow
@pytest.mark.heavy
def test_the_command_computes_what_it_planned_and_a_second_run_finds_it_stored(tmp_path, capsys):
    """Chapter 4, tiny: every planned entry is written, and the plan then finds them all stored."""
    parameters = {**SMALL, "store_dir": str(tmp_path / "store")}
    jobs = paper_run.run_paper(["04"], parameters, tmp_path / "out", every=0.2, profile="ci")
    assert len(jobs) == 2 * (3 + 2 * 3)  # per variant: the run and 2 evaluations, and so each of its 2 long runs
    assert all(job.path.exists() for job in jobs)
    assert (tmp_path / "out" / "04_argmax_retrieval" / "results.json").exists()
    capsys.readouterr()
    paper_run.run_paper(["04"], parameters, dry_run=True, profile="ci")
    total = capsys.readouterr().out.splitlines()[2].split()
    assert total[0] == "total" and total[1] == total[2] == str(len(jobs)) and total[3] == total[4] == "0"


def test_a_parameter_some_chapter_lacks_is_refused_before_anything_runs(tmp_path):
    result = subprocess.run([sys.executable, "-m", "vvlib", "paper", "--chapters", "05", "08", "-p", "counter_seeds",
                             "4", "-p", "store_dir", str(tmp_path / "store")], capture_output=True, text=True,
                            cwd=REPO_ROOT)
    assert result.returncode == 2 and "unknown parameter 'counter_seeds' for 08_ablations" in result.stderr
    assert not (tmp_path / "store").exists()


def test_the_plan_lists_chapter_5_then_chapter_11_and_shares_chapter_5s_runs_with_its_constant_rate_row():
    """Chapter 11's constant-rate row is chapter 5's runs, planned once, under chapter 5 (a lent GPU's order of
    units is queue_units', tests/test_queue_probes.py)."""
    names = paper_run.paper_chapters()
    cut = paper_run.queue_units(paper_run.planned_jobs(names, {"device": "cpu"}))
    assert [unit.chapters()[0] for unit in cut[:2]] == ["05_dictionary_lookup"] * 2
    assert all(job.chapter != "11_sensitivity" or "dictionary" in job.label for unit in cut for job in unit.jobs)
    own = {job.path for job in paper_run.planned_jobs(["11_sensitivity"], {"device": "cpu"}) if "(defaults)" in job.label}
    assert len(own) == 4 and own <= {job.path for unit in cut[:2] for job in unit.jobs}


