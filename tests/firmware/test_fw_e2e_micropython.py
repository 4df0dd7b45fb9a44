"""End to end: the node's firmware in a real MicroPython process, the Pi's real SeatLink.

The node is ``micropython -i firmware/main.py`` on a pty (tests/firmware/mpnode.py),
its MFRC522 and pins simulated inside that process by the stand-in ``machine``
module; the Pi is ``controller.hal.seatlink.SeatLink`` finding it by USB serial
number.  Hello, heartbeats, cards (one, several, stacked), buttons, every kind of
bad line, unplug and replug, a crash, a hung node, the REPL, a reopened session.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fw_checks import COMMAND_REJECTIONS, REJECTIONS
from micropython_unix import require_micropython
from mpnode import SERIAL, MicroPythonNode
from seatnode import FIRMWARE_VERSION, protocol

from controller.hal import seatlink as seatlink_module
from controller.hal.display import DisplayConfig
from controller.hal.events import (
    ButtonHeld,
    ButtonPressed,
    DisplayLost,
    Heartbeat,
    Hello,
    NodeConnected,
    NodeDisconnected,
    NodeEvent,
    TagArrived,
    TagConflict,
    TagLeft,
)
from controller.hal.frames import REJECT_REASONS, FrameDecoder
from controller.hal.node_display import NodeDisplay
from controller.hal.pages import image_to_pages
from controller.hal.seatlink import SeatLink
from controller.render.matchsticks import render_scoreboard_image
from tests.helpers import LinkEvents as Events

CARD_A = "04A224B2C55E80"
CARD_B = "04A224B2C55E81"
TIMINGS = {"backoff_initial": 0.05, "backoff_max": 0.3, "read_timeout": 0.05}


@pytest.fixture
def node(tmp_path: Path) -> Iterator[MicroPythonNode]:
    require_micropython()
    by_id = tmp_path / "by-id"
    by_id.mkdir()
    sim = MicroPythonNode(by_id, tmp_path / "board")
    sim.plug()
    yield sim
    sim.close()


@pytest.fixture
def link(node: MicroPythonNode, events: Events) -> Iterator[SeatLink]:
    seat_link = SeatLink.for_serial(
        0,
        SERIAL,
        events,
        by_id_dir=node.link.parent,
        **TIMINGS,
    )
    seat_link.start()
    events.wait_for(lambda e: isinstance(e, Hello))
    yield seat_link
    seat_link.close()


def test_hello_heartbeats_cards_and_buttons(
    link: SeatLink, events: Events, node: MicroPythonNode
) -> None:
    hello = events.of(Hello)[0]
    assert hello == Hello(None, FIRMWARE_VERSION, SERIAL, 5, 0x92, link.session)
    assert link.protocol == 5  # the Pi's HELLO 5 taken: display frames of protocol 5
    assert isinstance(events.items[0], NodeConnected)
    events.wait_for(lambda e: isinstance(e, Heartbeat) and e.reader_ok and e.uptime_s >= 1)
    # protocol 5's heartbeats (4's) say "-": the Pi has sent no display update
    beats = [e for e in events.of(Heartbeat) if isinstance(e, Heartbeat)]
    assert beats and all(beat.written is None for beat in beats)
    node.lay(CARD_A)
    assert events.wait_for(lambda e: isinstance(e, TagArrived)) == TagArrived(bytes.fromhex(CARD_A))
    node.lay(CARD_A, CARD_B)  # a second card laid on the first
    events.wait_for(lambda e: isinstance(e, TagConflict))
    node.lay(CARD_B)  # the first one taken away: the second is a card of its own
    mark = events.mark()
    assert events.wait_for(lambda e: isinstance(e, TagArrived), after=mark) == TagArrived(
        bytes.fromhex(CARD_B)
    )
    assert events.items[mark] == TagLeft(bytes.fromhex(CARD_A))
    node.lay()
    events.wait_for(lambda e: e == TagLeft(bytes.fromhex(CARD_B)))
    node.press("quiero")
    time.sleep(0.15)
    node.release("quiero")
    assert events.wait_for(lambda e: isinstance(e, ButtonPressed)) == ButtonPressed("quiero")
    node.press("mazo")
    assert events.wait_for(lambda e: isinstance(e, ButtonHeld)) == ButtonHeld("mazo")
    node.release("mazo")
    node.lay(CARD_A, CARD_B)  # stacked: laid on together
    mark = events.mark()
    events.wait_for(lambda e: isinstance(e, TagConflict), after=mark)
    time.sleep(0.5)
    assert not [e for e in events.items[mark:] if isinstance(e, TagArrived)]
    node.lay()
    events.wait_for(lambda e: isinstance(e, TagLeft | Heartbeat), after=mark)
    time.sleep(0.7)  # the field empty past the grace period: the conflict is over
    mark = events.mark()
    node.lay(CARD_A, CARD_B + ":0.25")  # a faint second card: no collision on the air
    events.wait_for(lambda e: isinstance(e, TagConflict), after=mark)
    time.sleep(0.3)
    assert not [e for e in events.items[mark:] if isinstance(e, TagArrived)]
    stats = link.stats
    assert stats["seq_gap"] == 0 and all(stats[r] == 0 for r in REJECT_REASONS)
    assert node.boots == 1


def test_every_kind_of_bad_line_is_counted_and_survived(
    link: SeatLink, events: Events, node: MicroPythonNode
) -> None:
    bad = [line for line, _reason in REJECTIONS]
    bad += [protocol.encode(0, kind, args)[:-1] for kind, args, _reason in COMMAND_REJECTIONS]
    bad += [b"\x03\x03", b"import machine; machine.reset()", b"\x1b[A", bytes(range(128, 200))]
    node.write_raw(b"".join(line + b"\r\n" for line in bad) + b"x" * 3000 + b"\n")
    count = len(bad) + 1  # and the oversized line
    beat = events.wait_for(lambda e: isinstance(e, Heartbeat) and e.rx_errors >= count)
    assert isinstance(beat, Heartbeat) and beat.rx_errors == count
    assert node.boots == 1 and node.hard_resets == 0  # never fell over
    assert link.connected
    node.lay(CARD_A)
    events.wait_for(lambda e: isinstance(e, TagArrived))


def test_unplug_and_replug(link: SeatLink, events: Events, node: MicroPythonNode) -> None:
    node.unplug()
    gone = events.wait_for(lambda e: isinstance(e, NodeDisconnected))
    assert isinstance(gone, NodeDisconnected) and gone.reason == "unplugged"
    time.sleep(0.3)
    mark = events.mark()
    node.plug()
    hello = events.wait_for(lambda e: isinstance(e, Hello), after=mark)
    assert isinstance(hello, Hello) and hello.session == link.session
    node.lay(CARD_A)
    events.wait_for(lambda e: isinstance(e, TagArrived), after=mark)


def test_a_crash_is_logged_and_the_node_resets(
    link: SeatLink, events: Events, node: MicroPythonNode
) -> None:
    mark = events.mark()
    node.command("crash")
    events.wait_for(lambda e: isinstance(e, NodeDisconnected), after=mark)
    events.wait_for(lambda e: isinstance(e, Hello), after=mark)
    log = (node.workdir / "crash.txt").read_text()
    assert log.startswith(f"seatnode {FIRMWARE_VERSION} crashed:")
    assert "RuntimeError: simulated firmware bug in an SPI transfer" in log
    assert node.hard_resets == 1 and node.watchdog_resets == 0


def test_a_hung_node_is_reset_by_its_watchdog(
    link: SeatLink, events: Events, node: MicroPythonNode
) -> None:
    node.wait_status("wdt 3000")
    mark = events.mark()
    node.command("hang")
    node.wait_status("hanging")
    events.wait_for(lambda e: isinstance(e, NodeDisconnected), after=mark, timeout=120)
    events.wait_for(lambda e: isinstance(e, Hello), after=mark, timeout=120)
    assert node.watchdog_resets == 1
    node.lay(CARD_A)
    events.wait_for(lambda e: isinstance(e, TagArrived), after=mark)


def test_a_node_in_its_repl_is_brought_back_by_the_pi(
    link: SeatLink, events: Events, node: MicroPythonNode
) -> None:
    mark = events.mark()
    assert link.send("REPL")  # the firmware stops; the next boot stays in the REPL
    events.wait_for(lambda e: isinstance(e, NodeDisconnected), after=mark)
    events.wait_for(lambda e: isinstance(e, Hello), after=mark, timeout=120)
    assert node.soft_resets >= 1  # Ctrl-D from the Pi: MicroPython ran main.py again
    assert link.stats["repl_resets"] >= 1
    assert not (node.workdir / "repl.flag").exists()
    node.lay(CARD_A)
    events.wait_for(lambda e: isinstance(e, TagArrived), after=mark)


def test_events_from_before_a_reopen_are_never_delivered(
    node: MicroPythonNode, events: Events
) -> None:
    first = SeatLink.for_serial(0, SERIAL, events, by_id_dir=node.link.parent, **TIMINGS)
    with first:
        events.wait_for(lambda e: isinstance(e, Hello))
    # The service is down: a button is pressed and a card laid meanwhile.
    node.press("truco")
    time.sleep(0.15)
    node.release("truco")
    node.lay(CARD_A)
    time.sleep(0.5)
    mark = events.mark()
    second = SeatLink.for_serial(0, SERIAL, events, by_id_dir=node.link.parent, **TIMINGS)
    with second:
        events.wait_for(lambda e: isinstance(e, Hello), after=mark)
        events.wait_for(lambda e: isinstance(e, Heartbeat), after=mark)
        node.press("quiero")
        time.sleep(0.15)
        node.release("quiero")
        events.wait_for(lambda e: isinstance(e, ButtonPressed), after=mark)
        later = events.items[mark:]
    assert ButtonPressed("truco") not in later
    assert not [e for e in later if isinstance(e, TagArrived)]
    assert [e for e in later if isinstance(e, ButtonPressed)] == [ButtonPressed("quiero")]


def _glass(node: MicroPythonNode) -> bytes:
    """What the node's panel shows now (the board's panel model, asked over its pins)."""
    before = sum(line.startswith("glass ") for line in node.status)
    node.command("glass")
    deadline = time.monotonic() + 10
    while sum(line.startswith("glass ") for line in node.status) == before:
        assert time.monotonic() < deadline, node.status[-5:]
        time.sleep(0.02)
    return bytes.fromhex([x for x in node.status if x.startswith("glass ")][-1][6:])


@pytest.mark.parametrize("version", [5, 4, 3])
def test_screens_reach_the_nodes_panel(
    node: MicroPythonNode, events: Events, version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Pi's NodeDisplay and SeatLink, the node's main loop on a pty: HELLO 5 (or a
    Pi of protocol 4's HELLO 4, of 3's HELLO 3), the updates' blocks read with readinto,
    the panel's glass the Pi's screen each time.  Protocols 5 and 4: DACK only for the
    updates that asked, the node's heartbeats acknowledge the others; protocol 3: a DACK
    each."""
    if version < 5:  # a Pi of protocol 4 or 3: it offers HELLO 4 or 3 (3: 4-argument DUs)
        monkeypatch.setattr(seatlink_module, "PROTOCOL_VERSION", version)
    display = NodeDisplay(DisplayConfig(connected_to="node"), seat=0)
    link = SeatLink.for_serial(0, SERIAL, events, by_id_dir=node.link.parent, **TIMINGS)
    display.attach(link)
    link.start()
    try:
        for updates, (us, them) in enumerate([(3, 4), (4, 4), (11, 29), (12, 29)], start=1):
            screen = render_scoreboard_image(us, them, 30)
            display.show(screen)
            deadline = time.monotonic() + 15
            while display.port.stats.updates < updates or display.port.awaiting is not None:
                assert time.monotonic() < deadline, display.port.stats
                time.sleep(0.02)
            assert _glass(node) == image_to_pages(screen)
        stats = display.port.stats
        assert link.protocol == version and stats.lost == 0
        assert link.hello is not None and link.hello.protocol == version
        last = stats.updates - 1
        beats = [e for e in events.of(Heartbeat) if isinstance(e, Heartbeat)]
        if version == 3:
            assert stats.acks == stats.asked == stats.updates
            assert all(beat.written is None for beat in beats)  # HB of three arguments
        else:
            assert stats.acks == stats.asked < stats.updates  # the small ones asked none
            beat = events.wait_for(lambda e: isinstance(e, Heartbeat) and e.written == last)
            assert isinstance(beat, Heartbeat) and beat == Heartbeat(beat.uptime_s, 0, True, last)
    finally:
        link.close()


