"""Chapter parameters: each chapter's file declares them (chapters/declare.py), and its notebook's
`parameters` cell is written from that declaration.

Each line of that cell reads `name: type = value  # help`; papermill parses the same
lines for `papermill --help-notebook`.  A default that several chapters share is written once
(declare.DEFAULTS).  On top of the declared values sit named profiles (e.g. `ci`, `paper`); a value given
explicitly (`-p NAME VALUE`) always wins over the profile's.  Every value is checked here, before any
computation starts.
"""

import ast
import json
import math
from dataclasses import dataclass

from . import paper_tasks
from ...errors import ParameterError, fraction, int_at_least, ints_at_least, require, true_or_false  # noqa: F401  (ParameterError, require: read here by the upper layers)
from ...evaluate import FIELD_RULES as EVAL_RULES
from ...model import FIELD_RULES as MODEL_RULES
from ...train_config import FIELD_RULES as TRAIN_RULES

DEFAULT_PROFILE = "default"  # the values written in the parameters cell
DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # int | float | str | bool | list
    default: object
    help: str


# Chapters 8-11 give what differs between the tasks as one dict per setting: `steps: dict = {"argmax": 3000, ...}`,
# each value checked by the plain name's rule; `-p steps '{"dictionary": 600}'` changes one task's, `-p steps 600` all.
PER_TASK = ("steps", "n_eval_sequences", "seed_chunk", "deep_seed_chunk", "long_steps", "long_seeds",
            "long_seed_chunk", "long_eval_sequences")


def task_value(P, name: str, task: str):
    """One task's value of a setting: a two-task chapter's per-task dict, else the one value."""
    value = P[name]
    return value[task] if isinstance(value, dict) else value


# A chapter's training parameters are its configs' fields by name (TrainConfig's all, ModelConfig's
# MODEL_PARAMETERS); EvalConfig's carry names of their own (EVAL_FIELDS), beside the training settings in a cell.
MODEL_PARAMETERS = ("hidden", "encoder_layers", "readout_layers", "key_dim", "value_dim", "encode_query", "query_table",
                    "attention")
# ModelConfig fields that only a chapter 11 row sets, never a cell (chapter 3's `heads` means something else).
ROW_MODEL_FIELDS = ("heads", "layers", "norm_layers")


def model_changes(row: dict) -> dict:
    """The settings of the model a row (chapter 11's, or a measured run's) changes (heads, hidden, ...): {} for a
    row of training settings alone."""
    return {name: value for name, value in row.items() if name in (*MODEL_PARAMETERS, *ROW_MODEL_FIELDS)}


EVAL_FIELDS = {"eval_lengths": "lengths", "n_eval_sequences": "n_sequences", "eval_seed": "seed", "draws": "draws"}
CONFIG_RULES = {**TRAIN_RULES, **{name: MODEL_RULES[name] for name in MODEL_PARAMETERS},
                **{name: EVAL_RULES[field] for name, field in EVAL_FIELDS.items()}}


def rule_of(name: str):
    """(accepts?, accepted values in words) for a parameter (each task's value of a per-task one), or None:
    its config field's rule if it names one, else its own in RULES."""
    return CONFIG_RULES.get(name) or RULES.get(name) or (ROWS_RULE if name in row_parameters().values() else None)


def row_parameters() -> dict:
    """{task: its list of rows' name} for chapter 11, one per registered task: "argmax_rows", ..."""
    return {task: f"{task}_rows" for task in paper_tasks.NAMES}


# Range rules by parameter name, shared by every chapter that uses the name; a parameter named as a
# config field has that field's rule (CONFIG_RULES), written once, in the config's module.
def _list_of_dicts(may_be_empty=False):
    def ok(v):
        return isinstance(v, list) and (may_be_empty or len(v) > 0) and all(isinstance(r, dict) for r in v)

    return ok, ("a list of dicts of settings ([]: none)" if may_be_empty else "a non-empty list of dicts of settings")


