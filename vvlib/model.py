"""The paper's Baseline: one layer, one head, one query, no residual connection.

    items --encoder MLP--> h (N x D)        query --same encoder--> y (D)
    logits_n = <h_n W_K, y W_Q> / sqrt(D),  A = softmax(logits)
    (encode_query=False: the query's input features are y, and W_Q is F x D)
    O = sum_n A_n h_n W_V                    (the attention output of the paper)
    O' = norm(O)                             none | layernorm | standardize
    prediction = readout MLP(O')

The model is a *batched ensemble*: every weight has a leading seed dimension S, so
S independently initialised models train in one set of large matrix products.  Seed
s's weights depend only on (init_seed, s), never on which other seeds share the batch.

Since there is a single query, K and V are never materialised: h_n W_K . q equals
h_n . (q W_K^T), and sum_n A_n h_n W_V equals (sum_n A_n h_n) W_V.  This is the same
function, reordered, and saves two N x D x D products per sequence.

Chapter 10 extends it (all defaults give the paper's model, bit for bit):
    heads H        head j uses columns j*D/H..(j+1)*D/H of W_Q, W_K, W_V and scales its
                   logits by 1/sqrt(D/H); the heads' outputs are concatenated (no W_O)
    layers L       a stack of L attention layers over the same encoded items: the query of
                   layer l+1 is the (normed) output of layer l; no residual connection, as in
                   the paper's one layer.  Only the query is updated, so the cost stays O(N)
                   (self-attention among items would cost O(N^2), beyond a CPU at N = 2^14)
    logit_scale    none | log_n (attention.LOGIT_SCALES)
    norm           also rescale (attention.centred_mix)
    norm_layers    all | last: with several layers, the norm follows every layer's output (the paper's +LN
                   repeated) or only the last one's, the earlier layers' outputs passing on as they are
                   (chapter 11 asks which layer's norm sets the deep +LN apart)

Chapter 11 may swap the attention block (`attention`):
    paper          the block above: W_Q, W_K, W_V without biases, no output projection
    torch          torch.nn.MultiheadAttention's block with one head: biases on the Q, K and V
                   projections, an output projection W_O with a bias, the joint Q/K/V weight drawn
                   Xavier-uniform and every bias zero; the norm acts on the output of W_O
"""

import dataclasses
import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from . import rng, tasks
from .attention import LOGIT_SCALES, NORM_TABLE, NORMS, attention_weights, log_length
from .errors import check_fields, int_at_least, one_of, true_or_false
from .task_base import Batch
from .tasks import TaskConfig


@dataclass(frozen=True)
class ModelConfig:
    task: TaskConfig = field(default_factory=TaskConfig)
    hidden: int = 128  # D
    encoder_layers: int = 2  # Linear layers in the item encoder ("deep MLP")
    readout_layers: int = 2  # Linear layers in the readout MLP
    norm: str = "none"
    key_dim: int = 64  # dictionary: size of a key-class embedding
    value_dim: int = 64  # dictionary: size of a value-class embedding
    heads: int = 1  # H (chapter 10)
    layers: int = 1  # L attention layers (chapter 10)
    logit_scale: str = "none"  # none | log_n (chapter 10)
    encode_query: bool = True  # the query through the item encoder (our choice); False: its features go to W_Q as they are
    query_table: bool = False  # dictionary: the query gets an embedding table of its own (chapter 11); False: the key's
    attention: str = "paper"  # paper | torch: torch.nn.MultiheadAttention's block (chapter 11; see the docstring)
    norm_layers: str = "all"  # all | last: the layers whose output the norm follows (chapter 11; see the docstring)

    def __post_init__(self):
        check_fields(self, FIELD_RULES)
        if self.query_table and not tasks.get(self.task.name).query_table:
            raise ValueError(f"query_table: the {self.task.name} task has no query embedding to separate; "
                             f"tasks with one: {', '.join(n for n, t in tasks.TASKS.items() if t.query_table)}")
        if self.hidden % self.heads:
            raise ValueError(f"heads must divide hidden ({self.hidden}); got {self.heads}")
        if self.norm_layers == "last" and (self.norm not in LAST_LAYER_NORMS or self.layers == 1):
            raise ValueError(f"norm_layers 'last' leaves the norm off every layer but the last: it needs several layers "
                             f"and a norm on a layer's output ({', '.join(LAST_LAYER_NORMS)}); got layers={self.layers}, "
                             f"norm={self.norm!r}")
        if self.attention == "torch" and (self.heads, self.encode_query, self.norm == "rescale") != (1, True, False):
            raise ValueError("attention 'torch' is built with one head on an encoded query, weights that sum to 1 "
                             "(heads=1, encode_query=True, a norm other than rescale); got "
                             f"heads={self.heads}, encode_query={self.encode_query}, norm={self.norm!r}")

    @property
    def in_features(self) -> int:
        return tasks.get(self.task.name).in_features(self)


