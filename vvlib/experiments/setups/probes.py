"""How a probe is made: its parts (one per trained run), the store entries its tables land in, and the
runs of chapter 4 the probing chapters read.  Each chapter defines its own probes beside its record
(vvlib/book/chapters/), which the page and the GPU queue's plan both read.

A probe keeps only tables (runs.cached_tables), stored as one part per trained run (the sharpness test: per
run and beta), so that a part needs one run's weights and a GPU unit stays one run.  A part numbers its seeds
as in the whole ensemble; a chapter reads the parts joined, in its variants' and seeds' order.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from ... import probing
from ..storage import runs, store
from . import sensitivity, variants
from .paper_tasks import ARGMAX
from .params import Params

PAIR = variants.PAIR  # chapters 6 and 7 probe chapter 4's two variants
TEMPERATURES = ("fixed", "adaptive")  # chapter 7 probes each under both


@dataclass(frozen=True)
class ProbePart:
    """One trained run's share of a probe: its tables, made from that run's weights alone (its seeds
    numbered as in the whole ensemble)."""
    name: str  # the store folder's prefix
    variant: str
    spec: dict
    compute: Callable[[], dict]  # {table name: DataFrame}, the rows of this run only
    run: runs.TrainedRun
    items: int  # seeds x sequences x items probed, for the plan's progress bar

    def folder(self, store_dir) -> Path:
        return runs.tables_folder(store_dir, self.name, self.spec)

    def tables(self, store_dir, device) -> dict:
        """The stored tables, or computed (loading or training the run) and stored."""
        return runs.cached_tables(store_dir, self.name, self.spec, self.compute, device, size=self.items)

    def stored(self, store_dir) -> bool:
        """Whether store_dir holds this part's tables, made with its spec (read nothing else)."""
        try:
            return store.load_matching(self.folder(store_dir) / "tables.json", self.spec) is not None
        except store.StoreError:
            return False


@dataclass(frozen=True)
class Probe:
    name: str
    parts: tuple  # ProbePart, one per stored run: variants in the order the tables list them, each one's runs by seed

    @property
    def models(self) -> dict:
        """{variant: [runs.TrainedRun, ...]} probed, each variant's runs in seed order."""
        models = {}
        for part in self.parts:
            probed = models.setdefault(part.variant, [])
            if not any(run is part.run for run in probed):  # a run split into several parts counts once
                probed.append(part.run)
        return models

    def records(self) -> dict:
        """{variant: the training record of its runs joined along the seeds (runs.joined_record)}."""
        return {variant: runs.joined_record([run.record for run in parts]) for variant, parts in self.models.items()}

    def tables(self, store_dir, device) -> dict:
        """{table name: DataFrame}: every part's rows, joined in the parts' order (a shown seed's
        tables come from the one part that holds it)."""
        each = [part.tables(store_dir, device) for part in self.parts]
        names = dict.fromkeys(t for tables in each for t in tables)
        return {t: pd.concat([tables[t] for tables in each if t in tables], ignore_index=True) for t in names}


def parts(name: str, models: dict, cfg, choices: dict, tables_of: Callable, passes: int = 1,
           splits: tuple = ({},)) -> Probe:
    """A probe of `models` {variant: [TrainedRun, ...]}: tables_of(variant, run, first, **split) makes one
    run's tables, `first` the index its first seed has in the variant's ensemble.  One part per run and
    split: a split is a dict of choices of its own (the sharpness test's one beta), so that a setting whose
    values are computed apart is stored apart, and a value added later computes only its own share."""
    def part(variant, run, first, split):
        items = run.train_cfg.n_seeds * cfg.n_sequences * sum(cfg.lengths) * passes
        return ProbePart(name, variant, probing.probe_spec({variant: run}, cfg, **choices, **split),
                         lambda: _numbered(tables_of(variant, run, first, **split), first), run, items)
    return Probe(name, tuple(part(v, run, run.train_cfg.first_seed - parts[0].train_cfg.first_seed, split)
                             for v, parts in models.items() for run in parts for split in splits))


def _numbered(tables: dict, first: int) -> dict:
    """One run's tables with its seeds numbered as in the whole ensemble (its first seed is `first`)."""
    return {t: frame.assign(seed=frame["seed"] + first) if first and "seed" in frame else frame
            for t, frame in tables.items()}


def shown_in(run, first: int, shown_seed: int):
    """The shown seed's index among this run's seeds, or None where another run holds it."""
    return shown_seed - first if 0 <= shown_seed - first < run.train_cfg.n_seeds else None


def main_models(P, device) -> dict:
    """{variant: [runs.TrainedRun, ...]} of chapter 4's main runs (n_seeds x steps) for PAIR, each variant's runs
    in seed order."""
    return variants.trained_models(P, variants.task_config(P, ARGMAX.name), PAIR, device)


def longer_models(P, device, variants_probed=PAIR) -> dict:
    """{variant: [runs.TrainedRun, ...]} of chapter 4's longer training (its long_* parameters), each variant's
    runs in seed order."""
    task = variants.task_config(P, ARGMAX.name)
    return {v: [runs.TrainedRun(P.store_dir, variants.model_config(P, task, v), cfg, device)
                for cfg in variants.long_train_configs(P)] for v in PAIR if v in variants_probed}


def longer_scale(P) -> Params:
    """P with the longer training's seeds and steps as its n_seeds and steps: its scale, for a page that
    shows it beside the main runs'."""
    return Params({**P, "n_seeds": P.long_seeds, "steps": P.long_steps})


LAYER_PROBE_SEQUENCES = 64  # our choice: as many as chapter 10's other probe reads at the book's profile


def layer_probe(P_row, task: str, device) -> Probe | None:
    """One row's two sides (P_row: sensitivity.row_params): every layer's attention (probing.layer_frame) at the
    longest training length and at compared_lengths, on LAYER_PROBE_SEQUENCES test sequences; None where the
    row's model has one layer."""
    task_cfg, sides = variants.task_config(P_row, task), sensitivity.trained_variants(P_row)
    if variants.model_config(P_row, task_cfg, sides[0]).layers == 1:
        return None
    lengths = list(dict.fromkeys([P_row.max_len, *P_row.compared_lengths]))
    cfg = variants.eval_config(P_row, n_sequences=LAYER_PROBE_SEQUENCES, lengths=lengths)

    def tables_of(variant, run, first):
        return {"layers": probing.layer_frame(run.model_cfg, run.weights, cfg, variant, device)}

    # the columns in the spec: a table made before on_answer was measured is not this one
    return parts("probe-layers", variants.trained_models(P_row, task_cfg, sides, device), cfg,
                  {"columns": list(probing.LAYER_COLUMNS)}, tables_of)
