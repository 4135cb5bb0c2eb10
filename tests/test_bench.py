"""The benchmarks: the analytic FLOP count against torch's own count, and both command lines end to end."""

import json
import os
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from bench.run import forward_flops_per_sequence, training_flops_per_step
from vvlib.experiments.storage.store import REPO_ROOT
from vvlib.model import ModelConfig, forward, init_params
from vvlib.tasks import TaskConfig, sample


@pytest.mark.parametrize("task", [TaskConfig("argmax"), TaskConfig("dictionary", n_keys=512)])
def test_flop_count_matches_torchs_count_of_the_forward_pass(task):
    cfg = ModelConfig(task=task, hidden=32, key_dim=16, value_dim=16)
    params = init_params(cfg, [0, 1, 2])
    batch = sample(task, torch.Generator().manual_seed(0), 5, 12, "cpu")
    with FlopCounterMode(display=False) as counter:
        forward(cfg, params, batch)
    assert counter.get_total_flops() == 3 * 5 * forward_flops_per_sequence(cfg, 12)  # 3 seeds x 5 sequences


def test_the_default_argmax_step_is_287_mflop():
    """The figure quoted in the notes: hidden 128, batch 128, 16 items, 10 classes."""
    assert training_flops_per_step(ModelConfig(), 128, 16) == pytest.approx(287e6, rel=0.01)


def test_step_parts_times_data_model_and_update_apart():
    from bench.run import step_parts

    parts = step_parts(TaskConfig("argmax", n_classes=5), n_seeds=2, device="cpu", steps=1, repeats=1)
    assert len(parts) == 4 and all(t > 0 for t in parts.values())


def test_paper_scale_refuses_a_sample_of_no_steps(capsys):
    from bench.paper_scale import main

    with pytest.raises(SystemExit):
        main(["--steps", "0"])
    assert "--steps must be >= 1" in capsys.readouterr().err


def test_matrix_product_share_counts_the_models_products():
    """The profiled products carry FLOPs and a share of the time, never all of it (there
    are softmax, activations and the loss besides)."""
    from bench.run import matrix_product_share

    got = matrix_product_share(TaskConfig("argmax", n_classes=5), n_seeds=2, device="cpu", steps=1)
    assert 0 < got["share"] < 1 and got["gflop_per_s"] > 0


@pytest.mark.slow
@pytest.mark.heavy
def test_both_benchmarks_run_end_to_end_on_the_cpu(tmp_path):
    """A smoke run of each benchmark's command line: every table is measured and written (a
    signature change in the engine that a benchmark calls fails here, not on a GPU day)."""
    from bench import paper_scale, run

    run.main(["--quick", "--device", "cpu", "--json", str(tmp_path / "run.json")])
    figures = json.loads((tmp_path / "run.json").read_text())
    assert {row["task"] for row in figures["training"]} == {"argmax", "dictionary"}
    assert all(row["model_steps_per_s"] > 0 for row in figures["training"])
    assert figures["provenance"]["device"].startswith("cpu")
    paper_scale.main(["--device", "cpu", "--task", "dictionary", "--steps", "1", "--eval-sequences", "2",
                      "--json", str(tmp_path / "paper.json")])
    estimate = json.loads((tmp_path / "paper.json").read_text())
    assert estimate["seeds"] == 100 and estimate["estimated_training_s"] > 0


def test_the_subnormal_benchmark_times_both_modes_and_leaves_flushing_off(tmp_path):
    """bench.subnormal, smallest run: a row per step asked for, both times measured, and torch's
    flush-to-zero switched off again (it would change every later number)."""
    import torch

    from bench import subnormal

    subnormal.main(["--at", "0", "3", "--seeds", "1", "--steps", "1", "--repeats", "1",
                    "--json", str(tmp_path / "subnormal.json")])
    rows = json.loads((tmp_path / "subnormal.json").read_text())["rows"]
    assert [r["step"] for r in rows] == [0, 3] and all(r["kept_ms"] > 0 and r["flushed_ms"] > 0 for r in rows)
    tiny = torch.tensor([1e-40])  # subnormal in float32: flushing would make it 0
    assert float(tiny * 1.0) > 0


def test_the_length_cost_benchmark_times_each_cap_against_the_first(tmp_path):
    """bench.length_cost, smallest run: a row per task and cap, each with its own time and its ratio to the
    first cap's (which is 1); caps that do not rise from min_len are refused with exit status 2."""
    from bench import length_cost

    length_cost.main(["--tasks", "argmax", "--lengths", "8", "32", "--seeds", "1", "--steps", "1", "--repeats", "1",
                      "--json", str(tmp_path / "cost.json")])
    rows = json.loads((tmp_path / "cost.json").read_text())["rows"]
    assert [(r["task"], r["max_len"]) for r in rows] == [("argmax", 8), ("argmax", 32)]
    assert all(r["ms_per_step"] > 0 for r in rows) and rows[0]["over_8"] == 1.0
    assert rows[1]["over_8"] == pytest.approx(rows[1]["ms_per_step"] / rows[0]["ms_per_step"])
    with pytest.raises(SystemExit) as refused:
        length_cost.main(["--lengths", "256", "16"])
    assert refused.value.code == 2