ATTENTION_BLOCKS = ("paper", "torch")
NORM_LAYERS = ("all", "last")
LAST_LAYER_NORMS = ("layernorm", "standardize")  # the norms on a layer's output (rescale acts inside the head)
# Each field's own values (errors.py), for ModelConfig's check and a chapter's parameters of the same names.
FIELD_RULES = {"norm": one_of(NORMS), "logit_scale": one_of(LOGIT_SCALES), "attention": one_of(ATTENTION_BLOCKS),
               "norm_layers": one_of(NORM_LAYERS),
               **{name: int_at_least(1) for name in ("hidden", "encoder_layers", "readout_layers", "key_dim",
                                                     "value_dim", "heads", "layers")},
               "encode_query": true_or_false(), "query_table": true_or_false()}
SSMAX_INIT = 0.43  # s at initialisation: s ln N = 1 at N = 10, inside the training lengths


# fields added after results were committed: left out of a spec at their default, so no stored entry moves
LATER_DEFAULTS = {"query_table": False, "attention": "paper", "norm_layers": "all"}


def settings(cfg: ModelConfig) -> dict:
    """The config as a plain dict, for store hashes: every field, so that a stored spec says
    everything (a store whose specs left fields out is refused: store.check_format),
    except those of LATER_DEFAULTS at their default."""
    spec = dataclasses.asdict(cfg)
    for name, default in LATER_DEFAULTS.items():
        if spec[name] == default:
            del spec[name]
    return spec


def normed(cfg: ModelConfig, layer: int) -> bool:
    """Whether the norm follows this layer's output (norm_layers)."""
    return cfg.norm_layers == "all" or layer == cfg.layers - 1


def layer_prefix(layer: int) -> str:
    """Weight-name prefix of an attention layer: '' for the first (the paper's names), 'l1.', ..."""
    return "" if layer == 0 else f"l{layer}."


def _uniform(gen, shape, bound):
    return (torch.rand(shape, generator=gen) * 2 - 1) * bound


def _init_one(cfg: ModelConfig, gen) -> dict:
    """One model's weights, created on the CPU in a fixed order (torch.nn.Linear's init)."""
    p = {}
    D = cfg.hidden

    def add_mlp(prefix, sizes):
        for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            bound = 1 / math.sqrt(fan_in)
            p[f"{prefix}{i}.w"] = _uniform(gen, (fan_in, fan_out), bound)
            p[f"{prefix}{i}.b"] = _uniform(gen, (fan_out,), bound)

    p.update(tasks.get(cfg.task.name).input_weights(cfg, gen))  # first: the task's input weights
    add_mlp("enc", [cfg.in_features] + [D] * cfg.encoder_layers)
    add_attention(p, cfg, gen, 0)
    add_mlp("out", [D] * cfg.readout_layers + [cfg.task.n_outputs])
    for layer in range(1, cfg.layers):  # drawn after the paper's weights, which so stay the same
        add_attention(p, cfg, gen, layer)
    if cfg.attention == "torch":  # W_O after all of them too
        for layer in range(cfg.layers):
            add_output_projection(p, cfg, gen, layer)
    return p


