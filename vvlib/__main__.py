"""Command line: python -m vvlib {list, run, book, paper, metric, exercises, check}.

    python -m vvlib list
    python -m vvlib run 04_argmax_retrieval --profile ci -p n_seeds 2 --output out/
    python -m vvlib book [--profile book] [--stored-only]
    python -m vvlib paper [--chapters 04 05] [--plan] [-p device cuda]
    python -m vvlib paper --for-minutes 8 --pack DIR -p device cuda  # scripts/gpu_session.sh
    python -m vvlib metric _output/04_argmax_retrieval accuracy/layernorm/1024
    python -m vvlib exercises [--compute] [4.1 ...]
    python -m vvlib check 4.1 ex/4

Bad input (unknown chapter, parameter or profile; a value of the wrong type or range)
prints one line naming the accepted values and exits with status 2, writing nothing.
"""

import argparse
import os
import sys

from .book.runner import parse_overrides, resolved, run_chapter
from .errors import number_at_least, positive_number
from .book.chapters import CHAPTERS, get_chapter
from .experiments.setups.params import DEFAULT_PROFILE, ParameterError


def _list(args):
    if args.chapter is None:
        for chapter in CHAPTERS.values():
            print(f"{chapter.name}: {chapter.title}")
            print(f"  profiles: {', '.join(chapter.profile_names())}")
            for p in chapter.parameters().values():
                print(f"  {p.name}: {p.type} = {p.default!r}  # {p.help}")
        return
    _list_profile(get_chapter(args.chapter), args.profile)


def _list_profile(chapter, profile: str):
    """One chapter's parameters as they run at `profile`, flat, each with where its value comes from."""
    if profile not in chapter.profile_names():
        raise ParameterError(f"profile: expected one of {', '.join(chapter.profile_names())} for {chapter.name}, "
                             f"got {profile!r}")
    P, set_by_profile = resolved(chapter.name, profile), chapter.profiles.get(profile, {})
    print(f"{chapter.name} at profile {profile}:")
    for name in chapter.parameters():
        if name != "profile":
            print(f"  {name} = {P[name]!r}  ({f'profile {profile}' if name in set_by_profile else 'notebook cell'})")
    per_task = [name for name, param in chapter.parameters().items() if param.type == "dict"]
    if per_task:  # chapters 8-11 train both tasks: a setting that differs between them is a dict
        task, value = next(iter(P[per_task[0]].items()))
        print(f"  (one value per task: {', '.join(per_task)}; e.g. python -m vvlib run {chapter.name} -p "
              f"{per_task[0]} '{{\"{task}\": {value}}}' changes {task}'s alone, -p {per_task[0]} {value} every task's)")


def _run(args):
    chapter = get_chapter(args.chapter)
    overrides = parse_overrides(chapter, args.param or [])
    out = run_chapter(chapter.name, args.profile, overrides, args.output)
    print(f"executed notebook: {out}")


def _book(args):
    from .book.build import build_book

    print(f"book: {build_book(args.profile, args.stored_only)}")


def _paper(args):
    from .book.gpu_queue.paper_run import paper_chapters, run_paper

    if args.pack and args.for_minutes is None:
        raise ParameterError("--pack: only with --for-minutes (it copies the units that command finishes)")
    if args.then_minutes and args.for_minutes is None:
        raise ParameterError("--then-minutes: only with --for-minutes (the minutes of the command after that one)")
    if args.for_minutes is not None and (args.plan or args.unit is not None):
        raise ParameterError("--for-minutes: runs the next units itself; give it without --plan and --unit")
    for flag, minutes, (ok, accepted) in (("--for-minutes", args.for_minutes, positive_number()),
                                          ("--then-minutes", args.then_minutes, number_at_least(0))):
        if minutes is not None and not ok(minutes):
            raise ParameterError(f"{flag}: expected {accepted.replace('number', 'number of minutes')}, got {minutes}")
    names = paper_chapters(args.chapters)
    pairs = args.param or []
    parameters = {}
    for name in names:  # each chapter types and checks the values itself
        parameters.update(parse_overrides(get_chapter(name), pairs))
    if args.for_minutes is not None:
        from .book.gpu_queue.paper_queue import run_queue

        ran = run_queue(names, parameters, args.for_minutes, args.pack, profile=args.profile,
                        then_minutes=args.then_minutes)
        failed = [line["unit"] for line in ran if "error" in line]
        if failed:
            print(f"units {', '.join(map(str, failed))} failed (queue.json has their errors)", file=sys.stderr)
        return 1 if failed else 0
    every = 5.0 if sys.stderr.isatty() else 60.0  # a log file gets a line a minute, a terminal a lively bar
    run_paper(names, parameters, args.output, dry_run=args.plan, every=every, profile=args.profile, unit=args.unit,
              speeds_of=args.speeds_of)


def _metric(args):
    """Print one value of a results.json: exercises are checked against these."""
    import json

    from .book.exercises import lookup, metrics_of

    value = lookup(metrics_of(args.output), args.key)
    print(json.dumps(value, indent=1) if isinstance(value, (dict, list)) else value)


