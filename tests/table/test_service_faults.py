"""The service against what an SD card, a bad cable and a power cut do (issue 13): damaged
records, a disk that refuses, a flooding node, a reconnecting node, two decks, command
files and power cuts, the order write -> fsync -> display. No hardware threads: events
are posted as the links post them and the loop is stepped."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest
from PIL import Image

from controller.engine import CARDS, Card, HouseRules
from controller.hal.deck import Deck, DeckRegistry
from controller.hal.events import (
    ButtonPressed,
    LinkEvent,
    NodeConnected,
    NodeDisconnected,
    TagArrived,
    TagLeft,
)
from controller.hal.mock import MockDeck
from controller.notices import TableAlert
from controller.table.inbox import PER_SEAT
from controller.table.service import Accepted, ServiceConfig, ServiceEvent, TableService
from controller.table.store import GameStore, plain, render_lines
from controller.table.table import Phase
from controller.transcript import parse, replay
from tests.helpers import Clock

from .faulty_disk import FaultyDisk, PowerCut, errors

DECK = MockDeck(1)
OTHER = MockDeck(2)
DEAL = {0: "7C 6C 3E", 1: "2O 1B 4B"}


class Display:
    """A seat's display that logs each frame shown into a shared log."""

    def __init__(self, seat: int, log: list[tuple[str, str]]) -> None:
        self.seat, self.log = seat, log

    def show(self, image: Image.Image) -> None:
        self.log.append(("show", str(self.seat)))


class Rig:
    def __init__(
        self,
        state: Path,
        *,
        disk: FaultyDisk | None = None,
        rules: HouseRules | None = None,
        registry: DeckRegistry | None = None,
        next_deal: float | None = 0.0,
        new_game_after: float | None = None,
        answers: Path | None = None,
    ) -> None:
        self.clock = Clock(1000.0)
        self.disk = disk or FaultyDisk()
        self.log = self.disk.log  # disk operations and frames shown, in order
        rules = rules or HouseRules()
        self.events: list[ServiceEvent] = []
        self.store = GameStore(state, disk=self.disk, clock=lambda: 1_700_000_000.0)
        lookup = registry.lookup if registry is not None else DECK.lookup
        self.service = TableService(
            ServiceConfig(
                rules,
                state_dir=state,
                next_deal_after_s=next_deal,
                new_game_after_s=new_game_after,
                control_answers=answers,
            ),
            lookup,
            [Display(s, self.log) for s in range(rules.players)],
            clock=self.clock,
            store=self.store,
            deck_of=registry.deck_of if registry is not None else None,
        )
        self.service.listeners.append(self.events.append)
        self.service.ready()

    @property
    def game(self):  # type: ignore[no-untyped-def]
        return self.service.table.game

    def post(self, seat: int, event: LinkEvent) -> None:
        self.service.post(seat, event)

    def tap(self, seat: int, card: str, deck: MockDeck = DECK) -> None:
        uid = deck.uid(Card.from_str(card))
        self.post(seat, TagArrived(uid))
        self.post(seat, TagLeft(uid))

    def press(self, seat: int, button: str) -> None:
        self.post(seat, ButtonPressed(button))

    def deal(self, deal: dict[int, str] = DEAL) -> None:
        for seat, cards in deal.items():
            for card in cards.split():
                self.tap(seat, card)
        self.run()

    def run(self) -> None:
        while self.service.step(0.0):
            pass

    def moves(self) -> list[str]:
        return [str(a) for a in self.game.hand_actions]

    def close(self) -> None:
        self.service.close()


def words(message: object, seat: int = 0) -> str:
    """What a seat's message says (typed notices are worded by controller.render)."""
    notice = getattr(message, "notice", None)
    if notice is None:
        return str(getattr(message, "text", message))
    from controller.render import notices  # type: ignore[attr-defined, unused-ignore]

    return str(notices.notice_text(notice, seat))


def record(state: Path) -> str:
    return plain((state / "current.truco").read_text(encoding="utf-8"))


# ---------------------------------------------- issue 13, 2: a damaged line in the middle