def add_attention(p: dict, cfg: ModelConfig, gen, layer: int):
    D, prefix = cfg.hidden, layer_prefix(layer)
    query_width = D if layer > 0 or cfg.encode_query else cfg.in_features  # the first layer's query: y's width
    # torch's block: Xavier-uniform; the paper's: like nn.Linear.  The same draws in the same order either way.
    xavier = math.sqrt(6 / (D + 3 * D)) if cfg.attention == "torch" else None
    p[prefix + "wq"] = _uniform(gen, (query_width, D), xavier or 1 / math.sqrt(query_width))
    for name in ("wk", "wv"):
        p[prefix + name] = _uniform(gen, (D, D), xavier or 1 / math.sqrt(D))
    if cfg.attention == "torch":
        # the key's bias (which the softmax ignores, one query) is kept so that the block has torch's parameters
        p.update({prefix + name: torch.zeros(D) for name in ("bq", "bk", "bv")})
    # consume no randomness: variants share all other weights
    if normed(cfg, layer):
        p.update({prefix + name: value for name, value in NORM_TABLE[cfg.norm].weights(D).items()})
    if cfg.logit_scale == "log_n":
        p[prefix + "ssmax.s"] = torch.full((cfg.heads,), SSMAX_INIT)


def add_output_projection(p: dict, cfg: ModelConfig, gen, layer: int):
    """torch's out_proj: nn.Linear's weight draw, its bias set to zero."""
    D, prefix = cfg.hidden, layer_prefix(layer)
    p[prefix + "wo"] = _uniform(gen, (D, D), 1 / math.sqrt(D))
    p[prefix + "bo"] = torch.zeros(D)


def init_params(cfg: ModelConfig, seeds, init_seed: int = 0, device="cpu") -> dict:
    """Stacked weights for the given seed indices: {name: tensor (S, ...)}."""
    ones = [_init_one(cfg, rng.generator("cpu", init_seed, "init", s)) for s in seeds]
    return {name: torch.stack([m[name] for m in ones]).to(device) for name in ones[0]}


def n_seeds(params: dict) -> int:
    return params["wq"].shape[0]


def linear(x, w, b=None):
    """x (S, ..., Din) times w (S, Din, Dout) (+ b (S, Dout)), one matmul for all seeds."""
    flat = x.reshape(x.shape[0], -1, x.shape[-1])
    y = torch.bmm(flat, w) if b is None else torch.baddbmm(b.unsqueeze(1), flat, w)
    return y.view(*x.shape[:-1], w.shape[-1])


def mlp(params, prefix, n_layers, x, dropout=None):
    """Linear layers with ReLU between them; `dropout` (training only): a function of a hidden
    activation's shape that returns the mask to multiply it by (see train.dropout_masks)."""
    for i in range(n_layers):
        x = linear(x, params[f"{prefix}{i}.w"], params[f"{prefix}{i}.b"])
        if i < n_layers - 1:
            x = torch.relu(x)
            if dropout is not None:
                x = x * dropout(x.shape)
    return x


def features(cfg: ModelConfig, params, batch: Batch):
    """Input features of the items (S, B, N, F) and of the query (S, B, F): the task's layout."""
    return tasks.get(cfg.task.name).features(cfg, params, batch, n_seeds(params))


