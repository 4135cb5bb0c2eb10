"""The package's layers, as its docstring lists them, are the ones its imports follow."""

import ast
import re
from pathlib import Path

import vvlib
from vvlib import store

PACKAGE = Path(vvlib.__file__).parent

# Imports against the layering, each with its reason; anything else fails the test.
ALLOWED = {
    ("train", "store"): "checkpoints are written with store's atomic save",
    ("pretrained", "params"): "a model-dependent bad value raises the ParameterError that `vvlib run` exits 2 on",
}


def listed_layers() -> list[list[str]]:
    """The modules of each layer, in the docstring's order (top: the science)."""
    layers = []
    for line in vvlib.__doc__.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            layers.append([])
        elif (m := re.match(r"^ {4}(\w+)\s", line)) and layers:
            layers[-1].append(m.group(1))
    return [layer for layer in layers if layer]


def imported_modules(path: Path) -> set[str]:
    """The vvlib modules a file imports, at the top or inside functions."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names |= {node.module} if node.module else {alias.name for alias in node.names}
    return names


def test_the_docstring_lists_every_module_once():
    listed = [m for layer in listed_layers() for m in layer]
    on_disk = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert len(listed_layers()) == 3
    assert sorted(listed) == sorted(on_disk), "list each vvlib module once in vvlib/__init__.py's docstring"


def test_no_module_imports_from_a_layer_below_its_own():
    rank = {m: i for i, layer in enumerate(listed_layers()) for m in layer}
    against = {(m, other) for m in rank for other in imported_modules(PACKAGE / f"{m}.py")
               if rank[other] > rank[m]}
    assert against == set(ALLOWED), f"imports against the layers: {sorted(against - set(ALLOWED))}"


def test_the_layer_check_sees_imports_inside_functions(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("from .store import x\n\ndef f():\n    from .chapters import get_chapter\n    from . import rng\n")
    assert imported_modules(source) == {"store", "chapters", "rng"}


def test_the_readme_layout_names_every_module():
    readme = (store.REPO_ROOT / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| `vvlib/` |"))
    missing = [m for layer in listed_layers() for m in layer if not m.startswith("__") and f"`{m}`" not in row]
    assert not missing, f"README's `vvlib/` row does not name {missing}"
