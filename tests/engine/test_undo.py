"""Undo: pop after pop goes back step by step through every state passed (across deals,
down to the start), a redo of the same steps comes back to the same states, a pop
restores what was saved (no replay: the same objects, no action applied again), and
``copy()`` is an independent game in the same state with the same undo history."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.engine import CARDS, Action, Card, Game, HandPlay, HouseRules, Kind
from controller.engine.hand import Saved

from .strategies import house_rules, random_deal

Hands = dict[int, list[Card]] | None
Step = Action | tuple[int, Hands]  # an action pushed, or (dealer, hands) dealt


def _redo(game: Game, step: Step) -> None:
    if isinstance(step, Action):
        game.push(step)
    else:
        dealer, hands = step
        game.deal(hands, dealer=dealer)


@settings(max_examples=60, deadline=None, database=None)
@given(rules=house_rules, seed=st.integers(0, 2**32 - 1))
def test_pop_after_pop_and_redo(rules: HouseRules, seed: int) -> None:
    rng = random.Random(seed)
    game = Game(rules)
    keys = [game.state_key()]
    steps: list[Step] = []
    for _ in range(150):
        if game.winner is not None:
            break
        if not game.hand_in_progress:
            hands = random_deal(rng, rules, unread=0.3)
            step: Step = (game.next_dealer, hands)
        else:
            legal = game.legal_list()
            step = legal[rng.randrange(len(legal))]
        _redo(game, step)
        steps.append(step)
        keys.append(game.state_key())
        if rng.random() < 0.15:
            back = rng.randint(1, min(6, len(steps)))
            for i in range(back):  # undo after undo: each lands on the state before
                game.pop()
                assert game.state_key() == keys[-2 - i]
            for step in steps[-back:]:  # the same steps again: the same states
                _redo(game, step)
            assert game.state_key() == keys[-1]
    # and all the way back to the start
    while game.hand_number:
        game.pop()
    assert game.state_key() == keys[0] and game.score == (0, 0)


@settings(max_examples=40, deadline=None, database=None)
@given(rules=house_rules, seed=st.integers(0, 2**32 - 1))
def test_copy_is_an_independent_game_in_the_same_state(rules: HouseRules, seed: int) -> None:
    rng = random.Random(seed)
    game = Game(rules)
    for _ in range(rng.randrange(1, 80)):
        if game.winner is not None:
            break
        if not game.hand_in_progress:
            game.deal(random_deal(rng, rules, unread=0.3))
        else:
            legal = game.legal_list()
            game.push(legal[rng.randrange(len(legal))])
    twin = game.copy()
    key = game.state_key()
    assert twin.state_key() == key and twin.hands == game.hands
    assert twin.hand_actions == game.hand_actions and list(twin.history()) == list(game.history())
    if twin.hand_in_progress and twin.winner is None:
        legal = twin.legal_list()
        twin.push(legal[rng.randrange(len(legal))])
        assert game.state_key() == key  # the original does not move
        twin.pop()
    assert twin.state_key() == key
    if twin.hand_number:
        twin.pop()  # the copy has the same undo history
        game.pop()
        assert twin.state_key() == game.state_key()


def _long_hand(players: int) -> tuple[Game, list[Action]]:
    """A hand played to its end by its legal actions in turn, never the mazo nor a no
    quiero: at least two bazas' cards, and calls."""
    game = Game(HouseRules(players=players))
    cards = random.Random(players).sample(CARDS, 3 * players)
    game.deal({s: cards[3 * s : 3 * s + 3] for s in range(players)})
    pushed: list[Action] = []
    while game.hand_in_progress and game.winner is None:
        legal = [a for a in game.legal_list() if a.kind not in (Kind.MAZO, Kind.NO_QUIERO)]
        action = legal[len(pushed) % len(legal)]
        game.push(action)
        pushed.append(action)
    return game, pushed


def test_pop_restores_the_same_objects() -> None:
    """A pop hands back what its action overwrote: the hand's plays stay the very objects
    they were (a replay would build new ones), down to the deal; undoing the next deal
    returns to the previous hand's own plays."""
    game, pushed = _long_hand(6)
    assert len(pushed) >= 12
    plays = game.plays
    ended = game.state_key()
    game.deal()
    assert game.plays != plays
    assert game.pop() is None  # the deal undone: the previous hand's own plays again
    assert game.plays == plays and all(a is b for a, b in zip(game.plays, plays, strict=True))
    assert game.state_key() == ended
    for action in reversed(pushed):
        assert game.pop() == action
        assert all(a is b for a, b in zip(game.plays, plays, strict=True))


