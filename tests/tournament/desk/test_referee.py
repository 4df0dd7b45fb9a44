"""What needs the referee: the triage of refusals (every code decided, as RULES.md lists
them), repeated refusals, referee calls from the pads; the desk's atención list and its
acknowledgements across restarts; a referee call from a mock table to the desk, through
the outbox, and through the venue's real Mosquitto with accounts, ACLs and TLS."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from controller.engine import HouseRules, RefusalCode
from controller.table.mock_table import MockTable
from controller.table.service import RefereeCall
from controller.tournament.desk import DeskState
from controller.tournament.desk.referee import (
    EXCEPTIONAL,
    ROUTINE,
    Concern,
    RepeatWatch,
    refusal_concern,
    triage,
)
from controller.tournament.sim.mosquitto import LocalBroker, free_port
from controller.tournament.table.link import load_tournament_settings
from controller.tournament.table.publisher import TablePublisher
from controller.tournament.venue.access import BrokerAccess
from controller.tournament.venue.broker import Venue
from controller.tournament.wire.keys import table_key
from controller.tournament.wire.messages import (
    Event,
    EventKind,
    MalformedMessage,
    parse_message,
)
from controller.tournament.wire.seal import TournamentKey, load_key
from controller.tournament.wire.topics import decode, encode
from tests.helpers import cards

from .test_desk import event

ROOT = Path(__file__).resolve().parents[3]


DEAL = {0: cards("7C 6C 3E"), 1: cards("2O 1B 4B")}


# ---------------------------------------------------------------------------- the triage


def test_every_refusal_code_is_decided_once() -> None:
    codes = {code.value for code in RefusalCode}
    assert ROUTINE | set(EXCEPTIONAL) == codes
    assert not ROUTINE & set(EXCEPTIONAL)


def test_the_rules_list_the_codes_the_triage_decides() -> None:
    rules = (ROOT / "docs" / "RULES.md").read_text(encoding="utf-8")
    section = rules.split("## 11. Refusals", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| ([a-z_]+) \|", section, flags=re.M)) - {"code"}
    assert listed == ROUTINE | set(EXCEPTIONAL)
    # and the section says which need the referee
    for code in EXCEPTIONAL:
        assert re.search(rf"\| {code} \|.*\| referee \|", section), code
    for code in ROUTINE:
        assert re.search(rf"\| {code} \|.*\| table \|", section), code


def test_routine_exceptional_and_unknown_refusals() -> None:
    assert refusal_concern("not_your_turn") is None
    assert refusal_concern("card_already_played") is None
    assert refusal_concern("unknown_card") is Concern.OUTSIDE_CARD
    assert refusal_concern("card_not_in_hand") is Concern.NOT_THEIR_CARD
    assert refusal_concern("a_code_from_newer_tables") is Concern.UNKNOWN_REFUSAL


def refusal(seq: int, ts: float, seat: int = 1, code: str = "not_your_turn") -> Event:
    return Event("mesa01", seq, ts, EventKind.REFUSAL, "mesa01-g001", seat=seat, code=code)


def test_three_routine_refusals_at_one_seat_in_a_minute_need_the_referee() -> None:
    watch = RepeatWatch()
    got = [triage(refusal(n, 100.0 + 20 * n), watch, 0.0) for n in range(4)]
    assert got == [None, None, Concern.REPEATED, None]  # one item per burst
    slow = RepeatWatch()  # one every 31 s: never three within 60 s
    assert all(triage(refusal(n, 31.0 * n), slow, 0.0) is None for n in range(10))
    seats = RepeatWatch()  # two seats' slips are not one player's
    assert [triage(refusal(n, 100.0 + n, seat=n % 2), seats, 0.0) for n in range(4)] == [None] * 4
    # exceptional refusals are items of their own, never counted as slips
    mixed = RepeatWatch()
    codes = ["unknown_card", "not_your_turn", "unknown_card", "not_your_turn"]
    assert [triage(refusal(n, 100.0 + n, code=c), mixed, 0.0) for n, c in enumerate(codes)] == [
        Concern.OUTSIDE_CARD, None, Concern.OUTSIDE_CARD, None,
    ]  # fmt: skip


def test_calls_and_undos_need_the_referee_the_rest_does_not() -> None:
    watch = RepeatWatch()

    def of(kind: EventKind, **fields: Any) -> Concern | None:
        return triage(Event("mesa01", 1, 5.0, kind, "mesa01-g001", **fields), watch, 0.0)

    assert of(EventKind.REFEREE_CALL, seat=2) is Concern.CALLED
    assert of(EventKind.UNDO, action="1 play 1B") is Concern.UNDONE
    for kind in (EventKind.ACTION, EventKind.DEAL, EventKind.SCORE, EventKind.FINISHED):
        assert of(kind) is None


# ---------------------------------------------------------------------------- the message


def test_a_referee_call_is_a_checked_message() -> None:
    prefix = "truco/t/tables/"
    call = Event("mesa01", 7, 5.0, EventKind.REFEREE_CALL, "mesa01-g001", seat=3, text="x")
    payload = call.payload()
    assert payload["kind"] == "referee-call" and payload["seat"] == 3
    assert parse_message(prefix, f"{prefix}mesa01/events", encode(payload)) == call
    with pytest.raises(MalformedMessage, match="names no seat"):
        del payload["seat"]
        parse_message(prefix, f"{prefix}mesa01/events", encode(payload))
    with pytest.raises(MalformedMessage):
        parse_message(prefix, f"{prefix}mesa01/events", encode(payload | {"seat": 9}))


# ---------------------------------------------------------------------------- the desk


def test_the_desk_lists_what_needs_the_referee(tmp_path: Path, key: TournamentKey) -> None:
    desk = DeskState("t", out_dir=tmp_path / "desk", key=key)
    desk.handle(*event("mesa01", 1, "refusal", seat=1, code="not_your_turn", text="a"))
    desk.handle(*event("mesa01", 2, "refusal", seat=1, code="call_pending", text="b"))
    desk.handle(*event("mesa02", 1, "referee-call", seat=0, text="# llamado al árbitro: asiento 0"))
    desk.handle(*event("mesa01", 3, "refusal", seat=1, code="no_pending_call", text="c"))
    snap = desk.snapshot()
    assert [(a["table"], a["seq"], a["concern"]) for a in snap["attention"]] == [
        ("mesa02", 1, "called"),  # as they reached the desk
        ("mesa01", 3, "repeated"),  # three slips of seat 1 in three seconds
    ]
    assert snap["attention_pending"] == 2 and snap["refusals_total"] == 3
    mesa01 = next(t for t in snap["tables"] if t["table"] == "mesa01")
    assert mesa01["refusal_counts"] == {"call_pending": 1, "no_pending_call": 1, "not_your_turn": 1}
    mesa02 = next(t for t in snap["tables"] if t["table"] == "mesa02")
    assert (
        mesa02["attention"][0]["words"] == "Llaman al árbitro"
        and mesa02["attention"][0]["seat"] == 0
    )
    assert "el asiento 0 llamó al árbitro" in mesa02["last"]
    desk.close()


def test_a_table_clock_a_day_behind_neither_jumps_the_list_nor_delays(
    tmp_path: Path, key: TournamentKey
) -> None:
    """mesa02's clock is a day behind: its call, which reached the desk after mesa01's,
    stays after it, and the desk's delay does not read a day (issue 43)."""
    desk = DeskState("t", out_dir=tmp_path / "desk", key=key)
    day = 86_400.0
    desk.handle(*event("mesa01", 1, "referee-call", seat=1, text="primero"), now=1001.2)
    desk.handle(*event("mesa02", 1, "action", ts=1001.0 - day), now=1001.1)
    desk.handle(*event("mesa02", 2, "referee-call", seat=0, text="después", ts=1002.0 - day),
                now=1003.0)  # fmt: skip
    desk.handle(*event("mesa03", 1, "referee-call", seat=0, text="último", ts=2000.0), now=1004.0)
    snap = desk.snapshot()
    assert [a["table"] for a in snap["attention"]] == ["mesa01", "mesa02", "mesa03"]
    assert snap["max_latency_s"] < 2.0
    desk.close()
    again = DeskState("t", out_dir=tmp_path / "desk", key=key)  # the journal keeps the order
    assert [a.table for a in again.attention()] == ["mesa01", "mesa02", "mesa03"]
    again.close()


