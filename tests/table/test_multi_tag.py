"""Several cards on one reader: the table never plays or deals a card it had to guess.

Each seat's reader here is the seat node's own chain: the simulated MFRC522 (after the
data sheet, ``tests/firmware/fake_mfrc522.py``), the firmware's driver and its tag
presence rules, polled every 15 ms; their TAGON / TAGOFF / TAGMANY become the events
``SeatLink`` delivers.  Two and three cards arrive and leave in every order, and
stacked (laid on in the same poll), while the deal is read and during play.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from controller.engine import Card, HouseRules
from controller.hal.events import LinkEvent, TagArrived, TagConflict, TagLeft
from controller.hal.mock import MockDeck
from controller.notices import LinkNotice
from controller.table.screens import screen_for
from controller.table.table import DealReading, Phase, Table
from tests.helpers import Clock

ROOT = Path(__file__).resolve().parents[2]
for _path in (ROOT / "firmware", ROOT / "tests" / "firmware", ROOT / "tests" / "firmware" / "mpy"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from fake_mfrc522 import SimMFRC522, SimTag  # noqa: E402
from fw_checks import _orders  # noqa: E402
from seatnode.mfrc522 import MFRC522  # noqa: E402
from seatnode.tags import TAGMANY, TAGON, TagPresence  # noqa: E402

DECK = MockDeck(1)
POLL_MS = 15
SEAT0 = ("7C", "6C", "3E")  # seat 0's hand in the games below
SEAT1 = ("2O", "1B", "4B")


class SeatReader:
    """One seat's reader, as its node sees it, feeding the table."""

    def __init__(self, table: Table, seat: int, clock: Clock) -> None:
        self.table, self.seat, self.clock = table, seat, clock
        self.chip = SimMFRC522([])
        self.driver = MFRC522(self.chip, self.chip.cs)
        assert self.driver.init()
        self.presence = TagPresence()
        self.now_ms = 0
        self.field: list[str] = []
        self.history: list[list[str]] = []  # the field at each poll
        self.arrived: list[str] = []  # the cards reported as arrived, in order
        self.conflicts = 0

    def lay(self, *cards: str) -> None:
        self.field = list(cards)
        self.chip.tags = [SimTag(DECK.uid(Card.from_str(c))) for c in cards]

    def polls(self, count: int) -> None:
        for _ in range(count):
            seen = self.driver.read_uid()
            self.history.append(list(self.field))
            for kind, uid in self.presence.update(seen, self.now_ms):
                event: LinkEvent
                if kind == TAGON:
                    card = str(DECK.lookup(uid))
                    # Arrived only after the last two polls read it alone.
                    assert all(past == [card] for past in self.history[-2:]), self.history
                    self.arrived.append(card)
                    event = TagArrived(uid)
                elif kind == TAGMANY:
                    self.conflicts += 1
                    event = TagConflict()
                else:
                    event = TagLeft(uid)
                self.table.handle(self.seat, event)
            self.now_ms += POLL_MS
            self.clock.now += POLL_MS / 1000


def play_order(reader: SeatReader, cards: tuple[str, ...], order: list[tuple[str, str]],
               together: int) -> None:  # fmt: skip
    """The cards named A, B, C in ``order`` arrive and leave, 3 polls apart, the first
    ``together`` arrivals between two polls (stacked: laid on at once); then the
    reader is left empty long enough for the last card to leave."""
    names = dict(zip("ABC", cards, strict=False))
    field: list[str] = []
    for index, (what, name) in enumerate(order):
        if what == "on":
            field.append(names[name])
        else:
            field.remove(names[name])
        reader.lay(*field)
        reader.polls(0 if index < together - 1 else 3)
    reader.polls(40)


def make() -> tuple[Table, list[str], Clock]:
    lines: list[str] = []
    clock = Clock()
    table = Table(
        HouseRules(players=2),
        DECK.lookup,
        deal_reading=DealReading.SEATS,
        clock=clock,
        on_record=lambda text: lines.extend(text.split("\n")),
    )
    return table, lines, clock


CASES = [
    (names, order, together)
    for names in (["A", "B"], ["A", "B", "C"])
    for order in _orders(names)
    for together in (0, len(names))
    if not together or all(what == "on" for what, _ in order[:together])
]


def case_id(case: tuple[list[str], list[tuple[str, str]], int]) -> str:
    _names, order, together = case
    steps = "".join(("+" if w == "on" else "-") + n for w, n in order)
    return f"{steps}{'-stacked' if together else ''}"


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_the_deal_reads_only_cards_that_lay_alone(
    case: tuple[list[str], list[tuple[str, str]], int],
) -> None:
    names, order, together = case
    table, _lines, clock = make()
    table.new_hand()
    reader = SeatReader(table, 0, clock)
    play_order(reader, SEAT0, order, together)
    dealt = [str(c) for c in table.deal.get(0, [])]
    assert dealt == reader.arrived  # every card the reader reported alone, nothing else
    if together:  # laid on at once: a conflict, and no card until one lay alone
        assert reader.conflicts >= 1
        assert len(reader.history[0]) == len(names)  # the first poll saw them all
    # Whatever happened, laying each card alone finishes the deal.
    for card in SEAT0:
        reader.lay(card)
        reader.polls(3)
        reader.lay()
        reader.polls(40)
    assert sorted(str(c) for c in table.deal.get(0, [])) == sorted(SEAT0)
    for card in SEAT1:
        table.handle(1, TagArrived(DECK.uid(Card.from_str(card))))
    assert table.phase is Phase.PLAYING


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_play_never_comes_from_a_stack(
    case: tuple[list[str], list[tuple[str, str]], int],
) -> None:
    _names, order, together = case
    table, lines, clock = make()
    table.new_hand()
    for seat, hand in ((0, SEAT0), (1, SEAT1)):
        for card in hand:
            table.handle(seat, TagArrived(DECK.uid(Card.from_str(card))))
            table.handle(seat, TagLeft(DECK.uid(Card.from_str(card))))
    assert table.phase is Phase.PLAYING and table.game.view(0).turn == 0
    reader = SeatReader(table, 0, clock)
    play_order(reader, SEAT0, order, together)
    plays = [line.split()[-1] for line in lines if line.startswith("0 play ")]
    assert plays == reader.arrived[:1]  # the first card alone is played, and only that
    if together:  # stacked at once: a conflict first, whatever is played later
        assert reader.conflicts >= 1


def test_a_conflict_shows_una_carta_por_vez_and_plays_nothing() -> None:
    table, lines, clock = make()
    table.new_hand()
    reader = SeatReader(table, 0, clock)
    reader.lay("7C", "6C")
    reader.polls(3)
    assert reader.conflicts == 1 and table.deal == {}
    assert table.notice(0) is LinkNotice.ONE_CARD
    assert screen_for(table, 0).notice is LinkNotice.ONE_CARD
    assert screen_for(table, 1).notice is None
    clock.now += 3.1
    assert table.notice(0) is None  # a few seconds, then gone
    reader.lay("6C")
    reader.polls(3)
    assert [str(c) for c in table.deal[0]] == ["6C"]
    assert lines == []