def test_the_gpu_check_writes_its_figures_on_any_device(tmp_path, capsys):
    """bench.gpu_check at its smallest, on the CPU: both tasks and both sources of data timed in the
    step and in the real loop (one checkpoint forced and timed), the JSON written, the table printed
    last (a change to the engine's signatures fails here, not on a lent GPU)."""
    from bench import gpu_check

    gpu_check.main(["--out", str(tmp_path), "--device", "cpu", "--seeds", "2", "--steps", "6", "--no-tests"])
    steps = json.loads((tmp_path / "step.json").read_text())
    loops = json.loads((tmp_path / "loop.json").read_text())["rows"]
    # each task and source of data once, with the Philox the runs use: a CPU has no fused one
    assert [(r["task"], r["draws"], r["philox"], r["n_seeds"]) for r in steps["rows"]] == [
        (t, d, "tensors", 2) for t in ("argmax", "dictionary") for d in ("generators", "counter")]
    assert not any("error" in r for r in steps["rows"] + loops)
    assert all(r["model_steps_per_s"] > 0 and r["eager_kernels_per_step"] > 0 for r in steps["rows"])
    # the loop: each step row's task and draws, then chapter 10's deeper argmax model (its paper profile's)
    deep, seeds = gpu_check.deep_run("argmax")
    assert (deep.layers, deep.heads, seeds) == (2, 4, 50)  # its paper-scale runs hold 50 seeds each
    assert [(r["task"], r["draws"], r.get("layers"), r.get("heads")) for r in loops] == [
        (r["task"], r["draws"], None, None) for r in steps["rows"]] + [("argmax", "counter", 2, 4)]
    assert all(r["checkpoints"] == 1 and r["checkpoint_s"] >= 0 for r in loops)
    assert steps["provenance"]["device"].startswith("cpu")
    printed = capsys.readouterr().out.rstrip().splitlines()
    # and the plan times chapter 10's deep argmax runs by it, apart from the one-layer model's
    from vvlib.book.gpu_queue import units

    rates = units.check_rates([tmp_path / "loop.json"], "tensors")
    rate = lambda row: row["steady_model_steps_per_s"] or row["model_steps_per_s"]
    assert rates["argmax training (counter stream), 2 layers x 4 heads"] == rate(loops[-1])
    assert rates["argmax training (counter stream)"] == rate(loops[1])
    # the counter stream's rows alone are timed again, longer, for the steady rate the plan reads
    assert [r.get("long_steps") for r in loops] == [None if r["draws"] == "generators" else 3 * 6 for r in loops]
    # chapter 9's unit in miniature: its own seeds and stages, up to 256 items, and its minutes at that speed
    curricula = json.loads((tmp_path / "curriculum.json").read_text())["rows"]
    assert [(r["task"], r["n_seeds"], r["max_len"], r["steps"], "trial" in r) for r in curricula] == [
        ("argmax", 2, 256, 6, False), ("dictionary", 2, 256, 6, False)]  # the trials only with --trials
    curriculum_rates = units.check_rates([tmp_path / "curriculum.json"], "tensors")
    assert curriculum_rates["argmax training (counter stream) to length 256"] == rate(curricula[0])
    for r in curricula:
        unit = gpu_check.chapter9_unit(r["task"])
        # the paper profile's seeds a run: 20 for argmax since the trial of 2026-11-27, 10 for dictionary
        assert (unit.n_seeds, unit.steps, unit.draws) == {"argmax": (20, 100_000, "counter"),
                                                          "dictionary": (10, 10_000, "counter")}[r["task"]]
        speed = r["steady_model_steps_per_s"] or r["model_steps_per_s"]
        assert r["unit_training_min"] == pytest.approx(2 * unit.steps / speed / 60, abs=0.06)
    # where a step's time goes: each task's eager step under the profiler (on a CPU: its aten ops' own time)
    profiles = json.loads((tmp_path / "kernels.json").read_text())["rows"]
    # and who calls copy_ (printed under the task's line)
    assert all(r["copies"] for r in profiles)
    assert [(p["task"], p["draws"], p["philox"], p["n_seeds"]) for p in profiles] == [
        ("argmax", "counter", "tensors", 2), ("dictionary", "counter", "tensors", 2)]
    for p in profiles:
        kernels = p["kernels"]
        assert 0 < len(kernels) <= gpu_check.PROFILED_KERNELS and p["device_ms_per_step"] > 0
        assert all(k["name"].startswith("aten::") and k["calls_per_step"] > 0 for k in kernels)
        times = [k["us_per_step"] for k in kernels]
        assert times == sorted(times, reverse=True) and 0 < sum(k["share"] for k in kernels) <= 1.001
    assert {"aten::bmm", "aten::_fused_adamw_"} & {k["name"] for k in profiles[0]["kernels"]}
    # each row's seconds, each part's their sum, and the line that sets the parts beside the whole check
    for name in ("step", "loop", "curriculum", "kernels"):
        record = json.loads((tmp_path / f"{name}.json").read_text())
        assert all(r["seconds"] > 0 for r in record["rows"])
        assert record["provenance"]["wall_time_s"] == pytest.approx(sum(r["seconds"] for r in record["rows"]), abs=0.01)
    spent = dict(part.rsplit(" ", 1) for part in printed[-1].removeprefix("seconds: ").replace(";", ",").split(", "))
    assert set(spent) == {"step", "loop", "curriculum", "kernels", "the rest", "the check"}
    assert sum(float(spent[k]) for k in spent if k != "the check") == pytest.approx(float(spent["the check"]), abs=3)


