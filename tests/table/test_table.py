"""The table between hardware events and the engine: the deal, taps, refusals, messages.

Driven with the events the hardware layer delivers (``seatlink`` event classes), so these
tests need no threads; the mock-hardware path is in ``test_mock_table.py``.
"""

from __future__ import annotations

from controller.engine import Card, HouseRules, RefusalCode
from controller.engine.results import Reason
from controller.hal.events import (
    ButtonHeld,
    ButtonPressed,
    Heartbeat,
    NodeConnected,
    NodeDisconnected,
    TagArrived,
    TagLeft,
)
from controller.hal.mock import MockDeck
from controller.notices import NotTheDealer, Refusal, Scored, SeatFault
from controller.render.notices import notice_text
from controller.render.screen import ScreenContent, screen_content
from controller.table.faults import SeatWatch
from controller.table.screens import screen_for
from controller.table.table import DealReading, Phase, Table
from tests.helpers import Clock

DECK = MockDeck(1)


def uid(name: str) -> bytes:
    return DECK.uid(Card.from_str(name))


def make(
    players: int = 2, reading: DealReading = DealReading.SEATS
) -> tuple[Table, list[str], Clock]:
    lines: list[str] = []
    clock = Clock()
    table = Table(
        HouseRules(players=players),
        DECK.lookup,
        deal_reading=reading,
        clock=clock,
        on_record=lambda text: lines.extend(text.split("\n")),
    )
    return table, lines, clock


def tap(table: Table, seat: int, name: str) -> None:
    table.handle(seat, TagArrived(uid(name)))
    table.handle(seat, TagLeft(uid(name)))


# mypy keeps an attribute (``table.phase``, ``table.last.code``) narrowed by one assert
# across the table.handle calls that change it: a second value is read through a call.
def phase(table: Table) -> Phase:
    return table.phase


def last_code(table: Table) -> RefusalCode | None:
    assert table.last is not None
    return table.last.code


class TestDeal:
    def test_each_seat_taps_its_cards(self) -> None:
        table, lines, _ = make()
        table.new_hand()
        assert table.phase is Phase.DEALING
        for card in ("7C", "6C", "3E"):
            tap(table, 0, card)
        assert table.phase is Phase.DEALING
        for card in ("2O", "1B", "4B"):
            tap(table, 1, card)
        assert phase(table) is Phase.PLAYING
        assert lines == ["hand", "deal 0: 7C 6C 3E", "deal 1: 2O 1B 4B"]
        table.handle(0, ButtonPressed("envido"))
        table.handle(1, ButtonPressed("quiero"))
        assert table.game.score == (2, 0)
        assert lines[-2:] == ["0 envido", "1 quiero"]

    def test_dealer_reader_in_deal_order(self) -> None:
        table, lines, _ = make(reading=DealReading.DEALER)
        table.new_hand()
        # dealer is seat 1: cards go to seat 0, seat 1, seat 0, ...
        for card in ("7C", "2O", "6C", "1B", "3E", "4B"):
            tap(table, 1, card)
        assert table.phase is Phase.PLAYING
        assert lines[1:] == ["deal 0: 7C 6C 3E", "deal 1: 2O 1B 4B"]

    def test_dealer_reader_refuses_other_seats(self) -> None:
        table, _, _ = make(reading=DealReading.DEALER)
        table.new_hand()
        tap(table, 0, "7C")
        assert table.deal == {}
        message = table.message(0)
        assert message is not None and message.notice == NotTheDealer(1)

    def test_no_reading_plays_with_hands_unknown(self) -> None:
        table, lines, _ = make(reading=DealReading.NONE)
        table.new_hand()
        assert table.phase is Phase.PLAYING and lines == ["hand"]
        tap(table, 0, "1E")
        assert lines[-1] == "0 play 1E"

    def test_dealer_hold_mazo_starts_play_with_partial_deal(self) -> None:
        table, lines, _ = make()
        table.new_hand()
        for card in ("7C", "6C", "3E"):
            tap(table, 0, card)
        table.handle(0, ButtonHeld("mazo"))  # not the dealer: opens seat 0's menu only
        assert table.phase is Phase.DEALING
        table.handle(1, ButtonHeld("mazo"))
        assert phase(table) is Phase.PLAYING
        assert lines == ["hand", "deal 0: 7C 6C 3E"]
        assert table.game.hand_of(1) is None

    def test_card_in_another_hand_and_fourth_card(self) -> None:
        table, _, _ = make()
        table.new_hand()
        tap(table, 0, "7C")
        tap(table, 1, "7C")
        assert table.deal == {0: [Card.from_str("7C")]}
        for card in ("6C", "3E", "5E"):
            tap(table, 0, card)
        assert len(table.deal[0]) == 3
        message = table.message(0)
        assert message is not None and message.refusal

    def test_buttons_during_the_deal_are_hand_over(self) -> None:
        table, _, _ = make()
        table.new_hand()
        table.handle(0, ButtonPressed("truco"))
        assert table.last is not None and table.last.code is RefusalCode.HAND_OVER


