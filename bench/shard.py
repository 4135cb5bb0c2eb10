"""A pytest plugin that runs one share of the collected tests, so that several processes share one run.

    python -m pytest -p bench.shard --shard 2/4 tests/...   # the 3rd of every 4 tests, counting from 0

Every process collects the same tests in the same order, and process I of K keeps the tests at positions I,
I + K, I + 2K, ...: together the K processes run each test once.  Taking every K-th test, rather than a block,
spreads a test's parametrizations (its CPU and CUDA cases side by side) over the processes.  The GPU check runs
its device tests so (bench.gpu_check): they are most of its minutes, and a lent GPU's machine has cores to spare.
"""

import re

import pytest

SHARE = re.compile(r"^(\d+)/(\d+)$")


def pytest_addoption(parser):
    parser.addoption("--shard", default=None, metavar="I/K",
                     help="run only the tests at positions I, I + K, I + 2K, ... of the collection (0 <= I < K)")


def share(text: str) -> tuple[int, int]:
    """(I, K) of 'I/K', or a usage error that names the option and what it accepts."""
    given = SHARE.match(text.strip())
    if not given or not 0 <= int(given[1]) < int(given[2]):
        raise pytest.UsageError(f"--shard: expected I/K with whole numbers 0 <= I < K (e.g. 0/4), got {text!r}")
    return int(given[1]), int(given[2])


def pytest_collection_modifyitems(config, items):
    given = config.getoption("shard")
    if given is None:
        return
    index, count = share(given)
    kept = [item for position, item in enumerate(items) if position % count == index]
    dropped = [item for position, item in enumerate(items) if position % count != index]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept
