"""The paper profile cut into units (book/gpu_queue/units.py, python -m vvlib paper --unit K):
a run shares its unit with everything that reads its weights, estimates come from measured
records, and a unit out of range or over the budget is refused before anything runs."""

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from vvlib.book.gpu_queue import paper_queue, paper_run
from vvlib.book.gpu_queue import plan, units
from vvlib.experiments.setups.params import ParameterError


def job(label, folder, reads=None, kind="argmax training", size=100.0):
    return plan.Job("04_argmax_retrieval", kind, label, Path(folder) / "entry.json", size,
                    reads=tuple(Path(f) for f in (reads or [folder])))


def test_a_job_shares_the_unit_of_the_run_it_reads_training_first():
    jobs = [job("probe a", "p", reads=["a"]), job("evaluate a", "a"), job("train a", "a"), job("train c", "c"),
            job("evaluate c", "c")]
    cut = units.units(jobs)
    assert [[j.label for j in u.jobs] for u in cut] == [["train a", "evaluate a", "probe a"], ["train c", "evaluate c"]]


def test_at_the_papers_scale_every_unit_carries_the_weights_of_one_run():
    """Probes are stored one part per run (experiments/setups/probes.py), so no unit waits on the training of
    two runs (chapters 4, 6, 7 and 10 once made one unit of seven 100,000-step argmax runs)."""
    cut = units.units(paper_run.planned_jobs(paper_run.paper_chapters(), {"device": "cpu"}))
    trained = [[job for job in unit.jobs if job.steps] for unit in cut]
    assert all(len(runs) == 1 for runs in trained)


def write_record(folder: Path, name: str, spec: dict, wall: float, written_at: float = 0.0, **fields):
    """A record of `wall` seconds written `written_at` seconds after noon (its provenance's `created`)."""
    folder.mkdir(parents=True, exist_ok=True)
    created = (datetime(2026, 11, 26, 12, tzinfo=timezone.utc) + timedelta(seconds=written_at)).isoformat()
    (folder / name).write_text(json.dumps({"spec": spec, "provenance": {"wall_time_s": wall, "created": created},
                                           **fields}))


def test_rates_are_measured_per_kind_and_device_and_an_evaluation_that_trained_is_not_charged_for_it(tmp_path):
    train = {"device_type": "cuda", "model": {"task": {"name": "argmax"}},
             "train": {"n_seeds": 10, "steps": 1000, "max_len": 16}}
    evaluation = {"train": train, "eval": {"n_sequences": 4, "lengths": [16, 32]}}
    write_record(tmp_path / "run1", "run.json", train, 5.0, written_at=5)
    write_record(tmp_path / "run1", "eval-x.json", evaluation, 7.0, written_at=7)  # from 0: it trained the run first
    write_record(tmp_path / "run1", "eval-y.json", evaluation, 9.0, written_at=20)  # from 11, after it: 9 s its own
    write_record(tmp_path / "run2", "run.json", {**train, "device_type": "cpu"}, 1.0)  # another device: ignored
    rates = units.measured_rates([tmp_path], "cuda")
    assert rates["argmax training"] == pytest.approx(10 * 1000 / 5.0)
    assert rates["argmax evaluation"] == pytest.approx(2 * 10 * 4 * 48 / (2.0 + 9.0))
    assert set(units.measured_rates([tmp_path], "cpu")) == {"argmax training"}


def test_a_run_stored_without_its_weights_is_estimated_as_trained_again_while_a_job_still_reads_it(tmp_path):
    """A lent GPU brings back run.json, never weights.pt: a unit cut short after training resumes on a
    fresh machine by training the run again before its evaluation, and its estimate says so."""
    run, out = tmp_path / "train-x", tmp_path / "train-x" / "eval.json"
    train = plan.Job("05", "dictionary training", "train x", run / "run.json", 1000.0, steps=10, n_seeds=100,
                     reads=(run,))
    evaluate = plan.Job("05", "dictionary evaluation", "evaluate x", out, 50.0, reads=(run,))
    unit, rates = units.Unit([train, evaluate]), {"dictionary training": 10.0, "dictionary evaluation": 5.0}
    run.mkdir()
    (run / "run.json").write_text("{}")
    assert unit.retrained() == {run} and unit.estimate_s(rates)[0] == 1000 / 10 + 50 / 5
    (run / "weights.pt").write_text("")
    assert unit.retrained() == set() and unit.estimate_s(rates)[0] == 50 / 5
    out.write_text("{}")  # nothing left to read it: no retraining, whatever the weights
    (run / "weights.pt").unlink()
    assert unit.retrained() == set() and unit.estimate_s(rates)[0] == 0


