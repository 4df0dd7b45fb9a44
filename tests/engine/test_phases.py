"""The phases of a hand own their state: a test that walks the code of the phase classes.

``hand.py`` builds a hand of phases (truco, envido, telling, flor, free play). Each phase
reads and writes only its own fields and talks to the others through the hand's narrow
interface (``HandPlay``'s methods): no phase holds or reaches another phase (``h.truco``,
``h.envido``, ``h.flor``, ``h.tell``), none assigns a field of the hand, and every
``self.x`` a phase uses is one of its own slots or methods.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from controller.engine import hand

PHASES = (hand.TrucoPhase, hand.EnvidoPhase, hand.TellingPhase, hand.FlorPhase, hand.FreePlay)
#: The hand's fields that hold a phase.
PHASE_FIELDS = {"truco", "envido", "flor", "tell"}


def _source(module_file: str) -> Path:
    """The module's Python source: beside it, or (the compiled build, where the module is
    an extension and its source may not be kept) the tree's own copy."""
    here = Path(module_file)
    beside = here.with_name(here.name.split(".")[0] + ".py")
    if beside.exists():
        return beside
    return Path(__file__).resolve().parents[2] / "controller" / "engine" / beside.name


def _tree(cls: type, source: Path | None = None) -> ast.ClassDef:
    """The class's code, read from ``source`` (default: hand.py's source), not from the
    imported class (``inspect.getsource`` finds nothing in the compiled build)."""
    path = source or _source(hand.__file__ or "hand.py")
    module = ast.parse(path.read_text(encoding="utf-8"))
    found = [n for n in ast.walk(module) if isinstance(n, ast.ClassDef) and n.name == cls.__name__]
    assert len(found) == 1, f"{cls.__name__} not found once in {path.name}"
    return found[0]


def _own_names(cls: type) -> set[str]:
    names = set(getattr(cls, "__slots__", ()))
    names.update(n for n in vars(cls) if not n.startswith("__"))
    return names


@pytest.mark.parametrize("cls", PHASES, ids=[c.__name__ for c in PHASES])
def test_a_phase_touches_no_other_phase(cls: type) -> None:
    own = _own_names(cls)
    reached: list[str] = []
    for node in ast.walk(_tree(cls)):
        if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name):
            continue
        base, attr = node.value.id, node.attr
        where = f"{cls.__name__} line {node.lineno}: {base}.{attr}"
        if base == "h":
            if attr in PHASE_FIELDS:
                reached.append(f"{where} (another phase)")
            if isinstance(node.ctx, ast.Store | ast.Del):
                reached.append(f"{where} (writes the hand)")
        elif base == "self" and attr not in own:
            reached.append(f"{where} (not its own)")
    assert not reached, reached


def test_the_walk_finds_a_phase_reaching_into_another() -> None:
    """The check itself: code that reaches into the flor's state is caught."""

    class Leaky:
        __slots__ = ("level",)

        def __init__(self) -> None:
            self.level = 0

        def legal(self, h: hand.HandPlay) -> bool:
            return h.flor.state == 0 and self.level == 0

    own = _own_names(Leaky)
    bad = [
        node.attr
        for node in ast.walk(_tree(Leaky, Path(__file__)))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "h"
        and node.attr in PHASE_FIELDS
    ]
    assert bad == ["flor"] and "level" in own


def test_the_hand_gives_the_floor_to_a_phase_object() -> None:
    """Free play is its own phase object, not the hand."""
    from controller.engine import Game

    game = Game()
    game.deal()
    play = game.play_of(0)
    assert isinstance(play.floor(), hand.FreePlay)
    game.push_str("0 truco")
    assert isinstance(play.floor(), hand.TrucoPhase)
