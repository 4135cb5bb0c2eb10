"""The probe tables of chapters 6, 7, 10 and 11: what each probes, with which settings, and the store entries
its tables land in, written once for the chapter that shows them and the plan (plan.py) that counts them.

A probe keeps only tables (runs.cached_tables), stored as one part per trained run (the sharpness test: per
run and beta), so that a part needs one run's weights and a GPU unit stays one run.  A part numbers its seeds
as in the whole ensemble; a chapter reads the parts joined, in its variants' and seeds' order.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from ... import beyond, probing
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


def _parts(name: str, models: dict, cfg, choices: dict, tables_of: Callable, passes: int = 1,
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


def _shown_in(run, first: int, shown_seed: int):
    """The shown seed's index among this run's seeds, or None where another run holds it."""
    return shown_seed - first if 0 <= shown_seed - first < run.train_cfg.n_seeds else None


def distribution(P, device) -> Probe:
    """Chapter 6: the attention output's components and global statistics (Figures 2-3)."""
    models = _main_models(P, device)
    cfg = variants.eval_config(P, n_sequences=P.n_probe_sequences)

    def tables_of(variant, run, first):
        probed = {variant: probing.probe(run.model_cfg, run.weights, cfg, device)}
        return probing.distribution_tables(probed, P.components, _shown_in(run, first, P.shown_seed),
                                           P.distribution_lengths, P.max_len, P.histogram_bins)

    choices = dict(components=P.components, shown_seed=P.shown_seed, distribution_lengths=P.distribution_lengths,
                   reference=P.max_len, histogram_bins=P.histogram_bins)
    return _parts("probe-distribution", models, cfg, choices, tables_of)


def longer(P, device) -> Probe:
    """Chapter 6 on chapter 4's longer training (its long_* parameters): Figure 3's global statistics of
    the variants long_variants names, and for +LN what its norm does (probing.norm_frame)."""
    models = _longer_models(P, device, P.long_variants)
    cfg = variants.eval_config(P, n_sequences=P.n_probe_sequences)

    def tables_of(variant, run, first):
        probed = {variant: probing.probe(run.model_cfg, run.weights, cfg, device)}
        tables = {"global": probing.global_frame(probed, P.max_len)}
        if run.model_cfg.norm == "layernorm":
            tables["norm"] = probing.norm_frame(probed, run.weights, run.model_cfg)
        return tables

    return _parts("probe-longer", models, cfg, dict(reference=P.max_len, norm_columns=list(probing.NORM_COLUMNS)),
                  tables_of)


def _main_models(P, device) -> dict:
    """{variant: [runs.TrainedRun, ...]} of chapter 4's main runs (n_seeds x steps) for PAIR, each variant's runs
    in seed order."""
    return variants.trained_models(P, variants.task_config(P, ARGMAX.name), PAIR, device)


def _longer_models(P, device, variants_probed=PAIR) -> dict:
    """{variant: [runs.TrainedRun, ...]} of chapter 4's longer training (its long_* parameters), each variant's
    runs in seed order."""
    task = variants.task_config(P, ARGMAX.name)
    return {v: [runs.TrainedRun(P.store_dir, variants.model_config(P, task, v), cfg, device)
                for cfg in variants.long_train_configs(P)] for v in PAIR if v in variants_probed}


SHARPNESS_RUNS = ("main", "longer")  # chapter 4's runs the sharpness test reads: n_seeds x steps, or long_*


