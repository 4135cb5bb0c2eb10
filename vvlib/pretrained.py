"""Figure 1 on a real pretrained transformer: how the spread of one layer's attention
output across inputs changes with the input length N.

Works on any model that vvlib/model_files.py finds (a BERT-style encoder, a GPT-2, a Llama
checkpoint, a GGUF file ...).  Modules are found by what they are, not by one model's
attribute path:

* a layer's attention is the outermost module whose class name ends in "Attention"
  (BertAttention, GPT2Attention, LlamaAttention ...), counted in layer order;
* its output projection is the last linear map registered inside it (BERT's
  output.dense, GPT-2's c_proj, Llama's o_proj); the input of that map is the attention
  output of all heads, concatenated, before projection: what we measure;
* positions are removed by zeroing a learned absolute position table (an embedding with
  one row per position) or by making a rotary embedding the identity (cos 1, sin 0).
"""

import re
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from . import rng
from .model_files import ModelInfo, load

STRATEGIES = ("random_no_pe", "random_pe", "sentences_pe")
_ATTENTION_ELEMENTS = 2**25  # rows x heads x N x N per forward pass: bounds the attention matrix's memory


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


def attention_outputs(model, layers, input_ids: torch.Tensor, position: int = -1) -> dict:
    """{layer: its attention output (all heads, before the output projection) at token
    `position` of every row of input_ids, (rows, hidden)} for each of `layers`; the forward
    pass stops once the deepest of them is captured."""
    modules, captured, deepest = attention_modules(model), {}, max(layers)

    def grab(layer):
        def hook(_module, args):
            captured[layer] = args[0][:, position].detach()
            if layer == deepest:
                raise _Captured
        return hook

    handles = [output_projection(modules[layer][1]).register_forward_pre_hook(grab(layer)) for layer in layers]
    try:
        model(input_ids=input_ids)
    except _Captured:
        pass
    finally:
        for handle in handles:
            handle.remove()
    return captured


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
def outputs_at_length(model, info: ModelInfo, layers, input_ids: torch.Tensor, device="cpu") -> dict:
    """attention_outputs ({layer: (rows, hidden)}) for every row, in batches small enough for
    the N x N attention."""
    rows, n = input_ids.shape
    per_batch = max(1, _ATTENTION_ELEMENTS // (info.n_heads * n * n))
    parts = [attention_outputs(model, layers, input_ids[i:i + per_batch].to(device))
             for i in range(0, rows, per_batch)]
    return {layer: torch.cat([part[layer].float().cpu() for part in parts]) for layer in layers}


def measure_layers(model, tokenizer, info: ModelInfo, layers, lengths, n_sequences: int, seed: int, device="cpu",
                   progress=True):
    """{strategy: {N: {layer: attention outputs (n_sequences, hidden)}}} and how positions were removed.

    The two random strategies use the same token sequences, so they differ only in the
    position information; real text needs a tokenizer and is skipped without one."""
    from tqdm import tqdm

    ids = ordinary_token_ids(model, tokenizer)
    corpus = corpus_tokens(tokenizer) if tokenizer is not None else None
    outputs, how = {s: {} for s in STRATEGIES}, ""
    for n in tqdm(lengths, desc="lengths", disable=not progress):
        tokens = random_tokens(ids, n_sequences, n, seed)
        outputs["random_pe"][n] = outputs_at_length(model, info, layers, tokens, device)
        with without_positions(model, info) as how:
            outputs["random_no_pe"][n] = outputs_at_length(model, info, layers, tokens, device)
        if corpus is not None:
            windows = sentence_windows(*corpus, n_sequences, n, seed)
            outputs["sentences_pe"][n] = outputs_at_length(model, info, layers, windows, device)
    return {s: by_n for s, by_n in outputs.items() if by_n}, how


def measure(model, tokenizer, info: ModelInfo, layer: int, lengths, n_sequences: int, seed: int, device="cpu",
            progress=True):
    """measure_layers at one layer: {strategy: {N: attention outputs (n_sequences, hidden)}}, how."""
    outputs, how = measure_layers(model, tokenizer, info, [layer], lengths, n_sequences, seed, device, progress)
    return {s: {n: by_layer[layer] for n, by_layer in by_n.items()} for s, by_n in outputs.items()}, how


def layer_slope_frame(outputs: dict) -> "pd.DataFrame":
    """One row per (strategy, layer) of measure_layers' outputs: the log-log slope against N of
    the root mean square over all components of their standard deviation across sequences,
    with its 95% interval (montecarlo.fit_loglog_slope)."""
    import pandas as pd

    from .montecarlo import fit_loglog_slope

    rows = []
    for strategy, by_n in outputs.items():
        lengths = sorted(by_n)
        for layer in by_n[lengths[0]]:
            spread = [float(by_n[n][layer].var(dim=0).mean().sqrt()) for n in lengths]
            slope, low, high = fit_loglog_slope(lengths, spread)
            rows.append({"strategy": strategy, "layer": layer, "slope": slope, "low": low, "high": high})
    return pd.DataFrame(rows)


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


def spread_by_length(frame) -> dict:
    """{strategy: {N: root mean square over the followed components of their std}} from std_frame."""
    rms = frame.groupby(["strategy", "N"], sort=False)["std"].apply(lambda s: float((s**2).mean() ** 0.5))
    return {s: {n: v for (s2, n), v in rms.items() if s2 == s} for s in dict.fromkeys(frame["strategy"])}


@dataclass
class Probe:
    """One model's measurements for chapter 3."""
    info: ModelInfo
    n_parameters: int
    attention_name: str  # the measured layer's attention module
    outputs: dict  # measure()'s at the chapter's layer: {strategy: {N: (n_sequences, hidden)}}
    positions_removed: str  # how, in a sentence
    layer_slopes: "pd.DataFrame"  # layer_slope_frame over every layer


def probe(info: ModelInfo, layer: int, lengths, n_sequences: int, depth_lengths, depth_sequences: int, seed: int,
          device="cpu", progress=True) -> Probe:
    """Load one model, measure its layer `layer` at `lengths` and every layer at `depth_lengths`
    (fewer, shorter inputs: the whole model runs), and let the weights go."""
    model, tokenizer = load(info, device)
    outputs, how = measure(model, tokenizer, info, layer, lengths, n_sequences, seed, device, progress)
    every_layer, _ = measure_layers(model, tokenizer, info, range(info.n_layers), depth_lengths, depth_sequences,
                                    seed, device, progress)
    return Probe(info, sum(p.numel() for p in model.parameters()), attention_modules(model)[layer][0], outputs, how,
                 layer_slope_frame(every_layer))


def position_sentence(fits: dict, labels: dict) -> str:
    """The fitted slopes ({strategy: (slope, low, high)}) in words, and whether removing positions
    made the decay steeper than with them (the 95% intervals apart) as in the paper's figure."""
    text = (f"Measured slopes: {', '.join(f'{labels[k]} {b:.2f}' for k, (b, _, _) in fits.items())} "
            "(Proposition 1's i.i.d. setting predicts -0.5 at large N).")
    if "random_no_pe" not in fits or "random_pe" not in fits:
        return text
    (_, lo_no, hi_no), (_, lo_pe, hi_pe) = fits["random_no_pe"], fits["random_pe"]
    if hi_no < lo_pe:
        return text + (" Without positions the decay is steeper than with them, as in the paper's figure (the 95% "
                       "intervals do not overlap).")
    if hi_pe < lo_no:
        return text + (" Without positions the decay is *shallower* than with them, unlike the paper's figure "
                       "(the 95% intervals do not overlap).")
    return text + (" With and without positions the slopes cannot be told apart (their 95% intervals overlap); "
                   "in the paper's Llama figure the random tokens without positions decay faster.")


def depth_sentence(name: str, frame, labels: dict) -> str:
    """layer_slope_frame in words: per kind of input, at how many layers the spread falls with N
    (the slope's 95% interval below zero) or rises, and the steepest layer."""
    parts = []
    for strategy, rows in frame.groupby("strategy", sort=False):
        steepest = rows.loc[rows["slope"].idxmin()]
        parts.append(f"*{labels[strategy]}*: it falls at {int((rows['high'] < 0).sum())} of {len(rows)} layers and "
                     f"rises at {int((rows['low'] > 0).sum())}, steepest at layer {int(steepest['layer'])} "
                     f"({steepest['slope']:.2f})")
    return (f"Where the spread in {name} falls or rises with N (the slope's 95% interval below or above zero). "
            + ". ".join(parts) + ".")
