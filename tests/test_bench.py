"""The benchmarks: the analytic FLOP count against torch's own count, and both command lines end to end."""

import json
import os

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from bench.run import forward_flops_per_sequence
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


def test_paper_scale_refuses_a_sample_of_no_steps(capsys):
    from bench.paper_scale import main

    with pytest.raises(SystemExit):
        main(["--steps", "0"])
    assert "--steps must be >= 1" in capsys.readouterr().err


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


def test_the_heap_benchmark_scores_under_both_heaps_in_fresh_processes(tmp_path):
    """bench.heap_ab, smallest run: each heap's medians, its ratio from them, and (it checks) equal accuracies."""
    from bench import heap_ab

    heap_ab.main(["--task", "argmax", "--seeds", "1", "--sequences", "2", "--longest", "32", "--repeats", "1",
                  "--json", str(tmp_path / "heap.json")])
    record = json.loads((tmp_path / "heap.json").read_text())
    default, kept = record["rows"]
    assert (default["heap"], kept["heap"]) == ("default", "kept")
    assert all(r["seconds"] > 0 and r["peak_mb"] > 0 for r in record["rows"])
    assert record["default_over_kept"] == pytest.approx(default["seconds"] / kept["seconds"])


def test_the_subnormal_benchmark_times_both_modes_and_leaves_flushing_off(tmp_path):
    """bench.subnormal, smallest run: a row per step asked for, both times measured, and torch's
    flush-to-zero switched off again (it would change every later number)."""
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
    with pytest.raises(SystemExit) as refused:
        length_cost.main(["--lengths", "256", "16"])
    assert refused.value.code == 2


def test_the_gpu_check_writes_its_figures_on_any_device(tmp_path):
    """bench.gpu_check at its smallest, on the CPU: every part's JSON is written with the fields the plan
    (units.check_rates), bench.current and bench.step_traffic read (a change to the engine's signatures fails
    here, not on a lent GPU)."""
    from bench import gpu_check
    from vvlib.book.gpu_queue import units

    gpu_check.main(["--out", str(tmp_path), "--device", "cpu", "--seeds", "2", "--steps", "6", "--no-tests"])
    records = {name: json.loads((tmp_path / f"{name}.json").read_text())
               for name in ("step", "loop", "curriculum", "kernels")}
    for record in records.values():
        assert record["provenance"]["device"].startswith("cpu") and record["provenance"]["created"]
        assert record["rows"] and all("error" not in r and r["seconds"] > 0 for r in record["rows"])
    for name in ("step", "loop", "curriculum"):
        assert all(r["model_steps_per_s"] > 0 and r["n_seeds"] == 2 for r in records[name]["rows"])
    assert all(r["checkpoints"] == 1 for r in records["loop"]["rows"])  # the loop forces one and times it
    assert all(p["device_ms_per_step"] > 0 and p["kernels"] and p["copies"] for p in records["kernels"]["rows"])
    # the plan reads the loop's and the curriculum's rows as the training speeds of its kinds
    rates = units.check_rates([tmp_path / "loop.json", tmp_path / "curriculum.json"], "tensors")
    assert {"argmax training (counter stream)", "argmax training (counter stream) to length 256",
            "argmax training (counter stream), 2 layers x 4 heads"} <= set(rates)
    assert all(rate > 0 for rate in rates.values())


SAMPLE_TESTS = ("import time\n\ndef test_slow():\n    time.sleep(0.3)\n\n"
                "def test_slower():\n    time.sleep(0.6)\n\ndef test_fails():\n    assert 1 == 2\n\n"
                "def test_quick():\n    pass\n")


