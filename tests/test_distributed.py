"""Seeds spread over torchrun's ranks (gloo, two CPU processes) give the single-process run's
weights, losses and evaluations bit for bit, and store them once."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from vvlib import distributed, evaluate
from vvlib.experiments.storage import runs
from vvlib.model import ModelConfig
from vvlib.tasks import TaskConfig
from vvlib.train import TrainConfig

MODEL = ModelConfig(task=TaskConfig("argmax", n_classes=5), hidden=16)
TRAIN = TrainConfig(n_seeds=5, steps=12, batch_size=16, checkpoint_every=4, checkpoint_gap_s=0, seed_group=2)
EVAL = evaluate.EvalConfig(lengths=(16, 64), n_sequences=24, seed=8)


@pytest.mark.parametrize("n_seeds, seed_group, size, expected", [
    (5, 2, 2, [(0, 2), (2, 3)]),  # groups {0,1} {2,3} {4}: whole groups, as even as they allow
    (6, 4, 2, [(0, 4), (4, 2)]),
])
def test_each_rank_trains_consecutive_whole_seed_groups(n_seeds, seed_group, size, expected):
    cfg = TrainConfig(n_seeds=n_seeds, seed_group=seed_group, first_seed=0)
    shares = [distributed.seed_share(cfg, rank, size) for rank in range(size)]
    assert [(s.first_seed, s.n_seeds) for s in shares] == expected
    assert all(s.seed_group == seed_group for s in shares)


def test_more_ranks_than_seed_groups_is_refused():
    with pytest.raises(ValueError, match="3 ranks but only 2 seed group"):
        distributed.seed_share(TrainConfig(n_seeds=4, seed_group=2), 0, 3)


SCRIPT = """
import json, sys
import torch
torch.set_num_threads(1)
from vvlib import distributed
from vvlib.experiments.storage import runs
from tests.test_distributed import EVAL, MODEL, TRAIN

store = sys.argv[1]
runs.trained(store, MODEL, TRAIN, "cpu", progress=False)  # trained, its seeds spread over the ranks
weights, record = runs.trained(store, MODEL, TRAIN, "cpu", progress=False)  # loaded: every rank agrees it is stored
accuracy = runs.evaluated(store, MODEL, TRAIN, weights, EVAL, "cpu", progress=False)  # seeds spread too
rank, size = distributed.rank_and_size()
json.dump({"rank": rank, "size": size, "wq": weights["wq"].tolist(), "accuracy": accuracy.tolist()},
          open(f"{store}/rank{rank}.json", "w"))
"""


@pytest.fixture(scope="module")
def spread_run(tmp_path_factory):
    """The training and evaluation above, run by torchrun on two CPU processes (gloo)."""
    root = tmp_path_factory.mktemp("spread")
    (root / "run.py").write_text(textwrap.dedent(SCRIPT))
    from vvlib.experiments.storage.store import REPO_ROOT

    result = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                             str(root / "run.py"), str(root / "store")], capture_output=True, text=True, timeout=300,
                            cwd=REPO_ROOT, env={**__import__("os").environ, "OMP_NUM_THREADS": "1",
                                                "PYTHONPATH": str(REPO_ROOT)})
    assert result.returncode == 0, result.stderr[-3000:]
    return root / "store"


def test_two_ranks_give_the_single_process_run_bit_for_bit(spread_run, tmp_path, monkeypatch):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the ranks ran with one thread each: the same rounding
    try:
        weights, record = runs.trained(tmp_path, MODEL, TRAIN, "cpu", progress=False)
        accuracy = runs.evaluated(tmp_path, MODEL, TRAIN, weights, EVAL, "cpu", progress=False)
    finally:
        torch.set_num_threads(threads)
    folder = runs.run_dir(spread_run, MODEL, TRAIN, "cpu")
    spread_weights = torch.load(folder / "weights.pt", weights_only=True)
    assert all(torch.equal(weights[k], spread_weights[k]) for k in weights)
    spread_record = json.loads((folder / "run.json").read_text())
    assert spread_record["loss_history"] == json.loads(json.dumps(record["loss_history"]))
    assert spread_record["ranks"] == 2 and "ranks" not in record
    for rank in (0, 1):  # every rank ends with every seed's weights and accuracies
        seen = json.loads((spread_run / f"rank{rank}.json").read_text())
        assert (seen["rank"], seen["size"]) == (rank, 2)
        assert seen["wq"] == weights["wq"].tolist() and np.array_equal(seen["accuracy"], accuracy)
    # stored once, with no checkpoint left behind
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in
                                                              runs.run_dir(tmp_path, MODEL, TRAIN, "cpu").iterdir())


def test_ranks_stopped_between_their_checkpoints_start_over_together(spread_run, tmp_path):
    """Rank 0 holds a checkpoint at step 4, rank 1 none (a stop between their saves): both start
    from step 0, and the run still equals the single-process one."""
    from vvlib.experiments.storage.store import REPO_ROOT
    from vvlib.train import Trainer

    folder = runs.run_dir(tmp_path, MODEL, TRAIN, "cpu")
    early = Trainer(MODEL, distributed.seed_share(TRAIN, 0, 2))
    for _ in range(4):
        early.train_step()
    early.save(distributed.checkpoint_of(folder / "checkpoint.pt", 0, 2))
    script = tmp_path / "train.py"
    script.write_text("import sys, torch\ntorch.set_num_threads(1)\nfrom vvlib.experiments.storage import runs\n"
                      "from tests.test_distributed import MODEL, TRAIN\n"
                      "runs.trained(sys.argv[1], MODEL, TRAIN, 'cpu', progress=False)\n")
    result = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                             str(script), str(tmp_path)], capture_output=True, text=True, timeout=300, cwd=REPO_ROOT,
                            env={**__import__("os").environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO_ROOT)})
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads((folder / "run.json").read_text())
    assert record["resumed_from_step"] == 0
    expected = torch.load(runs.run_dir(spread_run, MODEL, TRAIN, "cpu") / "weights.pt", weights_only=True)
    got = torch.load(folder / "weights.pt", weights_only=True)
    assert all(torch.equal(expected[k], got[k]) for k in expected)
    assert not list(folder.glob("checkpoint*"))


def test_under_torchrun_cuda_means_this_ranks_own_gpu(monkeypatch):
    from vvlib import rng

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # the device is named, never used
    assert rng.resolve_device("cuda") == torch.device("cuda")
    monkeypatch.setenv("LOCAL_RANK", "3")
    assert rng.resolve_device("cuda") == torch.device("cuda", 3) == rng.resolve_device("auto")
    assert rng.resolve_device("cpu") == torch.device("cpu")


def test_each_rank_evaluates_a_consecutive_share_of_the_seeds():
    assert [distributed.share_bounds(5, rank, 2) for rank in (0, 1)] == [(0, 2), (2, 5)]
    assert [distributed.share_bounds(1, rank, 3) for rank in (0, 1, 2)] == [(0, 0), (0, 0), (0, 1)]
