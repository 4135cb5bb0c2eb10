"""The chapters' exercises: one record each (its run, the results.json key it reads, the rule that turns
a reference run into the accepted range), the reference runs that compute those ranges, and the check
of a student's run against them.  No expected answer is typed: each comes from results/exercises/NAME.json.
"""

import json
import math
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..errors import ParameterError
from .chapters import CHAPTERS
from ..experiments.storage.store import REPO_ROOT

REFERENCES = REPO_ROOT / "results" / "exercises"
RUNS = REPO_ROOT / "_output" / "exercises"  # the reference runs' own output folders (git-ignored)
# `fresh` runs start from an empty store; the others share one in exercise order, as a student's clone does.
SHARED_STORE = RUNS / "store"


@dataclass(frozen=True)
class Run:
    """One command a student types: a chapter at its ci profile with a few overrides.  `seeds`: more seeds the
    reference reruns it at, for rules that read the spread between seeds."""
    out: str  # the student's --output folder, ex/<out>
    chapter: str  # its number, e.g. "04"
    overrides: tuple = ()  # (name, text) pairs as typed after -p
    seeds: tuple = ()
    fresh: bool = False  # its reference run starts from an empty results store

    @property
    def chapter_name(self) -> str:
        return next(name for name in CHAPTERS if name.startswith(f"{self.chapter}_"))

    def argv(self, seed=None, output=None) -> list:
        pairs = [*self.overrides, *((("seed", str(seed)),) if seed is not None else ())]
        return ["python", "-m", "vvlib", "run", self.chapter_name, "--profile", "ci",
                *[x for name, text in pairs for x in ("-p", name, text)], "--output", output or f"ex/{self.out}"]

    def command(self) -> str:
        return shlex.join(self.argv())

    def shown(self) -> str:
        """The command as a page shows it: each -p pair on a line of its own, so it fits the text column."""
        argv = self.argv()
        head, pairs, output = argv[:7], argv[7:-2], argv[-2:]
        lines = [head] + [pairs[i:i + 3] for i in range(0, len(pairs), 3)] + [output]
        return " \\\n    ".join(shlex.join(line) for line in lines)


# Rules: each turns the reference run(s) into (low, high) and says why in words.  `value(key)` reads the
# seed-0 run; `values(key)` the same key in every seed's run.
@dataclass(frozen=True)
class Bound:
    """A range the theory fixes; the reference run only has to fall in it."""
    low: float
    high: float
    why: str

    def accepted(self, value, values):
        return self.low, self.high

    def words(self):
        return self.why


@dataclass(frozen=True)
class SeedError:
    """The reference value plus or minus k standard errors over the run's own seeds (read at `sem_key`), and at
    least `floor`, so a run whose seeds all agree still has room for another machine's rounding."""
    sem_key: str
    k: float = 3.0
    floor: float = 1.0
    limits: tuple = (-math.inf, math.inf)  # what the value can be at all, e.g. an accuracy's 0 to 100

    def accepted(self, value, values):
        half = max(self.k * value(self.sem_key), self.floor)
        return max(value(None) - half, self.limits[0]), min(value(None) + half, self.limits[1])

    def words(self):
        within = f", within {self.limits[0]:g} to {self.limits[1]:g}" if math.isfinite(self.limits[0]) else ""
        return (f"the reference value plus or minus {self.k:g} standard errors over its seeds "
                f"(at least {self.floor:g}){within}")


@dataclass(frozen=True)
class OwnInterval:
    """The run's own interval (a paired 95% interval or a bootstrap one), read at `low_key` and `high_key`."""
    low_key: str
    high_key: str
    what: str

    def accepted(self, value, values):
        return value(self.low_key), value(self.high_key)

    def words(self):
        return f"the reference run's own {self.what}"


@dataclass(frozen=True)
class Reseeded:
    """The values at the run's seeds, widened by half their spread on each side: another seed (or machine)
    should land inside."""

    def accepted(self, value, values):
        found = values(None)
        spread = max(found) - min(found)
        return min(found) - spread / 2, max(found) + spread / 2

    def words(self):
        return "the values of the reference command at seeds 0, 1 and 2, widened by half their spread on each side"


