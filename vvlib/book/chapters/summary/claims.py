"""The paper's claims, one by one, against the numbers the chapters wrote to results.json.

Every claim compares two runs length by length beyond the training length, by the rule of
`compare` (paired t-test over seeds, p < ALPHA, a verdict fixed in advance and printed on the
summary page).
"""

import json
from dataclasses import dataclass
from pathlib import Path

from ... import chapters as records
from ....experiments.setups import paper
from ....experiments.reports import probed, provisional, report
from ....experiments.reports.answers import device_kind
from .. import BY_TASK
from ....experiments.records.scales import PAPER_TRAINING
from ....experiments.setups.paper_tasks import ARGMAX, NAMES, TASKS, PaperTask
from ....experiments.setups.params import task_value
from ....experiments.setups.variants import ABLATION, BASE, NORMED, PAIR, Ablation, run_name, short_label
from ....compare import Evidence, compare, is_significant, pair_name, beyond_training as lengths_beyond_training

ADAPTIVE_BASE, ADAPTIVE_NORMED = (run_name(v, "adaptive") for v in PAIR)


@dataclass(frozen=True)
class Reading:
    """A claim judged on one pair of runs: the evidence and the scale it rests on."""
    task: str  # the task the runs trained on (the paper's steps for it decide whether the verdict is provisional)
    evidence: Evidence
    n_seeds: int
    steps: int
    device: str  # where the runs trained, as their records describe it ('cpu (x86_64, 2 threads)', 'NVIDIA H100 ...')
    profile: str
    longest: dict  # the two means at the longest length compared: {"N": "16384", "claimed": 22.5, "other": 17.0}

    def size(self) -> tuple:
        """How large a scale is: the most training steps first (too little training can reverse a
        verdict), then the most seeds, then the paper profile's runs, which score every seed on 1,024
        test sequences a length where the book's score it on 128 or 256 (and which their chapter leads
        with): chapter 5's longer training on the CPU has the GPU runs' 100 seeds x 10,000 steps."""
        return self.steps, self.n_seeds, self.profile == "paper"

    def scale(self) -> str:
        return f"{self.n_seeds} seeds x {self.steps:,} steps, {device_kind(self.device)} (profile {self.profile})"

    def shown_verdict(self) -> str:
        """The verdict as the book prints it: provisional below the paper's steps (provisional.py)."""
        return provisional.qualified(self.evidence.verdict(), self.task, self.steps)

    def record(self) -> dict:
        return {"verdict": self.evidence.verdict(), "shown_verdict": self.shown_verdict(), "task": self.task,
                "at_paper_steps": provisional.at_paper_steps(self.task, self.steps),
                "evidence": self.evidence.text(), "n_seeds": self.n_seeds,
                "steps": self.steps, "device": self.device, "profile": self.profile, "scale": self.scale(),
                "longest": self.longest}


@dataclass
class Claim:
    """One of the paper's claims, judged at every scale a chapter tested it; the verdict is the
    largest scale's, the smaller ones are evidence beside it."""
    claim: str
    source: str  # the paper's table or figure
    chapter: str  # the chapter that tests it
    readings: list  # [Reading]
    paper: dict | None  # the paper's numbers at the longest length ({"claimed", "other"} or {"difference"}); None: none
    quantity: str = "accuracy (%)"  # what the means in Reading.longest measure

    def decisive(self) -> Reading:
        return max(self.readings, key=Reading.size)

    def smaller(self) -> list:
        return [r for r in self.readings if r is not self.decisive()]

    def verdict(self) -> str:
        return self.decisive().evidence.verdict()

    def shown_verdict(self) -> str:
        return self.decisive().shown_verdict()

    def record(self) -> dict:
        """The claim in the summary's results.json: the verdict with the scale it rests on, the
        paper's numbers and ours at the longest length, the smaller scales as evidence."""
        return {"chapter": self.chapter, "paper": self.source, **self.decisive().record(),
                "paper_at_longest": self.paper, "quantity": self.quantity,
                "smaller_scales": [r.record() for r in self.smaller()]}


