"""The layout holds: imports run one way, by the layer order written once in docs/architecture.md.

Every module of ``src/shardwise`` belongs to exactly one layer of the table under "## Layers";
an import (at module level or inside a function) may name a module of its own layer or of a
lower one, never a higher one, and no modules import each other in a cycle. The two plugin
loaders that load modules above them by name (the pass catalogue, the rule registry) do so
with `importlib` on purpose and are not imports. No module is longer than 700 lines.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "shardwise"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MAX_LINES = 700


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _layers() -> list[tuple[str, list[str]]]:
    """(layer name, module patterns relative to ``shardwise``) from the doc's table, lowest
    first. A row: ``| 3 | ir | `ir`, `ir.*` |``."""
    text = ARCHITECTURE.read_text()
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    layers = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].isdigit():
            layers.append((cells[1], re.findall(r"`([^`]*)`", cells[2])))
    return layers


LAYERS = _layers()


def _layer_of(module: str) -> int | None:
    """The layer whose pattern names `module` most closely (an exact name beats a glob)."""
    relative = "" if module == "shardwise" else module.removeprefix("shardwise.")
    globbed = None
    for index, (_, patterns) in enumerate(LAYERS):
        for pattern in patterns:
            if pattern == relative:
                return index
            if globbed is None and "*" in pattern and fnmatch.fnmatchcase(relative, pattern):
                globbed = index
    return globbed


def _resolve(name: str) -> str | None:
    """The module an imported name lives in: ``shardwise.ir.Op`` -> ``shardwise.ir``."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in MODULES:
            return candidate
        parts.pop()
    return None


def _imports(module: str) -> set[str]:
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            names = [f"{base}.{a.name}" for a in node.names]
        for name in names:
            target = _resolve(name)
            if target is not None and target != module:
                found.add(target)
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def test_the_doc_has_a_layer_table() -> None:
    assert len(LAYERS) >= 5, "docs/architecture.md: no '## Layers' table found"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_has_one_layer(module: str) -> None:
    assert _layer_of(module) is not None, (
        f"{module} is in no layer of docs/architecture.md '## Layers': add it to the table"
    )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_down_the_layers(module: str) -> None:
    own = _layer_of(module)
    upward = [
        f"{target} (layer '{LAYERS[layer][0]}')"
        for target in sorted(GRAPH[module])
        if (layer := _layer_of(target)) is not None and own is not None and layer > own
    ]
    assert not upward, (
        f"{module} (layer '{LAYERS[own][0]}') imports from a higher layer: {', '.join(upward)}"
    )


def test_no_import_cycles() -> None:
    """Tarjan's strongly connected components over the module graph: none of two or more."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(MODULES):
        if module not in index:
            visit(module)
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_is_at_most_700_lines(module: str) -> None:
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MAX_LINES, f"{module} has {lines} lines (at most {MAX_LINES}): split it"


def test_the_checker_sees_an_upward_import() -> None:
    """The rules above would pass on an empty graph: check they see a real edge."""
    assert "shardwise.ir" in GRAPH["shardwise.sdy.shardings"]
    assert _layer_of("shardwise.sdy.shardings") > _layer_of("shardwise.ir")
    assert _layer_of("shardwise.propagation.projection") < _layer_of(
        "shardwise.imports.import_func_calls"
    )
    assert _layer_of("shardwise.export.export_pipeline") < _layer_of(
        "shardwise.propagation.driver"
    )  # export passes never import propagation passes
    assert _layer_of("shardwise.imports.import_func_calls") < _layer_of(
        "shardwise.propagation.driver"
    )