def sharpness(P, device, runs: str = "longer") -> Probe:
    """Chapter 7 on chapter 4's main runs (runs "main": n_seeds x steps) or its longer training ("longer": the
    long_* parameters): each model's accuracy and attention entropy at each of sharpness_lengths with its
    attention's logits times each of sharpness_betas (probing.sharpened), on sharpness_sequences test
    sequences, so that a page can read each model at its partner's entropy and score it."""
    if runs not in SHARPNESS_RUNS:
        raise ValueError(f"runs: one of {SHARPNESS_RUNS}, not {runs!r}")
    models = _main_models(P, device) if runs == "main" else _longer_models(P, device)
    cfg = variants.eval_config(P, n_sequences=P.sharpness_sequences, lengths=P.sharpness_lengths)

    def tables_of(variant, run, first, beta):
        return {"sharpness": probing.sharpness_frame(run.model_cfg, run.weights, cfg, [beta], variant, device)}

    # one part per beta: a beta added to the list computes only its own share
    return _parts("probe-sharpness", models, cfg, {}, tables_of,
                  splits=tuple({"beta": float(b)} for b in P.sharpness_betas))


def longer_scale(P) -> Params:
    """P with the longer training's seeds and steps as its n_seeds and steps: its scale, for a page that
    shows it beside the main runs'."""
    return Params({**P, "n_seeds": P.long_seeds, "steps": P.long_steps})


def dispersion(P, device) -> Probe:
    """Chapter 7: the largest attention weights and the attention's entropy (Figure 4)."""
    models = _main_models(P, device)
    cfgs = {t: variants.eval_config(P, t, n_sequences=P.n_probe_sequences) for t in TEMPERATURES}

    def tables_of(variant, run, first):
        probed = {variants.run_name(variant, t): probing.probe(run.model_cfg, run.weights, cfg, device)
                  for t, cfg in cfgs.items()}
        return probing.dispersion_tables(probed, _shown_in(run, first, P.shown_seed), P.n_examples,
                                         P.heatmap_lengths, [variant])

    choices = dict(temperatures=list(TEMPERATURES), shown_seed=P.shown_seed, n_examples=P.n_examples,
                   heatmap_lengths=P.heatmap_lengths)
    return _parts("probe-dispersion", models, cfgs["fixed"], choices, tables_of, passes=len(TEMPERATURES))


def adaptive_reach(P, device, task: str) -> Probe:
    """Chapters 4-5's main runs (n_seeds x steps): where adaptive temperature acts, per seed and length, and
    what it changes in those models' accuracy (probing.adaptive_frame), on the very test sequences the
    chapter scores."""
    models = variants.trained_models(P, variants.task_config(P, task), PAIR, device)
    cfg = variants.eval_config(P)

    def tables_of(variant, run, first):
        return {"adaptive": probing.adaptive_frame(run.model_cfg, run.weights, cfg, variant, device)}

    # a probe pass and an evaluation at each temperature
    return _parts("probe-adaptive", models, cfg, dict(temperatures=list(TEMPERATURES)), tables_of,
                  passes=1 + len(TEMPERATURES))


def slopes(P, P_task, task: str, trained: list, device) -> Probe:
    """Chapter 10: per variant, how the attention output's components shrink with N beyond the
    training length.  P: the chapter's parameters; P_task: one task's view of them."""
    models = variants.trained_models(P_task, variants.task_config(P_task, task), trained, device)
    cfg = variants.eval_config(P, n_sequences=P.probe_sequences)

    def tables_of(variant, run, first):
        return {"slopes": beyond.output_slopes({variant: run}, cfg, P.max_len, device)}

    return _parts("probe-slopes", models, cfg, dict(reference=P.max_len, key="normalized"), tables_of)


LAYER_PROBE_SEQUENCES = 64  # our choice: as many as chapter 10's other probe reads at the book's profile


def layers(P, device) -> list:
    """Chapter 11's probes: [(task, layer_probe(...))] for each row of a model of several layers (chapter 10's
    deep model), in the chapter's order."""
    return [(task, probe) for task, row, P_row in sensitivity.check_rows(P)
            for probe in [layer_probe(P_row, task, device)] if probe is not None]


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
    return _parts("probe-layers", variants.trained_models(P_row, task_cfg, sides, device), cfg,
                  {"columns": list(probing.LAYER_COLUMNS)}, tables_of)
