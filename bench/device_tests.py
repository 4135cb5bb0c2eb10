"""The GPU check's tests: the device tests through pytest, shared by several processes at once.

    from bench.device_tests import run_tests
    run_tests(timeout_s=120, processes=4)   # what tests.json holds

Process I of K runs every K-th test pytest collects (bench/shard.py, a pytest plugin), so together they run each
test once; their counts are added up as one run would print them, the worst exit status is kept, and the slowest
tests of all of them (pytest's --durations) are kept apart from the output.
"""

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vvlib.experiments.storage import store

TEST_FILES = ["tests/test_draws.py", "tests/test_philox_kernel.py", "tests/test_train.py", "tests/test_evaluate.py",
              "tests/test_capture.py", "tests/test_counter_arm.py", "tests/test_probing.py", "tests/test_extensions.py"]
# pytest processes at once: the tests are a third of a check in one process (bench/README.md has the figures).
# Each test runs on TEST_THREADS threads (tests/conftest.py), and more threads than cores slow every test, so
# there are at most cores / TEST_THREADS processes
TEST_PROCESSES, TEST_THREADS = 4, 2
SLOWEST_TESTS = 20  # tests.json keeps this many tests' seconds: which ones the check's own minute goes to
DURATION_LINE = re.compile(r"^(\d+(?:\.\d+)?)s (setup|call|teardown) +(\S.*)$")  # "1.05s call  tests/x.py::test"
# the section's title and its closing note, "(370 durations < 0.005s hidden.  Use -vv to show these durations.)"
DURATIONS_NOTE = re.compile(r"slowest \d+ durations|^\(\d+ durations < ")
NO_TESTS = 5  # pytest's exit status when a process is left no test (more processes than tests)
COUNTED = ("failed", "passed", "skipped", "xfailed", "xpassed", "warnings", "errors")  # pytest's order
PLURAL = {"warning": "warnings", "error": "errors"}
SINGULAR = set(PLURAL.values())  # "1 warning", "2 warnings"
COUNT = re.compile(r"(\d+) (failed|passed|skipped|deselected|xfailed|xpassed|warnings?|errors?)\b")


def run_tests(timeout_s: float, processes: int = 1) -> dict:
    """The device tests through pytest in `processes` child processes at once, each with every processes-th test
    (bench.shard): their counts added up, the worst exit status, the slowest tests of them all."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        children = [pytest_child(k, processes, Path(scratch)) for k in range(processes)]
        finished = [child_output(child, log, start + timeout_s) for child, log in children]
    slowest = sorted((t for _, _, timed in finished for t in timed), key=lambda t: t["seconds"], reverse=True)
    statuses = [status for status, _, _ in finished]
    summary = merged_summary([rest for _, rest, _ in finished])
    shown = [rest for status, rest, _ in finished if status not in (0, NO_TESTS)] or [""]
    tail = ("\n".join(shown)[-3000:] + "\n" + summary).strip()  # the failures' own output, then the counts
    return {"files": TEST_FILES, "processes": processes, "exit_status": worst(statuses), "summary": summary,
            "tail": tail, "slowest": slowest[:SLOWEST_TESTS], "seconds": round(time.perf_counter() - start, 1)}


def pytest_child(index: int, processes: int, scratch: Path):
    """(process, log file) of pytest on its share of TEST_FILES, its output into a file (pipes of several
    children read one after another could fill and stall one), its temporary files in a folder of its own."""
    log = open(scratch / f"pytest-{index}.log", "w+")
    share = ["-p", "bench.shard", "--shard", f"{index}/{processes}"] if processes > 1 else []
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--durations={SLOWEST_TESTS}",
               "--basetemp", str(scratch / f"tmp-{index}"), *share, *TEST_FILES]
    return subprocess.Popen(command, cwd=store.REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, text=True), log


def child_output(child, log, deadline: float) -> tuple:
    """(exit status or None if it ran past `deadline`, its output without the durations, its slowest tests)."""
    try:
        status = child.wait(timeout=max(0.0, deadline - time.perf_counter()))
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        status = None
    log.seek(0)
    output = log.read()
    log.close()
    slowest, rest = slowest_tests(output)
    return status, rest if status is not None else f"{rest[-3000:]}\ntimed out", slowest


def merged_summary(outputs: list[str]) -> str:
    """pytest's counts added up over the processes ("3 passed, 1 skipped in 12.3s" as one run would print them,
    less the tests each process left to the others), and the last line of any process that printed none."""
    totals, seconds, unfinished = dict.fromkeys(COUNTED, 0), 0.0, []
    for k, output in enumerate(outputs):
        last = next((line for line in reversed(output.splitlines()) if line.strip()), "")
        timed = re.search(r" in (\d+(?:\.\d+)?)s", last)
        if not timed:
            unfinished.append(f"process {k}: {last.strip(' =') or 'no output'}")
            continue
        seconds = max(seconds, float(timed[1]))
        for count, what in COUNT.findall(last):
            if what != "deselected":
                totals[PLURAL.get(what, what)] += int(count)
    counts = ", ".join(f"{n} {what.removesuffix('s') if n == 1 and what in SINGULAR else what}"
                       for what, n in totals.items() if n)
    return "; ".join([f"{counts or 'no tests ran'} in {seconds:.2f}s", *unfinished])


def worst(statuses: list) -> int | None:
    """None if a process ran out of time, else the first status that says something failed, else 0 (or
    NO_TESTS where no process had a test)."""
    if None in statuses:
        return None
    failed = [s for s in statuses if s not in (0, NO_TESTS)]
    return failed[0] if failed else 0 if 0 in statuses else NO_TESTS


def processes_for(cores: int) -> int:
    """How many pytest processes share the tests on a machine of `cores` cores."""
    return max(1, min(TEST_PROCESSES, cores // TEST_THREADS))


def slowest_tests(output: str) -> tuple[list, str]:
    """([{seconds, phase, test}] of pytest's --durations lines, slowest first), and the output without them."""
    slowest, rest = [], []
    for line in output.splitlines():
        timed = DURATION_LINE.match(line)
        if timed:
            slowest.append({"seconds": float(timed[1]), "phase": timed[2], "test": timed[3]})
        elif not DURATIONS_NOTE.search(line):
            rest.append(line)
    return slowest, "\n".join(rest)
