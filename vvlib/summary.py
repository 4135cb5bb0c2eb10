"""The paper's claims, one by one, against the numbers the chapters wrote to results.json.

Every claim compares two runs length by length beyond the training length.  A difference
counts as evidence when the paired t-test over seeds gives p < ALPHA.  The verdict rule
is fixed in advance (verdict below) and printed on the summary page.
"""

import json
from dataclasses import dataclass
from pathlib import Path

ALPHA = 0.05

SUPPORTED, CONTRADICTED, MIXED, UNCLEAR = ("supported", "contradicted", "mixed",
                                           "not shown (too few significant differences)")


@dataclass
class Evidence:
    """How often `claimed` beat `other` at the lengths compared."""
    lengths: int
    ahead: int  # lengths where the claimed run is better
    ahead_significant: int
    behind: int
    behind_significant: int

    def verdict(self) -> str:
        """Supported: significantly ahead at half the lengths or more and never significantly
        behind; contradicted: the mirror image; mixed: significant both ways."""
        if self.ahead_significant and self.behind_significant:
            return MIXED
        if 2 * self.ahead_significant >= self.lengths and self.ahead_significant:
            return SUPPORTED
        if 2 * self.behind_significant >= self.lengths and self.behind_significant:
            return CONTRADICTED
        return UNCLEAR

    def text(self) -> str:
        return (f"ahead at {self.ahead} of {self.lengths} lengths ({self.ahead_significant} with p < {ALPHA}), "
                f"behind at {self.behind} ({self.behind_significant} with p < {ALPHA})")


def compare(claimed: dict, other: dict, p_values: dict, lengths, higher_is_better=True, alpha=ALPHA) -> Evidence:
    """claimed, other: {N: mean}; p_values: {N: p or None}; lengths: the N (as str) to compare."""
    sign = 1 if higher_is_better else -1
    diff = {n: sign * (claimed[n] - other[n]) for n in lengths}
    significant = {n for n in lengths if p_values.get(n) is not None and p_values[n] < alpha}
    ahead = [n for n in lengths if diff[n] > 0]
    behind = [n for n in lengths if diff[n] < 0]
    return Evidence(len(lengths), len(ahead), len(significant.intersection(ahead)),
                    len(behind), len(significant.intersection(behind)))


def load(results_dir, chapter: str) -> dict:
    path = Path(results_dir) / chapter / "results.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run `python -m vvlib run {chapter}` (or build the book) first")
    return json.loads(path.read_text())


def beyond_training(results: dict) -> list:
    """The test lengths (as str) above the chapter's longest training length."""
    P = results["parameters"]
    return [str(n) for n in P["eval_lengths"] if n > P["max_train_len"]]


def scale(results: dict) -> str:
    """'20 seeds x 4000 steps (profile book)' from a chapter's parameters."""
    P = results["parameters"]
    steps = [f"{P[k]} {k.removesuffix('_steps')}" for k in ("argmax_steps", "dictionary_steps") if k in P]
    steps = f"{P['steps']}" if "steps" in P else " / ".join(steps)
    return f"{P['n_seeds']} seeds x {steps} steps (profile {P['profile']})"


def _accuracy_claim(claim, results, table, other, claimed):
    """Chapters 4-5: run `claimed` against run `other`, with the chapter's paired p-values."""
    m = results["metrics"]
    return claim, results, table, compare(m["accuracy"][claimed], m["accuracy"][other],
                                          m["p_value"][f"{other}_vs_{claimed}"], beyond_training(results))


def claims(results_dir) -> list:
    """[(claim, results of the chapter that tests it, paper table, Evidence)] for every claim."""
    r = {c: load(results_dir, c) for c in ("04_argmax_retrieval", "05_dictionary_lookup", "06_distribution_shift",
                                           "07_dispersion", "08_ablations", "09_longer_training")}
    rows = []
    for task, chapter, table in (("argmax", "04_argmax_retrieval", "Table 1"),
                                 ("dictionary", "05_dictionary_lookup", "Table 2")):
        res = r[chapter]
        rows += [
            _accuracy_claim(f"{task}: +LN is more accurate than the Baseline", res, table, "baseline", "layernorm"),
            _accuracy_claim(f"{task}: with adaptive θ, +LN is more accurate than without LN", res, table,
                            "adaptive_baseline", "adaptive_layernorm"),
            _accuracy_claim(f"{task}: adaptive θ improves +LN further", res, table, "layernorm",
                            "adaptive_layernorm"),
        ]
    ablation = r["08_ablations"]
    for task, table in (("argmax", "Table 3"), ("dictionary", "Table 6")):
        m = ablation["metrics"]
        rows.append((f"{task}: +LN is more accurate than +std", ablation, table,
                     compare(m["accuracy"][task]["layernorm"], m["accuracy"][task]["standardize"],
                             m["p_value_ln_vs_std"][task], beyond_training(ablation))))
    longer = r["09_longer_training"]
    for task, table in (("argmax", "Table 4"), ("dictionary", "Table 5")):
        m = longer["metrics"]
        rows.append((f"{task}, trained up to N = {longer['parameters']['max_train_len']}: +LN beats the Baseline",
                     longer, table, compare(m["accuracy"][task]["layernorm"], m["accuracy"][task]["baseline"],
                                            m["p_value"][task], beyond_training(longer))))
    shift = r["06_distribution_shift"]["metrics"]
    lengths = beyond_training(r["06_distribution_shift"])
    rows.append(("+LN keeps more of the global variance of the readout's input", r["06_distribution_shift"],
                 "Figure 3", compare(shift["relative_global_variance"]["layernorm"],
                                     shift["relative_global_variance"]["baseline"],
                                     shift["p_value_relative_global_variance"], lengths)))
    dispersion = r["07_dispersion"]["metrics"]
    rows.append(("+LN makes the attention less dispersed (lower entropy)", r["07_dispersion"], "Figure 4",
                 compare(dispersion["entropy"]["layernorm"], dispersion["entropy"]["baseline"],
                         dispersion["p_value_entropy"]["baseline_vs_layernorm"], beyond_training(r["07_dispersion"]),
                         higher_is_better=False)))
    return rows


def slope_claim(results_dir) -> tuple:
    """Fixed components still shrink with LN: the +LN models' mean log-log slope of a
    component's std, its standard error over seeds, and whether it is 2 s.e. below 0."""
    m = load(results_dir, "06_distribution_shift")["metrics"]
    slope, sem = m["component_std_slope"]["layernorm"], m["component_std_slope_sem"]["layernorm"]
    return slope, sem, SUPPORTED if slope + 2 * sem < 0 else UNCLEAR


def compute_table(results_dir, chapters) -> list:
    """Per chapter: its profile, scale, the training time of the models it used (from the
    training records it cites) and its own run time, for the summary's scale table."""
    rows = []
    for chapter in chapters:
        res = load(results_dir, chapter)
        sources = res["provenance"].get("sources", {})
        training = sum(s.get("wall_time_s") or 0 for s in sources.values())
        rows.append({"chapter": chapter, "scale": scale(res), "training runs": len(sources),
                     "training time (min)": round(training / 60, 1),
                     "page run time (min)": round((res["provenance"]["wall_time_s"] or 0) / 60, 1),
                     "device": sorted({s["device"] for s in sources.values()} or {res["provenance"]["device"]})})
    return rows