def _exercises(args):
    from .book import exercises

    if not args.compute:
        for exercise in exercises.EXERCISES.values():
            print(f"{exercise.name}: {exercise.run.command()}  # reads {exercise.key}")
        return
    written = exercises.compute(args.names or None)
    print(f"{len(written)} reference(s) in {exercises.REFERENCES.relative_to(exercises.REPO_ROOT)}")


def _check(args):
    from .book import exercises

    ok, text = exercises.check(args.exercise, args.output)
    print(text)
    return 0 if ok else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vvlib", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list", help="list chapters with their profiles and parameters, or one chapter's "
                             "values at a profile")
    listing.add_argument("chapter", nargs="?", help="only this chapter: its values at --profile, flat")
    listing.add_argument("--profile", default=DEFAULT_PROFILE, help="with a chapter: the profile to resolve")
    listing.set_defaults(func=_list)
    run = sub.add_parser("run", help="execute one chapter through papermill")
    run.add_argument("chapter", help="chapter name, e.g. 04_argmax_retrieval")
    run.add_argument("--profile", default=DEFAULT_PROFILE, help="named parameter set (default: the notebook's values)")
    run.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                     help="set a parameter; wins over the profile")
    run.add_argument("--output", help="directory for the executed notebook and results.json")
    run.set_defaults(func=_run)
    book = sub.add_parser("book", help="run every chapter and build the HTML book into _build/html")
    book.add_argument("--profile", default=DEFAULT_PROFILE,
                      help="profile for every chapter that has it (the others run at their default); "
                           "'book' is the published book, from the results committed in results/book")
    book.add_argument("--stored-only", action="store_true",
                      help="fail instead of training or evaluating anything missing from the results store")
    book.set_defaults(func=_book)
    paper = sub.add_parser("paper", help="train and evaluate the chapters with a paper profile (4-10) at the "
                           "paper's scale, resumably, with a progress bar and an ETA; commits nothing")
    paper.add_argument("--chapters", nargs="+", metavar="CHAPTER", help="only these (names or numbers, e.g. 04 05)")
    paper.add_argument("--plan", action="store_true", help="only list what each chapter computes and what is stored, "
                                                            "and the units it is cut into")
    paper.add_argument("--unit", type=int, metavar="K", help="compute only unit K of the plan (a training run with "
                       "everything that reads its weights; sized for one GPU command); run again to resume")
    paper.add_argument("--speeds-of", choices=("cpu", "cuda"), help="with --plan: estimate the units at the speeds "
                       "measured on this kind of device (committed records) instead of the one in use")
    paper.add_argument("--for-minutes", type=float, metavar="M",
                       help="compute the plan's next units in order, each whose estimate fits in what is left of M "
                       "minutes, passing over one that does not (a lent GPU's command)")
    paper.add_argument("--then-minutes", type=float, default=0.0, metavar="N",
                       help="with --for-minutes: the session's next command on this machine will have N minutes "
                       "(default 0: none follows); a unit may then start that needs them too, stopping with a "
                       "checkpoint at the end of M for that command to resume")
    paper.add_argument("--pack", metavar="DIR", help="with --for-minutes: copy each finished unit's result files "
                       "(never weights) to DIR/<store folder>/, with queue.json (what ran, estimated and measured; "
                       "what was passed over)")
    paper.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                       help="set a parameter in every chosen chapter, e.g. -p device cuda, -p store_dir DIR, "
                            "-p seed_group 25 (under torchrun the ranks share seed groups)")
    paper.add_argument("--output", help="executed notebooks and results.json go to OUTPUT/<chapter>/ "
                                        "(default: _output/<profile>)")
    paper.add_argument("--profile", default="paper", help="another profile of these chapters, e.g. ci to try the "
                                                           "command in minutes (default: paper)")
    paper.set_defaults(func=_paper)
    metric = sub.add_parser("metric", help="print a value from a chapter's results.json (to check an exercise)")
    metric.add_argument("output", help="the chapter's output directory, e.g. _output/02_monte_carlo")
    metric.add_argument("key", nargs="?", default="", help="path of keys separated by '/', e.g. accuracy/layernorm/1024")
    metric.set_defaults(func=_metric)
    ex = sub.add_parser("exercises", help="list the chapters' exercises, or compute their reference runs and ranges")
    ex.add_argument("names", nargs="*", help="only these exercises, e.g. 4.1 4.2")
    ex.add_argument("--compute", action="store_true", help="run each exercise's command at the ci profile (a run "
                    "already done is reused) and write its range to results/exercises/NAME.json")
    ex.set_defaults(func=_exercises)
    chk = sub.add_parser("check", help="is a run's value in an exercise's expected range? exit 0 if so, 1 if not")
    chk.add_argument("exercise", help="the exercise's name, e.g. 4.1")
    chk.add_argument("output", help="the run's --output folder, e.g. ex/4")
    chk.set_defaults(func=_check)
    args = parser.parse_args(argv)
    try:
        status = args.func(args)
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `python -m vvlib list | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit flush cannot fail again
        return 0
    return status or 0  # 1 where the queue ran a unit that failed


if __name__ == "__main__":
    sys.exit(main())
