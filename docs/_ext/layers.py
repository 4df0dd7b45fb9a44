"""``{layers}``: the package structure of ``controller/`` drawn from the code.

The directive reads every module under ``controller/`` with :mod:`ast`, finds which of
the top-level parts (``engine``, ``transcript``, ``table``, ...) imports which, and
draws that as a table and a layered listing at build time: the architecture page
cannot drift from the code. A cycle between parts, or an import of I/O in the engine,
is a build warning (so the strict build fails).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

#: What the engine must never import (it is pure: no I/O, no clock, no randomness).
ENGINE_FORBIDDEN = frozenset(
    {"os", "io", "time", "socket", "threading", "subprocess", "pathlib", "datetime", "sys"}
)


def part_of(module: str) -> str | None:
    """``controller.table.service`` -> ``table``; ``controller`` itself -> None."""
    pieces = module.split(".")
    if pieces[0] != "controller" or len(pieces) < 2:
        return None
    return pieces[1]


def modules(root: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted((root / "controller").rglob("*.py")):
        relative = path.relative_to(root).with_suffix("")
        parts = list(relative.parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def imports_of(module: str, path: Path) -> tuple[set[str], set[str]]:
    """(imported when the module loads, imported only inside a function): absolute names,
    relative imports resolved, ``if TYPE_CHECKING:`` blocks left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    at_load: set[str] = set()
    lazy: set[str] = set()

    def names(node: ast.Import | ast.ImportFrom) -> set[str]:
        if isinstance(node, ast.Import):
            return {alias.name for alias in node.names}
        if node.level:
            base = package.split(".")
            base = base[: len(base) - node.level + 1]
            name = ".".join([*base, node.module] if node.module else base)
        else:
            name = node.module or ""
        return {name} | {f"{name}.{alias.name}" for alias in node.names}

    def visit(node: ast.AST, inside_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                (lazy if inside_function else at_load).update(names(child))
            function = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            visit(child, inside_function or function)

    visit(tree, False)
    return at_load, lazy - at_load


def is_part(root: Path, part: str) -> bool:
    return (root / "controller" / part).is_dir() or (root / "controller" / f"{part}.py").exists()


class Structure:
    """The import graph of controller/, by module and by part."""

    def __init__(self, root: Path) -> None:
        self.counts: dict[str, int] = {}
        self.edges: dict[str, set[str]] = {}  # part -> parts it imports at load
        self.lazy: dict[str, set[str]] = {}  # part -> parts it imports only when needed
        self.through: dict[tuple[str, str], set[str]] = {}  # (part, part) -> importing modules
        self.module_edges: dict[str, set[str]] = {}
        self.engine_imports: set[str] = set()
        known = {module for module, _ in modules(root)}
        for module, path in modules(root):
            part = part_of(module)
            if part is None:
                continue
            self.counts[part] = self.counts.get(part, 0) + 1
            self.edges.setdefault(part, set())
            self.lazy.setdefault(part, set())
            at_load, lazy = imports_of(module, path)
            self.module_edges[module] = {n for n in at_load if n in known and n != module}
            for name in at_load | lazy:
                if part == "engine" and not name.startswith("controller"):
                    self.engine_imports.add(name.split(".")[0])
                other = part_of(name)
                if other is None or other == part or not is_part(root, other):
                    continue
                (self.edges if name in at_load else self.lazy)[part].add(other)
                self.through.setdefault((part, other), set()).add(module)
        for part in self.edges:
            self.lazy[part] -= self.edges[part]

    def module_cycle(self) -> list[str] | None:
        """A cycle of modules importing each other at load, or None."""
        state: dict[str, int] = {}
        stack: list[str] = []

        def walk(module: str) -> list[str] | None:
            state[module] = 1
            stack.append(module)
            for other in sorted(self.module_edges.get(module, ())):
                if state.get(other) == 1:
                    return [*stack[stack.index(other) :], other]
                if other not in state and (found := walk(other)):
                    return found
            stack.pop()
            state[module] = 2
            return None

        for module in sorted(self.module_edges):
            if module not in state and (found := walk(module)):
                return found
        return None

    def depth(self) -> dict[str, int]:
        """A part's layer: 0 for a part that imports no other, else 1 + the deepest part
        it imports (two parts importing each other, module by module, share a layer)."""
        one_way = {
            part: {d for d in deps if part not in self.edges.get(d, ())}
            for part, deps in self.edges.items()
        }
        memo: dict[str, int] = {}

        def level(part: str) -> int:
            if part not in memo:
                memo[part] = 1 + max((level(d) for d in one_way[part]), default=-1)
            return memo[part]

        for part in self.edges:
            level(part)
        return memo


class LayersDirective(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        root = Path(self.env.srcdir)
        structure = Structure(root)
        for path in (root / "controller").rglob("*.py"):
            self.env.note_dependency(str(path))
        where = self.get_location()
        bad = sorted(structure.engine_imports & ENGINE_FORBIDDEN)
        if bad:
            logger.warning("the engine imports I/O: %s", ", ".join(bad), location=where)
        if structure.edges.get("engine"):
            logger.warning("the engine imports %s", structure.edges["engine"], location=where)
        cycle = structure.module_cycle()
        if cycle:
            logger.warning("an import cycle: %s", " -> ".join(cycle), location=where)
        depth = structure.depth()
        importers: dict[str, set[str]] = {p: set() for p in structure.edges}
        for part, deps in structure.edges.items():
            for dep in deps:
                importers[dep].add(part)

        def imports(part: str) -> str:
            shown = []
            for dep in sorted(structure.edges[part]):
                if part in structure.edges.get(dep, ()):  # both ways: say through what
                    via = ", ".join(sorted(structure.through[(part, dep)]))
                    shown.append(f"{dep} (through {via})")
                else:
                    shown.append(dep)
            shown += [f"{dep} (on demand)" for dep in sorted(structure.lazy[part])]
            return ", ".join(shown) or "-"

        table = nodes.table()
        group = nodes.tgroup(cols=4)
        table += group
        for width in (4, 10, 4, 40):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        body = nodes.tbody()
        group += head
        group += body

        def row(cells: list[str], parent: nodes.Element) -> None:
            line = nodes.row()
            for text in cells:
                entry = nodes.entry()
                entry += nodes.paragraph(text=text)
                line += entry
            parent += line

        row(["layer", "part", "modules", "imports"], head)
        order = sorted(structure.edges, key=lambda p: (-depth[p], p))
        for part in order:
            row([str(depth[part]), part, str(structure.counts[part]), imports(part)], body)
        top = max(depth.values())
        drawing = "\n".join(
            f"{level}  " + "   ".join(p for p in order if depth[p] == level)
            for level in range(top, -1, -1)
        )
        return [nodes.literal_block(drawing, drawing), table]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("layers", LayersDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
