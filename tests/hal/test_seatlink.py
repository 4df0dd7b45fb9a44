"""The Pi side of the seat node link (controller.hal.seatlink): the live link over pty
pairs against a simulated node running the firmware, and its operator messages."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import struct
import termios
import time
import tty
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

import pytest
from seatnode import FIRMWARE_VERSION
from seatnode import protocol as fw
from seatnode.node import NodeApp

from controller.hal import frames as fr
from controller.hal import seatlink as sl
from controller.hal.events import PROTOCOL_VERSION as NEWEST
from controller.hal.events import (
    PROTOCOL_VERSIONS,
    ButtonHeld,
    ButtonPressed,
    Heartbeat,
    Hello,
    LinkEvent,
    NodeConnected,
    NodeDisconnected,
    TagArrived,
    TagLeft,
)
from controller.hal.frames import SEQ_MODULO
from controller.hal.link_writer import OUTBOX_MAX
from controller.hal.seatlink import SeatLink
from tests.helpers import LinkEvents as Events
from tests.helpers import wait_until

from .simnode import SimNode

UID = bytes.fromhex("04A224B2C55E80")
SERIAL = "e6614103e7ab1234"


def test_status_messages() -> None:
    assert sl.status_message(NodeDisconnected("p", "unplugged")) == (
        "Reader unplugged - reconnecting..."
    )
    assert "not answering" in (sl.status_message(NodeDisconnected("p", "silent")) or "")
    assert sl.status_message(NodeDisconnected("p", "closed")) is None
    assert sl.status_message(NodeConnected("p")) == "Reader connected"
    assert sl.status_message(Heartbeat(1, 0, False)) == "Card reader not found - check its cable"
    assert sl.status_message(Heartbeat(1, 0, True)) is None
    assert sl.status_message(ButtonPressed("truco")) is None


# -- the live link over a pty ------------------------------------------------------------


class Timings(TypedDict):
    """SeatLink's timing options, as keyword arguments."""

    heartbeat_timeout: float
    hello_interval: float
    backoff_initial: float
    backoff_max: float
    read_timeout: float


FAST: Timings = {
    "heartbeat_timeout": 0.6,
    "hello_interval": 0.2,
    "backoff_initial": 0.05,
    "backoff_max": 0.2,
    "read_timeout": 0.02,
}


@pytest.fixture
def node(tmp_path: Path) -> Iterator[SimNode]:
    sim = SimNode(tmp_path, seat=2)
    sim.plug()
    yield sim
    sim.unplug()


@pytest.fixture
def link(node: SimNode, events: Events, tmp_path: Path) -> Iterator[SeatLink]:
    seat_link = SeatLink.for_serial(2, SERIAL, events, by_id_dir=tmp_path, **FAST)
    seat_link.start()
    events.wait_for(lambda e: isinstance(e, Hello))
    yield seat_link
    seat_link.close()


def test_connects_and_introduces_the_node(link: SeatLink, events: Events, node: SimNode) -> None:
    assert isinstance(events.items[0], NodeConnected)
    assert link.connected
    assert link.hello == Hello(2, FIRMWARE_VERSION, SERIAL, NEWEST, 0x92, link.session)
    assert link.protocol == NEWEST == fw.PROTOCOL_VERSION
    assert all(seat == 2 for seat in events.seats)


def test_heartbeats_are_answered(link: SeatLink, events: Events, node: SimNode) -> None:
    events.wait_for(lambda e: isinstance(e, Heartbeat) and e.uptime_s >= 0)
    deadline = time.monotonic() + 3
    # The node counts the Pi alive from its HELLO already; wait for the HB answer itself.
    while b"HB*" not in b"".join(node.received) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert node.host_alive
    assert b"HB*" in b"".join(node.received)


