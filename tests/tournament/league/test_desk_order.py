"""The league desk follows a venue table from its first messages, whatever order they
come in: messages overtake one another on the way (paho sends what it queued before a
connection after what is published once connected; a bridge resends what it lost after
the next ones), so a table's stream starts at the lowest seq heard within
``FOLLOW_WAIT_S`` of its first message, or at once when what was heard from that seq on
reaches its game's beginning. Fed through the desk's own message handler, on a clock the
test moves."""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.tournament.desk.state import FOLLOW_WAIT_S, DeskState
from controller.tournament.league.desk import LeagueDesk
from controller.tournament.league.keys import derive_venue_secret
from controller.tournament.league.verify import RecordVerdict
from controller.tournament.wire.seal import TournamentKey

from .helpers import game_payloads, record_payload
from .test_web import DUE, LEAGUE, MATCH, SECRET, _central, _deliver

#: The bot game as bar-a's mesa01 plays it from seq 1: a game begun, its first deal,
#: its first action ("1 envido"), ..., its record.
GAME = game_payloads(LEAGUE, SECRET, "bar-a", "mesa01", MATCH.id, seq=1, chico=1)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[tuple[LeagueDesk, Clock]]:
    ca = ssl.get_default_verify_paths().cafile
    if ca is None:
        pytest.skip("no system CA file for the (unused) TLS context")
    clock = Clock()
    desk = LeagueDesk(
        LEAGUE, SECRET, tmp_path / "desk", host="127.0.0.1", port=1, ca_file=ca,
        username="league-desk", password="x", today=lambda: DUE, clock=clock,
    )  # fmt: skip
    desk.open()
    try:
        yield desk, clock
    finally:
        desk.ledger.close()


def _feed(desk: LeagueDesk, *seqs: int) -> None:
    for seq in seqs:
        topic, data = GAME[seq - 1]
        _deliver(desk, _central(LEAGUE, topic, "bar-a"), data)


def _counted(desk: LeagueDesk) -> list[str]:
    return [c.game for c in desk.snapshot().counted]


def test_the_games_first_messages_overtaken_on_the_way_still_count(
    desk: tuple[LeagueDesk, Clock],
) -> None:
    """The order the real broker test saw now and then: the first action (seq 3) came
    before the game's opening and its first deal. The stream starts at seq 1, not 3: the
    record agrees with the events and counts (it used to be flagged: "la jugada 1 del
    registro (hand) no es la que dijeron los eventos")."""
    league_desk, _ = desk
    assert json.loads(GAME[2][1])["kind"] == "action"
    _feed(league_desk, 3, 1, 2, *range(4, len(GAME) + 1))
    count = league_desk.snapshot()
    assert not count.flags, count.flags
    assert _counted(league_desk) == ["mesa01-g001"]
    assert league_desk.holes() == ([], [])


def test_a_lost_first_deal_is_a_hole_asked_for_and_the_game_waits_for_it(
    desk: tuple[LeagueDesk, Clock],
) -> None:
    """The action came first, the opening next, the deal between them never: the watch
    starts at the opening (seq 1), so seq 2 is a hole asked for; the record waits in its
    place until the table gives the deal again, then counts."""
    league_desk, clock = desk
    _feed(league_desk, 3, 1, *range(4, len(GAME) + 1))
    assert _counted(league_desk) == [] and not league_desk.snapshot().flags
    clock.now += 5.0  # the hole is old enough to be asked for
    [hole] = league_desk.watch.holes(clock.now)
    assert (hole.venue, hole.table, hole.first, hole.last) == ("bar-a", "mesa01", 2, 2)
    _feed(league_desk, 2)  # the table gives it again
    assert _counted(league_desk) == ["mesa01-g001"] and not league_desk.snapshot().flags


def test_a_stream_with_no_opening_starts_when_its_wait_is_over(
    desk: tuple[LeagueDesk, Clock],
) -> None:
    """A record with no events before it (a forgery, or a desk that joined late) is held
    while the messages before it may still come; once the wait is over (the desk's
    housekeeping settles it) it is judged in its place: not counted, flagged once."""
    league_desk, clock = desk
    topic, data = record_payload(LEAGUE, SECRET, "bar-a", "mesa02", MATCH.id, seq=4)
    _deliver(league_desk, _central(LEAGUE, topic, "bar-a"), data)
    assert league_desk.snapshot().flags == ()  # not judged early
    clock.now += FOLLOW_WAIT_S
    for state in league_desk.venues.values():
        state.settle(clock.now)
    [flag] = league_desk.snapshot().flags
    assert flag.check.game == "mesa02-g001" and flag.check.verdict is RecordVerdict.NOT_PLAYED
    assert _counted(league_desk) == []


def test_a_message_before_the_start_that_comes_after_the_wait_is_not_taken(
    desk: tuple[LeagueDesk, Clock],
) -> None:
    """Once a stream has started, what comes from before it is old (a desk that started
    after the table did): it changes nothing and starts no hole."""
    league_desk, clock = desk
    _feed(league_desk, 3)
    clock.now += FOLLOW_WAIT_S + 1.0
    _feed(league_desk, 1, 2)
    state = league_desk.venues["bar-a"].tables["mesa01"]
    assert not state.awaiting and state.next_seq == 4
    clock.now += 5.0
    assert league_desk.watch.holes(clock.now) == []


@settings(max_examples=40, deadline=None)
@given(order=st.permutations(range(1, 8)))
def test_any_order_of_a_games_first_messages_within_the_wait_counts_it(
    order: list[int],
) -> None:
    """Invariant: however the game's first seven messages overtook one another (within
    the wait), the venue's state follows the table from seq 1 and its record agrees."""
    venue_secret = derive_venue_secret(SECRET, LEAGUE.name, "bar-a")
    state = DeskState(LEAGUE.name, key=TournamentKey(venue_secret, f"{LEAGUE.name}:bar-a"),
                      rules=LEAGUE.rules.house, follow=True)  # fmt: skip
    for i, seq in enumerate([*order, *range(8, len(GAME) + 1)]):
        topic, data = GAME[seq - 1]
        state.handle(topic, data, 1000.0 + i * 0.01)
    [result] = state.results_list()
    assert result.game == "mesa01-g001" and result.problems == []
