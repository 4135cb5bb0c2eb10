"""Monte Carlo of a random single-query attention module over a finite vocabulary.

This is Proposition 1's setting: tokens from a vocabulary of `vocab_size` embeddings,
random W_Q, W_K, W_V, a fixed query y.  Everything the attention does to a token is
then a table lookup: token t has logit s_t and value v_t, so the output of a sequence

    O = sum_n A_n v_{t_n},   A = softmax(s_{t_1}, ..., s_{t_N})

is computed as (weight mass per token) @ (value table): O(N) work per sequence for all
D components at once.  Positional encodings add a per-position logit and value; a
query taken from the sequence makes the logit a (query token, token) table.

Sequences are drawn in chunks from named random streams, so any length up to 2^14 and
beyond, with tens of thousands of sequences, runs in bounded memory.
"""

import math
from dataclasses import dataclass

import numpy as np
import torch
from tqdm import tqdm

from . import rng

TOKEN_PROCESSES = ("iid", "markov")
OUTPUTS = ("plain", "rescale")  # rescale: chapter 10's variance-preserving output (attention.centred_mix)
QUERIES = ("fixed", "from_sequence")


@dataclass(frozen=True)
class RandomAttention:
    d_model: int = 64
    vocab_size: int = 32
    seed: int = 0
    value_mean: float = 0.0  # added to every value; 0 means E[W_V x] = 0 (assumption 2)
    logit_scale: float = 1.0  # multiplies the logits: an inverse temperature
    output: str = "plain"  # plain: O = sum_n A_n v_n; rescale: sum_n (A_n - 1/N) v_n / ||A - 1/N||_2

    def __post_init__(self):
        if self.output not in OUTPUTS:
            raise ValueError(f"output must be one of {OUTPUTS}; got {self.output!r}")
        for name, lo in (("d_model", 1), ("vocab_size", 2)):
            value = getattr(self, name)
            if not isinstance(value, int) or value < lo:
                raise ValueError(f"{name} must be an int >= {lo}; got {value!r}")


@dataclass(frozen=True)
class Setting:
    """Which of Proposition 1's assumptions hold."""

    tokens: str = "iid"  # iid, or markov: repeat the previous token with probability `stickiness`
    stickiness: float = 0.0
    positional: bool = False  # add sinusoidal positional encodings to the tokens
    query: str = "fixed"  # fixed, or from_sequence: the query is the embedding of a random item

    def __post_init__(self):
        if self.tokens not in TOKEN_PROCESSES:
            raise ValueError(f"tokens must be one of {TOKEN_PROCESSES}; got {self.tokens!r}")
        if self.query not in QUERIES:
            raise ValueError(f"query must be one of {QUERIES}; got {self.query!r}")
        if not 0 <= self.stickiness < 1:
            raise ValueError(f"stickiness must be in [0, 1); got {self.stickiness!r}")


class Tables:
    """The module's lookup tables, in float64 on `device`."""

    def __init__(self, module: RandomAttention, device="cpu"):
        gen = rng.generator("cpu", module.seed, "random-attention")
        D, V = module.d_model, module.vocab_size
        self.module, self.device = module, torch.device(device)
        self.embeddings = torch.randn(V, D, generator=gen, dtype=torch.float64)
        w_q, w_k, w_v = (torch.randn(D, D, generator=gen, dtype=torch.float64) / math.sqrt(D) for _ in range(3))
        query = torch.randn(D, generator=gen, dtype=torch.float64)
        self.probs = torch.full((V,), 1 / V, dtype=torch.float64)  # tokens uniform over the vocabulary
        scale = module.logit_scale / math.sqrt(D)
        self.keys = self.embeddings @ w_k
        self.logits = scale * self.keys @ (query @ w_q)  # (V,): s_t for the fixed query
        self.pair_logits = scale * (self.embeddings @ w_q) @ self.keys.T  # (V, V): query token x item token
        raw = self.embeddings @ w_v
        self.value_offset = module.value_mean - self.probs @ raw  # centre under the token distribution, then shift
        self.values = raw + self.value_offset  # (V, D)
        for name in ("embeddings", "probs", "keys", "logits", "pair_logits", "values", "value_offset"):
            setattr(self, name, getattr(self, name).to(self.device))
        self.w_q, self.w_k, self.w_v = (w.to(self.device) for w in (w_q, w_k, w_v))
        self.query_vector = (query @ w_q).to(self.device) * scale

    def positional(self, n: int):
        """Per-position logit shift (n,) and value shift (n, D) of sinusoidal encodings."""
        pe = sinusoidal(n, self.module.d_model).to(self.device)
        return pe @ self.w_k @ self.query_vector, pe @ self.w_v

    def logit_range(self) -> float:
        """delta: the width of the interval holding every logit (fixed query, no positions)."""
        return float(self.logits.max() - self.logits.min())