@dataclass(frozen=True)
class Exercise:
    name: str  # "4.1": chapter 4's first
    run: Run
    key: str  # a path in results.json's metrics, keys separated by '/'
    rule: object

    @property
    def label(self) -> str:
        return "ex-" + self.name.replace(".", "-")


def _every_task(chapter: str, name: str, value) -> tuple:
    """A per-task setting of chapters 8-11 (a dict, one value per task), the same for every task, as typed."""
    tasks = next(c for n, c in CHAPTERS.items() if n.startswith(f"{chapter}_")).parameters()[name].default
    return name, json.dumps(dict.fromkeys(tasks, value))


SEEDS = (1, 2)
PERCENT = (0.0, 100.0)
_1a = Run("1a", "01", fresh=True)
_1b = Run("1b", "01", (("logit_scale", "4.0"),), SEEDS, fresh=True)
_2 = Run("2", "02", (("stickiness", "0.99"),), SEEDS, fresh=True)
_3 = Run("3", "03", (("models", '["bundled"]'),), SEEDS, fresh=True)
_4 = Run("4", "04", (("n_classes", "2"), ("steps", "500")), fresh=True)
_5 = Run("5", "05", (("n_seeds", "2"), ("steps", "200")), fresh=True)
_6 = Run("6", "06", (("n_seeds", "2"), ("steps", "200")))
_7 = Run("7", "07", (("n_seeds", "2"), ("steps", "200")))  # the same models as 6: a store that holds them reuses them
_8 = Run("8", "08", (("n_seeds", "2"), _every_task("08", "steps", 200)))
_9 = Run("9", "09", (("curriculum_fraction", "0.5"),))
_10 = Run("10", "10", (("n_seeds", "2"), _every_task("10", "steps", 200)))
_11 = Run("11", "11", ())

EXERCISES = {e.name: e for e in (
    Exercise("1.1", _1a, "variance_slope",
             Bound(-1.1, -0.9, "Proposition 1: the variance falls like 1/N, a slope of -1 on log-log axes "
                               "(within 0.1: the fit has three lengths)")),
    Exercise("1.2", _1b, "variance_slope", Reseeded()),
    Exercise("2.1", _2, "loglog_slope",
             Bound(-0.55, -0.45, "the N^-1/2 law for the standard deviation, a slope of -1/2 (within 0.05)")),
    Exercise("2.2", _2, "broken_assumptions/Markov tokens (stickiness 0.99)/slope (all N)", Reseeded()),
    Exercise("3.1", _3, "models/all-MiniLM-L6-v2/slope/random_no_pe",
             OwnInterval("models/all-MiniLM-L6-v2/slope_interval/random_no_pe/0",
                         "models/all-MiniLM-L6-v2/slope_interval/random_no_pe/1", "95% interval for the slope")),
    Exercise("3.2", _3, "models/all-MiniLM-L6-v2/layer_slope/random_no_pe/5", Reseeded()),
    Exercise("4.1", _4, "accuracy/baseline/16384", SeedError("accuracy_sem/baseline/16384", limits=PERCENT)),
    Exercise("4.2", _4, "accuracy/layernorm/16", SeedError("accuracy_sem/layernorm/16", limits=PERCENT)),
    Exercise("5.1", _5, "accuracy/baseline/1024", SeedError("accuracy_sem/baseline/1024", limits=PERCENT)),
    Exercise("5.2", _5, "accuracy/adaptive_baseline/1024",
             SeedError("accuracy_sem/adaptive_baseline/1024", limits=PERCENT)),
    Exercise("6.1", _6, "component_std_slope/baseline",
             SeedError("component_std_slope_sem/baseline", floor=0.02)),
    Exercise("6.2", _6, "relative_global_variance/baseline/16384",
             Bound(0.0, 1.0, "a variance that shrinks with N: below its value at N = 16, which is 1 by definition")),
    Exercise("7.1", _7, "entropy/baseline/16384",
             Bound(0.0, math.log(16384), "the entropy of a distribution over 16384 items is at most log 16384")),
    Exercise("7.2", _7, "top1_weight/baseline/16384",
             Bound(1 / 16384, 1.0, "the largest of 16384 weights summing to 1 is at least 1/16384")),
    Exercise("8.1", _8, "ln_minus_std/argmax/1024/diff",
             OwnInterval("ln_minus_std/argmax/1024/low", "ln_minus_std/argmax/1024/high",
                         "paired 95% interval over seeds")),
    Exercise("8.2", _8, "ln_minus_std/dictionary/256/diff",
             OwnInterval("ln_minus_std/dictionary/256/low", "ln_minus_std/dictionary/256/high",
                         "paired 95% interval over seeds")),
    Exercise("9.1", _9, "accuracy/argmax/layernorm/1024",
             SeedError("accuracy_sem/argmax/layernorm/1024", limits=PERCENT)),
    Exercise("9.2", _9, "accuracy/argmax/baseline/1024",
             SeedError("accuracy_sem/argmax/baseline/1024", limits=PERCENT)),
    Exercise("10.1", _10, "mc_slope/rescale",
             Bound(-0.1, 0.1, "an output rescaled by its own spread keeps its variance: a slope near 0")),
    Exercise("10.2", _10, "accuracy/argmax/log_n/1024", SeedError("accuracy_sem/argmax/log_n/1024", limits=PERCENT)),
    Exercise("11.1", _11, "rows/1/difference/256/diff",
             OwnInterval("rows/1/difference/256/low", "rows/1/difference/256/high",
                         "paired 95% interval over seeds")),
    Exercise("11.2", _11, "rows/0/difference/256/diff",
             OwnInterval("rows/0/difference/256/low", "rows/0/difference/256/high",
                         "paired 95% interval over seeds")),
)}