SAMPLE_TESTS = ("import time\n\ndef test_slow():\n    time.sleep(0.3)\n\n"
                "def test_slower():\n    time.sleep(0.6)\n\ndef test_fails():\n    assert 1 == 2\n\n"
                "def test_quick():\n    pass\n")


@pytest.mark.parametrize("processes", [1, 2])
def test_the_checks_tests_part_keeps_its_slowest_tests_apart_from_the_tail(tmp_path, monkeypatch, processes):
    """tests.json of a real pytest run (two tests that sleep, one that fails), in one process or shared by two:
    every test counted once, each slow test's seconds, slowest first, out of the tail, which shows the failure
    and ends in the counts."""
    from bench import device_tests

    sample = tmp_path / "test_sample.py"
    sample.write_text(SAMPLE_TESTS)
    monkeypatch.setattr(device_tests, "TEST_FILES", [str(sample)])
    tests = device_tests.run_tests(timeout_s=60, processes=processes)
    assert tests["exit_status"] == 1 and tests["summary"].startswith("1 failed, 3 passed in ")
    assert tests["processes"] == processes and tests["tail"].endswith(tests["summary"])
    calls = [(t["test"].split("::")[-1], t["seconds"]) for t in tests["slowest"] if t["phase"] == "call"]
    assert [name for name, _ in calls[:2]] == ["test_slower", "test_slow"]
    assert calls[0][1] >= 0.6 and 0.3 <= calls[1][1] < calls[0][1]
    assert "durations" not in tests["tail"] and "s call " not in tests["tail"]
    assert "assert 1 == 2" in tests["tail"] and "deselected" not in tests["summary"]


def test_the_checks_tests_part_says_which_process_ran_out_of_time(tmp_path, monkeypatch):
    from bench import device_tests

    sample = tmp_path / "test_sample.py"
    sample.write_text("import time\n\ndef test_stuck():\n    time.sleep(30)\n\ndef test_quick():\n    pass\n")
    monkeypatch.setattr(device_tests, "TEST_FILES", [str(sample)])
    tests = device_tests.run_tests(timeout_s=8, processes=2)
    assert tests["exit_status"] is None and tests["seconds"] < 20
    assert tests["summary"].startswith("1 passed in ") and tests["summary"].endswith("process 0: timed out")


def test_shares_of_a_collection_run_each_test_once(tmp_path):
    """bench.shard: the K processes' shares are disjoint and cover the collection; a share outside 0 <= I < K
    is refused with the option's name and form (pytest's usage error, status 4)."""
    import subprocess
    import sys

    sample = tmp_path / "test_sample.py"
    sample.write_text("import pytest\n\n@pytest.mark.parametrize('k', range(5))\ndef test_a(k):\n    pass\n\n"
                      "def test_b():\n    pass\n")

    def collected(*extra):
        done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                               "-p", "bench.shard", *extra, str(sample)], cwd=REPO_ROOT, capture_output=True, text=True)
        return done.returncode, [line for line in done.stdout.splitlines() if "::" in line], done.stderr

    _, everything, _ = collected()
    shares = [collected("--shard", f"{i}/3")[1] for i in range(3)]
    assert len(everything) == 6 and [len(s) for s in shares] == [2, 2, 2]
    assert sorted(sum(shares, [])) == sorted(everything)
    assert shares[0] == [everything[0], everything[3]]  # every 3rd test: a test's cases spread over the processes
    for wrong in ("3/3", "1/0", "a/2"):
        status, _, errors = collected("--shard", wrong)
        assert status == 4 and "--shard: expected I/K" in errors and repr(wrong) in errors


