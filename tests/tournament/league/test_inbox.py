"""The league desk reads a venue's message on the central broker: the bridge's
remapping undone, the table's mac checked with that venue's key, a record checked."""

from __future__ import annotations

from controller.tournament.league.fixture import fixture
from controller.tournament.league.inbox import (
    CentralMessage,
    RejectedCentral,
    read_central,
    venue_topic,
)
from controller.tournament.league.keys import venue_table_key
from controller.tournament.league.verify import RecordVerdict
from controller.tournament.wire.messages import Event, signed

from .helpers import record_payload, two_venue_league

SECRET = bytes(range(32, 64))
LEAGUE = two_venue_league()
AT_C1 = next(m for m in fixture(LEAGUE) if m.venue == "c1")


def _central(venue: str, local_topic: str) -> str:
    return f"league/{venue}/" + local_topic.removeprefix(f"truco/{LEAGUE.name}/")


def test_a_record_through_the_bridge_is_read_and_counted() -> None:
    topic, data = record_payload(LEAGUE, SECRET, "c1", "mesa01", AT_C1.id)
    assert venue_topic(LEAGUE, _central("c1", topic)) == ("c1", topic)
    got = read_central(LEAGUE, SECRET, _central("c1", topic), data)
    assert isinstance(got, CentralMessage) and got.venue == "c1"
    assert got.check is not None and got.check.verdict is RecordVerdict.COUNTED
    assert got.check.number == 1


def test_a_message_under_another_venues_prefix_is_rejected() -> None:
    # c1's table's genuine record, arriving as c2's (a forged bridge, a copied message)
    topic, data = record_payload(LEAGUE, SECRET, "c1", "mesa01", AT_C1.id)
    got = read_central(LEAGUE, SECRET, _central("c2", topic), data)
    assert isinstance(got, RejectedCentral) and got.venue == "c2"
    assert (
        got.reason.startswith("Mensaje rechazado de c2: ")
        and "su mac no es el de la clave" in got.reason
    )
    got = read_central(LEAGUE, SECRET, _central("c9", topic), data)
    assert isinstance(got, RejectedCentral) and "'c9'" in got.reason


def test_c2_sealing_a_match_of_c1_is_flagged() -> None:
    # a compromised c2 seals (with its own keys) a record for c1's match
    topic, data = record_payload(LEAGUE, SECRET, "c2", "mesa01", AT_C1.id)
    got = read_central(LEAGUE, SECRET, _central("c2", topic), data)
    assert isinstance(got, CentralMessage) and got.check is not None
    assert got.check.verdict is RecordVerdict.WRONG_VENUE


def test_an_event_a_bridge_state_and_garbage() -> None:
    local = f"truco/{LEAGUE.name}/tables/mesa02/events"
    payload = {
        "v": 1,
        "table": "mesa02",
        "seq": 3,
        "ts": 1.0,
        "kind": "action",
        "game": "mesa02-g001",
    }
    data = signed(venue_table_key(SECRET, LEAGUE.name, "c1", "mesa02"), local, payload)
    got = read_central(LEAGUE, SECRET, _central("c1", local), data)
    assert isinstance(got, CentralMessage) and isinstance(got.message, Event)
    assert got.check is None and got.message.seq == 3
    assert read_central(LEAGUE, SECRET, "league/c1/bridge/state", b"1") is None
    bad = read_central(LEAGUE, SECRET, "league/c1/tables/mesa02/events", b"\xff")
    assert isinstance(bad, RejectedCentral) and "mal formado" in bad.reason
    nameless = read_central(LEAGUE, SECRET, "league/c1/tables/mesa 2/events", b"{}")
    assert isinstance(nameless, RejectedCentral)