def test_a_damaged_middle_line_starts_from_the_good_part_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rig = Rig(tmp_path)
    rig.deal()
    for seat, button in [(0, "envido"), (1, "quiero"), (0, "truco")]:
        rig.press(seat, button)
        rig.run()
    rig.tap(0, "3E")
    rig.run()
    rig.close()
    data = bytearray((tmp_path / "current.truco").read_bytes())
    at = data.index(b"1 quiero")
    data[at : at + 16] = bytes(16)  # 16 zeroed bytes before the last line
    (tmp_path / "current.truco").write_bytes(bytes(data))
    with caplog.at_level(logging.ERROR):
        again = Rig(tmp_path)
    assert again.moves() == ["0 envido"]  # the good part
    assert again.game.hand_in_progress
    for seat in (0, 1):
        message = again.service.table.message(seat)
        assert message is not None and "Registro dañado" in words(message, seat)
    assert any("está dañado" in r.message for r in caplog.records)
    [aside] = (tmp_path / "damaged").iterdir()
    assert aside.read_bytes() == bytes(data)
    again.press(1, "quiero")  # and the table goes on
    again.run()
    assert again.moves() == ["0 envido", "1 quiero"]


def test_a_line_the_checks_pass_but_replay_refuses_is_cut(tmp_path: Path) -> None:
    lines = ["table players=2", "hand", "0 mazo", "hand", "hand", "1 mazo"]  # hand in a hand
    (tmp_path / "current.truco").write_bytes(render_lines(lines)[0])
    rig = Rig(tmp_path, next_deal=None)
    assert rig.store.lines == lines[:3]  # and the hand that saw no action is read again
    assert rig.game.hand_number == 1 and not rig.game.hand_in_progress
    assert rig.store.damage is not None and rig.store.damage.first_bad_line == 5
    assert (tmp_path / "damaged").is_dir()


# ------------------------------------- issue 13, 3: a read-only, full or failing disk


@pytest.mark.parametrize("error", errors())
def test_a_disk_that_fails_at_the_end_of_a_game_never_stops_the_table(
    tmp_path: Path, error: int
) -> None:
    start = ["table players=2 target=15", "score 0 14"]
    (tmp_path / "current.truco").write_bytes(render_lines(start)[0])
    disk = FaultyDisk(error)
    rig = Rig(tmp_path, disk=disk, rules=HouseRules(target=15), new_game_after=0.0)
    rig.deal()
    disk.failing = True  # the state directory goes bad during the hand
    rig.press(0, "mazo")  # team 1 reaches 15: the game is won, its archive fails
    rig.run()
    rig.clock.now += 1
    rig.service.step(0.0)  # new_game_after_s = 0: a new game, in memory
    assert rig.game.score == (0, 0) and rig.game.winner is None
    for seat in (0, 1):
        assert rig.service.table.alert(seat) is TableAlert.NO_DISK
    # nothing told to the desk before it is in the record: only the deal was
    assert [type(e).__name__ for e in rig.events] == ["Accepted"]
    # a restart while the disk is still bad: up, in memory, saying so
    bad = FaultyDisk(error)
    bad.failing = bad.fail_reads = True
    other = Rig(tmp_path, disk=bad, rules=HouseRules(target=15))
    assert other.service.table.alert(0) is TableAlert.NO_DISK
    other.deal()
    assert other.game.hand_in_progress
    # the disk comes back: the finished game is archived, the new one is current
    disk.failing = False
    rig.clock.now += 2
    rig.service.step(0.0)
    assert rig.service.table.alert(0) is None
    [archived] = rig.store.archived()
    won = replay(parse(archived.read_text(encoding="utf-8"))).game
    assert won.winner == 1 and won.score == (0, 15)
    assert record(tmp_path).startswith("table players=2 target=15")
    assert replay(parse(record(tmp_path))).game.hand_number == 0
    kinds = [type(e).__name__ for e in rig.events]
    assert kinds == ["Accepted", "Accepted", "Finished", "NewGame"]  # in order, once durable


def test_events_reach_the_listeners_only_after_the_record_has_them(tmp_path: Path) -> None:
    """Issue 13, "an event is journaled for the desk only after it is in the record"."""
    seen: list[tuple[str, bool]] = []
    rig = Rig(tmp_path)

    def listener(event: ServiceEvent) -> None:
        if isinstance(event, Accepted):
            seen.append((event.text, event.text.split("\n")[-1] in record(tmp_path)))

    rig.service.listeners.append(listener)
    rig.deal()
    rig.disk.failing = True
    rig.press(0, "envido")
    rig.run()
    assert [text for text, _ in seen] == ["hand\ndeal 0: 7C 6C 3E\ndeal 1: 2O 1B 4B"]
    rig.disk.failing = False
    rig.clock.now += 2
    rig.service.step(0.0)
    assert seen[-1] == ("0 envido", True)
    assert all(durable for _, durable in seen)


