"""The journal's JSON: every action survives the round trip exactly, and a bad line is
refused with a specific error naming the field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.tournament.competition.codec import (
    action_from_json,
    action_to_json,
    dumps_action,
    loads_action,
)
from controller.tournament.competition.errors import ActionJsonError
from controller.tournament.competition.model import (
    Action,
    AssignTable,
    CloseRound,
    CompetitionError,
    Entrant,
    Format,
    FormatSpec,
    GameCounted,
    OverrideResult,
    Pairing,
    PairRound,
    Player,
    Register,
    Seed,
    Start,
    Walkover,
    Withdraw,
)

text = st.text(max_size=12)  # any text: accents, quotes, newlines, NULs
ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,12}", fullmatch=True)
ints = st.integers(-(2**40), 2**40)
pairs = st.tuples(ints, ints)
players = st.builds(Player, text, st.none() | text)
entrants = st.builds(
    Entrant, ids, text, st.lists(players, max_size=3).map(tuple), st.none() | text,
    st.none() | ints,
)  # fmt: skip
specs = st.builds(
    FormatSpec, st.sampled_from(Format), ints, ints, ints, st.none() | ints, st.none() | ints,
    ints, st.booleans(),
)  # fmt: skip
pairings = st.builds(Pairing, ids, st.none() | ids)
actions: st.SearchStrategy[Action] = st.one_of(
    st.builds(Register, entrants),
    st.builds(Withdraw, ids, text),
    st.builds(Seed, st.lists(ids, max_size=5).map(tuple)),
    st.builds(Start, specs),
    st.builds(PairRound, ints, st.none() | st.lists(pairings, max_size=4).map(tuple)),
    st.builds(AssignTable, ids, ids),
    st.builds(GameCounted, ids, ids, ids, pairs, ints, text),
    st.builds(CloseRound, ints, text),
    st.builds(Walkover, ids, ids, text),
    st.builds(OverrideResult, ids, ids, pairs, pairs, text),
)


@settings(max_examples=150)
@given(actions)
def test_every_action_round_trips_exactly(action: Action) -> None:
    data = action_to_json(action)
    assert data["v"] == 1 and isinstance(data["type"], str)
    assert action_from_json(data) == action
    line = dumps_action(action)
    assert "\n" not in line
    assert loads_action(line) == action
    assert json.loads(line) == data


def test_the_type_names() -> None:
    names = {
        action_to_json(a)["type"]
        for a in (
            Register(Entrant("e01", "A", (Player("x"),))),
            Withdraw("e01", "r"),
            Seed(()),
            Start(FormatSpec(Format.SWISS)),
            PairRound(1),
            AssignTable("final", "mesa01"),
            GameCounted("final", "g", "mesa01", (30, 2), 0, "ab"),
            CloseRound(1),
            Walkover("final", "e01", "r"),
            OverrideResult("final", "e01", (1, 0), (30, 0), "r"),
        )
    }
    assert names == {
        "register", "withdraw", "seed", "start", "pair-round", "assign-table",
        "game-counted", "close-round", "walkover", "override-result",
    }  # fmt: skip


WALKOVER: dict[str, Any] = {"v": 1, "type": "walkover", "match": "m", "winner": "e", "reason": "r"}


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ([], "objeto JSON, no una lista"),
        ({**WALKOVER, "v": 2}, "Versión de acción desconocida: 2"),
        ({**WALKOVER, "v": True}, "Versión"),
        ({k: v for k, v in WALKOVER.items() if k != "v"}, "Versión"),
        ({**WALKOVER, "type": "resign"}, "Tipo de acción desconocido: 'resign'"),
        ({**WALKOVER, "type": ["walkover"]}, "Tipo de acción desconocido"),
        ({k: v for k, v in WALKOVER.items() if k != "reason"}, "falta el campo 'reason'"),
        ({**WALKOVER, "extra": 1}, "campo desconocido 'extra'"),
        ({**WALKOVER, "winner": 7}, "'winner' tiene que ser un texto, no un número"),
        ({"v": 1, "type": "close-round", "round": True, "reason": ""}, "número entero"),
        ({"v": 1, "type": "close-round", "round": 1.0, "reason": ""}, "número entero"),
        (
            {"v": 1, "type": "override-result", "match": "m", "winner": "e",
             "games": [1], "points": [0, 0], "reason": "r"},
            "'games' tiene que ser una lista de dos enteros",
        ),
        (
            {"v": 1, "type": "pair-round", "round": 1, "pairings": [{"home": "a"}]},
            "pair-round.pairings[0]: falta el campo 'away'",
        ),
        (
            {"v": 1, "type": "start", "spec": {"format": "league"}},
            "start.spec: falta el campo",
        ),
        (
            {"v": 1, "type": "register", "entrant": {"id": "e01", "name": "A",
             "players": [{"name": "x", "member_id": None, "dni": 1}], "club": None, "seed": None}},
            "register.entrant.players[0]: campo desconocido 'dni'",
        ),
    ],
)  # fmt: skip
def test_bad_input_is_refused_saying_what(data: object, words: str) -> None:
    with pytest.raises(ActionJsonError, match=words.replace("[", r"\[").replace("]", r"\]")):
        action_from_json(data)


def test_an_unknown_format() -> None:
    spec = action_to_json(Start(FormatSpec(Format.KNOCKOUT)))
    spec["spec"]["format"] = "league"
    with pytest.raises(ActionJsonError, match="formato desconocido 'league'"):
        action_from_json(spec)


def test_a_line_that_is_not_json() -> None:
    with pytest.raises(ActionJsonError, match="no es JSON") as raised:
        loads_action('{"v": 1, "type": ')
    assert isinstance(raised.value, CompetitionError)
