"""The service loop on mock hardware: restart = replay, broken displays, a full disk,
table controls, the command files, sd_notify."""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.engine import Card, HouseRules
from controller.notices import AskConfirm, LinkNotice, TableAlert
from controller.render.screen import screen_lines
from controller.table.controls import Button, Gesture
from controller.table.mock_table import MockTable
from controller.table.notify import KEEP, Notifier
from controller.table.screens import screen_for
from controller.table.service import ServiceConfig, TableService, drop_command
from controller.table.store import plain
from controller.table.table import Phase
from tests.helpers import PATIENCE, cards

from .faulty_disk import FaultyDisk

DEAL = {0: cards("7C 6C 3E"), 1: cards("2O 1B 4B")}


def test_restart_continues_where_it_was(tmp_path: Path) -> None:
    with MockTable(HouseRules(), state_dir=tmp_path) as first:
        first.deal(DEAL)
        first.press(0, Button.ENVIDO)
        first.press(1, Button.QUIERO)
        first.tap(0, Card.from_str("3E"))
        first.press(1, Button.TRUCO)
        key = first.game.state_key()
        score = first.game.score
    with MockTable(HouseRules(), state_dir=tmp_path) as again:
        assert again.game.state_key() == key
        assert again.game.score == score == (2, 0)
        assert again.game.truco_pending == (1, 1)
        assert again.table.phase is Phase.PLAYING
        again.press(0, Button.QUIERO)
        assert again.game.truco_level == 1


def test_a_display_that_raises_does_not_stop_the_table(tmp_path: Path) -> None:
    with MockTable(HouseRules(), state_dir=tmp_path) as mock:

        def broken(frame: object) -> None:
            raise OSError(errno.EIO, "I2C bus error")

        mock.parts.displays[1].show = broken  # type: ignore[method-assign,assignment]
        mock.parts.displays[1].show_pages = broken  # type: ignore[method-assign,assignment]
        mock.deal(DEAL)
        mock.press(0, Button.ENVIDO)
        mock.press(1, Button.QUIERO)
        assert mock.game.score == (2, 0)
        assert mock.service.display_errors > 0
        assert mock.parts.displays[0].frames > 0


def test_full_disk_goes_on_in_memory_and_says_so(tmp_path: Path) -> None:
    with MockTable(HouseRules(), state_dir=tmp_path) as mock:
        store = mock.service.store
        assert store is not None
        disk = FaultyDisk(errno.ENOSPC)
        store.disk = disk
        store._close()
        disk.failing = True
        mock.deal(DEAL)
        mock.press(0, Button.ENVIDO)
        mock.press(1, Button.QUIERO)
        assert mock.game.score == (2, 0)  # the game went on
        assert store.problem is not None
        assert mock.table.alert(0) is TableAlert.NO_DISK
        screen_text = " ".join(screen_lines(screen_for(mock.table, 1)))
        assert "DISCO" in screen_text or mock.table.message(1) is not None
        disk.failing = False
        mock.tap(0, Card.from_str("3E"))
        assert store.problem is None and mock.table.alert(0) is None
        text = plain(store.path.read_text())
        assert text.endswith("0 envido\n1 quiero\n0 play 3E\n")


def test_undo_by_button_combination(tmp_path: Path) -> None:
    with MockTable(HouseRules(), state_dir=tmp_path) as mock:
        mock.deal(DEAL)
        mock.tap(0, Card.from_str("3E"))
        mock.tap(1, Card.from_str("1B"))  # meant 2O: the referee undoes it
        mock.hold(1, Button.MAZO)
        mock.hold(1, Button.NO_QUIERO)
        message = mock.table.message(0)
        assert message is not None and message.notice == AskConfirm("undo")
        mock.press(0, Button.QUIERO)  # the other team agrees
        assert [str(a) for a in mock.game.hand_actions] == ["0 play 3E"]
        record = plain((tmp_path / "current.truco").read_text())
        assert "# deshecho por el árbitro: 1 play 1B" in record
        mock.tap(1, Card.from_str("2O"))
        key = mock.game.state_key()
    with MockTable(HouseRules(), state_dir=tmp_path) as again:  # replays the same
        assert again.game.state_key() == key
        assert [str(a) for a in again.game.hand_actions] == ["0 play 3E", "1 play 2O"]