def test_pop_applies_no_action(monkeypatch: pytest.MonkeyPatch) -> None:
    """Undoing a whole hand applies no action again (counted on the play's ``apply``; the
    compiled build does not call a patched method: there the test above shows it)."""
    game, pushed = _long_hand(4)
    applied = 0
    original = HandPlay.apply

    def counted(self: HandPlay, action: Action) -> None:
        nonlocal applied
        applied += 1
        original(self, action)

    try:
        monkeypatch.setattr(HandPlay, "apply", counted)
    except TypeError:
        pytest.skip("the compiled build's classes cannot be patched")
    last = game.pop()
    assert last is not None and last == pushed[-1]
    game.push(last)  # the count counts
    if applied == 0:
        pytest.skip("the compiled build calls its own apply, not the patched one")
    assert applied == 1
    for _ in pushed:
        game.pop()
    assert applied == 1 and game.hand_actions == ()


#: Functions that write fields no undo needs: a cache of what the deal fixes.
NOT_STATE = {"_points": "Deal: the envido and flor points of the dealt cards (a cache)"}

#: Methods that change a list, dict or set in place.
IN_PLACE = {
    "append",
    "extend",
    "pop",
    "insert",
    "remove",
    "clear",
    "update",
    "add",
    "discard",
    "setdefault",
    "popitem",
    "sort",
    "reverse",
}


def _written(tree: ast.AST) -> list[tuple[str, int, bool]]:
    """Every ``x.field`` that ``tree`` changes after ``__init__`` (which builds the
    object), outside ``NOT_STATE``: (field, line, changed in place). Set, augmented or
    deleted is a new value; an item of it set or deleted, or a method of ``IN_PLACE``
    called on it, is a change in place."""
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, skip: bool) -> None:
        if isinstance(node, ast.FunctionDef):
            skip = node.name == "__init__" or node.name in NOT_STATE
        if not skip:
            line = getattr(node, "lineno", 0)
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign | ast.Delete):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in IN_PLACE
                and isinstance(node.func.value, ast.Attribute)
            ):
                found.append((node.func.value.attr, line, True))
            while targets:
                target = targets.pop()
                if isinstance(target, ast.Tuple | ast.List):
                    targets.extend(target.elts)
                    continue
                if isinstance(target, ast.Starred):
                    target = target.value
                in_place = isinstance(target, ast.Subscript)
                while isinstance(target, ast.Subscript):
                    target = target.value
                if isinstance(target, ast.Attribute):
                    found.append((target.attr, line, in_place))
        for child in ast.iter_child_nodes(node):
            visit(child, skip)

    visit(tree, False)
    return found


def _undeclared(source: str, declared: set[str]) -> list[str]:
    """What ``source`` changes that undo would miss: a field not declared, or one changed
    in place (the trail holds its value, the same object)."""
    out = []
    for name, line, in_place in _written(ast.parse(source)):
        if in_place:
            out.append(f"line {line}: .{name} changed in place")
        elif name not in declared:
            out.append(f"line {line}: .{name} not declared")
    return sorted(out)


def test_every_field_an_action_changes_is_declared_for_undo() -> None:
    """The undo cannot drift: each field that hand.py's objects change after they are
    built (where every action's changes are made) is declared in a ``Saved`` class's
    ``SAVED``, and replaced, never changed in place, so the one generic path saves and
    restores it. (A change through another name for the same object is not seen here:
    the pop-after-pop tests above and the perft counts catch it.)"""
    declared: set[str] = set()
    for cls in _saved_classes():
        declared.update(cls.SAVED)
        # each a field of the class (a slot's descriptor, or the compiled build's)
        assert all(hasattr(cls, name) for name in cls.SAVED), cls
    source = Path(__file__).resolve().parents[2] / "controller" / "engine" / "hand.py"
    assert _undeclared(source.read_text(encoding="utf-8"), declared) == []


def test_the_declaration_check_finds_a_field_left_out() -> None:
    """The check itself: a phase that changes a field it does not declare, or changes one
    in place, is caught."""
    source = (
        "class Leaky(Saved):\n"
        "    SAVED = ('level', 'table')\n"
        "    def __init__(self):\n"
        "        self.level = self.seen = 0\n"
        "    def apply(self, h):\n"
        "        self.save(h.trail)\n"
        "        self.level += 1\n"
        "        self.seen, self.level = 1, 2\n"
        "        h.deal.table.append(3)\n"
        "        h.deal.owner[3] = 1\n"
        "        self.table = (*self.table, 4)\n"
    )
    assert _undeclared(source, {"level", "table"}) == [
        "line 10: .owner changed in place",
        "line 8: .seen not declared",
        "line 9: .table changed in place",
    ]


def _saved_classes() -> list[type[Saved]]:
    found: list[type[Saved]] = []
    todo: list[type[Saved]] = [Saved]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found