def dealt() -> tuple[Table, list[str], Clock]:
    table, lines, clock = make()
    table.new_hand()
    for card in ("7C", "6C", "3E"):
        tap(table, 0, card)
    for card in ("2O", "1B", "4B"):
        tap(table, 1, card)
    return table, lines, clock


class TestPlay:
    def test_tap_plays_and_wrong_seat_is_refused(self) -> None:
        table, lines, _ = dealt()
        tap(table, 1, "2O")
        assert table.last is not None and table.last.code is RefusalCode.NOT_YOUR_TURN
        tap(table, 0, "3E")
        assert lines[-1] == "0 play 3E"
        tap(table, 1, "7C")  # seat 0's card, read at seat 1
        assert last_code(table) is RefusalCode.CARD_NOT_IN_HAND
        message = table.message(1)
        assert message is not None and message.refusal
        assert message.notice == Refusal(RefusalCode.CARD_NOT_IN_HAND)

    def test_a_card_lying_on_the_reader_is_played_once(self) -> None:
        table, lines, _ = dealt()
        table.handle(0, TagArrived(uid("3E")))
        table.handle(0, TagArrived(uid("3E")))  # seen again while still lying there
        assert lines.count("0 play 3E") == 1
        assert table.last is not None and table.last.code is None
        table.handle(0, TagLeft(uid("3E")))
        tap(table, 1, "2O")
        table.handle(0, TagArrived(uid("3E")))  # put back later: a second play
        assert table.last is not None and table.last.code is RefusalCode.CARD_ALREADY_PLAYED

    def test_events_that_change_no_screen_say_so(self) -> None:
        table, _, _ = dealt()

        def screens() -> list[ScreenContent]:
            return [screen_content(screen_for(table, seat)) for seat in range(2)]

        assert table.handle(0, TagArrived(uid("3E")))  # played
        before = screens()
        for seat, event in (
            (0, TagArrived(uid("3E"))),  # still lying on the reader
            (0, TagLeft(uid("3E"))),
            (1, Heartbeat(12)),
            (1, ButtonPressed("pedal")),  # no such button
            (5, ButtonPressed("truco")),  # no such seat
        ):
            assert not table.handle(seat, event), event
            assert screens() == before, event
        assert table.handle(1, ButtonPressed("truco"))
        assert screens() != before

    def test_unknown_tag_is_refused_on_the_seat(self) -> None:
        table, lines, _ = dealt()
        before = list(lines)
        table.handle(0, TagArrived(b"\x04\x00\x00\x00\x00\x00\x01"))
        assert lines == before
        message = table.message(0)
        assert message is not None and message.refusal
        assert message.notice == Refusal(RefusalCode.UNKNOWN_CARD)

    def test_messages_expire(self) -> None:
        table, _, clock = dealt()
        tap(table, 1, "2O")
        assert table.message(1) is not None
        clock.now += 10
        assert table.message(1) is None

    def test_unplugged_node_is_shown_until_it_comes_back(self) -> None:
        table, _, clock = dealt()
        table.handle(1, NodeDisconnected("/dev/truco-seat1", "unplugged"))
        clock.now += 60
        message = table.message(1)
        assert message is not None and not table.node_ok[1]
        table.handle(1, NodeConnected("/dev/truco-seat1"))
        assert table.node_ok[1]

    def test_a_missing_reader_chip_is_a_lasting_alert_until_it_answers(self) -> None:
        table, _, clock = dealt()
        watch = SeatWatch(table.rules.players, clock=lambda: clock.now)
        watch.attach(table)
        clock.now += 10  # the deal's notice has gone
        assert watch.event(1, Heartbeat(5, 0, reader_ok=True)) == (False, False)
        assert table.alert(1) is None
        assert watch.event(1, Heartbeat(6, 0, reader_ok=False)) == (True, False)
        assert table.alert(1) is SeatFault.READER_MISSING
        tap(table, 1, "2O")  # a refusal is told; the alert stays under it
        assert watch.event(1, Heartbeat(7, 0, reader_ok=False)) == (False, False)
        assert table.alert(1) is SeatFault.READER_MISSING
        assert screen_for(table, 1).alert is SeatFault.READER_MISSING
        assert watch.event(1, Heartbeat(8, 0, reader_ok=True)) == (True, False)
        assert table.alert(1) is None and screen_for(table, 1).alert is None

    def test_awards_are_announced_to_every_seat(self) -> None:
        table, _, _ = dealt()
        table.handle(0, ButtonPressed("envido"))
        table.handle(1, ButtonPressed("quiero"))
        ours, theirs = table.message(0), table.message(1)
        assert ours is not None and theirs is not None
        assert ours.notice == theirs.notice == Scored(2, 0, Reason.ENVIDO, (0, 33))
        assert notice_text(ours.notice, 0) == "+2 nosotros: envido (33 del asiento 0)"
        assert notice_text(theirs.notice, 1) == "+2 ellos: envido (33 del asiento 0)"