def test_the_checks_test_counts_add_up_over_processes():
    from bench import device_tests

    outputs = ["..F\n1 failed, 2 passed, 3 deselected, 1 warning in 0.50s", "..s\n2 passed, 1 skipped, 4 deselected, "
               "2 warnings in 0.71s", "\ntimed out"]
    assert device_tests.merged_summary(outputs[:2]) == "1 failed, 4 passed, 1 skipped, 3 warnings in 0.71s"
    assert device_tests.merged_summary(["1 passed, 1 error in 1.00s"]) == "1 passed, 1 error in 1.00s"
    assert device_tests.merged_summary(outputs).endswith("; process 2: timed out")
    assert device_tests.merged_summary(["5 deselected in 0.10s"]) == "no tests ran in 0.10s"
    assert [device_tests.worst(s) for s in ([0, 5], [0, 1, 2], [5, 5], [1, None])] == [0, 1, 5, None]
    assert [device_tests.processes_for(cores) for cores in (1, 2, 3, 8, 16, 64)] == [1, 1, 1, 4, 4, 4]


@pytest.mark.heavy
def test_the_gpu_check_tries_twice_the_runs_seeds_where_it_may_when_asked(tmp_path, monkeypatch):
    """With --trials and room under --seeds, the deep model's loop is timed again at twice the seeds its paper-scale
    runs hold, and chapter 9's argmax unit likewise, each marked a trial, which the plan's rates leave alone (here
    the deep runs are made to hold 1 seed, --seeds 2)."""
    from bench import gpu_check
    from vvlib.book.gpu_queue import units

    deep, _ = gpu_check.deep_run("argmax")
    monkeypatch.setattr(gpu_check, "deep_run", lambda task: (deep, 1))
    gpu_check.main(["--out", str(tmp_path), "--device", "cpu", "--seeds", "2", "--steps", "4", "--no-tests",
                    "--trials"])
    loops = json.loads((tmp_path / "loop.json").read_text())["rows"]
    deep_rows = [(r["n_seeds"], r.get("trial", "")) for r in loops if "layers" in r]
    assert deep_rows == [(1, ""), (2, "2 seeds a run, against the paper profile's deep_seed_chunk")]
    # and chapter 9's argmax unit at twice its seeds a run (capped at --seeds), a trial the plan leaves alone too
    curricula = json.loads((tmp_path / "curriculum.json").read_text())["rows"]
    assert [(r["task"], r["n_seeds"], r.get("trial", "")) for r in curricula] == [
        ("argmax", 2, ""), ("dictionary", 2, ""), ("argmax", 2, "2 seeds a run, against the paper profile's seed_chunk")]
    first = curricula[0]["steady_model_steps_per_s"] or curricula[0]["model_steps_per_s"]
    assert units.check_rates([tmp_path / "curriculum.json"], "tensors")[
        "argmax training (counter stream) to length 256"] == first
    kind = "argmax training (counter stream), 2 layers x 4 heads"
    rates = units.check_rates([tmp_path / "loop.json"], "tensors", {kind: 1})
    assert rates[kind] == next(r["steady_model_steps_per_s"] or r["model_steps_per_s"] for r in loops
                               if "layers" in r and "trial" not in r)


def test_the_steady_rate_is_the_steps_a_longer_loop_adds_over_the_seconds_it_adds():
    """Two runs paying the same fixed cost (2 s of recordings) at 10 ms a step for 100 seeds: 10,000
    model-steps/s, where the short run's own rate says 6,000 (300 steps in 5 s); too small a difference, none."""
    from bench import gpu_check

    assert gpu_check.steady_rate(100, (300, 2 + 3.0), (900, 2 + 9.0)) == pytest.approx(10_000)
    assert gpu_check.steady_rate(100, (300, 5.0), (900, 4.9)) is None
    assert gpu_check.steady_rate(100, (300, 5.0), (300, 6.0)) is None


def test_a_measurement_that_fails_is_recorded_and_the_check_goes_on(monkeypatch):
    """On a lent GPU a failure (the fused Philox not compiling, say) must not cost the rest of the check."""
    from bench import gpu_check

    def fails():
        raise RuntimeError("nvrtc: error: identifier undefined")

    row = {"task": "argmax", "draws": "counter", "philox": "fused", "n_seeds": 100}
    monkeypatch.setenv("VVLIB_PHILOX", "tensors")
    failed = gpu_check.measured(fails, row)
    assert failed == {**row, "error": "RuntimeError: nvrtc: error: identifier undefined"}
    assert os.environ["VVLIB_PHILOX"] == "tensors"  # restored
    assert gpu_check.measured(lambda: {"seen": os.environ["VVLIB_PHILOX"]}, row)["seen"] == "fused"
    assert "failed: RuntimeError: nvrtc" in gpu_check.table([failed], [], None)