@pytest.mark.parametrize("players", [2, 6])
@pytest.mark.parametrize("button", [Button.NO_QUIERO, Button.TRUCO])
def test_the_hold_that_starts_play_is_no_table_control(players: int, button: Button) -> None:
    """The dealer's hold of *mazo* that starts play with a partial deal is not the first
    half of *mazo* + *no quiero* (undo) or *mazo* + *truco* (new game): the dealer's next
    hold opens that button's menu."""
    rules = HouseRules(players=players, pica_pica=players == 6)
    with MockTable(rules) as mock:
        mock.deal({})  # nothing read: the dealer holds mazo to start play
        dealer = mock.table.hand_dealer
        assert dealer is not None and mock.table.phase is Phase.PLAYING
        mock.hold(dealer, button)
        assert mock.table.inputs[dealer].menu is button
        assert not any(isinstance(mock.table.message(s), AskConfirm) for s in range(players))
        mock.hold(dealer, Button.MAZO)  # a table control still starts with a hold of mazo
        mock.hold(dealer, Button.NO_QUIERO)
        message = mock.table.message((dealer + 1) % players)
        assert message is not None and message.notice == AskConfirm("undo")


def test_undo_needs_the_other_team(tmp_path: Path) -> None:
    with MockTable(HouseRules(), state_dir=tmp_path) as mock:
        mock.deal(DEAL)
        mock.tap(0, Card.from_str("3E"))
        mock.hold(0, Button.MAZO)
        mock.hold(0, Button.NO_QUIERO)
        mock.press(0, Button.QUIERO)  # the asking team cannot confirm its own undo
        assert len(mock.game.hand_actions) == 1
        mock.press(1, Button.NO_QUIERO)  # refused
        assert len(mock.game.hand_actions) == 1


def test_control_files_new_game_and_rules(tmp_path: Path) -> None:
    with MockTable(HouseRules(), state_dir=tmp_path) as mock:
        mock.deal(DEAL)
        mock.press(0, Button.ENVIDO)
        mock.press(1, Button.QUIERO)
        drop_command(tmp_path, "rules", "target=15", "flor=on")
        drop_command(tmp_path, "new-game")
        mock.pump(0.01)
        assert mock.game.score == (0, 0)
        assert mock.game.rules.target == 15 and mock.game.rules.flor
        assert len(mock.service.store.archived()) == 1  # type: ignore[union-attr]
        assert (tmp_path / "current.truco").read_text().startswith("table players=2 target=15")
        assert not list((tmp_path / "control").glob("*.cmd"))


def test_control_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import main

    # no table running on the folder: the command is withdrawn, and the reason said
    assert main(["control", "undo", "--state", str(tmp_path), "--wait", "0.2"]) == 1
    assert "ninguna mesa tomó 'undo'" in capsys.readouterr().err
    assert not list((tmp_path / "control").glob("*.cmd"))
    assert main(["control", "rules", "flor=maybe", "--state", str(tmp_path)]) == 2
    assert main(["control", "undo", "--state", str(tmp_path / "nope")]) == 2


def test_control_cli_against_a_running_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import threading

    from controller.cli import main

    with MockTable(HouseRules(), state_dir=tmp_path) as mock:
        mock.deal(DEAL)
        mock.press(0, Button.ENVIDO)
        stop = threading.Event()

        def serve() -> None:
            while not stop.is_set():
                mock.pump(0.02)

        server = threading.Thread(target=serve)
        server.start()
        try:
            assert main(["control", "undo", "--state", str(tmp_path)]) == 0
        finally:
            stop.set()
            server.join()
        # what the table did, read back from its record's mark (no runtime folder here)
        assert capsys.readouterr().out == "undo: deshecho: 0 envido\n"
        assert mock.game.hand_actions == ()