def test_cards_and_buttons_reach_the_pi(link: SeatLink, events: Events, node: SimNode) -> None:
    node.tag = UID
    assert events.wait_for(lambda e: isinstance(e, TagArrived)) == TagArrived(UID)
    node.tag = None
    assert events.wait_for(lambda e: isinstance(e, TagLeft)) == TagLeft(UID)
    node.set_button("quiero", True)
    time.sleep(0.1)
    node.set_button("quiero", False)
    assert events.wait_for(lambda e: isinstance(e, ButtonPressed)) == ButtonPressed("quiero")
    node.set_button("mazo", True)
    assert events.wait_for(lambda e: isinstance(e, ButtonHeld), timeout=120) == ButtonHeld("mazo")
    node.set_button("mazo", False)
    assert len(events.of(TagArrived)) == 1  # one arrival for a card lying still
    assert link.stats["seq_gap"] == 0
    assert all(link.stats[r] == 0 for r in fr.REJECT_REASONS)


def test_commands_reach_the_node(link: SeatLink, node: SimNode) -> None:
    assert link.set_led("FAST")
    assert link.identify(3)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        app = node.app
        if app is not None and app.led.mode == "FAST" and app.led._ident_until is not None:
            break
        time.sleep(0.01)
    else:
        raise AssertionError("node never saw LED/IDENT")
    with pytest.raises(ValueError):
        link.set_led("RAINBOW")
    with pytest.raises(ValueError):
        link.identify(601)


def test_garbage_from_the_node_is_counted_not_fatal(
    link: SeatLink, events: Events, node: SimNode, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="controller.hal.seatlink"):
        for _ in range(20):
            node.inject(b"Traceback (most recent call last):\r\n$7 PRESS flor*0000\n")
        node.inject(b"\x00" * 300 + b"\n")
        node.tag = UID
        events.wait_for(lambda e: isinstance(e, TagArrived))
    stats = link.stats
    assert stats["garbage"] == 20 and stats["checksum"] == 20 and stats["oversized"] == 1
    assert link.connected
    warnings = [r for r in caplog.records if "se rechazó" in r.getMessage()]
    assert len(warnings) == 3  # once per reason, not once per line


def test_unplug_and_replug(link: SeatLink, events: Events, node: SimNode) -> None:
    node.unplug()
    gone = events.wait_for(lambda e: isinstance(e, NodeDisconnected))
    assert gone == NodeDisconnected(str(node.link), "unplugged")
    assert not link.connected
    time.sleep(0.3)  # a while unplugged: the link keeps trying, quietly
    node.plug()
    events.wait_for(lambda e: isinstance(e, Hello) and len(events.of(Hello)) == 2)
    kinds = [type(e).__name__ for e in events.items]
    first_back = kinds.index("NodeConnected", kinds.index("NodeDisconnected"))
    assert "Hello" in kinds[first_back:]
    assert link.connected
    node.tag = UID
    events.wait_for(lambda e: isinstance(e, TagArrived))
    assert link.stats["seq_gap"] == 0


def test_silent_node_is_dropped_and_picked_up_again(
    link: SeatLink, events: Events, node: SimNode
) -> None:
    node.silent = True
    gone = events.wait_for(lambda e: isinstance(e, NodeDisconnected))
    assert isinstance(gone, NodeDisconnected) and gone.reason == "silent"
    node.silent = False
    events.wait_for(lambda e: isinstance(e, NodeConnected) and len(events.of(NodeConnected)) == 2)
    assert link.connected


def test_node_reset_command_reconnects(link: SeatLink, events: Events, node: SimNode) -> None:
    assert link.reset_node()
    deadline = time.monotonic() + 3
    while not (node.app and node.app.reset_requested) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert node.app is not None and node.app.reset_requested
    node.unplug()  # what machine.reset() looks like from the Pi
    node.plug()
    events.wait_for(lambda e: isinstance(e, Hello) and len(events.of(Hello)) == 2)


def test_absent_node_is_logged_once_and_close_is_prompt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events = Events()
    with caplog.at_level(logging.DEBUG, logger="controller.hal.seatlink"):
        link = SeatLink.for_serial(0, "0123", events, by_id_dir=tmp_path, **FAST)
        link.start()
        time.sleep(0.8)
        started = time.monotonic()
        link.close()
        assert time.monotonic() - started < 1.0
    assert link._thread is not None and not link._thread.is_alive()
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "not plugged in" in warnings[0].getMessage()
    assert events.items == []
    assert not link.send("HB")