@pytest.mark.parametrize("wrong", [["--steps", "1"], ["--test-processes", "0"]])
def test_the_gpu_check_refuses_a_loop_too_short_to_checkpoint_or_no_test_process(tmp_path, capsys, wrong):
    from bench import gpu_check

    with pytest.raises(SystemExit) as stopped:
        gpu_check.main(["--out", str(tmp_path), "--device", "cpu", *wrong])
    assert stopped.value.code == 2 and "--test-processes must be >= 1 and --steps >= 2" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_the_tf32_comparison_pairs_the_arms_by_seed_and_refuses_a_cpu(tmp_path, capsys):
    import numpy as np
    from scipy import stats as scipy_stats

    from bench import tf32_ab

    rng = np.random.default_rng(3)
    full, fast = rng.uniform(0.3, 0.9, (6, 2)), rng.uniform(0.3, 0.9, (6, 2))
    result = tf32_ab.compared(full, fast, (16, 1024))
    d = 100 * (fast[:, 1] - full[:, 1])
    half = scipy_stats.t.ppf(0.975, 5) * d.std(ddof=1) / np.sqrt(6)
    row = result["1024"]
    assert row["float32"] == pytest.approx(100 * full[:, 1].mean())
    assert row["tf32"] == pytest.approx(100 * fast[:, 1].mean())
    assert (row["diff"], row["low"], row["high"]) == pytest.approx((d.mean(), d.mean() - half, d.mean() + half))
    assert row["p"] == pytest.approx(scipy_stats.ttest_rel(100 * fast[:, 1], 100 * full[:, 1]).pvalue)
    # TF32 is a GPU format: on a CPU the command stops before training, writing nothing
    assert tf32_ab.main(["--out", str(tmp_path / "out"), "--device", "cpu"]) == 2
    assert "expected cuda" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_the_philox_share_counts_its_calls_inside_the_step():
    """Seven elementwise kernels a round, ten rounds a call (philox.philox_tensors), counted within the step's."""
    from bench import philox_share

    row = philox_share.philox_share("argmax", n_seeds=2)
    assert row["philox_calls"] == 3  # argmax retrieval draws three tensors a batch
    assert row["philox_kernels"] >= row["philox_calls"] * 7 * 10
    assert row["kernels_per_step"] > row["philox_kernels"]


@pytest.mark.parametrize("task", ["argmax", "dictionary"])
def test_a_counter_stream_step_launches_the_same_kernels_for_any_number_of_seeds(task):
    """No per-seed launches left in the step on the counter stream: every seed's draws, passes and update
    are batched, so a step's kernels do not grow with the seeds (the generators draw seed by seed)."""
    from bench.gpu_check import eager_kernels

    counts = {n: eager_kernels(task, "counter", n, "cpu") for n in (2, 5)}
    assert counts[2] == counts[5]
    assert eager_kernels(task, "generators", 5, "cpu") > eager_kernels(task, "generators", 2, "cpu")


def _counted(run) -> list:
    from bench.step_traffic import StepTraffic

    with StepTraffic() as mode:
        run()
    return mode.calls


def test_the_traffic_of_a_call_is_what_it_must_read_and_write_once():
    """bench.step_traffic's rules, on calls whose bytes are known by hand (4 bytes a float, 8 an index)."""
    a, b, table = torch.ones(3, 4, 5), torch.ones(3, 5, 2), torch.ones(100, 8)
    rows, values, sums = torch.tensor([1, 7, 7]), torch.ones(3, 8), torch.zeros(100, 8)
    calls = _counted(lambda: (torch.bmm(a, b), a.add_(a), table[rows], table.new_zeros(50, 8),
                              sums.index_put_((rows,), values, accumulate=True), a.view(60)))
    assert [(c[1], c[2], c[3], c[4]) for c in calls] == [
        ("bmm", 4 * (60 + 30), 4 * 24, 2 * 3 * 4 * 5 * 2),  # both factors read, the product written; 2 M K N FLOPs
        ("add_", 4 * 120, 4 * 60, 0),  # in place: both operands read, self written
        ("index", 3 * 8 + 4 * 24, 4 * 24, 0),  # a gather reads its indices and the rows it returns
        ("new_zeros", 0, 4 * 400, 0),  # written only
        ("index_put_", 3 * 8 + 2 * 4 * 24, 4 * 24, 0),  # the rows it adds to, not the table; the view: nothing
    ]


