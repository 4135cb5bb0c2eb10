"""The package's layers, as its docstring lists them, are its folders, and its imports follow them."""

import ast
import re
from pathlib import Path

import vvlib

PACKAGE = Path(vvlib.__file__).parent
FOLDERS = ["", "experiments", "book"]  # the science, the experiments, the book: top to bottom

# Imports against the layering, each with its reason; anything else fails the test (none today).
ALLOWED = {}


def listed_layers() -> list[list[str]]:
    """The modules of each layer, in the docstring's order (top: the science)."""
    layers = []
    for line in vvlib.__doc__.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            layers.append([])
        elif (m := re.match(r"^ {4}(\w+)\s", line)) and layers:
            layers[-1].append(m.group(1))
    return [layer for layer in layers if layer]


def module_path(layer: int, module: str) -> Path:
    """Where a listed module lives: its layer's folder (a package listed as one module: its folder);
    the command line at the package's top."""
    return PACKAGE / (f"{module}.py" if module == "__main__" else Path(FOLDERS[layer]) / module
                      if (PACKAGE / FOLDERS[layer] / module).is_dir() else Path(FOLDERS[layer]) / f"{module}.py")


def _imported(nodes, inside: int) -> set[str]:
    """The listed modules named by relative imports among `nodes`: the first part of the module path
    past the layer folders ("experiments.records.scales" -> "records"), or the names imported from
    a folder.  inside: how many levels of relative import stay inside the package the nodes' file is in
    (0: a module; 1: a file at a package's top; 2: a file in one of its folders)."""
    names = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level > inside:
            parts = [p for p in (node.module or "").split(".") if p and p not in FOLDERS]
            names |= {parts[0]} if parts else {alias.name for alias in node.names}
    return names


def _files(path: Path) -> list[Path]:
    return sorted(path.rglob("*.py")) if path.is_dir() else [path]


def imported_modules(path: Path) -> set[str]:
    """The vvlib modules a file (or a package's files, its folders' included) imports (relative imports, at the
    top or inside functions)."""
    def inside(f: Path) -> int:
        return len(f.relative_to(path).parts) if path.is_dir() else 0
    return set().union(*(_imported(ast.walk(ast.parse(f.read_text())), inside(f)) for f in _files(path)))


def test_each_layer_is_one_folder_and_the_docstring_lists_its_modules():
    layers = listed_layers()
    assert len(layers) == len(FOLDERS)
    for layer, (listed, folder) in enumerate(zip(layers, FOLDERS)):
        on_disk = ({p.stem for p in (PACKAGE / folder).glob("*.py")} - {"__init__"}) | {
            p.parent.name for p in (PACKAGE / folder).glob("*/__init__.py") if p.parent.name not in FOLDERS}
        if folder == "":
            on_disk -= {"__main__"}
        assert sorted(set(listed) - {"__main__"}) == sorted(on_disk), f"vvlib/{folder}: list each module once"
        assert len(listed) == len(set(listed))
    assert all(module_path(i, m).exists() for i, layer in enumerate(layers) for m in layer)


def test_no_module_imports_from_a_layer_below_its_own():
    layers = listed_layers()
    rank = {m: i for i, layer in enumerate(layers) for m in layer}
    against = {(m, other) for i, layer in enumerate(layers) for m in layer
               for other in imported_modules(module_path(i, m)) if rank[other] > rank[m]}
    assert against == set(ALLOWED), f"imports against the layers: {sorted(against - set(ALLOWED))}"