def load(results_dir, chapter: str) -> dict:
    path = Path(results_dir) / chapter / "results.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run `python -m vvlib run {chapter}` (or build the book) first")
    results = json.loads(path.read_text())
    records.check_metrics(chapter, results["metrics"])  # one written by older code fails here, not deep in a claim
    return results


def beyond_training(results: dict) -> list:
    """The test lengths (as str) above the chapter's longest training length."""
    P = results["parameters"]
    return [str(n) for n in lengths_beyond_training(P["eval_lengths"], P["max_len"])]


def scale(results: dict) -> str:
    """'20 seeds x 4000 steps (profile book)' from a chapter's parameters."""
    P = results["parameters"]
    steps = P["steps"]  # a two-task chapter's: one value per task
    steps = " / ".join(f"{v} {task}" for task, v in steps.items()) if isinstance(steps, dict) else f"{steps}"
    return f"{P['n_seeds']} seeds x {steps} steps (profile {P['profile']})"


HEADLINE = "+LN is more accurate than the Baseline"


def _reading(task: str, claimed: dict, other: dict, p_values: dict, lengths, results: dict, n_seeds: int, steps: int,
             device: str = "", profile: str = "", higher_is_better=True) -> Reading:
    """compare(...) at those of `lengths` that `claimed` holds (a scale may test fewer) with the scale of
    the runs of `task`; device and profile default to the chapter's own (its book-scale and longer runs
    trained where the chapter ran)."""
    lengths = [n for n in lengths if n in claimed]
    longest = max(lengths, key=int, default=None)
    return Reading(task, compare(claimed, other, p_values, lengths, higher_is_better), n_seeds, steps,
                   device or results["provenance"]["device"], profile or results["parameters"]["profile"],
                   {"N": longest, "claimed": claimed[longest], "other": other[longest]} if longest else {})


def _paper_scale(results: dict, big: dict, sources: str = "training/paper_scale/") -> tuple:
    """(n_seeds, steps, device, profile) of a chapter's paper-scale metrics `big`: the GPU its training
    records under `sources` name, at the `paper` profile."""
    devices = sorted({s["device"] for k, s in results["provenance"].get("sources", {}).items()
                      if k.startswith(sources)})
    return big["n_seeds"], big["steps"], ", ".join(devices) or big["device_type"], "paper"


def _paper_numbers(table: dict, claimed: str, other: str, n: str) -> dict | None:
    """The paper's two means at length n, from one of its tables; None where it has neither."""
    numbers = {"claimed": paper.column(table, claimed, int(n)), "other": paper.column(table, other, int(n))}
    return numbers if any(v is not None for v in numbers.values()) else None


def _accuracy_claims(task: PaperTask, results) -> list:
    """Chapters 4-5's three comparisons, each read at the book's scale, at the longer training's
    and at the paper's scale (where each ran), with the chapter's paired p-values."""
    P, m = results["parameters"], results["metrics"]
    views = [(m, P["n_seeds"], P["steps"], "", "")]
    if "long" in m:
        views.append((m["long"], P["long_seeds"], m["long"]["steps"], "", ""))
    if "paper_scale" in m:
        views.append((m["paper_scale"], *_paper_scale(results, m["paper_scale"])))
    pairs = [(HEADLINE, BASE, NORMED),
             ("with adaptive θ, +LN is more accurate than without LN", ADAPTIVE_BASE, ADAPTIVE_NORMED),
             ("adaptive θ improves +LN further", NORMED, ADAPTIVE_NORMED)]
    claims = []
    for text, other, claimed in pairs:
        readings = []
        for v, n_seeds, steps, device, profile in views:
            readings.append(_reading(task.name, v["accuracy"][claimed], v["accuracy"][other], v["p_value"][pair_name((other, claimed))],
                                     beyond_training(results), results, n_seeds, steps, device, profile))
        n = max(readings, key=Reading.size).longest["N"]
        claims.append(Claim(f"{task.name}: {text}", task.table, results["chapter"], readings,
                            _paper_numbers(task.accuracy, claimed, other, n) if n else None))
    return claims


