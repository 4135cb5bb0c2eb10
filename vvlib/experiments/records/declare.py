"""A chapter's parameters, declared in its file: a name, a default and a help text each (the type is the
default's).  A value several chapters share is written once, in DEFAULTS; its help once too where the chapters
say the same (HELP).  The notebook's `parameters` cell is generated from the declaration
(`python -m vvlib.book.generated --write`); tests/test_params.py fails on a cell that differs."""

import dataclasses
import json

from ...evaluate import EvalConfig
from ...model import ModelConfig
from ...montecarlo import RandomAttention
from ...tasks import TaskConfig
from ...train_config import TrainConfig
from ..setups.paper_tasks import ARGMAX, TASKS, PaperTask
from ..setups.params import Param

TYPES = {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict"}
CELL_HEADER = "# Parameters of this chapter. Run with papermill: -p NAME VALUE; see `python -m vvlib list`."


def science_default(config, name: str):
    """The default the science layer's dataclass `config` gives its field `name` (so each lives once)."""
    for field in dataclasses.fields(config):
        if field.name == name:
            return field.default
    raise KeyError(f"{config.__name__} has no field {name!r}")


# the defaults that two chapters or more share (each chapter's cell repeats them; this is their one definition)
DEFAULTS = {
    "profile": "default",
    "d_model": science_default(RandomAttention, "d_model"),
    "vocab_size": science_default(RandomAttention, "vocab_size"),
    "lengths": [16, 64, 256, 1024, 4096, 16384],
    "n_sequences": 20000,
    "seed": 0,
    "device": "auto",
    "components": [0, 1, 2, 3, 4],
    "store_dir": "results/store",
    "n_seeds": 8,
    # chapter 4's (its record's default scale): chapters 6-7 probe its models
    "steps": ARGMAX.scales["default"]["steps"],
    "seed_chunk": 0,
    "batch_size": science_default(TrainConfig, "batch_size"),
    "hidden": science_default(ModelConfig, "hidden"),
    "n_classes": science_default(TaskConfig, "n_classes"),
    "min_len": science_default(TrainConfig, "min_len"),
    "max_len": science_default(TrainConfig, "max_len"),
    "lr": science_default(TrainConfig, "lr"),
    "weight_decay": science_default(TrainConfig, "weight_decay"),
    "eval_lengths": [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384],
    "eval_seed": science_default(EvalConfig, "seed"),
    "checkpoint_every": science_default(TrainConfig, "checkpoint_every"),
    "seed_group": science_default(TrainConfig, "seed_group"),
    "draws": science_default(TrainConfig, "draws"),
    "tf32": False,
    "long_steps": 0,
    "long_seeds": ARGMAX.scales["default"]["long_seeds"],
    "long_seed_chunk": ARGMAX.scales["default"]["long_seed_chunk"],
    "long_seed_group": 4,
    "paper_scale_dir": "",
    "n_keys": science_default(TaskConfig, "n_keys"),
    "n_values": science_default(TaskConfig, "n_values"),
    "shown_seed": 0,
}

# the help texts that chapters sharing a default also share
HELP = {
    "profile": "named parameter set: default (these values), ci (a few minutes on 2 CPU cores), book (the published "
        "book's scale; its results are committed in results/book) or paper (the paper's scale; wants a GPU); a -p "
        "value wins over the profile",
    "vocab_size": "size of the finite vocabulary",
    "lengths": "sequence lengths N",
    "seed": "training seed; seed index s draws from the streams (seed, s)",
    "device": "auto, cpu or cuda",
    "store_dir": "trained weights and evaluations are cached here (relative paths: from the repository root)",
    "n_seeds": "independent training runs per variant (the paper: 100)",
    "steps": "AdamW steps per run (chapter 4's default)",
    "seed_chunk": "seeds per stored run (chapter 4's, so its models are reused; 0: all in one run)",
    "batch_size": "training sequences per step and seed",
    "hidden": "width D of the encoder, the attention and the readout",
    "n_classes": "argmax: classes an item can carry",
    "min_len": "shortest training sequence",
    "max_len": "longest training sequence (the paper: 16)",
    "lr": "AdamW learning rate",
    "weight_decay": "AdamW weight decay",
    "eval_lengths": "test lengths N",
    "n_eval_sequences": "test sequences per length, per task (chapters 4 and 5's defaults)",
    "eval_seed": "names the test sequences",
    "checkpoint_every": "steps between checkpoints (an interrupted run resumes from the last)",
    "seed_group": "seeds trained in one batch: 0 all (as every stored result); on a CPU 4 trains faster but rounds "
        "differently, so it gets its own store entries",
    "draws": "where training and test data come from: generators (a torch generator per seed; every committed result) "
        "or counter (a Philox counter stream: the same bits on CPU and GPU, every seed drawn at once)",
    "tf32": "float32 matrix products in TF32 on a CUDA GPU: faster, and a different run with store entries of its own; "
        "off until a paired comparison on the same seeds is committed (bench/tf32_ab.py)",
    "long_seeds": "seeds of the longer training probed: its first ones (chapter 4's runs, so they are reused)",
    "long_seed_chunk": "seeds per stored run of the longer training (chapter 4's)",
    "long_seed_group": "seed_group of the longer training (4 trains faster on a CPU)",
    "paper_scale_dir": "a results store holding this chapter's runs at the paper profile (trained on a GPU), shown in the first "
        "section; \"\" leaves that section out (the book profile: results/paper)",
    "n_keys": "dictionary: key classes C_K",
    "n_values": "dictionary: value classes C_V",
}


def param(name: str, default, help_text: str) -> Param:
    """One parameter of a chapter's own: its type is its default's."""
    if type(default) not in TYPES:
        raise TypeError(f"{name}: a default must be one of {', '.join(t.__name__ for t in TYPES)}; got {default!r}")
    return Param(name, TYPES[type(default)], default, help_text)


def shared(name: str, help_text: str = "") -> Param:
    """A parameter whose default is the one in DEFAULTS, with its help from HELP unless a chapter says its own."""
    return param(name, DEFAULTS[name], help_text or HELP[name])


def shared_each(*names: str) -> tuple:
    """Several parameters with their shared defaults and help texts, in the order given."""
    return tuple(shared(name) for name in names)


def task_param(task: PaperTask, name: str, help_text: str) -> Param:
    """A parameter of one task's chapter whose default is that task's (its record's default scale)."""
    return param(name, task.scales["default"][name], help_text)


def each_task(name: str, help_text: str = "", values=None) -> Param:
    """A parameter of a chapter that trains every task: a value per task, keyed by the task's name.  `values` is
    {task record: value}, or one value for every task; a task it does not name (a task registered beside the
    paper's two) takes its default: its record's default scale, else the shared one."""
    def default(task):
        if isinstance(values, dict):
            if task in values:
                return values[task]
        elif values is not None:
            return values
        own = task.scales["default"]
        return own[name] if name in own else DEFAULTS[name]
    return param(name, {task.name: default(task) for task in TASKS}, help_text or HELP[name])


def literal(value) -> str:
    """A default as the cell writes it: Python, with strings in double quotes."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def cell_source(params) -> str:
    """The notebook's `parameters` cell: one `name: type = value  # help` line per parameter."""
    return "\n".join([CELL_HEADER, *(f"{p.name}: {p.type} = {literal(p.default)}  # {p.help}" for p in params)])
