"""What chapters 6 and 7 keep of their probe tables in results.json, where the summary reads the
claims of Figures 3 and 4: the same numbers at every scale a page shows (its own runs, chapter 4's
longer runs where chapter 6 probes them, and the paper profile's where the GPU queue has committed
them), and what chapter 6 keeps of +LN's norm."""

import math

import pandas as pd

from ..setups.probes import PAIR
from .report import means_by_length
from ...attention import EPS
from ...compare import pair_name, power_of_two
from ...stats import one_sample_ttest, summary_by_length


def figure3_metrics(global_frame: pd.DataFrame, lengths) -> dict:
    """Chapter 6's `global` table (one row per variant of PAIR, seed and N) as results.json keeps it:
    per variant and length the means over seeds of the global mean, the global variance, the mean's
    drift and the variance over its value at the training length; per variant the p of a drift against
    none (one-sample t-test); and where the frame holds both of PAIR (at the paper's scale +LN's probe
    may still wait in the GPU queue), the paired p of that ratio (+LN against the Baseline)."""
    present = [v for v in PAIR if v in set(global_frame["variant"])]
    means = {key: means_by_length(global_frame, column, present, lengths) for key, column in (
        ("global_mean", "global_mean"), ("global_variance", "global_variance"),
        ("global_mean_drift", "mean_drift"), ("relative_global_variance", "relative_variance"))}
    drift = {v: {str(n): one_sample_ttest(rows["mean_drift"])
                 for n, rows in global_frame[global_frame["variant"] == v].groupby("N")} for v in present}
    if present != list(PAIR):
        return {**means, "p_value_mean_drift": drift}
    ratio = summary_by_length(global_frame, "relative_variance", [PAIR])["p_value"][pair_name(PAIR)]
    return {**means, "p_value_relative_global_variance": ratio, "p_value_mean_drift": drift}


def slope_metrics(slopes_frame: pd.DataFrame) -> dict:
    """Chapter 6's `slopes` table (one row per variant and seed: the median component's log-log slope of
    its standard deviation against N) as results.json keeps it: per variant the mean over seeds and its
    standard error."""
    by_variant = slopes_frame.groupby("variant", sort=False)["slope"]
    return {"component_std_slope": by_variant.mean().astype(float).to_dict(),
            "component_std_slope_sem": by_variant.sem().astype(float).to_dict()}


def norm_metrics(norm_frame: pd.DataFrame, lengths) -> dict:
    """Chapter 6's `norm` table (+LN's runs, probing.norm_frame) as results.json keeps it: per length the
    means over seeds of the spread of the norm's input over its features, of eps's share of the divisor, of
    the gain-weighted energy of the standardized output and of the share of its energy its mean holds; the
    means over seeds of the learned gain's and bias's root mean square."""
    by_length = norm_frame[norm_frame["N"].isin(lengths)].groupby("N")
    per_seed = norm_frame.groupby("seed")[["gain_rms", "bias_rms"]].first().mean()
    return {**{q: {str(n): float(v) for n, v in by_length[q].mean().items()}
               for q in ("input_std", "epsilon_share", "gain_energy", "fixed_share")},
            "gain_rms": float(per_seed["gain_rms"]), "bias_rms": float(per_seed["bias_rms"])}


def norm_table(norm_frame: pd.DataFrame, lengths, reference: int) -> pd.DataFrame:
    """The norm's input and output at each length, means over seeds: the spread of O over its features,
    eps's share of the divisor std_d O + eps, the share of the standardized output z's energy that its mean
    over test sequences holds, the gain-weighted energy mean_d (g_d z_d)^2, and the global variance of what
    the readout sees, also over its value at the training length `reference` (seed by seed, as Figure 3's
    ratio)."""
    frame = norm_frame[norm_frame["N"].isin(lengths)]
    at_reference = frame[frame["N"] == reference].set_index("seed")["global_variance"]
    frame = frame.assign(ratio=frame["global_variance"] / frame["seed"].map(at_reference))
    means = frame.groupby("N")[["input_std", "epsilon_share", "fixed_share", "gain_energy", "global_variance",
                                "ratio"]].mean()
    table = pd.DataFrame({"spread of O over its features": means["input_std"].map("{:.3g}".format),
                          "ε's share of spread + ε": means["epsilon_share"].map("{:.2g}".format),
                          "share of z's energy in its mean": means["fixed_share"].map("{:.3f}".format),
                          "mean of (g z)² over features": means["gain_energy"].map("{:.3g}".format),
                          "global variance of LN(O)": means["global_variance"].map("{:.3g}".format),
                          f"the same / at N = {reference}": means["ratio"].map("{:.2f}".format)})
    table.index = pd.Index([power_of_two(n) for n in table.index], name="N")
    return table


