"""The probe tables of chapters 6, 7 and 10: what each probes, with which settings, and the
store entries its tables land in, written once for the chapter that shows them and the plan
(plan.py) that counts them.

A probe runs trained models over test sequences and keeps only tables (runs.cached_tables), so
once its entries are stored the weights are no longer needed.  Every table has a row per
variant (and seed), computed from that variant's weights alone, so a probe is stored as one
part per trained run: a part needs the weights of one run only, and the paper profile's units
(units.py) stay one run each.  A chapter reads the parts joined, in its variants' order.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from ... import beyond, probing
from ..storage import runs, store
from . import variants
from .paper_tasks import ARGMAX

PAIR = ("baseline", "layernorm")  # chapters 6 and 7 probe chapter 4's two variants
TEMPERATURES = ("fixed", "adaptive")  # chapter 7 probes each under both


@dataclass(frozen=True)
class ProbePart:
    """One trained run's share of a probe: its tables, made from that run's weights alone."""
    name: str  # the store folder's prefix
    variant: str
    spec: dict
    compute: Callable[[], dict]  # {table name: DataFrame}, the rows of this run only
    run: runs.TrainedRun
    items: int  # seeds x sequences x items probed, for the plan's progress bar

    def folder(self, store_dir) -> Path:
        return Path(store_dir) / f"{self.name}-{store.spec_hash(self.spec)}"

    def tables(self, store_dir, device) -> dict:
        """The stored tables, or computed (loading or training the run) and stored."""
        return runs.cached_tables(store_dir, self.name, self.spec, self.compute, device)


@dataclass(frozen=True)
class Probe:
    name: str
    parts: tuple  # ProbePart, one per variant, in the order the tables list them

    @property
    def models(self) -> dict:
        """{variant: runs.TrainedRun} probed."""
        return {part.variant: part.run for part in self.parts}

    def tables(self, store_dir, device) -> dict:
        """{table name: DataFrame}: every part's rows, joined in the parts' order."""
        each = [part.tables(store_dir, device) for part in self.parts]
        return {t: pd.concat([tables[t] for tables in each], ignore_index=True) for t in each[0]}


def row_labels(variant: str) -> set:
    """The labels a variant's rows carry in the probe tables: its own name, its slopes before the
    norm (chapter 6) and its runs under each temperature (chapter 7)."""
    return {variant, variant + probing.BEFORE_NORM, *(variants.run_name(variant, t) for t in TEMPERATURES)}


def _parts(name: str, models: dict, cfg, choices: dict, tables_of: Callable, passes: int = 1) -> Probe:
    """A probe of `models` {variant: TrainedRun}: tables_of(variant, run) makes one part's tables."""
    def part(variant, run):
        items = run.train_cfg.n_seeds * cfg.n_sequences * sum(cfg.lengths) * passes
        return ProbePart(name, variant, probing.probe_spec({variant: run}, cfg, **choices),
                         lambda: tables_of(variant, run), run, items)
    return Probe(name, tuple(part(v, run) for v, run in models.items()))


def distribution(P, device) -> Probe:
    """Chapter 6: the attention output's components and global statistics (Figures 2-3)."""
    models = variants.trained_models(P, variants.task_config(P, ARGMAX.name), PAIR, device)
    cfg = variants.eval_config(P, n_sequences=P.n_probe_sequences)

    def tables_of(variant, run):
        probed = {variant: probing.probe(run.model_cfg, run.weights, cfg, device)}
        return probing.distribution_tables(probed, P.components, P.shown_seed, P.distribution_lengths, P.max_len,
                                           P.histogram_bins)

    choices = dict(components=P.components, shown_seed=P.shown_seed, distribution_lengths=P.distribution_lengths,
                   reference=P.max_len, histogram_bins=P.histogram_bins)
    return _parts("probe-distribution", models, cfg, choices, tables_of)


def dispersion(P, device) -> Probe:
    """Chapter 7: the largest attention weights and the attention's entropy (Figure 4)."""
    models = variants.trained_models(P, variants.task_config(P, ARGMAX.name), PAIR, device)
    cfgs = {t: variants.eval_config(P, t, n_sequences=P.n_probe_sequences) for t in TEMPERATURES}

    def tables_of(variant, run):
        probed = {variants.run_name(variant, t): probing.probe(run.model_cfg, run.weights, cfg, device)
                  for t, cfg in cfgs.items()}
        return probing.dispersion_tables(probed, P.shown_seed, P.n_examples, P.heatmap_lengths, [variant])

    choices = dict(temperatures=list(TEMPERATURES), shown_seed=P.shown_seed, n_examples=P.n_examples,
                   heatmap_lengths=P.heatmap_lengths)
    return _parts("probe-dispersion", models, cfgs["fixed"], choices, tables_of, passes=len(TEMPERATURES))


def slopes(P, P_task, task: str, trained: list, device) -> Probe:
    """Chapter 10: per variant, how the attention output's components shrink with N beyond the
    training length.  P: the chapter's parameters; P_task: one task's view of them."""
    models = variants.trained_models(P_task, variants.task_config(P_task, task), trained, device)
    cfg = variants.eval_config(P, n_sequences=P.probe_sequences)

    def tables_of(variant, run):
        return {"slopes": beyond.output_slopes({variant: run}, cfg, P.max_len, device)}

    return _parts("probe-slopes", models, cfg, dict(reference=P.max_len, key="normalized"), tables_of)
