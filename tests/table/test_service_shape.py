"""Issue 48: the service loop's shape, read from its source (no timer of its own outside
the heap, no long method, one clock)."""

from __future__ import annotations

import ast
from pathlib import Path

import controller.table.service as service_module

SOURCE = Path(service_module.__file__).read_text(encoding="utf-8")
TREE = ast.parse(SOURCE)
SERVICE = next(n for n in TREE.body if isinstance(n, ast.ClassDef) and n.name == "TableService")


def _reads_the_clock(node: ast.AST) -> bool:
    return any(
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in ("clock", "monotonic", "time", "time_ns")
        for call in ast.walk(node)
    )


def test_no_method_of_the_service_is_over_40_lines() -> None:
    long = {
        f.name: f.end_lineno - f.lineno + 1
        for f in SERVICE.body
        if isinstance(f, ast.FunctionDef) and f.end_lineno is not None
        if f.end_lineno - f.lineno + 1 > 40
    }
    assert long == {}


def test_the_service_keeps_no_time_of_its_own_outside_the_timer_heap() -> None:
    """No attribute of the service is set from a clock's reading: every time is an entry
    on ``self.timers``."""
    kept = [
        ast.unparse(node)
        for node in ast.walk(SERVICE)
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if any(
            isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
            for t in ast.walk(target)
        )
        and node.value is not None
        and _reads_the_clock(node.value)
    ]
    assert kept == []


def test_the_service_reads_one_clock() -> None:
    """``time.monotonic`` is only the default clock, never read beside ``self.clock``."""
    calls = [
        ast.unparse(node)
        for node in ast.walk(TREE)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "time"
    ]
    assert calls == []
