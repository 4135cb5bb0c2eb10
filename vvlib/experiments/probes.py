"""The probe tables of chapters 6, 7 and 10: what each probes, with which settings, and the
store entry its tables land in, written once for the chapter that shows them and the plan
(plan.py) that counts them.

A probe runs trained models over test sequences and keeps only tables (runs.cached_tables), so
once its entry is stored the weights are no longer needed.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import beyond, probing
from . import runs, store, variants
from .paper_tasks import ARGMAX

PAIR = ("baseline", "layernorm")  # chapters 6 and 7 probe chapter 4's two variants
TEMPERATURES = ("fixed", "adaptive")  # chapter 7 probes each under both


@dataclass(frozen=True)
class Probe:
    name: str  # the store folder's prefix
    spec: dict
    compute: Callable[[], dict]  # {table name: DataFrame}
    models: dict  # {variant: runs.TrainedRun}
    items: int  # seeds x sequences x items probed, for the plan's progress bar

    def folder(self, store_dir) -> Path:
        return Path(store_dir) / f"{self.name}-{store.spec_hash(self.spec)}"

    def tables(self, store_dir, device) -> dict:
        """The stored tables, or computed (loading or training the models) and stored."""
        return runs.cached_tables(store_dir, self.name, self.spec, self.compute, device)


def _items(P, cfg, passes: int) -> int:
    return P.n_seeds * cfg.n_sequences * sum(cfg.lengths) * passes


def distribution(P, device) -> Probe:
    """Chapter 6: the attention output's components and global statistics (Figures 2-3)."""
    models = variants.trained_models(P, variants.task_config(P, ARGMAX.name), PAIR, device)
    cfg = variants.eval_config(P, n_sequences=P.n_probe_sequences)

    def compute():
        probes = {v: probing.probe(run.model_cfg, run.weights, cfg, device) for v, run in models.items()}
        return probing.distribution_tables(probes, P.components, P.shown_seed, P.distribution_lengths, P.max_train_len,
                                           P.histogram_bins)

    spec = probing.probe_spec(models, cfg, components=P.components, shown_seed=P.shown_seed,
                              distribution_lengths=P.distribution_lengths, reference=P.max_train_len,
                              histogram_bins=P.histogram_bins)
    return Probe("probe-distribution", spec, compute, models, _items(P, cfg, len(PAIR)))


def dispersion(P, device) -> Probe:
    """Chapter 7: the largest attention weights and the attention's entropy (Figure 4)."""
    models = variants.trained_models(P, variants.task_config(P, ARGMAX.name), PAIR, device)
    cfgs = {t: variants.eval_config(P, t, n_sequences=P.n_probe_sequences) for t in TEMPERATURES}

    def compute():
        probes = {variants.run_name(v, t): probing.probe(run.model_cfg, run.weights, cfg, device)
                  for v, run in models.items() for t, cfg in cfgs.items()}
        return probing.dispersion_tables(probes, P.shown_seed, P.n_examples, P.heatmap_lengths, list(PAIR))

    spec = probing.probe_spec(models, cfgs["fixed"], temperatures=list(TEMPERATURES), shown_seed=P.shown_seed,
                              n_examples=P.n_examples, heatmap_lengths=P.heatmap_lengths)
    return Probe("probe-dispersion", spec, compute, models, _items(P, cfgs["fixed"], len(PAIR) * len(TEMPERATURES)))


def slopes(P, P_task, task: str, trained: list, device) -> Probe:
    """Chapter 10: per variant, how the attention output's components shrink with N beyond the
    training length.  P: the chapter's parameters; P_task: one task's view of them."""
    models = variants.trained_models(P_task, variants.task_config(P_task, task), trained, device)
    cfg = variants.eval_config(P, n_sequences=P.probe_sequences)
    spec = probing.probe_spec(models, cfg, reference=P.max_train_len, key="normalized")
    compute = lambda: {"slopes": beyond.output_slopes(models, cfg, P.max_train_len, device)}
    return Probe("probe-slopes", spec, compute, models, _items(P, cfg, len(trained)))