def norm_sentence(metrics: dict, reference: int, longest: int, n_seeds: int) -> str:
    """What norm_metrics say about eps: its share of the divisor at the training length and the longest,
    the gain's and bias's size, and by a fixed rule whether eps can be what changes LN(O): a share above
    one half somewhere (the norm then passes O on nearly unnormalized), or under 5% at every length (eps
    barely touches the normalization). Then what the standardized output z does (alignment_sentence)."""
    share, spread = metrics["epsilon_share"], metrics["input_std"]
    eps = f"$\\epsilon = 10^{{{round(math.log10(EPS))}}}$"
    said = (f"+LN's norm divides the centred $\\mathbf{{O}}$ by its spread over the features plus {eps}. That "
            f"spread is {spread[str(reference)]:.3g} at the training length ($\\epsilon$'s share of the divisor "
            f"{share[str(reference)]:.2g}) and {spread[str(longest)]:.3g} at $N = {longest}$ "
            f"({share[str(longest)]:.2g}). The learned gain's root mean square over the features is "
            f"{metrics['gain_rms']:.3g} and the bias's {metrics['bias_rms']:.3g} (means over {n_seeds} seeds).")
    largest = max(share.values())
    if largest > 0.5:
        said += (" Where $\\epsilon$'s share passes one half the norm no longer standardizes: "
                 "$\\mathrm{LN}(\\mathbf{O})$ then shrinks with $\\mathbf{O}$.")
    elif largest < 0.05:
        said += (" $\\epsilon$ takes under 5% of the divisor at every length, so it barely touches the "
                 "normalization: it cannot account for a change in the global variance of "
                 "$\\mathrm{LN}(\\mathbf{O})$ here.")
    else:
        said += " $\\epsilon$ takes between 5% and 50% of the divisor at some length: it damps the normalization there."
    return said + " " + alignment_sentence(metrics, reference, longest)


def alignment_sentence(metrics: dict, reference: int, longest: int) -> str:
    """What the standardized output z does, by fixed rules: whether it is nearly one vector for all test
    sequences (its mean holds over 90% of its energy at every length), and whether its gain-weighted energy
    mean_d (g_d z_d)^2 at the training length is under half the square of the gain's root mean square (what
    a z spreading its unit energy evenly over the features would give), i.e. z avoids the features of large
    gain; then whether that energy falls or grows by the longest length."""
    fixed, energy, even = metrics["fixed_share"], metrics["gain_energy"], metrics["gain_rms"] ** 2
    at_reference, at_longest = energy[str(reference)], energy[str(longest)]
    same = ("nearly the same vector for every test sequence" if min(fixed.values()) > 0.9
            else "not nearly one vector for all test sequences")
    where = ("puts its energy on features of small gain" if at_reference < 0.5 * even
             else "does not avoid the features of large gain")
    trend = "falls" if at_longest < at_reference else "grows"
    return (f"The standardized output $z$ is {same}: its mean over them holds "
            f"{fixed[str(reference)]:.1%} of its energy at the training length and {fixed[str(longest)]:.1%} at "
            f"$N = {longest}$. Weighted by the gain, its energy $\\frac{{1}}{{D}}\\sum_d (g_d z_d)^2$ is "
            f"{at_reference:.3g} at the training length, where a $z$ spreading its energy evenly over the features "
            f"would give about {even:.2g} (the gain's root mean square, squared): $z$ {where}. By $N = {longest}$ "
            f"that energy {trend} to {at_longest:.3g}.")


DRIFT_CLAIM = "the Baseline's global mean drifts away from its value at the training length"  # Figure 3's


def drift_sides(metrics: dict, variant: str = PAIR[0]) -> tuple:
    """Figure 3's claim that `variant`'s global mean drifts away from its value at the training length, as
    compare's (claimed, other, p_values) from figure3_metrics: the size of its mean drift (in sd at the
    training length) against none, with the one-sample p of the drift."""
    drift = metrics["global_mean_drift"][variant]
    return {n: abs(d) for n, d in drift.items()}, dict.fromkeys(drift, 0.0), metrics["p_value_mean_drift"][variant]


def drift_size(global_frame: pd.DataFrame, variant: str, n: int) -> tuple:
    """How far `variant`'s global mean moves from its value at the training length at length n, seed by seed:
    (the mean over seeds of each seed's |drift|, the largest), in sd at the training length.  The drift claim's
    t-test reads the signed drift, whose mean over seeds could be small because seeds drift in opposite
    directions; this size could not."""
    size = global_frame[(global_frame["variant"] == variant) & (global_frame["N"] == n)]["mean_drift"].abs()
    return float(size.mean()), float(size.max())


def figure4_metrics(attention_frame: pd.DataFrame, pairs) -> dict:
    """Chapter 7's `attention` table (one row per run, seed and N) as results.json keeps it: per run
    and length the mean largest attention weight and entropy, and the paired p of each of `pairs`."""
    summary = {q: summary_by_length(attention_frame, q, pairs) for q in ("top1_weight", "entropy")}
    return {"top1_weight": summary["top1_weight"]["mean"], "entropy": summary["entropy"]["mean"],
            "p_value_top1_weight": summary["top1_weight"]["p_value"], "p_value_entropy": summary["entropy"]["p_value"]}


def at_paper_scale(metrics: dict, P_paper) -> dict:
    """A probe's metrics at the paper profile, with the scale the summary's claims table names."""
    return {**metrics, "n_seeds": P_paper.n_seeds, "steps": P_paper.steps, "device_type": "cuda"}