ROWS_RULE = _list_of_dicts(may_be_empty=True)  # a task's rows; at least one in all: sensitivity.check_rows
RULES = {
    "n_classes": int_at_least(2),
    "n_keys": int_at_least(2),
    "n_values": int_at_least(2),
    "n_probe_sequences": int_at_least(2),
    "n_examples": int_at_least(1),
    "shown_seed": int_at_least(0),
    "distribution_lengths": ints_at_least(1),
    "heatmap_lengths": ints_at_least(1),
    "curriculum_fraction": fraction(),
    "seed_chunk": int_at_least(0),
    "deep_seed_chunk": int_at_least(0),
    "long_steps": int_at_least(0),
    "long_seeds": int_at_least(1),
    "long_seed_chunk": int_at_least(1),
    "long_seed_group": int_at_least(0),
    # chapter 9: the longer training's test sequences per length (variants.long_eval_params)
    "long_eval_sequences": int_at_least(0, " (0: n_eval_sequences)"),
    # chapter 6: which variants' longer runs it probes (chapters/c06_distribution_shift.long_variants_probed)
    "long_variants": ((lambda v: isinstance(v, list) and len(v) > 0 and all(isinstance(x, str) for x in v)
                       and len(set(v)) == len(v)), "a non-empty list of variant names, each once"),
    # chapter 7's sharpness test (chapters/c07_dispersion.sharpness_fits, sharpness_tests)
    "sharpness_main": true_or_false(),
    "sharpness_betas": ((lambda v: isinstance(v, list) and len(v) > 1 and len(set(v)) == len(v)
                         and all(isinstance(x, (int, float)) and math.isfinite(x) and x > 0 for x in v)),
                        "a list of two or more distinct numbers > 0"),
    "sharpness_lengths": ints_at_least(1),
    "sharpness_sequences": int_at_least(2),
    # chapters 4-5: the longer training again on the counter stream (chapters/c05_dictionary_lookup.counter_arm_fits)
    "counter_seeds": int_at_least(0),
    # chapters 4-5's measured runs (each row is checked by chapters/checks.measured_rows_fit)
    "device": ((lambda v: v in DEVICES), f"one of {', '.join(DEVICES)}"),
    # Monte Carlo chapters
    "d_model": int_at_least(1),
    "vocab_size": int_at_least(2),
    "exact_vocab_size": int_at_least(2),
    "exact_max_length": int_at_least(1),
    "n_sequences": int_at_least(2),
    "component": int_at_least(0),
    "lengths": ints_at_least(1),
    "components": ints_at_least(0),
    "logit_scale": ((lambda v: isinstance(v, float) and math.isfinite(v) and v >= 0), "a float >= 0"),
    "value_mean": ((lambda v: isinstance(v, float) and math.isfinite(v)), "a finite float"),
    "shifted_mean": ((lambda v: isinstance(v, float) and math.isfinite(v)), "a finite float"),
    "stickiness": ((lambda v: isinstance(v, float) and 0 <= v < 1), "a float in [0, 1)"),
    "layer": int_at_least(0),
    "heads": ((lambda v: isinstance(v, list) and all(int_at_least(0)[0](h) for h in v)),
              "a list of ints >= 0 (empty: all heads)"),
    "explore_lengths": ints_at_least(1),
    "explore_scales": ((lambda v: isinstance(v, list) and len(v) > 0
                        and all(isinstance(x, (int, float)) and math.isfinite(x) and x > 0 for x in v)),
                       "a non-empty list of numbers > 0"),
    "explore_sequences": int_at_least(2),
    "histogram_bins": int_at_least(2),
    # chapter 11 (each row is checked by sensitivity.check_rows)
    "compared_lengths": ints_at_least(1),
    # chapter 10
    "deep_heads": int_at_least(1),
    "deep_layers": int_at_least(1),
    "probe_sequences": int_at_least(2),
    "mc_d_model": int_at_least(1),
    "mc_vocab_size": int_at_least(2),
    "mc_lengths": ints_at_least(1),
    "mc_sequences": int_at_least(2),
    "mc_components": ints_at_least(0),
    "models": ((lambda v: isinstance(v, list) and v and all(isinstance(m, str) and m.strip() for m in v)),
               "a non-empty list of model names or paths ('bundled', 'smollm2', a model directory or a .gguf file)"),
    "depth_lengths": ints_at_least(1),
    "depth_sequences": int_at_least(2),
    "store_dir": ((lambda v: isinstance(v, str) and v.strip() != ""), "a non-empty path"),
    "output_dir": ((lambda v: isinstance(v, str) and v.strip() != ""), "a non-empty path"),
    "results_dir": ((lambda v: isinstance(v, str) and v.strip() != ""), "a non-empty path"),
    "paper_scale_dir": ((lambda v: isinstance(v, str)), "a results store's path, or '' to leave that section out"),
}

_TYPES = {"int": int, "float": float, "str": str, "bool": bool, "list": list, "dict": dict}


