"""The desk's assignment of a match to a table: the message, its mac, its checks."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from controller.tournament.table.match import TableMatches
from controller.tournament.wire.keys import derive_table_key
from controller.tournament.wire.messages import (
    Assignment,
    MalformedMessage,
    NotForThisTable,
    StaleAssignment,
    Unauthenticated,
    assignment_mac,
    message_mac,
    parse_assignment,
    parse_message,
    signed,
    signed_assignment,
)
from controller.tournament.wire.topics import assignment_topic, tournament_prefix

SECRET = bytes(range(32))
PREFIX = tournament_prefix("copa")
KEY = derive_table_key(SECRET, "copa", "mesa03")
OTHER_KEY = derive_table_key(SECRET, "copa", "mesa04")
QUARTER = Assignment(
    "mesa03",
    7,
    "r3-m2",
    "Cuartos de final",
    "Los del Fondo",
    "La Barra",
    2,
    3,
    (("Ana", "Beto"), ("Carla", "Dani")),
)


def take(data: bytes, *, key: bytes | None = KEY, table: str = "mesa03") -> Assignment:
    return parse_assignment(PREFIX, table, assignment_topic(PREFIX, "mesa03"), data, key)


def resign(payload: dict[str, Any], key: bytes = KEY, table: str = "mesa03") -> bytes:
    """A payload signed as the desk signs (a forger holding the key could)."""
    topic = assignment_topic(PREFIX, table)
    body = {k: v for k, v in payload.items() if k != "mac"}
    return json.dumps(body | {"mac": assignment_mac(key, topic, body)}).encode()


def test_the_topic_lives_under_the_tables_own() -> None:
    assert assignment_topic(PREFIX, "mesa03") == "truco/copa/tables/mesa03/assign"
    with pytest.raises(ValueError):
        assignment_topic(PREFIX, "mesa/03")


def test_an_assignment_signed_by_the_desk_comes_back_whole() -> None:
    topic, data = signed_assignment(KEY, PREFIX, QUARTER)
    assert topic == "truco/copa/tables/mesa03/assign"
    payload = json.loads(data)
    assert payload["kind"] == "assign" and payload["players"] == [
        ["Ana", "Beto"],
        ["Carla", "Dani"],
    ]
    assert take(data) == QUARTER
    free = Assignment("mesa03", 8, None)
    assert take(signed_assignment(KEY, PREFIX, free)[1]) == free


def test_only_the_tables_key_under_the_assignments_label_passes() -> None:
    _, data = signed_assignment(KEY, PREFIX, QUARTER)
    payload = json.loads(data)
    with pytest.raises(Unauthenticated):
        take(data, key=OTHER_KEY)  # signed for mesa03, checked by mesa04's key
    with pytest.raises(Unauthenticated):
        take(resign(payload, OTHER_KEY))  # signed with another table's key
    del payload["mac"]
    with pytest.raises(Unauthenticated):
        take(json.dumps(payload).encode())
    # what the table itself signs (its status, events, records) never passes as one
    own = signed(KEY, assignment_topic(PREFIX, "mesa03"), payload)
    assert json.loads(own)["mac"] == message_mac(KEY, assignment_topic(PREFIX, "mesa03"), payload)
    with pytest.raises(Unauthenticated):
        take(own)
    changed = json.loads(data) | {"chico": 3}  # one field changed after signing
    with pytest.raises(Unauthenticated):
        take(json.dumps(changed).encode())
    assert take(json.dumps(payload).encode(), key=None) == QUARTER  # a table without a key


def test_another_tables_assignment_is_not_taken() -> None:
    topic, data = signed_assignment(OTHER_KEY, PREFIX, Assignment("mesa04", 1, "r3-m3", "Final",
                                                                  "A", "B", 1, 1))  # fmt: skip
    with pytest.raises(NotForThisTable):
        parse_assignment(PREFIX, "mesa03", topic, data, KEY)
    # its payload, signed with mesa03's own key on mesa03's topic, still names mesa04
    with pytest.raises(NotForThisTable):
        take(resign(json.loads(data)))
    with pytest.raises(MalformedMessage):
        parse_assignment(PREFIX, "mesa03", "truco/copa/tables/mesa03/status", data, KEY)


def test_an_old_counter_is_stale(tmp_path: Path) -> None:
    matches = TableMatches(tmp_path, "mesa03")
    assert matches.take(QUARTER) and matches.last_n == 7
    assert not matches.take(QUARTER)  # the same one again (retained, at a reconnection)
    for n in (1, 6):
        with pytest.raises(StaleAssignment):
            matches.take(dataclasses.replace(QUARTER, n=n, chico=3))
    with pytest.raises(StaleAssignment):  # another assignment under the same counter
        matches.take(dataclasses.replace(QUARTER, chico=3))
    assert TableMatches(tmp_path, "mesa03").assignment == QUARTER


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"kind": "record"}, "kind"),
        ({"n": -1}, "n"),
        ({"n": "7"}, "n"),
        ({"match": "r3 m2"}, "match"),
        ({"chico": 4}, "chico"),
        ({"chico": 0}, "chico"),
        ({"best_of": 16, "chico": 1}, "best_of"),
        ({"home": ""}, "home"),
        ({"home": "x" * 65}, "home"),
        ({"label": 3}, "label"),
        ({"players": [["a", "b", "c", "d"], []]}, "players"),
        ({"players": [["a"]]}, "players"),
        ({"players": [[""], []]}, "players"),
        ({"players": [[1], []]}, "players"),
        ({"players": "Ana"}, "players"),
    ],
)
def test_fields_out_of_bounds_are_malformed(change: dict[str, Any], why: str) -> None:
    payload = QUARTER.payload() | change
    with pytest.raises(MalformedMessage, match=why):
        take(resign(payload))
    fields = {k: v for k, v in change.items() if k not in ("kind", "label", "players")}
    if fields:  # the desk cannot send what the table would refuse
        with pytest.raises(MalformedMessage):
            signed_assignment(KEY, PREFIX, dataclasses.replace(QUARTER, **fields))


def test_garbage_is_malformed() -> None:
    for data in (b"", b"not json", b"[1, 2]", b"\xff\xfe", b"{" * 20_000, b"[" * 15_000):
        with pytest.raises(MalformedMessage):
            take(data)


def test_texts_are_cleaned_for_the_screens() -> None:
    payload = QUARTER.payload() | {
        "home": "Los\x1b[2J del\nFondo\u202e",
        "label": "  Cuartos\tde   final ",
        "players": [["Ana\x00", "\x07"], ["Carla"]],
    }
    taken = take(resign(payload))
    assert (taken.home, taken.label) == ("Los [2J del Fondo", "Cuartos de final")
    assert taken.players == (("Ana",), ("Carla",))


def test_the_desk_ignores_assignments_on_its_subscription() -> None:
    topic, data = signed_assignment(KEY, PREFIX, QUARTER)
    assert parse_message(PREFIX + "/", topic, data, lambda t: KEY) is None
