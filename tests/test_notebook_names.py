"""Every name a notebook's code takes from a vvlib module exists there: a moved or renamed function fails here in
seconds instead of in the end-to-end chapter run."""

import ast
import importlib
import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def code(notebook: Path) -> ast.Module:
    cells = [c for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code"]
    return ast.parse("\n".join("".join(c["source"]) for c in cells))


def missing_names(tree: ast.Module) -> list[str]:
    """'module.name' for each attribute the code reads from a vvlib module it imports, where the module lacks it
    (unless the code binds the module's name to something else); and each name it imports from a vvlib module
    that the module lacks."""
    modules, missing = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("vvlib"):
            for alias in node.names:
                try:
                    modules[alias.asname or alias.name] = importlib.import_module(f"{node.module}.{alias.name}")
                except ModuleNotFoundError:  # a name, not a module
                    if not hasattr(importlib.import_module(node.module), alias.name):
                        missing.append(f"{node.module}.{alias.name}")
    rebound = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    modules = {name: module for name, module in modules.items() if name not in rebound}  # a name the code reuses
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            if not hasattr(modules[node.value.id], node.attr):
                missing.append(f"{modules[node.value.id].__name__}.{node.attr}")
    return missing


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_every_name_a_notebook_takes_from_vvlib_exists(notebook):
    assert missing_names(code(notebook)) == []


def test_the_check_finds_a_moved_function_and_a_missing_import():
    tree = ast.parse("from vvlib.experiments.reports import plots\nfrom vvlib.stats import no_such_name\n"
                     "plots.accuracy_vs_length()\nplots.attention_heatmaps()\n")
    assert missing_names(tree) == ["vvlib.stats.no_such_name", "vvlib.experiments.reports.plots.attention_heatmaps"]