def headline(rows: list) -> str:
    """The paper's headline (+LN more accurate than the Baseline) per task: the verdict at the
    largest scale that tests it, then the smaller scales as evidence (a Markdown list)."""
    items = []
    for c in rows:
        if c.claim.endswith(f": {HEADLINE}"):
            task = c.claim.split(":")[0]
            smaller = " ".join(f"{r.shown_verdict().capitalize()} at {r.scale()}." for r in c.smaller())
            items.append(f"- **{task}**: {c.shown_verdict()} at {c.decisive().scale()}."
                         + (f" At smaller scales: {smaller}" if smaller else ""))
    return "\n".join(items)


def ablation_views(ablation: dict) -> list:
    """Chapter 8's comparisons per task and scale: [(task, n_seeds, steps, metrics, scale, device, profile)], the
    book's, the longer training's, then the paper profile's (its +LN keys only once +LN's runs are in)."""
    P, m = ablation["parameters"], ablation["metrics"]
    keys = ("accuracy", "p_value_vs_baseline", "p_value_ln_vs_std", "ln_minus_std")
    views = [(task, P["n_seeds"], task_value(P, "steps", task), {k: m[k][task] for k in keys}, scale(ablation), "", "")
             for task in NAMES]
    views += [(task, task_value(P, "long_seeds", task), v["steps"], v, f"{task_value(P, 'long_seeds', task)} seeds x "
               f"{task_value(P, 'long_steps', task)} steps (profile {P['profile']})", "", "")
              for task, v in m.get("long", {}).items()]
    for task, v in m.get("paper_scale", {}).items():
        n_seeds, steps, device, profile = _paper_scale(ablation, v, f"training/paper_scale/{task}/")
        views.append((task, n_seeds, steps, v, f"{n_seeds} seeds x {steps} steps (profile paper)", device, profile))
    return views


def _ablation_claims(ablation: dict, pair: Ablation = ABLATION) -> list:
    """Tables 3 and 6: the plain norm (+std) against the Baseline on both tasks, and the learned one (+LN) against
    the plain one where the paper claims it ahead (argmax; on dictionary lookup it claims them equal: see
    equivalence())."""
    lengths, views = beyond_training(ablation), ablation_views(ablation)
    longest = int(max(lengths, key=int))
    base, plain, learned = (short_label(v) for v in pair.variants)
    rows = []
    for task in TASKS:
        mine = [(n, steps, m, device, profile) for t, n, steps, m, _, device, profile in views if t == task.name]
        gain = paper.column(task.ablation, pair.plain, longest)  # the paper gives the plain norm's change only
        rows.append(Claim(f"{task.name}: {plain} is more accurate than the {base}", task.ablation_table,
                          ablation["chapter"],
                          [_reading(task.name, m["accuracy"][pair.plain], m["accuracy"][pair.base],
                                    m["p_value_vs_baseline"][pair.plain], lengths, ablation, n, steps, device, profile)
                           for n, steps, m, device, profile in mine],
                          None if gain is None else {"difference": gain}))
        if task.ln_beats_std:  # at the scales that hold +LN (at the paper's, its runs may still be in the GPU queue)
            rows.append(Claim(f"{task.name}: {learned} is more accurate than {plain}", task.ablation_table,
                              ablation["chapter"],
                              [_reading(task.name, m["accuracy"][pair.learned], m["accuracy"][pair.plain],
                                        m["p_value_ln_vs_std"], lengths, ablation, n, steps, device, profile)
                               for n, steps, m, device, profile in mine if "p_value_ln_vs_std" in m],
                              None))
    return rows


def claims(results_dir) -> list:
    """[Claim] for every claim of the paper that a chapter tests."""
    r = {c.name: load(results_dir, c.name) for c in (*(BY_TASK[t.name] for t in TASKS), records.DISTRIBUTION_SHIFT,
                                                     records.DISPERSION, records.ABLATIONS, records.LONGER_TRAINING)}
    rows = []
    for task in TASKS:
        rows += _accuracy_claims(task, r[BY_TASK[task.name].name])
    rows += _ablation_claims(r[records.ABLATIONS.name])
    longer = r[records.LONGER_TRAINING.name]
    for task in TASKS:
        readings = _longer_readings(longer, task.name)
        n = max(readings, key=Reading.size).longest["N"]
        rows.append(Claim(f"{task.name}, trained up to N = {longer['parameters']['max_len']}: +LN beats the Baseline",
                          task.longer_table, longer["chapter"], readings,
                          _paper_numbers(task.longer, NORMED, BASE, n)))
    return rows + _figure_claims(r)