def test_the_checks_tests_part_counts_every_test_once_and_keeps_its_slowest(tmp_path, monkeypatch):
    """tests.json of a real pytest run (two tests that sleep, one that fails) shared by two processes: every
    test counted once, the failure's exit status, each slow test's seconds, slowest first."""
    from bench import device_tests

    sample = tmp_path / "test_sample.py"
    sample.write_text(SAMPLE_TESTS)
    monkeypatch.setattr(device_tests, "TEST_FILES", [str(sample)])
    tests = device_tests.run_tests(timeout_s=60, processes=2)
    assert tests["exit_status"] == 1 and tests["summary"].startswith("1 failed, 3 passed in ")
    calls = [(t["test"].split("::")[-1], t["seconds"]) for t in tests["slowest"] if t["phase"] == "call"]
    assert [name for name, _ in calls[:2]] == ["test_slower", "test_slow"]
    assert calls[0][1] >= 0.6 and 0.3 <= calls[1][1] < calls[0][1]


def test_shares_of_a_collection_run_each_test_once(tmp_path):
    """bench.shard: the K processes' shares are disjoint and cover the collection; a share outside 0 <= I < K
    is refused naming the option (pytest's usage error, status 4)."""
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
    status, _, errors = collected("--shard", "3/3")
    assert status == 4 and "--shard" in errors


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


@pytest.mark.parametrize("wrong", [["--steps", "1"], ["--test-processes", "0"]])
def test_the_gpu_check_refuses_a_loop_too_short_to_checkpoint_or_no_test_process(tmp_path, capsys, wrong):
    from bench import gpu_check

    with pytest.raises(SystemExit) as stopped:
        gpu_check.main(["--out", str(tmp_path), "--device", "cpu", *wrong])
    assert stopped.value.code == 2 and "--test-processes must be >= 1 and --steps >= 2" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_the_tf32_comparison_refuses_a_cpu_before_training(tmp_path, capsys):
    """TF32 is a GPU format: on a CPU the command stops before training, writing nothing."""
    from bench import tf32_ab

    assert tf32_ab.main(["--out", str(tmp_path / "out"), "--device", "cpu"]) == 2
    assert "expected cuda" in capsys.readouterr().err and not (tmp_path / "out").exists()


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


def kernels_record(device: str, rows: list) -> dict:
    """A check's kernels.json as bench.gpu_check writes it."""
    return {"provenance": {"device": device, "created": "2026-11-27T00:00:00+00:00"}, "rows": rows}


def test_kernels_from_a_gpu_without_a_datasheet_are_refused_with_the_known_ones(tmp_path, capsys):
    from bench.step_traffic import main

    path = tmp_path / "kernels.json"
    path.write_text(json.dumps(kernels_record("cpu (x86_64, 2 threads)", [])))
    with pytest.raises(SystemExit) as stop:
        main(["--kernels", str(path), "--json", str(tmp_path / "out.json")])
    assert stop.value.code == 2 and not (tmp_path / "out.json").exists()
    assert "NVIDIA H100 80GB HBM3, NVIDIA H200" in capsys.readouterr().err


def test_the_step_traffic_command_writes_its_rows(tmp_path):
    from bench.step_traffic import main

    main(["--seeds", "2", "--json", str(tmp_path / "traffic.json")])
    record = json.loads((tmp_path / "traffic.json").read_text())
    assert [r["task"] for r in record["rows"]] == ["argmax", "dictionary"]
    for row in record["rows"]:
        assert row["gbytes"] == pytest.approx(sum(p["gbytes"] for p in row["by_category"].values()), abs=0.005)
        for gpu in row["gpus"].values():
            assert 0 < gpu["floor_ms_others_fused"] < gpu["floor_ms"]


def test_the_readmes_current_figures_are_what_the_committed_records_give():
    """bench/README.md's block is rendered from the records; edit a record, rerun `python -m bench.current --write`."""
    from bench import current

    assert current.written(current.README.read_text()) == current.README.read_text()


def test_the_readme_without_its_markers_is_refused():
    from bench import current

    with pytest.raises(ValueError, match="markers"):
        current.written("# a README with no block\n")