# ---------------------------------------------------------- durability a test can see


def test_each_action_is_written_then_synced_then_shown(tmp_path: Path) -> None:
    """Deleting the store's fsync (or moving the redraw before it) fails this test."""
    rig = Rig(tmp_path)
    rig.deal()
    for seat, button in [(0, "envido"), (1, "quiero")]:
        rig.log.clear()
        rig.press(seat, button)
        rig.run()
        ops = [op for op, _ in rig.log if op in ("write", "fsync", "show")]
        assert ops[:2] == ["write", "fsync"], rig.log
        assert set(ops[2:]) == {"show"} and len(ops) > 2
        assert f"{seat} {button}" in rig.log[0][1]


# ---------------------------------------------------------- issue 13, 5: a flooding node


def test_a_flooding_node_is_bounded_and_never_delays_another_seat(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.deal()
    handled: list[int] = []
    handle = rig.service.table.handle

    def counting(seat: int, event: LinkEvent) -> bool:
        handled.append(seat)
        return handle(seat, event)

    rig.service.table.handle = counting  # type: ignore[method-assign]
    for _ in range(20_000):
        rig.press(1, "mazo")  # valid presses, far too many (refused: not its turn)
    rig.press(0, "envido")  # the genuine action, behind the flood
    assert len(rig.service.events) == PER_SEAT + 1
    assert rig.service.events.dropped[1] == 20_000 - PER_SEAT
    rig.service.step(0.0)
    assert handled.index(0) <= 1  # one event of every other seat at most before it
    assert rig.moves()[-1] == "0 envido"


def test_a_flood_from_another_thread_keeps_memory_and_latency_bounded(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.deal()
    stop = threading.Event()
    most = [0]

    def flood() -> None:
        while not stop.is_set():
            rig.press(1, "truco")
            most[0] = max(most[0], len(rig.service.events))

    thread = threading.Thread(target=flood)
    thread.start()
    try:
        for _ in range(50):
            rig.service.step(0.0)
        handled_before = rig.service.handled
        rig.press(0, "envido")
        while "0 envido" not in rig.moves():
            rig.service.step(0.0)
        between = rig.service.handled - handled_before
    finally:
        stop.set()
        thread.join()
    assert most[0] <= PER_SEAT + 1
    assert between <= 2 * 64 + 1  # at most the batch in hand and one more


# -------------------------------------------------------- issue 13, 8: hand end batch


def test_taps_in_the_same_batch_as_the_end_of_a_hand_are_the_next_deal(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.deal()
    rig.press(0, "mazo")  # the hand ends...
    for seat, cards in {0: "1E 2E 3C", 1: "4E 5E 6E"}.items():  # ...and the next deal
        for card in cards.split():
            rig.tap(seat, card)
    rig.service.step(0.0)  # one batch
    assert rig.game.hand_number == 2 and rig.service.table.phase is Phase.PLAYING
    assert "deal 0: 1E 2E 3C" in record(tmp_path)


# ------------------------------------------------ issue 13, 8: two decks in one hand


def deck(mock: MockDeck, name: str) -> Deck:
    return Deck(name, {mock.uid(c): c for c in CARDS})


def test_a_card_of_another_deck_is_refused_in_a_hand_that_started_with_one(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, registry=DeckRegistry((deck(DECK, "bar"), deck(OTHER, "casa"))))
    rig.tap(0, "7C")
    rig.tap(0, "6C")
    rig.tap(0, "3E", OTHER)  # the same card name, from the other deck
    rig.run()
    assert rig.service.table.deal[0] == [Card.from_str("7C"), Card.from_str("6C")]
    message = rig.service.table.message(0)
    assert message is not None and message.refusal and "otro mazo" in words(message)
    rig.tap(0, "3E")
    rig.tap(1, "2O")
    rig.tap(1, "1B")
    rig.tap(1, "4B")
    rig.run()
    rig.tap(0, "3E", OTHER)  # in play too
    rig.run()
    assert rig.moves() == []
    rig.tap(0, "3E")
    rig.run()
    assert rig.moves() == ["0 play 3E"]


# ----------------------------------------- issue 13, 7: a node's reconnect (service)


def test_a_card_on_the_reader_when_the_node_drops_is_a_tap_after_it_is_back(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path)
    rig.deal()
    uid = DECK.uid(Card.from_str("3E"))
    rig.post(0, TagArrived(uid))  # seat 0 (mano) lays 3E on its reader and leaves it
    rig.run()
    assert rig.moves() == ["0 play 3E"]
    rig.service.undo()  # the referee takes it back; the card still lies on the reader
    rig.post(0, NodeDisconnected("/dev/ttyACM0", "unplugged"))  # USB drops, TagLeft lost
    rig.post(0, NodeConnected("/dev/ttyACM0"))
    rig.post(0, TagArrived(uid))  # the node reports the card again
    rig.run()
    assert rig.moves() == ["0 play 3E"]


# --------------------------------------- issue 13, 8: command files and power cuts


def test_an_undo_file_survives_a_cut_before_the_record_is_rewritten(tmp_path: Path) -> None:
    from controller.table.service import drop_command

    rig = Rig(tmp_path)
    rig.deal()
    rig.press(0, "envido")
    rig.run()
    drop_command(tmp_path, "undo")
    rig.disk.cut_at = rig.disk.mutations + 1  # the power goes at the rewrite's first step
    with pytest.raises(PowerCut):
        rig.service.step(0.0)
    # the file was claimed (renamed <id>.taken), not consumed
    assert list((tmp_path / "control").glob("*.taken"))
    again = Rig(tmp_path)  # the restart applies it
    assert again.moves() == []
    assert not [*(tmp_path / "control").glob("*.cmd"), *(tmp_path / "control").glob("*.taken")]


def test_an_undo_file_applied_before_a_cut_is_not_applied_twice(tmp_path: Path) -> None:
    from controller.table.service import drop_command

    rig = Rig(tmp_path)
    rig.deal()
    for seat, button in [(0, "envido"), (1, "quiero")]:
        rig.press(seat, button)
        rig.run()
    drop_command(tmp_path, "undo")
    real_unlink = Path.unlink

    def unlink(self: Path, missing_ok: bool = False) -> None:
        if self.parent.name == "control":
            raise PowerCut(self.name)  # the record has the undo, the file is still there
        real_unlink(self, missing_ok)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "unlink", unlink)
        with pytest.raises(PowerCut):
            rig.service.step(0.0)
    assert rig.moves() == ["0 envido"]
    again = Rig(tmp_path)
    assert again.moves() == ["0 envido"]  # one undo, not two
    assert not [*(tmp_path / "control").glob("*.cmd"), *(tmp_path / "control").glob("*.taken")]
    assert "# control " in record(tmp_path)


def test_a_new_game_file_applied_before_a_cut_is_not_applied_twice(tmp_path: Path) -> None:
    from controller.table.service import drop_command

    rig = Rig(tmp_path)
    rig.deal()
    rig.press(0, "envido")
    rig.run()
    drop_command(tmp_path, "new-game")
    real_unlink = Path.unlink

    def unlink(self: Path, missing_ok: bool = False) -> None:
        if self.parent.name == "control":
            raise PowerCut(self.name)
        real_unlink(self, missing_ok)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "unlink", unlink)
        with pytest.raises(PowerCut):
            rig.service.step(0.0)
    again = Rig(tmp_path)
    assert again.game.hand_number == 0
    assert len(again.store.archived()) == 1  # archived once, no empty game archived
    assert not [*(tmp_path / "control").glob("*.cmd"), *(tmp_path / "control").glob("*.taken")]


def test_a_failing_control_directory_never_stops_the_table(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    (tmp_path / "control").mkdir()
    (tmp_path / "control" / "x.cmd").mkdir()  # reading it fails (a directory)
    rig.deal()
    assert rig.game.hand_in_progress


def test_a_record_with_fewer_seats_than_configured_starts(tmp_path: Path) -> None:
    """Found by the full fault-injection run: a 4-seat record under a 6-seat
    configuration made every redraw raise, at every start."""
    (tmp_path / "current.truco").write_bytes(render_lines(["table players=2"])[0])
    rig = Rig(tmp_path, rules=HouseRules(players=4))
    assert rig.game.players == 2
    rig.deal()
    assert rig.game.hand_in_progress