def test_fused_adamw_reads_the_gradients_and_writes_the_weights_and_both_moments():
    p = torch.nn.Parameter(torch.ones(1000))
    p.grad = torch.ones(1000)
    optimizer = torch.optim.AdamW([p], fused=True)
    optimizer.step()  # its state is made at the first step
    calls = [c for c in _counted(optimizer.step) if c[1] == "_fused_adamw_"]
    assert len(calls) == 1 and calls[0][3] == 3 * 4000  # weights and moments written; gradients only read
    assert 4 * 4000 <= calls[0][2] <= 4 * 4000 + 64  # the four read, and the step count


@pytest.mark.parametrize("task", ["argmax", "dictionary"])
def test_a_steps_flops_are_torchs_own_count_and_its_traffic_grows_with_the_seeds(task):
    from bench.run import TASKS
    from bench.step_traffic import step_traffic
    from vvlib.train import TrainConfig, Trainer

    trainer = Trainer(ModelConfig(task=TASKS[task]), TrainConfig(n_seeds=2, steps=10**9, draws="counter"), "cpu",
                      graph_step=False)
    trainer.train_step()
    with FlopCounterMode(display=False) as counter:
        trainer.train_step()
    calls = step_traffic(task, 2)
    assert sum(c[4] for c in calls) == counter.get_total_flops()
    assert {c[0] for c in calls} == {"matrix products", "AdamW", "Philox (fused)", "other"}
    assert sum(c[0] == "Philox (fused)" for c in calls) == {"argmax": 3, "dictionary": 4}[task]
    moved = {n: sum(c[2] + c[3] for c in step_traffic(task, n)) for n in (2, 4)}
    assert 1.9 < moved[4] / moved[2] <= 2.0  # every seed's weights and batch, and a few shared scalars


def test_the_floor_adds_each_calls_slower_limit():
    from bench.step_traffic import floor_ms

    gpu = {"fp32_tflops": 10.0, "tb_per_s": 1.0}
    calls = [("matrix products", "bmm", 10**9, 0, 10**11),  # 1 ms moving, 10 ms computing
             ("other", "add", 2 * 10**9, 10**9, 0)]  # 3 ms moving
    assert floor_ms(calls, gpu) == pytest.approx(13.0)


def test_the_measured_steps_are_the_newest_checks_at_the_papers_defaults(tmp_path):
    from bench.step_traffic import measured_steps

    def check(name, created, ms):
        rows = [{"task": "argmax", "draws": "counter", "philox": "fused", "n_seeds": 100, "ms_per_step": ms},
                {"task": "argmax", "draws": "counter", "philox": "fused", "n_seeds": 50, "ms_per_step": 0.1},
                {"task": "argmax", "draws": "generators", "philox": "tensors", "n_seeds": 100, "ms_per_step": 9.0}]
        path = tmp_path / name
        path.write_text(json.dumps({"provenance": {"device": "GPU X", "created": created}, "rows": rows}))
        return path

    paths = [check("b.json", "2026-11-27T01:00:00+00:00", 2.0), check("a.json", "2026-11-26T01:00:00+00:00", 3.0)]
    assert measured_steps(paths) == {("GPU X", "argmax"): 2.0}


def kernels_record(device: str, rows: list) -> dict:
    """A check's kernels.json as bench.gpu_check writes it."""
    return {"provenance": {"device": device, "created": "2026-11-27T00:00:00+00:00"}, "rows": rows}


def test_a_checks_kernels_are_set_beside_the_floors_by_category():
    """Measured: the products' and AdamW's ops as the profile kept them, the rest the step's total less those;
    floor: the step's calls of each category at the check's GPU (here 1 us per 3.35 MB moved on an H100)."""
    from bench.step_traffic import against_kernels

    calls = {("argmax", 2): [("matrix products", "bmm", 3_350_000, 3_350_000, 0),  # 2 us at 3.35 TB/s
                             ("matrix products", "baddbmm", 0, 0, 67 * 10**6),  # 1 us at 67 TFLOPS
                             ("AdamW", "_fused_adamw_", 3_350_000, 0, 0),  # 1 us
                             ("other", "add", 6_700_000, 3_350_000, 0)]}  # 3 us
    kernels = [{"name": "aten::bmm", "us_per_step": 6.0}, {"name": "aten::add", "us_per_step": 10.0},
               {"name": "aten::baddbmm", "us_per_step": 2.0}, {"name": "aten::_fused_adamw_", "us_per_step": 4.0}]
    record = kernels_record("NVIDIA H100 80GB HBM3", [
        {"task": "argmax", "n_seeds": 2, "device_ms_per_step": 0.025, "kernels": kernels},
        {"task": "dictionary", "n_seeds": 2, "error": "RuntimeError: out of memory"}])  # a failed row: left out
    (row,) = against_kernels(record, traffic=lambda task, n: calls[(task, n)])
    parts = {p["category"]: (p["us_measured"], p["us_floor"], p["of_floor"]) for p in row["parts"]}
    assert parts == {"matrix products": (8.0, 3.0, 0.375), "AdamW": (4.0, 1.0, 0.25), "other": (13.0, 3.0, 0.231)}
    # the H200's bandwidth moves the same bytes in 3.35 / 4.8 of the time; its fp32 rate is the H100's
    record["provenance"]["device"] = "NVIDIA H200"
    (row,) = against_kernels(record, traffic=lambda task, n: calls[(task, n)])
    assert row["parts"][0]["us_floor"] == pytest.approx(2 * 3.35 / 4.8 + 1, abs=0.05)