def test_acknowledgements_survive_a_restart(tmp_path: Path, key: TournamentKey) -> None:
    folder = tmp_path / "desk"
    first = DeskState("t", out_dir=folder, key=key)
    first.handle(*event("mesa01", 1, "referee-call", seat=1, text="llamado"))
    first.handle(*event("mesa01", 2, "refusal", seat=0, code="card_not_in_hand", text="ajena"))
    first.handle(*event("mesa02", 1, "undo", action="0 play 1B", text="deshecho"))
    assert first.ack("mesa01", 1) == 1
    first.close()
    second = DeskState("t", out_dir=folder, key=key)
    assert [a.seq for a in second.tables["mesa01"].pending()] == [2]
    assert [a.seq for a in second.tables["mesa02"].pending()] == [1]
    assert second.ack("mesa02") == 1
    # the power goes while a line is being written: a torn line ends the journal
    second.close()
    with open(folder / "events.jsonl", "a", encoding="utf-8") as f:
        f.write('{"t": 5, "ack": "mes')
    third = DeskState("t", out_dir=folder, key=key)
    assert [a.seq for a in third.tables["mesa01"].pending()] == [2]
    assert not third.tables["mesa02"].pending()
    assert third.ack("mesa01", 2) == 1  # written after the torn line, not glued to it
    third.close()
    fourth = DeskState("t", out_dir=folder, key=key)
    assert not fourth.tables["mesa01"].pending() and not fourth.tables["mesa02"].pending()
    assert len(fourth.tables["mesa01"].attention) == 2  # kept, as acknowledged
    assert fourth.snapshot()["tables"][0]["acknowledged"] == 2
    fourth.close()
    acks = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()
            if '"ack"' in line and line.endswith("}")]  # fmt: skip
    assert [(a["ack"], a["seqs"]) for a in acks] == [
        ("mesa01", [1]), ("mesa02", [1]), ("mesa01", [2]),
    ]  # fmt: skip