def test_bad_path_is_retried(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="controller.hal.seatlink"):
        link = SeatLink(0, str(tmp_path / "nope"), Events(), **FAST)
        link.start()
        time.sleep(0.5)
        link.close()
    assert len([r for r in caplog.records if "cannot open" in r.getMessage()]) == 1


def test_close_while_connected_reports_closed(link: SeatLink, events: Events) -> None:
    link.close()
    connected = events.of(NodeConnected)[0]
    assert isinstance(connected, NodeConnected)
    assert events.of(NodeDisconnected) == [NodeDisconnected(connected.port, "closed")]
    assert not link.connected


def test_a_failing_callback_does_not_stop_the_link(
    node: SimNode, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seen = Events()

    def flaky(seat: int, event: LinkEvent) -> None:
        seen(seat, event)
        raise RuntimeError("display on fire")

    with caplog.at_level(logging.ERROR, logger="controller.hal.seatlink"):
        link = SeatLink(2, str(node.link), flaky, **FAST)
        with link:
            seen.wait_for(lambda e: isinstance(e, Heartbeat) and len(seen.of(Heartbeat)) >= 3)
            assert link.stats["callback_errors"] >= 4
    assert len([r for r in caplog.records if "on_event falló" in r.getMessage()]) == 1


def test_echoing_port_is_never_taken_for_a_node() -> None:
    # loop:// echoes our own HELLO command back: not a valid node message.
    events = Events()
    with SeatLink(0, "loop://", events, **FAST) as link:
        time.sleep(0.5)
        assert not link.connected
        assert link.stats["malformed"] >= 1
    assert events.items == []


class RawNode:
    """The far end of a pty pair, written to by hand: a node as the test scripts it."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)
        self.seq = 0
        self.heard = b""

    def send(self, kind: str, *args: str) -> None:
        os.write(self.master, fw.encode(self.seq, kind, list(args)))
        self.seq += 1

    def hear(self, wanted: bytes, timeout: float = 3.0) -> bytes:
        """Read what the Pi sent until ``wanted`` is in it."""
        deadline = time.monotonic() + timeout
        while wanted not in self.heard and time.monotonic() < deadline:
            try:
                self.heard += os.read(self.master, 1024)
            except BlockingIOError:
                time.sleep(0.01)
        assert wanted in self.heard, self.heard
        return self.heard

    def close(self) -> None:
        os.close(self.master)
        os.close(self.slave)


def test_pty_pair_without_symlink() -> None:
    """The link also takes a plain device path (as from the udev rule's /dev/truco-seatN)."""
    node = RawNode()
    try:
        events = Events()
        with SeatLink(1, node.path, events, **FAST) as link:
            node.hear(f"HELLO {NEWEST} {link.session}*".encode())
            node.send("HELLO", str(NEWEST), "0.1.0", "1", "abcd", "B2", str(link.session))
            hello = events.wait_for(lambda e: isinstance(e, Hello))
            assert hello == Hello(1, "0.1.0", "abcd", NEWEST, 0xB2, link.session)
    finally:
        node.close()


def test_what_the_node_sent_before_answering_this_session_is_stale() -> None:
    """A button pressed while the service was down is never played seconds later."""
    node = RawNode()
    try:
        # Written while nobody had the port open: pyserial flushes what the kernel kept
        # when it opens the port; what a node still holds in its own buffer comes
        # after the opening (below), and is stale too.
        node.send("HELLO", "2", "0.2.0", "1", "abcd", "92", "-")
        node.send("PRESS", "truco")
        node.send("TAGON", "04A224B2C55E80")
        events = Events()
        with SeatLink(1, node.path, events, **FAST) as link:
            node.hear(f"HELLO {NEWEST} {link.session}*".encode())
            node.send("HELLO", "2", "0.2.0", "1", "abcd", "92", str((link.session + 1) % 65536))
            node.send("HOLD", "mazo")  # still before the answer
            assert not link.connected
            node.send("HELLO", "2", "0.2.0", "1", "abcd", "92", str(link.session))
            node.send("PRESS", "quiero")
            events.wait_for(lambda e: isinstance(e, ButtonPressed))
            node.send("HELLO", "2", "0.2.0", "1", "abcd", "92", str((link.session + 7) % 65536))
            node.send("PRESS", "envido")
            events.wait_for(lambda e: e == ButtonPressed("envido"))
            assert [type(e).__name__ for e in events.items] == [
                "NodeConnected",
                "Hello",
                "ButtonPressed",
                "ButtonPressed",
            ]
            assert events.of(ButtonPressed) == [ButtonPressed("quiero"), ButtonPressed("envido")]
            assert link.stats["stale"] == 3  # two before the answer, one foreign answer
    finally:
        node.close()


@pytest.mark.parametrize(
    "repl_says", [b"MicroPython v1.24.1 on 2024-11-29; Raspberry Pi Pico with RP2040\r\n>>> ", b""]
)
def test_a_node_in_its_repl_is_soft_reset(repl_says: bytes) -> None:
    """Its banner or prompt gets Ctrl-C Ctrl-C Ctrl-B Ctrl-D at once; silence, after a while."""
    node = RawNode()
    try:
        events = Events()
        with SeatLink(1, node.path, events, **FAST, repl_after=1.0) as link:
            node.hear(b"HELLO %d " % NEWEST)
            started = time.monotonic()
            os.write(node.master, repl_says + b"\r\n")
            node.hear(sl.REPL_RECOVERY)
            waited = time.monotonic() - started
            assert waited < 0.5 if repl_says else 0.5 <= waited < 2.0
            assert link.stats["repl_resets"] == 1
            # The soft-reset firmware greets the Pi; the link answers it with a HELLO.
            node.heard = b""
            node.send("HELLO", str(NEWEST), "0.2.0", "1", "abcd", "92", "-")
            node.hear(f"HELLO {NEWEST} {link.session}*".encode())
            node.send("HELLO", str(NEWEST), "0.2.0", "1", "abcd", "92", str(link.session))
            events.wait_for(lambda e: isinstance(e, Hello))
    finally:
        node.close()


def test_opening_a_node_is_exclusive(link: SeatLink, node: SimNode, events: Events) -> None:
    """A second program (truco-table enroll) cannot share the node with the service."""
    other = SeatLink(2, str(node.link), Events(), **FAST)
    with other:
        deadline = time.monotonic() + 3
        while other.busy is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert other.busy == f"{node.link} is in use by another program"
        assert not other.connected
    assert link.connected and link.busy is None
    node.tag = UID
    events.wait_for(lambda e: isinstance(e, TagArrived))


def test_a_node_not_updated_is_logged_with_what_to_do(caplog: pytest.LogCaptureFixture) -> None:
    node = RawNode()
    try:
        with (
            caplog.at_level(logging.WARNING, logger="controller.hal.seatlink"),
            SeatLink(1, node.path, Events(), **FAST) as link,
        ):
            node.hear(b"HELLO %d " % NEWEST)
            node.send("HELLO", "1", "0.1.0", "1", "abcd")  # firmware 0.1.0 speaks protocol 1
            deadline = time.monotonic() + 3
            while link.stats["version"] == 0 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert not link.connected
    finally:
        node.close()
    assert "habla otro protocolo que 2, 3, 4 o 5: actualizá su firmware" in caplog.text


def _reject_hellos_until(
    node: RawNode, link: SeatLink, version: int, heartbeat: tuple[str, ...], seconds: float
) -> None:
    """A node of an older protocol: every HELLO newer than ``version`` it hears is
    rejected (counted in its heartbeats' errors, ``heartbeat`` their other arguments)
    until the Pi offers ``HELLO <version>``."""
    deadline = time.monotonic() + seconds
    while f"HELLO {version} {link.session}*".encode() not in node.heard:
        assert time.monotonic() < deadline, node.heard
        rejected = sum(node.heard.count(b"HELLO %d" % n) for n in range(version + 1, 6))
        node.send("HB", "57", str(rejected), *heartbeat)
        time.sleep(0.05)
        with contextlib.suppress(BlockingIOError):
            node.heard += os.read(node.master, 1024)


def test_a_node_of_protocol_2_is_offered_hello_2_and_never_reset() -> None:
    """Firmware 0.2.0 rejects HELLO 5, 4 and 3 (versions it does not know) but keeps sending
    its heartbeats: the Pi offers the older ones in turn, HELLO 2 in the end, the node
    answers it, and no soft reset (the REPL recovery) is ever sent to a node whose
    firmware is talking."""
    node = RawNode()
    try:
        events = Events()
        with SeatLink(1, node.path, events, **FAST, repl_after=0.5) as link:
            node.hear(f"HELLO {NEWEST} {link.session}*".encode())
            _reject_hellos_until(node, link, 2, ("OK",), 2 + 2 * NEWEST)
            node.send("HELLO", "2", "0.2.0", "1", "abcd", "92", str(link.session))
            hello = events.wait_for(lambda e: isinstance(e, Hello))
            assert isinstance(hello, Hello) and hello.protocol == 2
            assert link.protocol == 2 and link.connected
            assert sl.REPL_RECOVERY not in node.heard
            assert link.stats["repl_resets"] == 0
    finally:
        node.close()


def test_a_stale_hello_of_protocol_2_gets_hello_2_at_once() -> None:
    """The node's own HELLO (at power-up, session '-') names protocol 2: the Pi offers
    2 straight away instead of waiting out HELLO 4."""
    node = RawNode()
    try:
        slow_hello = FAST.copy()
        slow_hello["hello_interval"] = 5.0
        with SeatLink(1, node.path, Events(), **slow_hello) as link:
            node.hear(f"HELLO {NEWEST} {link.session}*".encode())
            started = time.monotonic()
            node.send("HELLO", "2", "0.2.0", "1", "abcd", "92", "-")
            node.hear(f"HELLO 2 {link.session}*".encode())
            assert time.monotonic() - started < 2.0  # not the 5 s HELLO interval
            node.send("HELLO", "2", "0.2.0", "1", "abcd", "92", str(link.session))
            deadline = time.monotonic() + 3
            while not link.connected and time.monotonic() < deadline:
                time.sleep(0.01)
            assert link.connected and link.protocol == 2
    finally:
        node.close()


def test_the_firmware_answers_the_version_it_is_offered() -> None:
    """A node of protocol 5 answers HELLO 2, 3 and 4 (a Pi not updated) in their version,
    HELLO 5 with 5; HELLO 1 or 6 is a version error, and no answer."""
    sent: list[bytes] = []
    app = NodeApp(sent.append, 0, SERIAL, 0)
    sent.clear()
    offers = (("2", "7"), ("3", "8"), ("1", "9"), ("4", "10"), ("6", "11"), ("5", "12"))
    for version, session in offers:
        app.receive(fw.encode(0, "HELLO", [version, session]), 0)
    hellos = [fw.parse(frame.rstrip(b"\n"))[2] for frame in sent if b" HELLO " in frame]
    answered = [(args[0], args[-1]) for args in hellos]
    assert answered == [("2", "7"), ("3", "8"), ("4", "10"), ("5", "12")]
    assert app.rx_errors == 2


def test_the_pi_offers_protocol_5_first() -> None:
    assert NEWEST == fw.PROTOCOL_VERSION == 5 and PROTOCOL_VERSIONS == (2, 3, 4, 5)


def test_a_node_of_firmware_0_6_gets_a_session_of_protocol_4(
    tmp_path: Path, events: Events, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The firmware as 0.6.x was (protocols 2 to 4): it rejects HELLO 5 and keeps sending
    heartbeats, the Pi offers 4, and the session is protocol 4's (the node's 2 KB queue:
    the Pi's window there is 2 KB)."""
    monkeypatch.setattr(fw, "PROTOCOL_VERSION", 4)
    monkeypatch.setattr(fw, "VERSIONS", (2, 3, 4))
    node = SimNode(tmp_path, seat=2)
    node.plug()
    try:
        with SeatLink.for_serial(2, SERIAL, events, by_id_dir=tmp_path, **FAST) as link:
            hello = events.wait_for(lambda e: isinstance(e, Hello) and e.session is not None)
            assert isinstance(hello, Hello) and hello.protocol == 4
            assert link.protocol == 4 and link.connected
            assert node.app is not None and node.app.version == 4
            assert node.app.display.max_queued_bytes == 2048
    finally:
        node.unplug()


def test_a_node_of_protocol_4_that_rejects_hello_5_is_offered_hello_4() -> None:
    """A node of protocol 4 whose power-up HELLO the Pi never saw rejects HELLO 5 and
    keeps sending heartbeats: a second later the Pi offers 4, and the node answers it."""
    node = RawNode()
    try:
        events = Events()
        with SeatLink(1, node.path, events, **FAST) as link:
            node.hear(f"HELLO 5 {link.session}*".encode())
            _reject_hellos_until(node, link, 4, ("OK", "-"), 10)
            node.send("HELLO", "4", "0.6.1", "1", "abcd", "92", str(link.session))
            hello = events.wait_for(lambda e: isinstance(e, Hello))
            assert isinstance(hello, Hello) and hello.protocol == 4
            assert link.protocol == 4 and link.connected
    finally:
        node.close()


def test_a_node_that_answers_after_its_soft_reset_is_not_reset_again() -> None:
    """The REPL's last words (its prompt, echoed bytes) come after the soft reset; once
    the restarted firmware answers the HELLO, they are no reason for another."""
    node = RawNode()
    try:
        events = Events()
        with SeatLink(1, node.path, events, **FAST, repl_after=1.0) as link:
            node.hear(b"HELLO %d " % NEWEST)
            os.write(node.master, b"MicroPython v1.24.1\r\n>>> \r\n")
            node.hear(sl.REPL_RECOVERY)
            os.write(node.master, b">>> \r\n")  # the prompt again, before main.py runs
            node.heard = b""
            node.send("HELLO", str(NEWEST), "0.2.0", "1", "abcd", "92", "-")
            node.hear(f"HELLO {NEWEST} {link.session}*".encode())
            node.send("HELLO", str(NEWEST), "0.2.0", "1", "abcd", "92", str(link.session))
            events.wait_for(lambda e: isinstance(e, Hello))
            deadline = time.monotonic() + 1.5  # past the recovery's wait of 1 s
            while time.monotonic() < deadline:
                node.send("HB", "1", "0", "OK")
                with contextlib.suppress(BlockingIOError):
                    node.heard += os.read(node.master, 1024)
                time.sleep(0.05)
            assert link.connected
            assert sl.REPL_RECOVERY not in node.heard
            assert link.stats["repl_resets"] == 1
    finally:
        node.close()


# FAST, but a node that stops reading is not timed out while a test fills its port
PATIENT: Timings = {**FAST, "heartbeat_timeout": 30.0}


def _connected(node: RawNode, link: SeatLink, events: Events) -> None:
    node.hear(f"HELLO {NEWEST} {link.session}*".encode())
    node.send("HELLO", str(NEWEST), "0.1.0", "1", "abcd", "B2", str(link.session))
    events.wait_for(lambda e: isinstance(e, Hello))


def _frames_heard(node: RawNode) -> list[tuple[int, str, tuple[str, ...]]]:
    """Every frame the node has heard whole so far (up to its last LF), each checked."""
    lines = [line for line in node.heard.split(b"\n")[:-1] if line]
    return [fr.parse_frame(line) for line in lines]


#: the frame ``_drain`` sends last, once the outbox is empty: when the node hears it,
#: it has heard everything written before it (the link writes in order)
_LAST = ("IDENT", "fin")


def _drain(node: RawNode, link: SeatLink) -> None:
    """The node reads again, until the link's outbox is empty and the node has heard a
    last frame sent after it (an empty outbox is not yet everything read: the pty hands
    what was written to the other side a moment later, from the kernel's own worker)."""
    deadline = time.monotonic() + 10.0
    marked = False
    while time.monotonic() < deadline:
        try:
            node.heard += os.read(node.master, 65536)
        except BlockingIOError:
            if not marked and link.outbox == 0:
                assert link.send(*_LAST)
                marked = True
            elif marked and any(
                (kind, *args) == _LAST for _seq, kind, args in _frames_heard(node)
            ):
                return
            time.sleep(0.001)
    raise AssertionError(f"{link.outbox} bytes still wait for the node")


#: what the reading side of a pty holds before the rest waits in the kernel's flip
#: buffers: Linux's ``N_TTY_BUF_SIZE`` (4096) less one
_PTY_READ_BUFFER = 4095


def _readable(fd: int) -> int:
    """Bytes the reading side of a pty holds for its reader (``FIONREAD``)."""
    count: int = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]
    return count


def _fill_the_port(node: RawNode, link: SeatLink) -> int:
    """Frames sent while the node reads nothing, until the kernel's buffer is full and
    the link's outbox holds the rest; how many were sent. A pty's writer finds room again
    once the kernel's worker moves what was written into the reading side's buffer, a
    moment later: the port is full for good only when that buffer is."""

    def top_up() -> int:
        sent = 0
        while link.outbox == 0:
            assert link.send("IDENT", "5")
            sent += 1
            assert sent < 200_000, "the port's buffer never filled"
        return sent

    sent = top_up()
    assert wait_until(lambda: _readable(node.master) >= _PTY_READ_BUFFER)
    return sent + top_up()


@contextlib.contextmanager
def _a_full_port() -> Iterator[tuple[RawNode, SeatLink, int]]:
    """A link to a node that stopped reading: the port's buffer full, the link's outbox
    holding the rest; with how many frames were sent."""
    node = RawNode()
    try:
        events = Events()
        with SeatLink(1, node.path, events, **PATIENT) as link:
            _connected(node, link, events)
            yield node, link, _fill_the_port(node, link)
    finally:
        node.close()


def test_a_node_that_does_not_read_never_stalls_a_write() -> None:
    """A node busy with its panel (or stuck) stops reading: the kernel's buffer fills.
    Every write still returns at once (no pyserial wait of up to its 1 s timeout on the
    loop that reads every seat); what the port did not take waits in the link's outbox
    and reaches the node, whole and in order, when it reads again."""
    with _a_full_port() as (node, link, sent):
        waits = link.outbox_waits
        assert waits >= 1  # the fill's last write was taken only in part
        for _ in range(100):  # more while nothing is read: each taken, none waits
            assert link.send("IDENT", "5")
        sent += 100
        assert link.outbox > 0 and link.outbox_waits == waits  # queued behind the rest
        node.heard = b""
        _drain(node, link)
        frames = [frame for frame in _frames_heard(node) if frame[1:] == ("IDENT", ("5",))]
        assert link.outbox == 0
        assert len(frames) == sent  # every one, whole (parse_frame checks each)
        seqs = [seq for seq, _kind, _args in frames]
        assert seqs == [(seqs[0] + n) % SEQ_MODULO for n in range(sent)]  # in order


def test_a_full_outbox_refuses_writes_and_keeps_its_frames_whole() -> None:
    with _a_full_port() as (node, link, _sent):
        for _ in range(OUTBOX_MAX):  # a node that never reads again
            if not link.send("IDENT", "5"):
                break
        else:
            pytest.fail("the outbox took every write")
        assert link.outbox_overflows == 1
        assert OUTBOX_MAX - 64 < link.outbox <= OUTBOX_MAX
        node.heard = b""
        _drain(node, link)
        # what it holds went out: frames whole (the first may be the rest of the one
        # the kernel took half of); the refused one never went
        assert link.outbox == 0
        assert node.heard.endswith(b"\n")
        assert all(kind == "IDENT" for _seq, kind, _args in _frames_heard(node)[1:])
        assert link.send("IDENT", "5")  # room again: taken at once


def test_a_session_that_ends_forgets_its_outbox() -> None:
    with _a_full_port() as (_node, link, _sent):
        assert link.outbox > 0
    assert link.outbox == 0  # closed: nothing of it is written to the next session