def test_kernels_from_a_gpu_without_a_datasheet_are_refused_with_the_known_ones(tmp_path, capsys):
    from bench.step_traffic import main

    path = tmp_path / "kernels.json"
    path.write_text(json.dumps(kernels_record("cpu (x86_64, 2 threads)", [])))
    with pytest.raises(SystemExit) as stop:
        main(["--kernels", str(path), "--json", str(tmp_path / "out.json")])
    assert stop.value.code == 2 and not (tmp_path / "out.json").exists()
    assert "NVIDIA H100 80GB HBM3, NVIDIA H200" in capsys.readouterr().err


def test_the_step_traffic_command_sets_a_real_profile_beside_the_floors(tmp_path):
    """A CPU profile of the check's own making, read as if an H100 had made it: every category measured and
    floored, the JSON written."""
    from bench import gpu_check
    from bench.step_traffic import main

    # every op kept: on a busy CPU AdamW's few microseconds at 2 seeds can fall out of the check's largest 15
    # (it did under two test processes), and the test is of the reading, not of which ops are largest
    rows = [{"task": t, "n_seeds": 2, **gpu_check.profile_step(t, 2, torch.device("cpu"), steps=2, top=10**6)}
            for t in ("argmax", "dictionary")]
    path = tmp_path / "kernels.json"
    path.write_text(json.dumps(kernels_record("NVIDIA H100 80GB HBM3", rows)))
    main(["--kernels", str(path), "--json", str(tmp_path / "out.json")])
    written = json.loads((tmp_path / "out.json").read_text())
    assert written["device"] == "NVIDIA H100 80GB HBM3" and [r["task"] for r in written["rows"]] == ["argmax",
                                                                                                       "dictionary"]
    for row in written["rows"]:
        assert [p["category"] for p in row["parts"]] == ["matrix products", "AdamW", "other"]
        assert all(p["us_measured"] > 0 and p["us_floor"] > 0 for p in row["parts"])
        # the share is rounded to 3 places and both times to 0.1 us: a busy CPU's times against an H100's floors
        # may round the share to 0 (it did once), so it is checked against its own quotient within that rounding
        assert all(p["of_floor"] == pytest.approx(p["us_floor"] / p["us_measured"], abs=5e-4 + 0.1 / p["us_measured"])
                   for p in row["parts"])


def test_copy_callers_puts_each_copy_down_to_the_op_that_needed_it():
    """kernels.json's `copies`: a copy inside an op is that op's (baddbmm writes its broadcast bias into the
    output before adding the product: CPU and cuBLAS both); a conversion the code asks for is the top level's,
    through aten::to and _to_copy; in a real step the callers' calls and time add up to copy_'s own."""
    from bench import gpu_check

    bias, x, w = torch.randn(1, 1, 8), torch.randn(3, 5, 4), torch.randn(3, 4, 8)
    with torch.profiler.profile() as prof:
        torch.baddbmm(bias, x, w)
        torch.arange(6).float()
    callers = {c["caller"]: c["calls_per_step"] for c in gpu_check.copy_callers(prof.events(), 1, on_gpu=False)}
    assert callers == {"aten::baddbmm": 1, "(none)": 1}
    step = gpu_check.profile_step("argmax", 2, torch.device("cpu"), steps=2, top=1000)
    [copy] = [k for k in step["kernels"] if k["name"] == "aten::copy_"]
    assert sum(c["calls_per_step"] for c in step["copies"]) == pytest.approx(copy["calls_per_step"])
    rounding = 0.1 * len(step["copies"])  # each caller's time is rounded to 0.1 us
    assert sum(c["us_per_step"] for c in step["copies"]) == pytest.approx(copy["us_per_step"], abs=rounding)
    assert not {c["caller"] for c in step["copies"]} & gpu_check.COPYING