def test_the_layer_check_sees_imports_inside_functions_and_across_folders(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("from .experiments.store import x\n\ndef f():\n    from ..book import chapters, build\n"
                      "    from . import rng\n    from ..model import ModelConfig\n")
    assert imported_modules(source) == {"store", "chapters", "build", "rng", "model"}
    # a package listed as one module: its files' imports, less those among themselves
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .a import x\n")
    (package / "a.py").write_text("from .. import probes\nfrom ..paper_tasks import ARGMAX\n"
                                  "def f():\n    from ...book.chapters.scales import y\n")
    assert imported_modules(package) == {"probes", "paper_tasks", "chapters"}
    (package / "sub").mkdir()  # a folder of the package: its level-2 imports are the package's own
    (package / "sub" / "b.py").write_text("from .. import a\nfrom ... import model\n")
    assert imported_modules(package) == {"probes", "paper_tasks", "chapters", "model"}


def test_the_experiment_rooms_import_only_the_rooms_listed_before_them():
    """vvlib/experiments/ is four packages, listed bottom-up in the package docstring: what a page
    shows (reports) reads what the chapters ask for (records, setups) and the store, never the reverse."""
    rooms = listed_layers()[FOLDERS.index("experiments")]
    assert rooms == ["storage", "setups", "records", "reports"]
    rank = {room: i for i, room in enumerate(rooms)}
    later = {(room, other) for room in rooms for other in imported_modules(module_path(1, room)) & set(rooms)
             if rank[other] >= rank[room]}
    assert later == set(), f"rooms importing a room listed after them: {sorted(later)}"


def test_the_docstring_lists_every_module_of_every_room():
    """A room (a package inside a layer) lists its modules and folders indented under it, each once."""
    lines = vvlib.__doc__.splitlines()
    for folder, layer in zip(FOLDERS, listed_layers()):
        for room in [m for m in layer if (PACKAGE / folder / m).is_dir()]:
            at = next(i for i, line in enumerate(lines) if re.match(rf"^ {{4}}{room}\s", line))
            under = []
            for line in lines[at + 1:]:
                if not (m := re.match(r"^ {8}(\w+)\s", line)):
                    if re.match(r"^ {4}\S", line) or not line.strip():
                        break
                    continue
                under.append(m.group(1))
            on_disk = sorted(p.stem for p in (PACKAGE / folder / room).glob("*")
                             if p.suffix == ".py" and p.stem != "__init__" or (p / "__init__.py").exists())
            assert sorted(under) == on_disk, f"vvlib/{folder}/{room}: the docstring lists {sorted(under)}"


def module_graph() -> dict[str, set[str]]:
    """{module: the vvlib modules it imports}, dotted names from the package's top, counting relative imports
    anywhere in a file (inside functions too) and resolving `from . import x` to the module x where it is one."""
    graph = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        package = name if path.stem == "__init__" else name.rsplit(".", 1)[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    found.add(sub if (PACKAGE.parent / Path(*sub.split("."))).with_suffix(".py").exists() else target)
        graph[name] = found - {name}
    return graph


def cycles(graph: dict) -> list:
    """Every import cycle among the graph's modules, each as the list of modules around it (depth-first search)."""
    found, state = [], {}

    def visit(node, path):
        state[node] = "open"
        for other in sorted(graph.get(node, ())):
            if state.get(other) == "open":
                found.append(path[path.index(other):] + [other])
            elif other not in state:
                visit(other, path + [other])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_no_two_modules_import_each_other_even_inside_a_function():
    # a package's __init__ imports its own modules; a module importing its package's names is not a cycle of ours
    graph = {m: {o for o in targets if not m.startswith(o + ".")} for m, targets in module_graph().items()}
    assert cycles(graph) == []


def test_the_cycle_check_finds_a_cycle_hidden_inside_a_function():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_generic_reports_import_the_package_at_the_top_only():
    """An import of the package inside a function can hide a cycle; the reports, which every chapter reads,
    keep theirs at the top of the module."""
    hidden = []
    for path in sorted((PACKAGE / "experiments" / "reports").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                hidden += [f"{path.name}:{inner.lineno}" for inner in ast.walk(node)
                           if isinstance(inner, ast.ImportFrom) and inner.level > 0]
    assert not hidden, hidden


MOST_LINES = 400  # a module longer than this holds more than one concept: split it


def test_no_module_runs_over_the_most_lines():
    lines = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert {name: n for name, n in lines.items() if n > MOST_LINES} == {}