def _check_type(param: Param, value):
    """The value converted to the declared type (int -> float allowed), or an error."""
    expected = _TYPES.get(param.type)
    if expected is None:
        raise ParameterError(f"{param.name}: the notebook declares an unsupported type {param.type!r}")
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if expected is list and isinstance(value, tuple):
        return list(value)
    if isinstance(value, bool) and expected is not bool or not isinstance(value, expected):
        raise ParameterError(f"{param.name}: expected {param.type}, got {type(value).__name__} {value!r}")
    return value


def unknown_parameter(name: str, spec: dict, chapter: str = "") -> ParameterError:
    """The error for a name the chapter's cell does not declare, listing the ones it does."""
    where = f" for {chapter}" if chapter else ""
    return ParameterError(f"unknown parameter {name!r}{where}; valid parameters: {', '.join(spec)}")


def validate(spec: dict[str, Param], values: dict, profiles) -> dict:
    """Checked and type-converted values; raises ParameterError naming the parameter."""
    unknown = sorted(set(values) - set(spec))
    if unknown:
        raise unknown_parameter(unknown[0], spec)
    checked = {}
    for name, param in spec.items():
        value = _check_type(param, values.get(name, param.default))
        if name == "profile":
            if value not in profiles:
                raise ParameterError(f"profile: expected one of {', '.join(profiles)}, got {value!r}")
        elif param.type == "dict":
            _check_per_task(param, value)
        elif (rule := rule_of(name)) is not None:
            ok, accepted = rule
            if not ok(value):
                raise ParameterError(f"{name}: expected {accepted}, got {value!r}")
        checked[name] = value
    return checked


def _check_per_task(param: Param, value: dict):
    """A per-task setting: the tasks of the cell's dict, each value by the setting's rule."""
    if set(value) != set(param.default):
        raise ParameterError(f"{param.name}: expected a value for each of {', '.join(param.default)}, got {value!r}")
    ok, accepted = rule_of(param.name)
    for task, v in value.items():
        if not ok(v):
            raise ParameterError(f"{param.name}[{task!r}]: expected {accepted}, got {v!r}")


def _per_task_layers(param: Param, *layers) -> dict:
    """A per-task setting's value: the cell's dict, updated by each layer given (a profile's, then the
    command line's): a dict changes the tasks it names, a plain value sets every task."""
    value = dict(param.default)
    for layer in layers:
        if isinstance(layer, dict):
            value.update(layer)
        elif layer is not None:
            value = {task: layer for task in param.default}
    return value


def resolve(spec, profiles: dict, values: dict, explicit: set) -> dict:
    """Apply the chosen profile under the explicitly given values, then validate."""
    profile = values.get("profile", spec["profile"].default if "profile" in spec else DEFAULT_PROFILE)
    names = [DEFAULT_PROFILE, *profiles]
    if profile not in names:
        raise ParameterError(f"profile: expected one of {', '.join(names)}, got {profile!r}")
    chosen = profiles.get(profile, {})
    merged = dict(values)
    for name, value in chosen.items():
        if name not in explicit:
            merged[name] = value
    for name, param in spec.items():
        if param.type == "dict":
            merged[name] = _per_task_layers(param, chosen.get(name), values[name] if name in explicit else None)
    return validate(spec, merged, names)


def coerce(param: Param, text: str):
    """A command-line string as a value of the parameter's declared type."""
    try:
        if param.type == "str":
            return text
        if param.type == "bool":
            if text.lower() in ("true", "1", "yes"):
                return True
            if text.lower() in ("false", "0", "no"):
                return False
            raise ValueError
        value = _literal(text)
    except (ValueError, SyntaxError):
        raise ParameterError(f"{param.name}: expected {param.type} (a Python or JSON literal), got {text!r}") from None
    return _check_type(param, value)


def _literal(text: str):
    """A Python literal, or JSON where it differs (true, false, null): a shell user writes either."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return json.loads(text)  # json.JSONDecodeError is a ValueError


def injected_names() -> set:
    """Names papermill injected into the running kernel (its cell starts '# Parameters')."""
    try:
        from IPython import get_ipython

        history = get_ipython().user_ns.get("In", [])
    except (ImportError, AttributeError):
        return set()
    for source in reversed(history):
        if source.splitlines()[:1] == ["# Parameters"]:
            tree = ast.parse(source)
            return {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                    if isinstance(t, ast.Name)}
    return set()


class Params(dict):
    """Resolved parameters; read them as P.name or P["name"]."""

    __getattr__ = dict.__getitem__


def settings_label(row: dict) -> str:
    """Changed settings in words: 'defaults', or each change as name=value ('hidden=64, lr=0.003')."""
    return ", ".join(f"{name}={value}" for name, value in row.items()) or "defaults"