def test_a_forged_acknowledgement_line_names_a_real_table(
    tmp_path: Path, key: TournamentKey
) -> None:
    folder = tmp_path / "desk"
    first = DeskState("t", out_dir=folder, key=key)
    first.handle(*event("mesa01", 1, "referee-call", seat=1, text="llamado"))
    first.close()
    with open(folder / "events.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"t": 1, "ack": "../x", "seqs": [1]}) + "\n")
        f.write(json.dumps({"t": 1, "ack": "mesa01", "seqs": "1"}) + "\n")
    again = DeskState("t", out_dir=folder, key=key)
    assert [a.seq for a in again.tables["mesa01"].pending()] == [1]
    assert set(again.tables) == {"mesa01"}
    again.close()


# ---------------------------------------------------------------------------- from a table


def test_a_call_on_a_pad_is_journaled_in_the_outbox(tmp_path: Path, key: TournamentKey) -> None:
    outbox = tmp_path / "outbox"
    own = table_key(key, "t", "mesa01")  # the table's key, derived from the secret
    pub = TablePublisher("mesa01", "127.0.0.1", free_port(), outbox_dir=outbox, tournament="t",
                         key=own)  # fmt: skip
    with MockTable(HouseRules()) as mock:
        pub.attach(mock.service)
        mock.deal(DEAL)
        mock.call_referee(1)
    calls = [
        p for p in (decode(e.payload) for e in pub.outbox) if p and p["kind"] == "referee-call"
    ]
    assert [(c["seat"], c["text"], c["hand"]) for c in calls] == [
        (1, "# llamado al árbitro: asiento 1", 1)
    ]
    pub.abort()  # the power goes before the broker heard it
    again = TablePublisher("mesa01", "127.0.0.1", free_port(), outbox_dir=outbox,
                           tournament="t", key=own)  # fmt: skip
    kinds = [p["kind"] for p in (decode(e.payload) for e in again.outbox) if p]
    assert "referee-call" in kinds and again.pending() > 0  # still to be sent
    # and the desk takes it as a table's signed message
    desk = DeskState("t", key=key)
    for entry in again.outbox:
        desk.handle(f"truco/t/tables/mesa01/{entry.topic}", entry.payload)
    [item] = desk.attention()
    assert (item.table, item.seat, item.concern) == ("mesa01", 1, Concern.CALLED)
    again.abort()


def test_a_call_reaches_the_desk_through_the_venue_broker(
    venue: Venue, venue_broker: LocalBroker, tmp_path: Path
) -> None:
    """mesa04's pad, its publisher with its own account and key, Mosquitto with the
    venue's ACLs and TLS, desk1's account: the call is on the desk's list, and the
    referee's acknowledgement stays after the desk restarts."""
    from controller.tournament.desk import Desk

    settings = load_tournament_settings(venue.table_dir("mesa04") / "tournament.toml")
    assert settings is not None
    pub = TablePublisher(
        "mesa04", "127.0.0.1", venue.port, outbox_dir=tmp_path / "outbox", tournament="copa",
        key=settings.key, access=settings.access,
    )  # fmt: skip
    secret = load_key(venue.root / "secret.key", kind="key-file")
    access = BrokerAccess("desk1", venue.password("desk1"), venue.ca_file)
    state = DeskState("copa", out_dir=tmp_path / "desk", key=secret, tables=venue.tables)
    desk = Desk(state, "127.0.0.1", venue.port, access=access).start()
    heard: list[object] = []
    try:
        assert desk.connected.wait(120)
        with MockTable(HouseRules()) as mock:
            mock.service.listeners.append(heard.append)
            pub.attach(mock.service)
            pub.start()
            assert pub.connected.wait(120)
            mock.deal(DEAL)
            mock.call_referee(0)
            assert RefereeCall(0) in heard
            assert pub.flush(10)
        assert desk.wait(lambda s: bool(s.attention()), 15)
        [item] = state.attention()
        assert (item.table, item.seat, item.concern) == ("mesa04", 0, Concern.CALLED)
        assert state.rejected == 0
        assert state.ack("mesa04", item.seq) == 1
    finally:
        desk.stop()
        pub.close()
    state.close()
    restarted = DeskState("copa", out_dir=tmp_path / "desk", key=secret, tables=venue.tables)
    assert restarted.tables["mesa04"].attention and not restarted.attention()
    restarted.close()
