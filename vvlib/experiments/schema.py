"""What each chapter promises under "metrics" in its results.json: the top-level keys.

report.write_results refuses metrics that omit a promised key or add one not listed here,
so a chapter cannot drift away from what the summary page and the tests read.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Metrics:
    required: frozenset
    optional: frozenset = frozenset()  # written only at some settings (e.g. when a longer training ran)


def _keys(required: str, optional: str = "") -> Metrics:
    return Metrics(frozenset(required.split()), frozenset(optional.split()))


PER_LENGTH = "accuracy accuracy_sem p_value n_seeds"  # report.per_length
METRICS = {
    "01_vanishing_variance_proof": _keys("sigma2 delta limit_mean variance_slope chain cross_term_step_fails_at "
                                         "bounds_hold sharp_constant n_times_variance"),
    "02_monte_carlo": _keys("loglog_slope slope_ci std_by_length slope_by_feature std_by_length_by_setting "
                            "broken_assumptions exact_check global"),
    "03_pretrained_transformer": _keys("models"),
    "04_argmax_retrieval": _keys(PER_LENGTH, "long ladder paper_scale"),
    "05_dictionary_lookup": _keys(PER_LENGTH, "long ladder paper_scale"),
    "06_distribution_shift": _keys("global_mean global_variance global_mean_drift relative_global_variance "
                                   "component_std component_std_slope component_std_slope_sem "
                                   "p_value_relative_global_variance p_value_mean_drift"),
    "07_dispersion": _keys("top1_weight entropy p_value_top1_weight p_value_entropy"),
    "08_ablations": _keys("relative_gain p_value_ln_vs_std p_value_vs_baseline accuracy ln_minus_std long"),
    "09_longer_training": _keys("accuracy accuracy_sem p_value"),
    "10_beyond": _keys(f"{PER_LENGTH} variance_slope mc_slope best"),
    "11_sensitivity": _keys("rows closest"),
    "summary": _keys("claims component_slope_with_ln ln_minus_std_dictionary sensitivity sources"),
}


def check(chapter: str, metrics: dict):
    """Raise ValueError naming the keys `metrics` lacks or should not have."""
    if chapter not in METRICS:
        raise ValueError(f"chapter: expected one of {', '.join(METRICS)}; got {chapter!r}")
    promised, keys = METRICS[chapter], set(metrics)
    missing, unknown = promised.required - keys, keys - promised.required - promised.optional
    if missing or unknown:
        raise ValueError(f"{chapter}'s metrics: missing {sorted(missing)}, not in vvlib/experiments/schema.py {sorted(unknown)}")
