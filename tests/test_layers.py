"""The layers' import direction, read from the source, one way with no exceptions: the
engine imports no other layer; the hardware layer (hal) never imports the renderer, the
table, the tournament or the commands; the renderer never the table or above; the table
(and everything under it) never imports the tournament or the commands; the tournament
never imports the commands. ``controller.cli.service`` is what attaches the tournament to
the table. The benches (bench/) import nothing from the tests."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONTROLLER = ROOT / "controller"

# each layer, and the layers above it that it must never import
# (no exceptions: the contact sheet, which plays real tables, is a command's,
# controller.cli.gallery; the page packing the displays and the renderer share is hal's)
ORDER = (
    "controller.engine",
    "controller.hal",
    "controller.render",
    "controller.table",
    "controller.tournament",
    "controller.cli",
)
BELOW = {layer: ORDER[index + 1 :] for index, layer in enumerate(ORDER[:-1])}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """Every module the file imports (at its top or inside a function), resolved to its
    absolute name, with the line it is imported on."""
    text = path.read_text(encoding="utf-8") if source is None else source
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package.pop()
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(text, filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.append((node.lineno, module))
            # `from .. import tournament` imports a module by its name
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_resolver_sees_relative_lazy_and_plain_imports() -> None:
    fake = CONTROLLER / "table" / "fake.py"
    source = (
        "from .service import TableService\n"
        "def f() -> None:\n"
        "    from ..tournament.table.link import connect_table\n"
        "    from .. import tournament\n"
        "    import controller.cli.run\n"
    )
    names = {name for _, name in imported_modules(fake, source)}
    assert "controller.table.service" in names
    assert "controller.tournament.table.link" in names
    assert "controller.tournament" in names
    assert "controller.cli.run" in names


@pytest.mark.parametrize("layer", sorted(BELOW))
def test_a_layer_never_imports_the_layers_above_it(layer: str) -> None:
    folder = CONTROLLER.joinpath(*layer.split(".")[1:])
    files = sorted(folder.rglob("*.py"))
    assert files, folder
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in files
        for line, name in imported_modules(path)
        if any(within(name, above) for above in BELOW[layer])
    ]
    assert wrong == []


def test_the_tournament_is_attached_to_the_table_from_above() -> None:
    names = {name for _, name in imported_modules(CONTROLLER / "cli" / "service.py")}
    assert "controller.table.daemon" in names
    assert "controller.tournament.table.link" in names


def test_the_order_has_every_layer_and_the_hal_never_imports_the_renderer() -> None:
    layers = {path.name for path in CONTROLLER.iterdir() if path.is_dir() and path.name[0] != "_"}
    assert {name.split(".")[1] for name in ORDER} == layers
    assert "controller.render" in BELOW["controller.hal"]


# hal's modules that decide without a device: the mock imports the codec alone, the
# node's display port the planner alone
PURE_HAL = frozenset(
    f"controller.hal.{name}"
    for name in ("events", "frames", "panels", "panel_addressing", "display_planner", "pages")
)
# what talks to a device (or waits on one)
DEVICE_LIBRARIES = ("serial", "luma", "smbus2", "spidev", "gpiozero", "os", "select", "selectors")


def impure_imports(path: Path, source: str | None = None) -> list[str]:
    """What a pure hal module imports that it must not: a module of the project outside
    the pure ones, or a device library."""
    return [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for line, name in imported_modules(path, source)
        if (within(name, "controller") and not {name, name.rpartition(".")[0]} & PURE_HAL)
        or any(within(name, library) for library in DEVICE_LIBRARIES)
    ]


@pytest.mark.parametrize("module", sorted(PURE_HAL))
def test_hal_s_pure_modules_import_no_device_and_no_device_module(module: str) -> None:
    assert impure_imports(CONTROLLER.joinpath(*module.split(".")[1:]).with_suffix(".py")) == []


def test_the_pure_hal_rule_sees_a_device_module_and_a_device_library() -> None:
    planner = CONTROLLER / "hal" / "display_planner.py"
    source = (
        "from .panels import PANELS\n"
        "from .display_bus import BusPort\n"
        "def f() -> None:\n"
        "    import serial\n"
    )
    assert impure_imports(planner, source) == [
        "controller/hal/display_planner.py:2 imports controller.hal.display_bus",
        "controller/hal/display_planner.py:2 imports controller.hal.display_bus.BusPort",
        "controller/hal/display_planner.py:4 imports serial",
    ]


def test_the_benches_import_nothing_from_the_tests() -> None:
    """A bench measures the product: what it shares with the tests is the product's (or a
    module under bench/), never a test's module, by its package or by a path put first."""
    tests = ROOT / "tests"
    test_modules = {"tests"} | {
        path.stem for path in tests.rglob("*.py") if "node_modules" not in path.parts
    }
    files = sorted((ROOT / "bench").rglob("*.py"))
    assert files
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in files
        for line, name in imported_modules(path)
        if name.split(".")[0] in test_modules
    ]
    assert wrong == []