def test_notifier_sends_to_a_socket(tmp_path: Path) -> None:
    path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(path)
        notifier = Notifier(path)
        assert notifier.ready("hand 0")
        assert notifier.watchdog()
        assert sock.recv(1024) == b"READY=1\nSTATUS=hand 0"
        assert sock.recv(1024) == b"WATCHDOG=1"
    assert not Notifier(None).ready()


def test_service_process_ready_and_watchdog(tmp_path: Path) -> None:
    """`run --mock --serve` under a fake systemd: READY once up, then WATCHDOG pings;
    SIGTERM stops it cleanly."""
    path = str(tmp_path / "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(PATIENCE)  # a process started on a loaded machine
    env = dict(os.environ, NOTIFY_SOCKET=path, WATCHDOG_USEC="200000")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "controller.cli",
            "run",
            "--mock",
            "--serve",
            "--state",
            str(tmp_path / "state"),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        messages = [sock.recv(1024)]
        start = time.monotonic()
        while messages.count(b"WATCHDOG=1") < 3 and time.monotonic() - start < 10:
            messages.append(sock.recv(1024))
        assert messages[0].startswith(b"READY=1")
        assert messages.count(b"WATCHDOG=1") >= 3
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=120)
        sock.close()
    assert proc.returncode == 0, err.decode()
    assert (tmp_path / "state" / "current.truco").exists()


def test_unplugged_reader_is_shown_and_comes_back(tmp_path: Path) -> None:
    with MockTable(HouseRules(), state_dir=tmp_path) as mock:
        mock.deal(DEAL)
        mock.parts.unplug(1)
        deadline = time.monotonic() + 10
        while mock.table.node_ok[1] and time.monotonic() < deadline:
            mock.pump(0.05)
        assert mock.table.alert(1) is LinkNotice.UNPLUGGED
        assert mock.table.alert(0) is None
        mock.tap(0, Card.from_str("3E"))  # the rest of the table goes on
        mock.parts.replug(1)
        while not mock.table.node_ok[1] and time.monotonic() < deadline:
            mock.pump(0.05)
        assert mock.table.alert(1) is None
        mock.tap(1, Card.from_str("2O"))
        assert [str(a) for a in mock.game.hand_actions] == ["0 play 3E", "1 play 2O"]


def test_the_notifier_keeps_only_its_last_messages(tmp_path: Path) -> None:
    """Issue 13, 8: the sd_notify helper kept every message it ever sent."""
    path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(path)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        notifier = Notifier(path)
        for i in range(1000):
            assert notifier.status(f"hand {i}")
            sock.recv(1024)
    assert notifier.count == 1000
    assert len(notifier.sent) == KEEP and notifier.sent[-1] == "STATUS=hand 999"


def _frames(mock: MockTable) -> list[int]:
    return [mock.parts.displays[seat].frames for seat in sorted(mock.parts.displays)]


def test_a_card_lifted_or_a_heartbeat_changes_no_screen(tmp_path: Path) -> None:
    with MockTable(HouseRules(), state_dir=tmp_path) as mock:
        mock.deal(DEAL)
        (tag_on, lay), (tag_off, lift) = mock.hardware_events(
            Gesture(0, "tap", card=Card.from_str("3E"))
        )
        before = _frames(mock)
        mock.send_event(tag_on, lay)
        played = _frames(mock)
        assert [str(a) for a in mock.game.hand_actions] == ["0 play 3E"]
        assert all(after > was for after, was in zip(played, before, strict=True))
        mock.parts.nodes[0].send("HB", "7", "0", "OK")  # read before the tag-off
        mock.send_event(tag_off, lift)
        assert _frames(mock) == played
        mock.send_event(tag_on, lay)  # laid again: a card already played is refused
        assert _frames(mock)[0] > played[0]
        assert mock.table.message(0) is not None