def attention_layer(cfg: ModelConfig, params, prefix: str, q, h, mask, temperature):
    """One layer's heads at once: their attention weights (S, B, H, N) and output (S, B, D).  Head j's logits
    are h . (q_j W_K,j^T) / sqrt(D/H) and its output (sum_n A_jn h_n) W_V,j, so every head reads the items h,
    the layer's largest tensor by far, in one product for all heads (and its backward writes their gradient
    once) instead of once per head.  With one head these are the same products as the paper's model."""
    S, width = h.shape[0], cfg.hidden // cfg.heads
    cols = [slice(j * width, (j + 1) * width) for j in range(cfg.heads)]
    mask = None if mask is None else mask.unsqueeze(-2)  # (S, B, 1, N): the same items for every head
    # head j's q_j W_K,j^T / sqrt(d), (S, B, D), as column j of (S, B, D, H) (one head: a view, no copy)
    us = [linear(q[..., c], params[prefix + "wk"][:, :, c].transpose(1, 2)) / math.sqrt(width) for c in cols]
    u = us[0].unsqueeze(-1) if cfg.heads == 1 else torch.stack(us, dim=-1)
    logits = (h @ u).transpose(-1, -2)  # (S, B, H, N)
    if cfg.attention == "torch":  # (h W_K + b_K) . q: the bias's share is the same for every item (one head)
        bias_share = (q * params[prefix + "bk"].unsqueeze(1)).sum(-1, keepdim=True).unsqueeze(-1)
        logits = logits + bias_share / math.sqrt(width)
    if cfg.logit_scale == "log_n":
        s = params[prefix + "ssmax.s"].view(S, 1, cfg.heads, 1)
        logits = logits * s * log_length(logits, mask)
    attn = attention_weights(logits, temperature, mask)
    mixed = NORM_TABLE[cfg.norm].mix(attn, h, mask)  # (S, B, H, D)
    mixed = [mixed.squeeze(-2)] if cfg.heads == 1 else mixed.unbind(-2)  # each head's (S, B, D); one head: a view
    if cfg.attention == "torch":  # sum_n A_n (h_n W_V + b_V): the weights sum to 1
        return attn, linear(mixed[0], params[prefix + "wv"], params[prefix + "bv"])
    outs = [linear(m, params[prefix + "wv"][:, :, c]) for m, c in zip(mixed, cols)]
    return attn, outs[0] if cfg.heads == 1 else torch.cat(outs, dim=-1)


def normalize(cfg: ModelConfig, params, prefix: str, o):
    """The variant's norm on a layer's attention output (attention.NORM_TABLE)."""
    return NORM_TABLE[cfg.norm].apply(o, lambda name: params[prefix + name])


def forward(cfg: ModelConfig, params, batch: Batch, temperature="fixed", probe=False, dropout=None):
    """Class logits (S, B, n_outputs); with probe=True also the internals of the last
    layer as a dict (attention (S, B, N) with one head, (S, B, H, N) with several), and every
    layer's attention weights, first layer first ("layer_attention": a list of (S, B, H, N)).
    `dropout`: masks for the MLPs' hidden activations while training (mlp), None otherwise."""
    x, y = features(cfg, params, batch)
    h = mlp(params, "enc", cfg.encoder_layers, x, dropout)  # (S, B, N, D)
    z = mlp(params, "enc", cfg.encoder_layers, y, dropout) if cfg.encode_query else y  # (S, B, D or F): the query's state
    layer_attention = []
    for layer in range(cfg.layers):
        prefix = layer_prefix(layer)
        q = linear(z, params[prefix + "wq"], params.get(prefix + "bq"))  # (S, B, D)
        attn, o = attention_layer(cfg, params, prefix, q, h, batch.mask, temperature)
        layer_attention.append(attn)
        if cfg.attention == "torch":
            o = linear(o, params[prefix + "wo"], params[prefix + "bo"])
        z = normalize(cfg, params, prefix, o) if normed(cfg, layer) else o
    out = mlp(params, "out", cfg.readout_layers, z, dropout)
    if probe:
        return out, {"attention": attn[:, :, 0] if cfg.heads == 1 else attn, "output": o, "normalized": z,
                     "layer_attention": layer_attention}
    return out


def per_seed_loss(cfg: ModelConfig, params, batch: Batch, dropout=None) -> torch.Tensor:
    """Each seed's mean cross-entropy, (S,).  Sum it to train: seeds share no weights."""
    out = forward(cfg, params, batch, dropout=dropout)
    per_example = F.cross_entropy(out.flatten(0, 1), batch.target.flatten(), reduction="none")
    return per_example.view(out.shape[:2]).mean(dim=1)