def sinusoidal(n: int, d: int) -> torch.Tensor:
    """The transformer's sinusoidal positional encodings, (n, d), float64."""
    position = torch.arange(n, dtype=torch.float64).unsqueeze(1)
    frequency = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2, dtype=torch.float64) / d)
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * frequency)
    pe[:, 1::2] = torch.cos(position * frequency[: d // 2])
    return pe


def sample_tokens(tables: Tables, setting: Setting, gen, rows: int, n: int) -> torch.Tensor:
    """(rows, n) token ids; markov chains start from the stationary (token) distribution."""
    fresh = torch.multinomial(tables.probs.expand(rows, -1), n, replacement=True, generator=gen)
    if setting.tokens == "iid" or setting.stickiness == 0:
        return fresh
    repeat = torch.rand(rows, n, generator=gen, device=tables.device, dtype=torch.float64) < setting.stickiness
    repeat[:, 0] = False
    positions = torch.arange(n, device=tables.device).expand(rows, n)
    source = torch.where(repeat, torch.zeros_like(positions), positions).cummax(dim=1).values
    return fresh.gather(1, source)  # each repeated slot copies the last fresh token


def attend(tables: Tables, setting: Setting, tokens: torch.Tensor, gen=None):
    """Attention weights (rows, n) and outputs O (rows, D) for a chunk of sequences."""
    rows, n = tokens.shape
    if setting.query == "fixed":
        logits = tables.logits[tokens]
    else:
        asked = torch.randint(n, (rows, 1), generator=gen, device=tables.device)
        logits = tables.pair_logits[tokens.gather(1, asked).squeeze(1).unsqueeze(1), tokens]
    if setting.positional:
        position_logits, position_values = tables.positional(n)
        logits = logits + position_logits
    weights = torch.softmax(logits, dim=1)
    rescale = tables.module.output == "rescale"
    mix = weights - 1 / n if rescale else weights  # centred weights: the values' plain mean cancels
    mass = torch.zeros(rows, tables.values.shape[0], dtype=weights.dtype, device=weights.device)
    mass.scatter_add_(1, tokens, mix)  # total (centred) attention on each vocabulary token
    out = mass @ tables.values
    if setting.positional:
        out = out + mix @ position_values
    if rescale:
        out = out / mix.norm(dim=1, keepdim=True)
    return weights, out


class Moments:
    """Streaming raw moments (float64) of vectors, for means, variances and their errors."""

    def __init__(self, width: int):
        self.n, self.sums = 0, np.zeros((4, width))

    def add(self, x: np.ndarray):
        self.n += x.shape[0]
        for k in range(4):
            self.sums[k] += (x ** (k + 1)).sum(axis=0)

    def mean(self):
        return self.sums[0] / self.n

    def variance(self):
        """Unbiased sample variance per column."""
        m1, m2 = self.sums[0] / self.n, self.sums[1] / self.n
        return (m2 - m1**2) * self.n / (self.n - 1)

    def variance_se(self):
        """Standard error of the variance estimate: sqrt((mu4 - var^2) / n), from central moments."""
        m1, m2, m3, m4 = (self.sums[k] / self.n for k in range(4))
        mu2 = m2 - m1**2
        mu4 = m4 - 4 * m3 * m1 + 6 * m2 * m1**2 - 3 * m1**4
        return np.sqrt(np.maximum(mu4 - mu2**2, 0) / self.n)


MC_BLOCK = 256  # sequences per random stream: results never depend on how work is split


def blocks(n_sequences: int):
    """(block index, rows) of the fixed-size blocks that make up n_sequences sequences."""
    for index, start in enumerate(range(0, n_sequences, MC_BLOCK)):
        yield index, min(MC_BLOCK, n_sequences - start)


def output_moments(tables: Tables, setting: Setting, n: int, n_sequences: int, seed: int = 0,
                   progress=False) -> Moments:
    """Moments of every component of O over `n_sequences` sequences of length n.
    Memory is bounded by one block (MC_BLOCK x n tokens), whatever n_sequences is."""
    moments = Moments(tables.values.shape[1])
    for index, rows in tqdm(list(blocks(n_sequences)), desc=f"N={n}", disable=not progress, leave=False):
        gen = rng.generator(tables.device, seed, "mc", n, index)
        tokens = sample_tokens(tables, setting, gen, rows, n)
        _, out = attend(tables, setting, tokens, gen)
        moments.add(out.cpu().numpy())
    return moments


def output_samples(tables: Tables, setting: Setting, n: int, n_sequences: int, seed: int = 0,
                   component: int = 0) -> np.ndarray:
    """O_component of `n_sequences` sequences of length n (for histograms), block by block."""
    parts = []
    for index, rows in blocks(n_sequences):
        gen = rng.generator(tables.device, seed, "samples", n, index)
        _, out = attend(tables, setting, sample_tokens(tables, setting, gen, rows, n), gen)
        parts.append(out[:, component].cpu().numpy())
    return np.concatenate(parts)


def fit_loglog_slope(lengths, std, se_log_std=None, confidence=0.95):
    """Least-squares slope of log std against log N, with a t-based confidence interval."""
    from scipy import stats

    x, y = np.log(np.asarray(lengths, float)), np.log(np.asarray(std, float))
    w = None if se_log_std is None else 1 / np.asarray(se_log_std, float) ** 2
    X = np.stack([np.ones_like(x), x], axis=1)
    W = np.ones_like(x) if w is None else w
    cov = np.linalg.inv(X.T @ (W[:, None] * X))
    beta = cov @ X.T @ (W * y)
    resid = y - X @ beta
    dof = max(len(x) - 2, 1)
    scale = (W * resid**2).sum() / dof  # residual variance, so the CI also covers misfit
    se = math.sqrt(cov[1, 1] * scale)
    half = stats.t.ppf(0.5 + confidence / 2, dof) * se
    return float(beta[1]), float(beta[1] - half), float(beta[1] + half)


def compositions(n: int, parts: int):
    """Every way to write n as an ordered sum of `parts` non-negative ints (token counts)."""
    if parts == 1:
        yield (n,)
        return
    for first in range(n + 1):
        for rest in compositions(n - first, parts - 1):
            yield (first, *rest)


def exact_moments(tables: Tables, n: int, component: int):
    """Exact mean and variance of O_component for i.i.d. tokens, fixed query, no positions,
    by summing over all count vectors with their multinomial probabilities."""
    probs = tables.probs.cpu().numpy()
    weight = np.exp(tables.logits.cpu().numpy())
    value = tables.values[:, component].cpu().numpy()
    log_fact = [math.lgamma(k + 1) for k in range(n + 1)]
    mean = second = 0.0
    for counts in compositions(n, len(probs)):
        c = np.asarray(counts, float)
        log_p = log_fact[n] - sum(log_fact[k] for k in counts) + float((c * np.log(probs)).sum())
        p = math.exp(log_p)
        out = float((c * weight * value).sum() / (c * weight).sum())
        mean += p * out
        second += p * out * out
    return mean, second - mean**2


def proof_chain(tables: Tables, n: int, n_sequences: int, component: int = 0, seed: int = 0) -> dict:
    """Monte Carlo means (and standard errors) of every quantity in the appendix-A chain of
    inequalities, for a fixed query, i.i.d. tokens and no positions.

    Keys follow the chain: variance <= second_moment = diagonal + cross <= line4 <= line5,
    then the paper's line 6 (N E[max A^2] sigma^2) and its final bound sigma^2 e^(2 delta) / N.
    """
    sums, squares, count = {}, {}, 0
    out_moments = Moments(1)  # for the standard error of the variance
    value = tables.values[:, component]
    for index, rows in blocks(n_sequences):
        gen = rng.generator(tables.device, seed, "proof", n, index)
        tokens = sample_tokens(tables, Setting(), gen, rows, n)
        a = torch.softmax(tables.logits[tokens], dim=1)
        v = value[tokens]
        av = a * v
        out = av.sum(1)
        diagonal = (av**2).sum(1)
        same_sign = av.clamp_min(0).sum(1) ** 2 + av.clamp_max(0).sum(1) ** 2 - diagonal  # pairs with V_k V_l >= 0
        max_a2 = a.max(1).values ** 2
        unweighted = v.clamp_min(0).sum(1) ** 2 + v.clamp_max(0).sum(1) ** 2 - (v**2).sum(1)
        per_sequence = {
            "output": out,
            "second_moment": out**2,
            "diagonal": diagonal,
            "cross": out**2 - diagonal,
            "line4": max_a2 * (v**2).sum(1) + same_sign,
            "line5": max_a2 * (v**2).sum(1) + unweighted,
            "max_weight": a.max(1).values,
            "max_weight_sq": max_a2,
        }
        out_moments.add(out.cpu().numpy()[:, None])
        for key, x in per_sequence.items():
            sums[key] = sums.get(key, 0.0) + float(x.sum())
            squares[key] = squares.get(key, 0.0) + float((x**2).sum())
        count += rows
    mean = {k: sums[k] / count for k in sums}
    se = {k: math.sqrt(max(squares[k] / count - mean[k] ** 2, 0) / count) for k in sums}
    sigma2 = float((tables.probs * value**2).sum() - (tables.probs * value).sum() ** 2)
    delta = tables.logit_range()
    mean["variance"] = mean["second_moment"] - mean["output"] ** 2
    se["variance"] = float(out_moments.variance_se()[0])
    mean["line6"] = n * mean["max_weight_sq"] * sigma2
    mean["paper_bound"] = sigma2 * math.exp(2 * delta) / n
    mean["efron_stein_bound"] = 8 * float(value.abs().max()) ** 2 * math.exp(2 * delta) / n
    mean["lemma_max_weight"] = math.exp(delta) / n
    mean["sigma2"], mean["delta"] = sigma2, delta
    return {"n": n, "mean": mean, "se": se}


def std_curve(tables: Tables, setting: Setting, lengths, n_sequences: int, seed: int = 0, components=(0,),
              progress=True):
    """Std of the chosen output components against N: a DataFrame with one row per
    (N, component): std, its standard error on the log scale, and the mean."""
    import pandas as pd

    rows = []
    for n in tqdm(lengths, desc="lengths", disable=not progress):
        m = output_moments(tables, setting, n, n_sequences, seed)
        var, var_se, mean = m.variance(), m.variance_se(), m.mean()
        for d in components:
            rows.append({"N": n, "component": d, "std": math.sqrt(var[d]), "se_log_std": var_se[d] / (2 * var[d]),
                         "mean": mean[d]})
    return pd.DataFrame(rows)


def slope_of(curve) -> dict:
    """Log-log slope (with its 95% interval) of every component in a std_curve frame."""
    out = {}
    for d, part in curve.groupby("component"):
        slope, low, high = fit_loglog_slope(part["N"], part["std"], part["se_log_std"])
        out[int(d)] = {"slope": slope, "low": low, "high": high}
    return out


def limit_output(tables: Tables) -> torch.Tensor:
    """Where O converges for i.i.d. tokens and a fixed query: E[e^s v] / E[e^s] (law of large numbers)."""
    w = tables.probs * torch.exp(tables.logits)
    return (w @ tables.values) / w.sum()


def variance_constant(tables: Tables) -> torch.Tensor:
    """The sharp constant of the 1/N law, (D,): N Var(O_d) -> E[w^2 (v_d - O_inf,d)^2] / E[w]^2
    for i.i.d. tokens and a fixed query, with w = e^s and O_inf = limit_output.

    O is a ratio of two averages, (sum_n w_n v_n / N) / (sum_n w_n / N); to first order
    (the delta method) O - O_inf = sum_n w_n (v_n - O_inf) / (N E[w]), a mean of N i.i.d.
    terms of mean zero, whose variance is the expression above over N.  The weights and
    the values come from the same tokens; the expression keeps that dependence."""
    w = torch.exp(tables.logits)
    centred = tables.values - limit_output(tables)
    return (tables.probs * w**2) @ centred**2 / (tables.probs @ w) ** 2


def rescaled_limits(tables: Tables) -> dict:
    """Large-N behaviour of the rescaled output (module output="rescale") for i.i.d. tokens
    and a fixed query, by the delta method (chapter 10 derives it).  With w = e^s, m = E[w],
    rho^2 = Var(w) / m^2 and O_inf = limit_output, one item n moves
        the numerator O - mean(v) by  a_n = w_n (v_n - O_inf) / m - (v_n - mu)      (over N)
        N ||A - 1/N||^2 = rho^2 by     g_n = (w_n^2 - E[w^2]) / m^2 - 2 E[w^2] (w_n - m) / m^3  (over N)
    so that
        mean_d(N) ~ sqrt(N) (O_inf,d - mu_d) / rho                          (`drift`: the factor of sqrt(N))
        var_d(N) -> E[(a_d / rho - (O_inf,d - mu_d) g / (2 rho^3))^2]        (`variance`)
    The variance settles to a constant; the mean grows unless O_inf = mu."""
    p, w, v = tables.probs, torch.exp(tables.logits), tables.values
    m, q = p @ w, p @ w**2
    rho = torch.sqrt(q / m**2 - 1)
    mu, limit = p @ v, limit_output(tables)
    a = (w / m).unsqueeze(1) * (v - limit) - (v - mu)  # (V, D)
    g = (w**2 - q) / m**2 - 2 * q * (w - m) / m**3  # (V,)
    influence = a / rho - (limit - mu) * g.unsqueeze(1) / (2 * rho**3)
    return {"drift": (limit - mu) / rho, "variance": p @ influence**2}


def global_statistics(tables: Tables, setting: Setting, n: int, n_sequences: int, seed: int = 0) -> dict:
    """The paper's Figure 3 quantities for one length: the mean over sequences of the
    global mean (1/D) sum_d O_d and of the global variance (1/D) sum_d (O_d - mean)^2."""
    means, variances = [], []
    for index, rows in blocks(n_sequences):
        gen = rng.generator(tables.device, seed, "global", n, index)
        _, out = attend(tables, setting, sample_tokens(tables, setting, gen, rows, n), gen)
        means.append(out.mean(1))
        variances.append(out.var(1, unbiased=False))
    mu, var = torch.cat(means), torch.cat(variances)
    return {"N": n, "global_mean": float(mu.mean()), "global_mean_se": float(mu.std() / math.sqrt(len(mu))),
            "global_variance": float(var.mean()), "global_variance_se": float(var.std() / math.sqrt(len(var)))}