def test_a_block_cut_on_the_wire_never_stalls_the_node(node: MicroPythonNode) -> None:
    """A whole screen's DU whose block stops after 100 of its 1,391 bytes (the Pi gone
    mid-write): MicroPython's stdin returns a read only once every byte asked for came, so
    a node that asked for the block would stop there until its watchdog reset it.  The
    node takes only what poll promised: it says the update lost (DLOST) 250 ms on, keeps
    its heartbeat, reports a button held during the cut, feeds its watchdog, and answers
    the Pi's next HELLO."""
    fd = os.open(node.link, os.O_RDWR | os.O_NOCTTY)
    decoder = FrameDecoder()
    got: list[tuple[float, NodeEvent]] = []

    def collect(until: Callable[[], bool], timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not until():
            assert time.monotonic() < deadline, got
            ready, _w, _x = select.select([fd], [], [], 0.05)
            if ready:
                for event in decoder.feed(os.read(fd, 4096)):
                    got.append((time.monotonic(), event))

    try:
        collect(lambda: any(isinstance(e, Hello) for _t, e in got))
        os.write(fd, protocol.encode(0, "HELLO", ["4", "7"]))
        collect(lambda: sum(isinstance(e, Hello) for _t, e in got) == 2)
        du = protocol.encode(1, "DU", ["0", "1", "1391", "FULL", "ACK"])
        cut_at = time.monotonic()
        os.write(fd, b"\n" + du + b"$2 DR 0 7 0 127 " + b"A" * 84)
        node.press("envido")  # held through the cut: HOLD after 800 ms
        collect(lambda: any(isinstance(e, ButtonHeld) for _t, e in got))
        collect(lambda: sum(isinstance(e, Heartbeat) and t > cut_at for t, e in got) >= 2)
        node.release("envido")
        lost = [t for t, e in got if e == DisplayLost(0)]
        # The node counts its 250 ms in whole milliseconds (ticks_ms): a block whose first
        # byte came at 1000.9 ms (read as 1000) is given up at 1250.0, 249.1 ms later.
        assert lost and lost[0] - cut_at >= 0.25 - 0.001
        assert node.watchdog_resets == 0 and node.hard_resets == 0
        os.write(fd, b"\n" + protocol.encode(3, "HELLO", ["4", "8"]))
        collect(lambda: any(isinstance(e, Hello) and e.session == 8 for _t, e in got))
        assert node.watchdog_resets == 0 and node.hard_resets == 0
    finally:
        os.close(fd)