def test_a_unit_out_of_range_or_over_the_budget_is_refused():
    cut = units.units([job("train a", "a", size=6000.0), job("train b", "b", size=60.0)])
    rates = {"argmax training": 10.0}  # unit 1: 600 s, unit 2: 6 s
    with pytest.raises(ParameterError, match="unit: expected a number from 1 to 2"):
        paper_run.chosen_unit(cut, 3, rates, "cuda")
    with pytest.raises(ParameterError, match="unit 1 needs about 10.0 minutes"):
        paper_run.chosen_unit(cut, 1, rates, "cuda", budget_s=540)
    assert paper_run.chosen_unit(cut, 2, rates, "cuda") is cut[1]
    assert paper_run.chosen_unit(cut, 1, rates, "cpu", budget_s=540) is cut[0]  # no command limit on a CPU


def test_a_unit_computes_its_store_entries_and_only_those(tmp_path):
    """The smallest unit of chapter 8's ci profile, run as `python -m vvlib paper --unit K` runs it."""
    overrides = {"store_dir": str(tmp_path)}
    jobs = paper_run.planned_jobs(["08_ablations"], overrides, "ci")
    cut = units.units(jobs)
    k = min(range(len(cut)), key=lambda i: sum(j.units for j in cut[i].jobs if j.steps)) + 1
    done = paper_run.run_paper(["08_ablations"], overrides, profile="ci", unit=k)
    assert done == cut[k - 1].jobs and all(j.path.exists() for j in done)
    others = [j for u in cut if u is not cut[k - 1] for j in u.jobs]
    assert not any(j.path.exists() for j in others)


TINY = {"n_seeds": 1, "steps": {"argmax": 4, "dictionary": 4}, "eval_lengths": [16, 32],
        "n_eval_sequences": {"argmax": 8, "dictionary": 8}}


def tiny_queue(tmp_path, monkeypatch, seconds: float, device="cpu"):
    """Chapter 8's tiny plan at the ci profile, each unit estimated at `seconds` on `device`: (overrides, its units)."""
    overrides = {**TINY, "store_dir": str(tmp_path / "store")}
    monkeypatch.setattr(paper_queue, "unit_rates", lambda overrides: (device, {}, []))
    monkeypatch.setattr(units.Unit, "estimate_s", lambda unit, rates: (seconds, []))
    return overrides, units.units(paper_run.planned_jobs(["08_ablations"], overrides, "ci"))


def test_the_queue_runs_units_in_order_passes_over_one_that_does_not_fit_and_packs_each_ones_small_files(
        tmp_path, monkeypatch):
    """python -m vvlib paper --for-minutes M --pack DIR: units run in the plan's order; one whose estimate exceeds
    what is left is passed over, and a later one that fits runs in the time no earlier unit could use; each
    finished unit's records come back under DIR, never a weight or checkpoint file, with queue.json saying what
    ran and what was passed over."""
    overrides = {**TINY, "store_dir": str(tmp_path / "store")}
    cut = units.units(paper_run.planned_jobs(["08_ablations"], overrides, "ci"))
    # unit 3 does not fit in what is left of 5 minutes, nor do the units after 4
    unit_seconds = {1: 60.0, 2: 60.0, 3: 600.0, 4: 1.0, **{k: 900.0 for k in range(5, len(cut) + 1)}}
    fake_rates = {job.kind: 1.0 for unit in cut for job in unit.jobs}

    def estimate(unit, rates):  # the queue cuts the plan afresh: its units are found by their jobs
        return unit_seconds[[u.jobs for u in cut].index(unit.jobs) + 1], []

    monkeypatch.setattr(paper_queue, "unit_rates", lambda overrides: ("cpu", fake_rates, []))
    monkeypatch.setattr(units.Unit, "estimate_s", estimate)
    ticks = iter(range(0, 10_000, 10))  # every reading of the clock: 10 s later
    ran = paper_queue.run_queue(["08_ablations"], overrides, 5.0, tmp_path / "pack", profile="ci",
                                clock=lambda: next(ticks), overrun=1.0)
    assert [r["unit"] for r in ran] == [1, 2, 4]
    assert [u.stored() for u in cut[:4]] == [True, True, False, True] and len(cut) > 4
    packed = sorted(p.relative_to(tmp_path / "pack") for p in (tmp_path / "pack").rglob("*") if p.is_file())
    expected = sorted(Path(p.parent.name) / p.name for unit in (cut[0], cut[1], cut[3]) for p in unit.result_files())
    assert packed == sorted([*expected, Path("queue.json")])
    assert not any(p.suffix == ".pt" for p in packed) and any(p.name == "run.json" for p in packed)
    assert any(p.suffix == ".pt" for p in (tmp_path / "store").rglob("*"))  # the weights stayed behind
    queue = json.loads((tmp_path / "pack" / "queue.json").read_text())
    assert [u["unit"] for u in queue["units"]] == [1, 2, 4] and queue["passed"] == [3, *range(5, len(cut) + 1)]
    unit_seconds[3] = 6.0  # run again, where unit 3 fits: the stored units are skipped
    assert [r["unit"] for r in paper_queue.run_queue(["08_ablations"], overrides, 5.0, profile="ci",
                                                     clock=lambda: next(ticks), overrun=1.0)] == [3]