def get(name: str) -> Exercise:
    if name not in EXERCISES:
        raise ParameterError(f"exercise: expected one of {', '.join(EXERCISES)}, got {name!r}")
    return EXERCISES[name]


def lookup(metrics, key: str | None, where: str = "results.json"):
    """The value at a '/'-separated key; a list takes an index.  ParameterError names the keys there if absent."""
    value = metrics
    for i, part in enumerate(key.split("/") if key else []):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            here = "/".join(key.split("/")[:i]) or "metrics"
            keys = ", ".join(value) if isinstance(value, dict) else f"0..{len(value) - 1}" if isinstance(value, list) \
                else "none (a value)"
            raise ParameterError(f"key: {part!r} is not in {here} of {where}; keys there: {keys}")
    return value


def metrics_of(folder) -> dict:
    path = Path(folder) / "results.json"
    if not path.exists():
        raise ParameterError(f"output: no results.json in {folder}; run the command with --output {folder} first")
    return json.loads(path.read_text())["metrics"]


def reference(name: str) -> dict:
    path = REFERENCES / f"{name}.json"
    if not path.exists():
        raise ParameterError(f"exercise {name}: no reference in {path.relative_to(REPO_ROOT)}; "
                             f"run python -m vvlib exercises --compute")
    return json.loads(path.read_text())


# --- reference runs ---------------------------------------------------------------------------------------------

def _run_folder(run: Run, seed=None) -> Path:
    return RUNS / (run.out if seed is None else f"{run.out}-seed{seed}")