def test_the_step_traffic_command_writes_its_rows(tmp_path):
    from bench.step_traffic import main

    main(["--seeds", "2", "--json", str(tmp_path / "traffic.json")])
    record = json.loads((tmp_path / "traffic.json").read_text())
    assert [r["task"] for r in record["rows"]] == ["argmax", "dictionary"]
    for row in record["rows"]:
        assert row["gbytes"] == pytest.approx(sum(p["gbytes"] for p in row["by_category"].values()), abs=0.005)
        for gpu in row["gpus"].values():
            assert 0 < gpu["floor_ms_others_fused"] < gpu["floor_ms"]


@pytest.mark.heavy
def test_the_heads_comparison_runs_each_arm_with_its_own_code(tmp_path):
    """bench.heads_ab's earlier arm imports vvlib from the commit's tree, not from this checkout (a python on
    whose path this checkout is installed finds it first unless told otherwise), and reports a step's time,
    bytes and calls."""
    from bench import heads_ab

    tree = heads_ab.earlier_tree("HEAD", tmp_path)
    earlier = heads_ab.run_arm(tree, ("argmax", 1, 2, 2), steps=1)
    present = heads_ab.run_arm(None, ("argmax", 1, 2, 2), steps=1)
    assert Path(earlier["vvlib"]).parent == tree and Path(present["vvlib"]).parent == REPO_ROOT
    for arm in (earlier, present):
        assert arm["ms_per_step"] > 0 and arm["gbytes"] > 0 and arm["calls"] > 0


def test_the_counter_streams_step_part_draws_a_new_batch_each_time():
    """bench.run times the counter stream's draw by calling next_step_draws: each call must draw the next
    step's batch, not return the batch the trainer keeps for its step (which took 0.012 ms to 'draw')."""
    from bench import run
    from vvlib.train import Trainer, TrainConfig

    trainer = Trainer(ModelConfig(task=TaskConfig("argmax")), TrainConfig(n_seeds=2, draws="counter"), "cpu")
    draw = run.next_step_draws(trainer)
    first, second = draw(), draw()
    assert trainer.step == 2 and not torch.equal(first.target, second.target)


def test_the_readmes_current_figures_are_what_the_committed_records_give():
    """bench/README.md's block is rendered from the records; edit a record, rerun `python -m bench.current --write`."""
    from bench import current

    assert current.written(current.README.read_text()) == current.README.read_text()


def _check(path, device, created, task_ms, loop=None):
    provenance = {"device": device, "created": created, "git_commit": "abcdef0123"}
    rows = [{"task": t, "draws": "counter", "philox": "fused", "n_seeds": 100, "ms_per_step": ms,
             "model_steps_per_s": 100 * 1000 / ms} for t, ms in task_ms.items()]
    rows.append({"task": "argmax", "draws": "generators", "philox": "fused", "n_seeds": 100, "ms_per_step": 9.0,
                 "model_steps_per_s": 1.0})  # not the paper-scale step: left out
    path.with_name(path.name + "-step.json").write_text(json.dumps({"provenance": provenance, "rows": rows}))
    if loop:
        path.with_name(path.name + "-loop.json").write_text(json.dumps({"provenance": provenance, "rows": loop}))


def test_the_gpu_table_takes_each_cards_newest_check_and_divides_its_floor_by_its_step(tmp_path):
    from bench import current

    floors = {"argmax": 1.0, "dictionary": 3.0}
    traffic = {"rows": [{"task": t, "gpus": {gpu: {"floor_ms": f, "floor_ms_others_fused": f / 2}
                                             for gpu in ("GPU A", "GPU B")}} for t, f in floors.items()]}
    (tmp_path / "step-traffic-cpu.json").write_text(json.dumps(traffic))
    _check(tmp_path / "gpu-check-a-old", "GPU A", "2026-01-01T00:00:00", {"argmax": 8.0, "dictionary": 8.0})
    steady = {"task": "argmax", "draws": "counter", "philox": "fused", "n_seeds": 100, "steady_model_steps_per_s": 1234.4,
              "long_steps": 900, "model_steps_per_s_without_checkpoints": 1.0}
    _check(tmp_path / "gpu-check-a-new", "GPU A", "2026-02-01T00:00:00", {"argmax": 4.0, "dictionary": 4.0}, [steady])
    _check(tmp_path / "gpu-check-b", "GPU B", "2026-01-01T00:00:00", {"argmax": 2.0})
    rows = [line.split(" | ") for line in current.gpu_table(tmp_path).splitlines()[2:]]
    assert [(r[0].strip("| "), r[1], r[2], r[6]) for r in rows] == [
        ("GPU A", "argmax", "4.00", "25%"), ("GPU A", "dictionary", "4.00", "75%"), ("GPU B", "argmax", "2.00", "50%")]
    assert rows[0][4] == "1,234 (steady, 900 steps)" and rows[1][4] == "not measured"


def test_the_readme_without_its_markers_is_refused():
    from bench import current

    with pytest.raises(ValueError, match="markers"):
        current.written("# a README with no block\n")