def test_a_unit_that_fails_is_recorded_the_queue_goes_on_and_later_commands_here_pass_it_over(tmp_path, monkeypatch):
    """One unit's error costs its own minutes, not the command's: it is in queue.json with its error, the next
    units run, and a later command on the same machine (the failures file) passes it over instead of failing
    on it again first."""
    overrides, cut = tiny_queue(tmp_path, monkeypatch, 1.0)
    real_run, tried = units.Unit.run, []

    def run(unit):  # the plan's second unit fails after its training, as a probe out of memory would
        tried.append(unit.jobs)
        if unit.jobs == cut[1].jobs:
            next(job for job in unit.jobs if job.steps).compute()
            raise RuntimeError("CUDA out of memory (a stand-in)")
        real_run(unit)

    monkeypatch.setattr(units.Unit, "run", run)
    failed_file = tmp_path / "machine" / "failed.json"
    ticks = iter(range(0, 10_000, 10))
    ran = paper_queue.run_queue(["08_ablations"], overrides, 50.0, tmp_path / "pack", profile="ci", overrun=1.0,
                                clock=lambda: next(ticks), failed_file=failed_file)
    assert [r["unit"] for r in ran] == list(range(1, len(cut) + 1))
    assert [r.get("error") for r in ran][:3] == [None, "RuntimeError: CUDA out of memory (a stand-in)", None]
    assert [u.stored() for u in cut] == [True, False, *[True] * (len(cut) - 2)]
    assert json.loads((tmp_path / "pack" / "queue.json").read_text())["units"][1]["error"].startswith("RuntimeError")
    trained = next(job for job in cut[1].jobs if job.steps).path.parent
    assert (tmp_path / "pack" / trained.name / "run.json").exists()  # what it finished comes back
    # the next command on this machine: the failed unit was begun (its weights are here), yet it is passed over
    assert cut[1].begun()
    tried.clear()
    again = paper_queue.run_queue(["08_ablations"], overrides, 50.0, tmp_path / "again", profile="ci", overrun=1.0,
                                  clock=lambda: next(ticks), failed_file=failed_file)
    assert again == [] and tried == []


def test_a_failure_that_leaves_the_device_unable_to_compute_ends_the_command(tmp_path, monkeypatch):
    overrides, _ = tiny_queue(tmp_path, monkeypatch, 1.0, "cuda")
    monkeypatch.setattr(units.Unit, "run", lambda unit: (_ for _ in ()).throw(RuntimeError("CUDA error: an illegal "
                                                                                            "memory access")))
    monkeypatch.setattr(paper_queue, "device_answers", lambda device: False)
    ran = paper_queue.run_queue(["08_ablations"], overrides, 50.0, profile="ci", overrun=1.0, clock=lambda: 0.0,
                                failed_file=tmp_path / "failed.json")
    assert [r["unit"] for r in ran] == [1] and "illegal memory access" in ran[0]["error"]