def _execute(run: Run, seed=None) -> dict:
    """Run the command as a student would, in an empty results store or the shared one (Run.fresh), once: a
    folder holding run.json for the same command is reused."""
    folder = _run_folder(run, seed)
    argv = run.argv(seed, str(folder))
    record = folder / "run.json"
    if record.exists() and json.loads(record.read_text())["argv"] == argv:
        return json.loads(record.read_text())
    with tempfile.TemporaryDirectory(prefix="vvlib-exercise-store-") as empty:
        store = empty if run.fresh else str(SHARED_STORE)
        own_store = ["-p", "store_dir", store] if "store_dir" in CHAPTERS[run.chapter_name].parameters() else []
        started = time.perf_counter()
        subprocess.run([sys.executable, *argv[1:-2], *own_store, *argv[-2:]], cwd=REPO_ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        seconds = round(time.perf_counter() - started, 1)
    done = {"argv": argv, "seconds": seconds, "store": "empty" if run.fresh else "shared with the exercises before"}
    record.write_text(json.dumps(done, indent=1))
    return done


def compute(names=None, progress=print) -> list:
    """Each chosen exercise's reference: its runs (skipped where done), then its range, written to
    results/exercises/NAME.json.  Returns the names written."""
    chosen = [get(n) for n in names] if names else list(EXERCISES.values())
    written = []
    for i, exercise in enumerate(chosen, 1):
        progress(f"[{i}/{len(chosen)}] exercise {exercise.name}: {exercise.run.command()}", flush=True)
        try:
            written.append(_reference(exercise))
        except (subprocess.CalledProcessError, ValueError) as exc:  # one failure leaves the others to run
            progress(f"  exercise {exercise.name} failed: {exc}", flush=True)
    return written


def _reference(exercise: Exercise) -> str:
    run = exercise.run
    main = _execute(run)
    seeds = [_execute(run, s) and s for s in run.seeds] if isinstance(exercise.rule, Reseeded) else []
    folders = [_run_folder(run)] + [_run_folder(run, s) for s in seeds]
    runs = [metrics_of(f) for f in folders]
    value = lambda key: lookup(runs[0], key or exercise.key)  # noqa: E731
    values = lambda key: [lookup(m, key or exercise.key) for m in runs]  # noqa: E731
    low, high = (float(x) for x in exercise.rule.accepted(value, values))
    ref = value(None)
    if not low <= ref <= high:
        raise ValueError(f"exercise {exercise.name}: its reference {ref} is outside its own range [{low}, {high}]")
    results = json.loads((folders[0] / "results.json").read_text())
    record = {"exercise": exercise.name, "chapter": run.chapter_name, "command": run.command(),
              "overrides": dict(run.overrides), "key": exercise.key, "reference": ref,
              "range": [low, high], "rule": exercise.rule.words(), "seconds": main["seconds"],
              "store": main.get("store", "empty"),
              "seeds": [0, *seeds], "values": values(None) if seeds else [ref],
              "provenance": {**results["provenance"], "machine": platform.machine(),
                             "computed": datetime.now(timezone.utc).isoformat(timespec="seconds")}}
    REFERENCES.mkdir(parents=True, exist_ok=True)
    (REFERENCES / f"{exercise.name}.json").write_text(json.dumps(record, indent=1) + "\n")
    return exercise.name


# --- checking a run, and the solution a page shows ----------------------------------------------------------------

def check(name: str, folder) -> tuple[bool, str]:
    """(in range?, what to print) for the student's run in `folder`."""
    exercise, ref = get(name), reference(name)
    value = lookup(metrics_of(folder), exercise.key, f"{folder}/results.json")
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ParameterError(f"key: {exercise.key} holds {value!r}, not a number")
    low, high = ref["range"]
    ok = low <= value <= high
    return ok, (f"exercise {name}: {exercise.key} = {value:.4g} is {'in' if ok else 'outside'} the expected range "
                f"[{low:.4g}, {high:.4g}]\n  why this range: {ref['rule']}")


def _number(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"


def _committed(name: str):
    """The reference, or None where it is not computed yet (a chapter still runs; its page says so)."""
    try:
        return reference(name)
    except ParameterError:
        return None


def task(name: str):
    """The command an exercise runs, how long its reference took, and how to check: Markdown for its page."""
    from IPython.display import Markdown

    from .page import duration_words  # the pages' rule; imported here, so the checker stays light

    exercise, ref = get(name), _committed(name)
    took = f"Its reference took {duration_words(ref['seconds'])} on {ref['provenance']['device']}. " if ref else ""
    return Markdown(f"```bash\n{exercise.run.shown()}\n```\n\n{took}Check: `python -m vvlib check {name} "
                    f"ex/{exercise.run.out}` (it reads `{exercise.key}`).")


def solution(name: str):
    """The expected answer as Markdown, read from the committed reference (a solution cell shows it)."""
    from IPython.display import Markdown

    ref = _committed(name)
    if ref is None:
        return Markdown(f"*No reference run yet: `python -m vvlib exercises --compute {name}` computes it.*")
    low, high = ref["range"]
    return Markdown(f"Expected: `{ref['key']}` between **{_number(low)}** and **{_number(high)}**, "
                    f"{ref['rule']}. The reference run gave {_number(ref['reference'])}.")
