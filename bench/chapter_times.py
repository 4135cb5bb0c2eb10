"""How long a reader's first run of each chapter takes at a profile on this machine: each chapter run alone, in
an empty store of its own (so it trains everything it needs, as on a fresh clone), timed by the wall clock.

    python -m bench.chapter_times                       # every chapter at the ci profile, printed
    python -m bench.chapter_times --write               # and written to bench/chapter-times-ci.json
    python -m bench.chapter_times 08_ablations 11_sensitivity --write   # some chapters (the others kept)

Each chapter's page quotes its time from the written record (vvlib/book/page.py); the record names the
machine's CPU, its threads and the code's commit.  Run it on a quiet machine: a second job beside it slows
every chapter down.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from vvlib.errors import ParameterError
from vvlib.book import chapters
from vvlib.experiments.storage import store

BENCH = Path(__file__).parent


def record_path(profile: str) -> Path:
    return BENCH / f"chapter-times-{profile}.json"


def timed(name: str, profile: str) -> float:
    """Seconds for one chapter at `profile`, in a fresh store and output folder; a failed run raises."""
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "vvlib", "run", name, "--profile", profile, "--output", f"{folder}/out"]
        if "store_dir" in chapters.get_chapter(name).parameters():
            command += ["-p", "store_dir", f"{folder}/store"]
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - started


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", help="chapter names (default: every chapter)")
    parser.add_argument("--profile", default="ci", help="the profile each chapter runs at (default: ci)")
    parser.add_argument("--write", action="store_true", help="write bench/chapter-times-PROFILE.json")
    args = parser.parse_args(argv)
    names = args.chapters or [name for name in chapters.CHAPTERS if name != chapters.SUMMARY.name]
    for name in names:  # an unknown name stops here, naming the chapters, before anything runs
        try:
            chapter = chapters.get_chapter(name)
        except ParameterError as error:
            parser.error(str(error))
        if args.profile not in chapter.profile_names():
            parser.error(f"--profile: {name} has {', '.join(chapter.profile_names())}; got {args.profile!r}")
    path = record_path(args.profile)
    seconds = json.loads(path.read_text())["seconds"] if path.exists() else {}
    for name in names:
        seconds[name] = round(timed(name, args.profile), 1)
        print(f"{name}: {seconds[name]:.0f} s", flush=True)
    if args.write:
        store.write_json(path, {"profile": args.profile, "threads": torch.get_num_threads(), "seconds": seconds,
                                "provenance": store.provenance("cpu")})
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