def _longer_readings(longer: dict, task: str) -> list:
    """Chapter 9's +LN against the Baseline on one task: at the chapter's own scale, at its longer
    training's where that ran (its results' long), then at the paper profile's where all of that task's
    runs are committed (its results' paper_scale)."""
    P, m, lengths = longer["parameters"], longer["metrics"], beyond_training(longer)
    readings = [_reading(task, m["accuracy"][task][NORMED], m["accuracy"][task][BASE], m["p_value"][task],
                         lengths, longer, P["n_seeds"], task_value(P, "steps", task))]
    if task in m.get("long", {}):
        v = m["long"][task]
        readings.append(_reading(task, v["accuracy"][NORMED], v["accuracy"][BASE], v["p_value"], lengths,
                                 longer, v["n_seeds"], v["steps"]))
    if task in m.get("paper_scale", {}):
        big = m["paper_scale"][task]
        readings.append(_reading(task, big["accuracy"][NORMED], big["accuracy"][BASE], big["p_value"],
                                 lengths, longer, *_paper_scale(longer, big, f"training/paper_scale/{task}/")))
    return readings


def _probe_views(results: dict) -> list:
    """A probing chapter's (6, 7) scales: [(metrics, n_seeds, steps, device, profile)], its own runs'
    first (device and profile: the chapter's), then chapter 4's longer runs' and the paper profile's where its
    results hold them."""
    P, m = results["parameters"], results["metrics"]
    views = [(m, P["n_seeds"], P["steps"], "", "")]
    if "p_value_relative_global_variance" in m.get("longer", {}):  # both variants' longer runs probed
        views.append((m["longer"], m["longer"]["n_seeds"], m["longer"]["steps"], "", ""))
    if "paper_scale" in m:
        views.append((m["paper_scale"], *_paper_scale(results, m["paper_scale"])))
    return views


def _figure_claims(r: dict) -> list:
    """Figures 3 and 4 (chapters 6 and 7, probing chapter 4's models) at each scale they probed, and
    Figure 3 against Table 1."""
    shift = r[records.DISTRIBUTION_SHIFT.name]
    lengths = beyond_training(shift)
    drifts, variances = [], []
    for m, n_seeds, steps, device, profile in _probe_views(shift):
        drifts.append(_reading(ARGMAX.name, *probed.drift_sides(m), lengths, shift, n_seeds, steps, device, profile))
        if "p_value_relative_global_variance" in m:  # at the paper's scale +LN's probe may still be queued
            ratio = m["relative_global_variance"]
            variances.append(_reading(ARGMAX.name, ratio[NORMED], ratio[BASE],
                                      m["p_value_relative_global_variance"], lengths, shift, n_seeds, steps, device,
                                      profile))
    rows = [Claim(probed.DRIFT_CLAIM, "Figure 3",
                  shift["chapter"], drifts, None, "the seeds' mean drift, absolute, in sd at the training length"),
            Claim("+LN keeps more of the global variance of the readout's input", "Figure 3", shift["chapter"],
                  variances, None, "global variance / its value at the training length")]
    dispersion = r[records.DISPERSION.name]
    spread = [_reading(ARGMAX.name, d["entropy"][NORMED], d["entropy"][BASE],
                       d["p_value_entropy"][pair_name(PAIR)], beyond_training(dispersion),
                       dispersion, n_seeds, steps, device, profile, higher_is_better=False)
              for d, n_seeds, steps, device, profile in _probe_views(dispersion)]
    rows.append(Claim("+LN makes the attention less dispersed (lower entropy)", "Figure 4", dispersion["chapter"],
                      spread, None, "attention entropy, in nats"))
    argmax = r[BY_TASK[ARGMAX.name].name]
    kept = [_reading(ARGMAX.name, m["accuracy"][NORMED], m["accuracy"][BASE],
                     m["p_value"][pair_name(PAIR)], _more_variance_kept(s, lengths), argmax,
                     n_seeds, steps, device, profile)
            for s, m, n_seeds, steps, device, profile in _probed_and_scored(shift, argmax)]
    if kept:
        rows.append(Claim("where +LN keeps more global variance, it is more accurate", "Figure 3, Table 1",
                          argmax["chapter"], kept, None))
    return rows