def test_a_message_that_expired_goes_at_the_next_event_even_one_that_changes_nothing(
    tmp_path: Path,
) -> None:
    with MockTable(HouseRules(), state_dir=tmp_path) as mock:
        now = [1000.0]
        mock.service.clock = mock.table.clock = lambda: now[0]
        mock.deal(DEAL)
        mock.tap(1, Card.from_str("2O"))  # not seat 1's turn
        refusal = mock.parts.displays[1].image.tobytes()
        assert mock.table.messages[1] is not None and mock.table.messages[1].refusal
        now[0] += 10.0  # the banner's seconds are over
        _, (tag_off, lift) = mock.hardware_events(Gesture(1, "tap", card=Card.from_str("1B")))
        mock.send_event(tag_off, lift)  # a card lifted: nothing else changed
        assert mock.table.message(1) is None
        shown = mock.parts.displays[1].image
        assert shown.tobytes() != refusal
        assert shown.tobytes() == mock.service.screen(1).tobytes()


def test_control_files_dropped_one_after_another_are_all_read(tmp_path: Path) -> None:
    with MockTable(HouseRules(), state_dir=tmp_path) as mock:
        for target in (15, 30, 15, 30):  # within the file system's clock tick, mostly
            drop_command(tmp_path, "rules", f"target={target}")
            mock.pump(0.01)
            assert mock.game.rules.target == target


def test_call_soon_runs_on_the_loop_at_once_and_redraws(tmp_path: Path) -> None:
    """Another thread (the tournament link's network thread) hands the loop a call: the
    loop, waiting for events, wakes at once, runs it, and redraws what it changed."""
    import threading

    from controller.render.screen import MatchCard, screen_texts

    with MockTable(HouseRules(), state_dir=tmp_path) as mock:
        service = mock.service
        card = MatchCard("Final", "Los del Fondo", "La Barra", 1, 1)
        seen: list[str] = []

        def assign() -> None:
            seen.append(threading.current_thread().name)
            service.set_match(card)

        frames = mock.parts.displays[0].frames
        threading.Timer(0.1, service.call_soon, (assign,)).start()
        started = time.monotonic()
        service.step(5.0)  # waits for an event: the call ends the wait
        assert time.monotonic() - started < 4.0  # not the 5 s the wait would last
        assert seen == [threading.current_thread().name]
        assert screen_texts(screen_for(service.table, 0))[0] == "FINAL"
        assert mock.parts.displays[0].frames > frames  # drawn without any event

        def broken() -> None:
            raise RuntimeError("a bug in a listener")

        service.call_soon(broken)  # a failing call is logged, the loop goes on
        service.step(0.1)
        service.new_game()  # the next game's table keeps the match until it is cleared
        assert service.table.match == card


def test_a_post_from_another_thread_wakes_a_waiting_step_at_once() -> None:
    """A pad or a reader on its own thread posts while the loop waits in its bus: the
    inbox's bell ends the wait at once (not at its timeout)."""
    import threading

    from controller.engine import HouseRules as Rules
    from controller.hal.events import ButtonPressed
    from controller.hal.mock import MockDeck
    from controller.table.service import ServiceConfig, TableService

    service = TableService(ServiceConfig(Rules()), MockDeck().lookup, [])
    try:
        assert service.step(0.0) == 0  # this thread is the loop's
        timer = threading.Timer(0.05, service.post, (1, ButtonPressed("truco")))
        timer.start()
        started = time.monotonic()
        assert service.step(5.0) == 1
        assert time.monotonic() - started < 2.0  # not the 5 s the wait would last
        assert service.handled == 1
        timer.join()
    finally:
        service.close()


def _count_control_reads(mock: MockTable) -> list[float]:
    """The times the service looks at its control folder from now on."""
    looks: list[float] = []
    read_controls = mock.service._read_controls

    def counting() -> None:
        looks.append(time.monotonic())
        read_controls()

    mock.service._read_controls = counting  # type: ignore[method-assign]
    return looks