def test_the_queue_command_exits_1_when_a_unit_failed(tmp_path, monkeypatch):
    from vvlib.__main__ import main
    lines = [{"unit": 1, "minutes": 0.1}, {"unit": 4, "minutes": 0.2, "error": "RuntimeError: x"}]
    monkeypatch.setattr(paper_queue, "run_queue", lambda *args, **kwargs: lines)
    assert main(["paper", "--chapters", "08", "--for-minutes", "5", "-p", "store_dir", str(tmp_path)]) == 1
    lines.pop()
    assert main(["paper", "--chapters", "08", "--for-minutes", "5", "-p", "store_dir", str(tmp_path)]) == 0


def test_a_unit_that_fits_only_with_the_next_command_is_paused_at_the_deadline_and_resumed_first_by_it(
        tmp_path, monkeypatch):
    """--then-minutes: the first command starts a unit that needs the next command's minutes too; its training
    stops at the end of the command with a checkpoint (queue.json: paused), and the next command, which nothing
    follows, takes that unit up before any other and finishes it from the checkpoint's step."""
    overrides, cut = tiny_queue(tmp_path, monkeypatch, 100.0)
    # the clock: the command starts at 0 with 5 minutes; unit 1 is looked at with 1 s left (100 s fit only with
    # the next command's 3 minutes), and its training starts at the deadline, so it stops after its first step
    readings = iter([0.0, 299.0, 299.0, 300.0])
    ran = paper_queue.run_queue(["08_ablations"], overrides, 5.0, tmp_path / "first", profile="ci",
                                clock=lambda: next(readings, 310.0), then_minutes=3.0)
    assert [(r["unit"], r.get("paused")) for r in ran] == [(1, True)]
    assert cut[0].begun() and not cut[0].stored() and not any(u.begun() for u in cut[1:])
    assert json.loads((tmp_path / "first" / "queue.json").read_text())["units"][0]["paused"] is True
    trained = next(job for job in cut[0].jobs if job.steps)
    assert trained.done_units() == trained.n_seeds  # one step of its seeds, in its checkpoint
    ticks = iter(range(0, 10_000, 10))
    second = paper_queue.run_queue(["08_ablations"], overrides, 50.0, profile="ci", clock=lambda: next(ticks),
                                   overrun=1.0)
    assert second[0]["unit"] == 1 and second[0]["resumed"] is True and cut[0].stored()
    assert json.loads((trained.path.parent / "run.json").read_text())["resumed_from_step"] == 1


def test_a_unit_whose_weights_wait_for_their_evaluations_is_begun_and_comes_first(tmp_path):
    """A command cut off during a unit's evaluations leaves its run's weights on the machine: the next command
    takes that unit first, before the queue's order, and evaluates without training again."""
    overrides = {**TINY, "store_dir": str(tmp_path / "store")}
    cut = units.units(paper_run.planned_jobs(["08_ablations"], overrides, "ci"))
    later = cut[2]
    training = next(job for job in later.jobs if job.steps)
    training.compute()  # trained and stored with its weights; its evaluations not yet
    assert later.begun() and not later.stored() and not any(u.begun() for u in cut[:2])
    assert [k for k, _ in paper_queue.in_order(cut)][:3] == [3, 1, 2]
    assert later.retrained() == set()  # the weights are here: nothing to train again


def test_where_no_command_follows_a_unit_starts_only_if_its_estimate_times_the_overrun_fits(tmp_path, monkeypatch):
    overrides, _ = tiny_queue(tmp_path, monkeypatch, 100.0)
    ran = paper_queue.run_queue(["08_ablations"], overrides, 150 / 60, profile="ci", clock=lambda: 0.0, overrun=1.6)
    assert ran == []  # 100 s times 1.6 is over the 150 s left
    ran = paper_queue.run_queue(["08_ablations"], overrides, 150 / 60, profile="ci", clock=lambda: 0.0, overrun=1.4)
    assert ran and all(not r.get("paused") for r in ran)


def test_the_queue_refuses_to_be_mixed_with_plan_or_unit_and_pack_and_then_minutes_need_it(tmp_path, capsys):
    from vvlib.__main__ import main

    store = ["-p", "store_dir", str(tmp_path / "store")]
    for wrong in (["--for-minutes", "5", "--plan"], ["--pack", str(tmp_path / "p")], ["--then-minutes", "3"]):
        assert main(["paper", "--chapters", "08", *wrong, *store]) == 2 and wrong[0] in capsys.readouterr().err
    assert main(["paper", "--for-minutes", "5", "--then-minutes", "-1"]) == 2
    assert "--then-minutes" in capsys.readouterr().err
    assert not (tmp_path / "store").exists() and not (tmp_path / "p").exists()


