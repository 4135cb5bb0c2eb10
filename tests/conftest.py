import importlib.util
import os
import subprocess

import pytest
import torch

from vvlib.model import ModelConfig
from vvlib.tasks import TaskConfig

# The cores shared among the test processes (pytest-xdist's workers), unless OMP_NUM_THREADS says otherwise:
# more threads than cores make torch's small products slower.  No test's outcome may depend on this number; a test
# of equal bits takes the one_thread fixture.
WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
# the count the caller gave, kept apart from the one set below: xdist's workers inherit the controller's environment
GIVEN = os.environ.setdefault("VVLIB_GIVEN_THREADS", os.environ.get("OMP_NUM_THREADS", ""))
THREADS = int(GIVEN or max(1, (os.cpu_count() or 1) // WORKERS))
# ... and the processes a test starts (the chapters' kernels, the command line, torchrun) inherit the same share:
# with torch's default of a thread per core in each, a chapter ran ten times slower beside the other tests.
os.environ["OMP_NUM_THREADS"] = str(THREADS)
# The file whose module fixture executes every chapter (most of the suite's time) runs first, so that with two
# processes (pytest -n 2 --dist loadfile --no-loadscope-reorder) the other one takes the rest of the files meanwhile.
FIRST = "test_chapters.py"


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.path.name != FIRST)  # a stable sort: the order within each part is kept


@pytest.fixture(autouse=True)
def _threads():
    torch.set_num_threads(THREADS)


@pytest.fixture
def one_thread():
    """One CPU thread while the test runs: BLAS and reductions then sum in a fixed order whatever the batch
    size or the machine's load (with two, dictionary lookup's gradient does not repeat bit for bit), so a
    test of equal bits fails only for a difference in the code."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def small_argmax():
    return ModelConfig(task=TaskConfig("argmax", n_classes=5), hidden=16)


@pytest.fixture
def small_dictionary():
    return ModelConfig(task=TaskConfig("dictionary", n_keys=256, n_values=8), hidden=16, key_dim=8, value_dim=8)


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU"))]


@pytest.fixture(params=DEVICES)
def device(request):
    """The device-dependent tests run on the CPU always, and on CUDA where a GPU is present
    (never on CI: they are how a session with a GPU checks the CUDA path)."""
    return request.param


@pytest.fixture
def argmin_task():
    """A third task in a few lines (tests/argmin_task.py), registered for one test."""
    from vvlib import tasks
    from tests import argmin_task

    argmin_task.register_class()
    yield argmin_task.NAME
    del tasks.TASKS[argmin_task.NAME]


def git(repo, *args) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def git_repo(path, files: dict):
    """A fresh clone in miniature: `files` ({relative path: text}) and an empty bench/, committed."""
    (path / "bench").mkdir(parents=True)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    for args in (["init", "-q"], ["config", "user.email", "test@example.com"], ["config", "user.name", "test"],
                 ["add", "."], ["commit", "-q", "-m", "start"]):
        git(path, *args)
    return path


def gpu_unpack_module():
    """scripts/gpu_unpack.py, which is a script and not a module of the package."""
    from vvlib.experiments.storage.store import REPO_ROOT

    spec = importlib.util.spec_from_file_location("gpu_unpack", REPO_ROOT / "scripts" / "gpu_unpack.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def displayed(monkeypatch, *modules) -> list:
    """What a page's code displays: each module's `display`, and vvlib.book.page's (show_figure's), collected."""
    from vvlib.book import page

    shown = []
    for module in (*modules, page):
        monkeypatch.setattr(module, "display", lambda *items, **_: shown.extend(items))
    return shown
