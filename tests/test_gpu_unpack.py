"""scripts/gpu_unpack.py, the one step between a lent GPU's commands: what came back lands under its committed
names and is committed, the next command's estimates find the check just run, and nothing committed under bench/
is overwritten."""

import json
import tarfile

import pytest

from tests.conftest import git, git_repo, gpu_unpack_module

gpu_unpack = gpu_unpack_module()


def record(created: str, **rest) -> dict:
    return {"provenance": {"device": "NVIDIA H200", "torch": "2.11.0", "created": created}, **rest}


@pytest.fixture
def repo(tmp_path):
    return git_repo(tmp_path / "repo", {"results/paper/train-old/run.json": '{"old": 1}',
                                        ".gitignore": "bench/gpu-check-this-session-*.json\n"})


PASSED = {"exit_status": 0, "summary": "160 passed in 20.00s"}


def came_back(folder, created="2026-11-28T06:01:02+00:00", units=({"unit": 15, "label": "argmax baseline",
                                                                      "minutes": 5.4, "estimated_min": 5.5},),
              tests=PASSED):
    """$OUT's files as scripts/gpu_session.sh leaves them: a check, a unit's results, the queue's record."""
    folder.mkdir()
    (folder / "check").mkdir()
    for part in ("loop", "curriculum"):
        (folder / "check" / f"{part}.json").write_text(json.dumps(record(created, rows=[part])))
    (folder / "check" / "tests.json").write_text(json.dumps(record(created, rows=tests)))
    with tarfile.open(folder / "check.tgz", "w:gz") as archive:
        archive.add(folder / "check", arcname="check")
    new = folder / "results" / "paper" / "train-new"
    new.mkdir(parents=True)
    (new / "run.json").write_text('{"new": 1}')
    with tarfile.open(folder / "results.tgz", "w:gz") as archive:
        archive.add(folder / "results", arcname="results")
    (folder / "queue.json").write_text(json.dumps(record(created, units=list(units), passed=[])))
    return folder


def test_a_commands_files_land_under_their_names_and_are_committed(repo, tmp_path):
    committed = gpu_unpack.unpack(came_back(tmp_path / "files"), repo)
    names = ["bench/gpu-check-h200-2026-11-28-curriculum.json", "bench/gpu-check-h200-2026-11-28-loop.json",
             "bench/gpu-check-h200-2026-11-28-tests.json", "bench/gpu-queue-h200-2026-11-28-0601.json",
             "results/paper/train-new/run.json"]
    assert sorted(committed) == names
    assert git(repo, "status", "--porcelain") == ""  # all of it committed, the ignored copies aside
    assert json.loads((repo / names[1]).read_text())["rows"] == ["loop"]
    # the next command's queue is estimated by this check: its loop and curriculum, where git ignores them
    for part in ("loop", "curriculum"):
        assert json.loads((repo / "bench" / f"gpu-check-this-session-{part}.json").read_text())["rows"] == [part]
    assert not (repo / "bench" / "gpu-check-this-session-tests.json").exists()


def test_a_second_check_that_day_is_named_by_its_time_and_a_record_already_committed_stops_it(repo, tmp_path):
    gpu_unpack.unpack(came_back(tmp_path / "first"), repo)
    later = came_back(tmp_path / "later", created="2026-11-28T09:30:00+00:00")
    assert "bench/gpu-check-h200-2026-11-28-0930-loop.json" in gpu_unpack.unpack(later, repo)
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(SystemExit) as stopped:
        gpu_unpack.unpack(came_back(tmp_path / "again", created="2026-11-28T09:30:00+00:00"), repo)
    assert stopped.value.code == 2 and git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""


def test_a_command_with_no_unit_finished_still_commits_its_check(repo, tmp_path):
    files = came_back(tmp_path / "files", units=())
    (files / "results.tgz").unlink()
    committed = gpu_unpack.unpack(files, repo)
    assert len(committed) == 4 and "no unit" in git(repo, "log", "-1", "--format=%s")


def test_an_empty_folder_or_a_corrupt_record_is_refused_before_anything_is_written(repo, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as stopped:
        gpu_unpack.unpack(tmp_path / "empty", repo)
    assert stopped.value.code == 2 and "files_at" in capsys.readouterr().err
    files = came_back(tmp_path / "files")
    (files / "queue.json").write_text('{"units": ')
    with pytest.raises(SystemExit) as stopped:
        gpu_unpack.unpack(files, repo)
    assert stopped.value.code == 2
    assert git(repo, "status", "--porcelain") == "" and not list((repo / "bench").iterdir())


def test_what_the_session_had_staged_is_left_out_of_the_commit(repo, tmp_path):
    (repo / "notes.md").write_text("mine")
    git(repo, "add", "notes.md")
    gpu_unpack.unpack(came_back(tmp_path / "files"), repo)
    assert "notes.md" not in git(repo, "show", "--name-only", "--format=", "HEAD")
    assert git(repo, "status", "--porcelain").strip() == "A  notes.md"


def test_results_made_while_the_checks_tests_failed_are_unpacked_but_left_to_a_person(repo, tmp_path, capsys):
    failed = {"exit_status": 1, "summary": "1 failed, 159 passed in 20.00s"}
    committed = gpu_unpack.unpack(came_back(tmp_path / "files", tests=failed), repo)
    assert "bench/gpu-check-h200-2026-11-28-tests.json" in committed
    assert not any(path.startswith("results/") for path in committed)
    assert (repo / "results" / "paper" / "train-new" / "run.json").exists()  # for the next command, not committed
    assert "exit status 1" in capsys.readouterr().err


def test_a_later_commands_results_wait_too_when_its_sessions_check_failed(repo, tmp_path):
    """A session's second command runs no check: the one its first command committed, within a lease before it,
    decides; a command of a later session is not held by it."""
    failed = {"exit_status": 1, "summary": "1 failed, 159 passed in 20.00s"}
    gpu_unpack.unpack(came_back(tmp_path / "first", tests=failed), repo)

    def later(name, created):
        files = came_back(tmp_path / name, created=created, units=({"unit": 17, "label": "argmax standardize",
                                                                    "minutes": 4.0, "estimated_min": 4.1},))
        (files / "check.tgz").unlink()
        return gpu_unpack.unpack(files, repo)

    assert not any(path.startswith("results/") for path in later("second", "2026-11-28T06:11:00+00:00"))
    assert "results/paper/train-new/run.json" in later("next-session", "2026-11-28T09:00:00+00:00")