def test_the_control_folder_waits_while_players_act_and_a_command_is_still_taken(
    tmp_path: Path,
) -> None:
    """A stream of events does not list the control folder at every turn of the loop
    (``CONTROL_READ_S``); a command dropped meanwhile is taken within that time."""
    from controller.table import service as service_module

    with MockTable(HouseRules(), state_dir=tmp_path) as mock:
        mock.deal(DEAL)
        looks = _count_control_reads(mock)
        _, (tag_off, lift) = mock.hardware_events(Gesture(0, "tap", card=Card.from_str("4B")))
        started = time.monotonic()
        for _ in range(40):  # a card lifted that lies nowhere: handled, nothing changes
            mock.send_event(tag_off, lift)
        took = time.monotonic() - started
        assert mock.handled == mock.sent
        assert len(looks) <= 2 + took / service_module.CONTROL_READ_S  # not 2 an event
        drop_command(tmp_path, "rules", "target=15")
        dropped = time.monotonic()
        while mock.table.rules.target != 15 and mock.service.next_rules is None:
            assert time.monotonic() - dropped < 2.0, "the command was not taken"
            mock.send_event(tag_off, lift)
        assert time.monotonic() - dropped < service_module.CONTROL_READ_S + 1.0


def test_a_players_event_sets_no_timer_to_look_at_the_control_folder(tmp_path: Path) -> None:
    """The control folder rides on the turns the loop makes anyway: an event schedules
    no wake of the loop of its own to look at it (one after every event at a bar's pace,
    when it did), and the look on the event's own turn waits ``CONTROL_READ_S``."""
    from controller.table import service as service_module

    with MockTable(HouseRules(), state_dir=tmp_path) as mock:
        mock.deal(DEAL)
        looks = _count_control_reads(mock)
        while not looks:  # the deal's own events looked at (a turn of a quiet loop)
            mock.pump(0.01)
        looks.clear()
        _, (tag_off, lift) = mock.hardware_events(Gesture(0, "tap", card=Card.from_str("4B")))
        due = mock.service.timers.next_due()
        started = time.monotonic()
        for _ in range(5):  # a card lifted that lies nowhere: handled, nothing changes
            mock.send_event(tag_off, lift)
            assert mock.service.timers.next_due() == due  # nothing scheduled for it
        took = time.monotonic() - started
        assert len(looks) <= 1 + took / service_module.CONTROL_READ_S


def test_the_nodes_acknowledgements_do_not_make_the_loop_look_at_the_control_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Panels on the nodes: each screen sent is acknowledged (DACK) in a later wait of the
    loop, which handles no event; those turns do not list the control folder either.
    Nodes of protocol 3, which answer every update with its DACK (protocol 4's come
    only when asked, the rest in the heartbeats)."""
    import functools
    from collections.abc import Callable

    from controller.hal.mock import MockNode
    from controller.hal.node_display import NodeDisplay
    from controller.table import service as service_module

    monkeypatch.setattr(
        MockNode, "__init__", functools.partialmethod(MockNode.__init__, protocol=3)
    )

    with MockTable(HouseRules(), state_dir=tmp_path, panels="node") as mock:
        mock.deal(DEAL)
        ports = [d.port for d in mock.service.displays if isinstance(d, NodeDisplay)]
        assert {d.protocol for d in mock.service.displays if isinstance(d, NodeDisplay)} == {3}
        looks = _count_control_reads(mock)
        updates = sum(port.stats.updates for port in ports)
        started = time.monotonic()
        plays: list[Callable[[], None]] = [  # each redraws every seat
            lambda: mock.press(0, Button.ENVIDO),
            lambda: mock.press(1, Button.QUIERO),
            lambda: mock.tap(0, Card.from_str("3E")),
            lambda: mock.tap(1, Card.from_str("2O")),
        ]
        for play in plays:
            play()
            deadline = time.monotonic() + 5
            while any(port.stats.acks < port.stats.updates for port in ports):
                assert time.monotonic() < deadline, "a display update had no DACK"
                mock.pump(0.05)
        took = time.monotonic() - started
        sent = sum(port.stats.updates for port in ports) - updates
        assert sent >= 3  # each acknowledged in a turn that handled no event
        assert len(looks) <= 2 + took / service_module.CONTROL_READ_S, (len(looks), sent, took)


class _Watchdog(Notifier):
    """A notifier that counts the watchdog's pings."""

    def __init__(self) -> None:
        super().__init__(None)
        self.pings = 0

    def watchdog(self) -> bool:
        self.pings += 1
        return True


