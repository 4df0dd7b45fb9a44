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
    """The class's slots and methods, and those it inherits (the phases' base classes:
    the generic undo, ``Saved.save``)."""
    names = set(getattr(cls, "__slots__", ()))
    for klass in cls.__mro__[:-1]:  # object's own are not the phase's
        names.update(n for n in vars(klass) if not n.startswith("__"))
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
            return h.flor.state is hand.FlorState.NONE and self.level == 0

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


#: What only the flor decides: its calls, and the refusal of a flor one does not hold.
FLOR_NAMES = {"K_FLOR", "K_CONTRAFLOR", "K_CONTRAFLOR_AL_RESTO", "K_CON_FLOR_ME_ACHICO"}
OTHERS = (hand.TrucoPhase, hand.EnvidoPhase, hand.TellingPhase, hand.FreePlay)


def _refusal(cls: type) -> ast.FunctionDef:
    found = [
        n for n in _tree(cls).body if isinstance(n, ast.FunctionDef) and n.name == "refusal"
    ]
    assert len(found) == 1
    return found[0]


def _names(node: ast.AST) -> set[str]:
    """The names and attributes the code uses."""
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return names | {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


@pytest.mark.parametrize("cls", OTHERS, ids=[c.__name__ for c in OTHERS])
def test_flor_refusals_are_decided_by_the_flor_alone(cls: type) -> None:
    """Every flor refusal is decided in one place, ``FlorPhase``: another phase's refusal
    names no flor call and no NO_FLOR, and hands the flor's actions to the flor (an ``if``
    on the flor's kinds whose body returns the hand's ``flor_refusal_...``)."""
    method = _refusal(cls)
    names = _names(method)
    assert not names & (FLOR_NAMES | {"NO_FLOR"}), sorted(names & (FLOR_NAMES | {"NO_FLOR"}))
    handed = [
        n
        for n in ast.walk(method)
        if isinstance(n, ast.If)
        and "FLOR_KINDS" in ast.unparse(n.test)
        and isinstance(n.body[0], ast.Return)
        and ast.unparse(n.body[0]).startswith("return h.flor_refusal_")
    ]
    assert len(handed) == 1


def test_the_flor_check_finds_a_flor_decided_elsewhere() -> None:
    """The check itself: a refusal deciding a flor on its own is caught."""
    source = (
        "class Leaky:\n"
        "    def refusal(self, h, a):\n"
        "        if a.kind is K_FLOR:\n"
        "            return R.NO_FLOR\n"
    )
    names = _names(ast.parse(source))
    assert names & FLOR_NAMES == {"K_FLOR"} and "NO_FLOR" in names