def _probed_and_scored(shift: dict, argmax: dict) -> list:
    """The scales at which chapter 6 probed the very runs chapter 4 scored: [(chapter 6's metrics, chapter 4's,
    n_seeds, steps, device, profile)], the page's scale where both ran it, and the paper profile's where
    chapter 4's paper-scale results are that profile's own runs (its stream, not the earlier run's)."""
    same = []
    if scale(argmax) == scale(shift):
        P = argmax["parameters"]
        same.append((shift["metrics"], argmax["metrics"], P["n_seeds"], P["steps"], "", ""))
    big, scored = shift["metrics"].get("paper_scale"), argmax["metrics"].get("paper_scale")
    both_probed = big and "p_value_relative_global_variance" in big  # +LN's probe may still be in the GPU queue
    if both_probed and scored and scored.get("draws") == PAPER_TRAINING["draws"]:
        same.append((big, scored, *_paper_scale(argmax, scored)))
    return same


def _more_variance_kept(metrics: dict, lengths) -> list:
    """The lengths of `lengths` at which +LN keeps significantly more global variance than the Baseline."""
    ratio, p = metrics["relative_global_variance"], metrics["p_value_relative_global_variance"]
    return [n for n in lengths if n in ratio[BASE] and is_significant(p.get(n))
            and ratio[NORMED][n] > ratio[BASE][n]]


def _means(numbers: dict | None, quantity: str) -> str:
    """'22.5 vs 17.0' (the claimed run first), '+0.70 (difference only)', or '—' for no numbers."""
    def shown(x):
        return "—" if x is None else f"{x:.1f}" if quantity == Claim.quantity else f"{x:.3g}"
    if not numbers:
        return "—"
    if "difference" in numbers:
        return f"{numbers['difference']:+.2f} (difference only)"
    return f"{shown(numbers['claimed'])} vs {shown(numbers['other'])}"


def claims_table(records: dict) -> str:
    """The summary's claims (the records of its results.json) as compact Markdown tables, a row per
    claim: the paper's numbers and ours at the longest length compared (named in the header when
    every claim shares it), the scale the verdict rests on, and the verdict.  Claims tested at the
    paper's steps come first, in a table of their own; the provisional ones (fewer steps:
    provisional.py) follow in another, each verdict with its share of the paper's steps."""
    lengths = {c["longest"]["N"] for c in records.values() if c["longest"]}
    shared = f" (N = {report.power_of_two(int(lengths.pop()))})" if len(lengths) == 1 else ""
    at_paper = {k: provisional.at_paper_steps(c["task"], c["steps"]) for k, c in records.items()}
    groups = {"Tested at the paper's steps": {k: c for k, c in records.items() if at_paper[k]},
              "Tested at fewer steps than the paper's: provisional verdicts":
                  {k: c for k, c in records.items() if not at_paper[k]}}
    return "\n\n".join(f"**{caption}**\n\n" + _claims_rows(group, shared) for caption, group in groups.items() if group)


def _claims_rows(records: dict, shared: str) -> str:
    lines = [f"| claim | the paper{shared} | ours{shared} | our seeds x steps | verdict |", "|---|---|---|---|---|"]
    for claim, c in records.items():
        at = "" if shared or not c["longest"] else f" at N = {report.power_of_two(int(c['longest']['N']))}"
        unit = "" if c["quantity"] == Claim.quantity else f" ({c['quantity']})"
        note = provisional.note(c["task"], c["steps"])
        cells = [f"{claim} ({c['paper']})", _means(c["paper_at_longest"], c["quantity"]),
                 _means(c["longest"], c["quantity"]) + at + unit,
                 f"{c['n_seeds']} x {c['steps']:,}, {device_kind(c['device'])}",
                 f"**{c['verdict'].split(' (')[0]}**" + (f" ({note})" if note else "")]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)