@contextlib.contextmanager
def _pinged_service() -> Iterator[tuple[TableService, _Watchdog]]:
    """A started two-seat service with no hardware whose watchdog wants a ping every
    10 ms, and the notifier counting the pings."""
    from controller.hal.mock import MockDeck

    notifier = _Watchdog()
    service = TableService(
        ServiceConfig(HouseRules(), watchdog_s=0.01), MockDeck().lookup, [], notifier=notifier
    )
    try:
        service.ready()
        yield service, notifier
    finally:
        service.close()


#: how long the floods below last (fifty of the watchdog's 10-ms intervals)
FLOOD_S = 0.5


def test_a_reader_flooding_tag_events_never_starves_the_housekeeping() -> None:
    """Turns that bring only a player's events that change nothing (a card lifted off a
    reader, by the thousand from a flaky reader) still run the timers: the watchdog is
    still pinged. Each card lifted is handled, in the turn or at once as it is put (on
    the loop's thread, nothing queued, no timer due)."""
    from controller.hal.events import TagLeft

    with _pinged_service() as (service, notifier):
        pings, handled = notifier.pings, service.handled
        started, at_once = time.monotonic(), 0
        while time.monotonic() - started < FLOOD_S:
            service.post(0, TagLeft(b"\x04\x01\x02\x03"))
            now = service.handled == handled + 1  # handled as it was put
            done = service.step(1.0)
            handled += 1
            assert service.handled == handled
            assert done == (0 if now else 1)  # else the turn handled it
            at_once += now
        assert at_once > 0
        assert notifier.pings - pings >= 5


def test_a_node_flooding_display_answers_never_starves_the_housekeeping(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Turns that bring only what posts nothing (a node's DACKs, by the thousand from a
    broken firmware) still run the timers: the watchdog is still pinged."""
    with _pinged_service() as (service, notifier):
        monkeypatch.setattr(service.bus, "wait", lambda timeout: 1)  # a DACK, every time
        pings = notifier.pings
        started = time.monotonic()
        while time.monotonic() - started < FLOOD_S:
            assert service.step(1.0) == 0
        assert notifier.pings - pings >= 5


def test_a_card_lifted_in_the_wait_is_handled_at_once_unless_something_came_first() -> None:
    """A card lifted (it changes no screen) read in the loop's wait with nothing queued
    is handled there and then, no turn spent on it; with a timer due, a call handed over
    or the seat test under way, it waits for its turn, after what came first."""
    from controller.hal.events import TagLeft
    from controller.hal.mock import MockDeck

    now = [1000.0]
    service = TableService(ServiceConfig(HouseRules()), MockDeck().lookup, [], clock=lambda: now[0])
    uid, seen = b"\x04\x01\x02\x03", []
    on_reader = service.table.on_reader[0]
    try:
        service.step(0)  # this thread is the loop's
        on_reader.add(uid)
        handled = service.handled
        service.post(0, TagLeft(uid))
        assert uid not in on_reader and service.handled == handled + 1
        assert service.step(0) == 0  # no turn handled it again

        on_reader.add(uid)
        service.timers.after(0.5, lambda: seen.append(("timer", uid in on_reader)))
        now[0] += 1.0  # the timer is due: it runs first, the card still on the reader
        service.post(0, TagLeft(uid))
        assert uid in on_reader and service.step(0) == 1
        assert seen == [("timer", True)] and uid not in on_reader

        on_reader.add(uid)
        service.call_soon(lambda: seen.append(("call", uid in on_reader)))
        service.post(0, TagLeft(uid))
        assert uid in on_reader and service.step(0) == 1
        assert seen[-1] == ("call", True) and uid not in on_reader

        on_reader.add(uid)
        service.watch.set_test(True)  # the seat test takes the seats' cards
        service.post(0, TagLeft(uid))
        assert service.step(0) == 1
        assert service.handled == handled + 4
    finally:
        service.close()
