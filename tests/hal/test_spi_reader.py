"""The Pi-side MFRC522 reader (two-seat GPIO tables) against the firmware's simulated
chip, seen through a spidev-like ``xfer2``: UIDs, presence rules, failures and
recovery, the thread, the shared reset line, and agreement with the seat node's own
driver and presence logic."""

from __future__ import annotations

import logging
import queue
import sys
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpiozero import DigitalOutputDevice
from gpiozero.pins.mock import MockFactory
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.hal import spi_reader
from controller.hal.events import Heartbeat, TagArrived, TagConflict, TagLeft
from controller.hal.mock_mfrc522 import SimMFRC522, SimTag
from controller.hal.mock_mfrc522 import SimSpiDev as SimSpi
from controller.hal.spi_reader import Mfrc522, ReaderEvent, SpiReader, TagPresence
from tests.helpers import Clock

ROOT = Path(__file__).resolve().parents[2]
for _path in (ROOT / "firmware", ROOT / "tests" / "firmware"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from seatnode.mfrc522 import MANY as FIRMWARE_MANY  # noqa: E402
from seatnode.mfrc522 import MFRC522  # noqa: E402
from seatnode.tags import TagPresence as FirmwareTagPresence  # noqa: E402

CARD_4 = bytes.fromhex("DEADBEEF")
NTAG_A = bytes.fromhex("04A224B2C55E80")  # NTAG213: 7-byte UID, cascade level 2
NTAG_B = bytes.fromhex("04B1C2D3E4F581")
CARD_10 = bytes.fromhex("0811223344556677889A")


class RecordingSpi:
    """machine.SPI for the firmware driver: records the bytes sent, passes them on."""

    def __init__(self, chip: SimMFRC522) -> None:
        self.chip = chip
        self.frames: list[bytes] = []

    def write(self, buf: bytes) -> None:
        self.frames.append(bytes(buf))
        self.chip.write(buf)

    def write_readinto(self, wbuf: bytes, rbuf: bytearray) -> None:
        self.frames.append(bytes(wbuf))
        self.chip.write_readinto(wbuf, rbuf)


class Bench:
    """A reader with no thread, a hand-driven clock and the simulated chip."""

    def __init__(self, *tags: SimTag, version: int = 0x92, **kwargs: Any) -> None:
        self.chip = SimMFRC522(list(tags), version=version)
        self.spi = SimSpi(self.chip)
        self.clock = Clock()
        self.events: list[ReaderEvent] = []
        self.reader = SpiReader(
            0,
            lambda seat, event: self.events.append(event),
            spi=self.spi,
            reset_pin=None,
            clock=self.clock,
            start=False,
            **kwargs,
        )

    def run(self, seconds: float, step: float = 0.05) -> list[ReaderEvent]:
        """Poll every ``step`` for ``seconds``; return the events of that stretch."""
        before = len(self.events)
        for _ in range(round(seconds / step)):
            self.clock.now += step
            self.reader.poll()
        return self.events[before:]


@pytest.fixture
def bench() -> Iterator[Bench]:
    b = Bench()
    yield b
    b.reader.close()


# -- the driver ------------------------------------------------------------------------


@pytest.mark.parametrize("uid", [CARD_4, NTAG_A, CARD_10], ids=["4-byte", "7-byte", "10-byte"])
def test_driver_reads_uids(uid: bytes) -> None:
    tag = SimTag(uid, sak=0x08 if len(uid) == 4 else 0x00)
    chip = SimMFRC522([tag])
    driver = Mfrc522(SimSpi(chip))
    assert driver.init() and driver.version == 0x92
    assert driver.read_uid() == uid
    assert tag.state == "HALT"  # halted after the read, woken again by the next WUPA
    assert driver.read_uid() == uid
    assert driver.answering() and driver.configured()


def test_driver_no_tag_and_dead_chip() -> None:
    driver = Mfrc522(SimSpi(SimMFRC522([])))
    assert driver.init()
    assert driver.read_uid() is None
    dead = Mfrc522(SimSpi(SimMFRC522([], version=0)))
    assert not dead.init() and dead.version == 0
    assert not dead.answering()


def test_driver_two_cards_at_once_are_many_never_one() -> None:
    chip = SimMFRC522([SimTag(NTAG_A), SimTag(NTAG_B)])
    driver = Mfrc522(SimSpi(chip))
    driver.init()
    assert [driver.read_uid() for _ in range(3)] == [spi_reader.MANY] * 3
    chip.tags = chip.tags[1:]
    assert driver.read_uid() == NTAG_B  # the one left is read at the next poll


@pytest.mark.parametrize("version", [0x88, 0x89, 0x90, 0x91, 0x92, 0xB2])
def test_driver_accepts_clone_chips(version: int) -> None:
    driver = Mfrc522(SimSpi(SimMFRC522([SimTag(NTAG_A)], version=version)))
    assert driver.init() and driver.version == version and driver.answering()
    assert driver.read_uid() == NTAG_A
    floating = Mfrc522(SimSpi(SimMFRC522([], version=0xFF)))
    assert not floating.init() and not floating.answering()


def test_reader_reports_several_cards_as_one_conflict(bench: Bench) -> None:
    bench.spi.put(SimTag(NTAG_A), SimTag(NTAG_B))
    assert bench.run(1.0) == [TagConflict()]
    bench.spi.put(SimTag(NTAG_B))
    assert bench.run(0.1) == [TagArrived(NTAG_B)]


def test_crc_a_matches_iso14443_examples() -> None:
    assert spi_reader.crc_a(b"\x50\x00") == b"\x57\xcd"  # HLTA
    assert spi_reader.crc_a(b"\x93\x70\x88\x04\xa2\x24\x02") == spi_reader.crc_a(
        bytearray(b"\x93\x70\x88\x04\xa2\x24\x02")
    )


# -- presence ---------------------------------------------------------------------------


@pytest.mark.parametrize("uid", [CARD_4, NTAG_A], ids=["4-byte", "7-byte"])
def test_reader_reports_a_card_once_while_it_lies_still(bench: Bench, uid: bytes) -> None:
    bench.spi.put(SimTag(uid))
    assert bench.run(3.0) == [TagArrived(uid)]
    assert bench.reader.present == uid and bench.reader.ok
    assert bench.reader.version == 0x92


def test_missed_reads_shorter_than_the_grace_are_ignored(bench: Bench) -> None:
    tag = SimTag(NTAG_A)
    bench.spi.put(tag)
    assert bench.run(0.5) == [TagArrived(NTAG_A)]
    bench.spi.put()  # the card slides off the antenna for 0.4 s
    assert bench.run(0.4) == []
    bench.spi.put(tag)
    assert bench.run(1.0) == []


def test_removal_is_reported_after_the_grace_period(bench: Bench) -> None:
    bench.spi.put(SimTag(NTAG_A))
    bench.run(0.2)
    last_seen = bench.clock.now
    bench.spi.put()
    assert bench.run(0.45) == []
    bench.run(0.05)
    assert bench.events[-1] == TagLeft(NTAG_A)
    assert bench.clock.now - last_seen == pytest.approx(0.5)
    assert bench.reader.present is None
    assert bench.run(2.0) == []


def test_two_cards_one_after_another(bench: Bench) -> None:
    bench.spi.put(SimTag(NTAG_A))
    bench.run(0.3)
    bench.spi.put()
    bench.run(1.0)
    bench.spi.put(SimTag(CARD_4, sak=0x08))
    bench.run(0.3)
    # Swapped straight away, with no gap: the old card ends at once.
    bench.spi.put(SimTag(NTAG_B))
    bench.run(0.1)  # two polls: read alike twice
    assert bench.events == [
        TagArrived(NTAG_A),
        TagLeft(NTAG_A),
        TagArrived(CARD_4),
        TagLeft(CARD_4),
        TagArrived(NTAG_B),
    ]


def test_custom_leave_time() -> None:
    b = Bench(SimTag(NTAG_A), leave_s=1.0, poll_s=0.1)
    b.run(0.2, step=0.1)
    b.spi.put()
    assert b.run(0.9, step=0.1) == []
    assert b.run(0.1, step=0.1) == [TagLeft(NTAG_A)]


# -- failures ---------------------------------------------------------------------------


def warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_reader_not_answering_is_logged_once_and_recovers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="controller.hal.spi_reader")
    b = Bench(SimTag(NTAG_A), version=0)  # MISO reads 0: VersionReg 0x00
    # said to the table once, as a seat node's heartbeat says it (issue 49)
    assert b.run(60.0, step=0.05) == [Heartbeat(reader_ok=False)]
    assert not b.reader.ok and b.reader.version is None
    assert len(warnings(caplog)) == 1
    assert "no MFRC522 answering on /dev/spidev0.0 (VersionReg 0x00)" in caplog.text
    # Backoff: 0.5, 1, 2, 4, 8, 8, ... s between tries, not one per poll.
    assert 9 <= b.reader.failures <= 12
    b.chip.version, b.chip.dead = 0x92, False  # the loose wire is fixed
    events = b.run(8.5)
    assert events == [Heartbeat(reader_ok=True), TagArrived(NTAG_A)]
    assert b.reader.ok and b.reader.version == 0x92
    assert "contesta de nuevo (MFRC522 versión 0x92)" in caplog.text
    assert len(warnings(caplog)) == 1
    b.reader.close()


def test_spi_errors_are_logged_once_a_card_leaves_and_comes_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    b = Bench(SimTag(NTAG_A))
    b.run(0.2)
    b.spi.error = OSError(5, "Input/output error")
    events = b.run(3.0)
    # the reader's failure said once, then the card gone (nothing read for leave_s)
    assert events == [Heartbeat(reader_ok=False), TagLeft(NTAG_A)]
    assert len(warnings(caplog)) == 1 and "Input/output error" in caplog.text
    b.spi.error = None
    assert b.run(3.0) == [Heartbeat(reader_ok=True), TagArrived(NTAG_A)]
    b.reader.close()


def test_a_chip_that_was_reset_is_set_up_again(bench: Bench) -> None:
    bench.spi.put(SimTag(NTAG_A))
    bench.run(0.2)
    with bench.spi.lock:
        bench.chip._soft_reset()  # a power dip, or the shared RST line: antenna off
    assert bench.run(1.0) == []  # one missed poll, well inside the grace
    assert bench.chip.regs[0x14] & 0x03 == 0x03 and bench.reader.ok
    assert bench.reader.failures == 0


def test_on_event_errors_are_logged_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    chip = SimMFRC522([SimTag(NTAG_A)])
    got: list[ReaderEvent] = []

    def on_event(seat: int, event: ReaderEvent) -> None:
        got.append(event)
        raise RuntimeError("table bug")

    clock = Clock()
    reader = SpiReader(0, on_event, spi=SimSpi(chip), reset_pin=None, clock=clock, start=False)
    reader.poll()
    reader.poll()  # read alike twice: arrived
    chip.tags = []
    clock.now += 1.0
    reader.poll()
    assert got == [TagArrived(NTAG_A), TagLeft(NTAG_A)]
    assert reader.callback_errors == 2 and "table bug" in caplog.text
    reader.close()


def test_bad_arguments() -> None:
    for kwargs in ({"device": -1}, {"bus": "0"}, {"poll_s": 0}, {"reset_pin": -3}):
        with pytest.raises(ValueError):
            SpiReader(0, lambda s, e: None, start=False, **kwargs)


# -- spidev -----------------------------------------------------------------------------


def test_spidev_is_imported_only_when_no_spi_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    chip = SimMFRC522([SimTag(NTAG_A)])
    opened: list[Any] = []

    class FakeSpiDev(SimSpi):
        def __init__(self) -> None:
            super().__init__(chip)
            self.max_speed_hz = 0
            self.mode = 3
            opened.append(self)

        def open(self, bus: int, device: int) -> None:
            self.where = (bus, device)

    module = types.ModuleType("spidev")
    module.__dict__["SpiDev"] = FakeSpiDev
    monkeypatch.setitem(sys.modules, "spidev", module)
    events: list[ReaderEvent] = []
    reader = SpiReader(
        1, lambda s, e: events.append(e), device=1, reset_pin=None, clock=Clock(), start=False
    )
    assert opened == []  # nothing opened before the first poll
    reader.poll()
    reader.poll()
    assert events == [TagArrived(NTAG_A)]
    (dev,) = opened
    assert dev.where == (0, 1) and dev.max_speed_hz == 1_000_000 and dev.mode == 0
    reader.close()
    assert dev.closed

    # An injected spi never touches the module.
    monkeypatch.setitem(sys.modules, "spidev", None)  # import spidev would fail
    b = Bench(SimTag(NTAG_A))
    assert b.run(0.1) == [TagArrived(NTAG_A)]
    b.reader.close()
    assert not b.spi.closed  # not ours to close


def test_spidev_missing_or_spi_off_is_logged_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "spidev", None)
    clock = Clock()
    reader = SpiReader(0, lambda s, e: None, reset_pin=None, clock=clock, start=False)
    for _ in range(200):
        clock.now += 0.1
        reader.poll()
    assert "spidev module is not installed" in caplog.text and len(warnings(caplog)) == 1
    reader.close()

    class NoDevice:
        def open(self, bus: int, device: int) -> None:
            raise FileNotFoundError(2, "No such file or directory")

    module = types.ModuleType("spidev")
    module.__dict__["SpiDev"] = NoDevice
    monkeypatch.setitem(sys.modules, "spidev", module)
    caplog.clear()
    reader = SpiReader(0, lambda s, e: None, reset_pin=None, clock=clock, start=False)
    reader.poll()
    assert "cannot open /dev/spidev0.0" in caplog.text and "dtparam=spi=on" in caplog.text
    reader.close()


# -- the thread -------------------------------------------------------------------------


def test_thread_reports_with_the_real_clock_and_does_not_spin() -> None:
    chip = SimMFRC522([])
    spi = SimSpi(chip)
    got: queue.Queue[tuple[int, ReaderEvent]] = queue.Queue()
    reader = SpiReader(
        1, lambda s, e: got.put((s, e)), spi=spi, reset_pin=None, poll_s=0.02, leave_s=0.1
    )
    try:
        spi.put(SimTag(NTAG_A))
        assert got.get(timeout=120) == (1, TagArrived(NTAG_A))
        time.sleep(0.3)
        assert got.empty()  # still lying there: one arrival
        spi.put()
        removed = time.monotonic()
        assert got.get(timeout=120) == (1, TagLeft(NTAG_A))
        # leave_s after the last poll that saw it, at most one poll before the removal
        assert 0.1 - 0.02 - 0.005 <= time.monotonic() - removed < 1.0
        before = chip.transceives
        time.sleep(0.3)
        assert chip.transceives - before <= 0.3 / 0.02 + 2  # one WUPA per poll, no busy loop
    finally:
        reader.close()
    assert reader.closed


def test_close_stops_the_thread_promptly() -> None:
    got: list[ReaderEvent] = []
    spi = SimSpi(SimMFRC522([SimTag(NTAG_A)]))
    reader = SpiReader(0, lambda s, e: got.append(e), spi=spi, reset_pin=None, poll_s=1.0)
    deadline = time.monotonic() + 4  # two polls, a second apart
    while not got and time.monotonic() < deadline:
        time.sleep(0.005)
    assert got == [TagArrived(NTAG_A)]
    start = time.monotonic()
    reader.close()
    assert time.monotonic() - start < 0.2
    assert reader._thread is not None and not reader._thread.is_alive()
    reader.close()  # idempotent
    reader.poll()  # and a no-op once closed
    assert got == [TagArrived(NTAG_A)]


def test_close_while_failing_and_from_on_event() -> None:
    dead = SpiReader(0, lambda s, e: None, spi=SimSpi(SimMFRC522([], version=0)), reset_pin=None)
    time.sleep(0.05)
    start = time.monotonic()
    dead.close()
    assert time.monotonic() - start < 0.2

    closed = threading.Event()
    holder: list[SpiReader] = []

    def on_event(seat: int, event: ReaderEvent) -> None:
        holder[0].close()
        closed.set()

    spi = SimSpi(SimMFRC522([]))
    reader = SpiReader(0, on_event, spi=spi, reset_pin=None, poll_s=0.01)
    holder.append(reader)
    spi.put(SimTag(CARD_4))
    assert closed.wait(120)
    assert reader._thread is not None
    reader._thread.join(1)
    assert not reader._thread.is_alive()


# -- the reset line ---------------------------------------------------------------------


def test_both_readers_share_one_reset_line_pulsed_once() -> None:
    factory = MockFactory()
    try:
        chips = [SimMFRC522([SimTag(NTAG_A)]), SimMFRC522([SimTag(NTAG_B)])]
        clock = Clock()
        got: list[tuple[int, ReaderEvent]] = []
        readers = [
            SpiReader(
                seat,
                lambda s, e: got.append((s, e)),
                device=seat,
                spi=SimSpi(chips[seat]),
                pin_factory=factory,
                clock=clock,
                start=False,
            )
            for seat in (0, 1)
        ]
        for reader in readers:
            reader.poll()
            reader.poll()
        assert got == [(0, TagArrived(NTAG_A)), (1, TagArrived(NTAG_B))]
        pin = factory.pin(25)
        assert pin.state  # released: high
        pin.assert_states([False, True])  # one pulse for both readers
        readers[0].close()
        assert pin.state  # still held for seat 1
        readers[1].close()
        DigitalOutputDevice(25, pin_factory=factory).close()  # the pin is free again
    finally:
        factory.reset()


def test_a_reset_line_in_use_is_logged_and_done_without(
    caplog: pytest.LogCaptureFixture,
) -> None:
    factory = MockFactory()
    try:
        other = DigitalOutputDevice(25, pin_factory=factory)  # e.g. an SPI display's RST
        b_events: list[ReaderEvent] = []
        reader = SpiReader(
            0,
            lambda s, e: b_events.append(e),
            spi=SimSpi(SimMFRC522([SimTag(NTAG_A)])),
            pin_factory=factory,
            clock=Clock(),
            start=False,
        )
        reader.poll()
        reader.poll()
        assert b_events == [TagArrived(NTAG_A)]
        assert "no está la línea de reset del lector, GPIO25" in caplog.text
        reader.close()
        other.close()
    finally:
        factory.reset()


# -- agreement with the seat node firmware -----------------------------------------------

UIDS = st.one_of(
    st.binary(min_size=4, max_size=4).filter(lambda u: u[0] != 0x88),
    st.binary(min_size=7, max_size=7),
    st.binary(min_size=10, max_size=10),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(UIDS, max_size=3, unique=True))
def test_host_and_firmware_drivers_read_alike(uids: list[bytes]) -> None:
    """Same chip states in, same UIDs out, same SPI traffic and same tag states after."""

    def tags() -> list[SimTag]:
        return [SimTag(uid, sak=0x08 if len(uid) == 4 else 0x00) for uid in uids]

    fw_chip, host_chip = SimMFRC522(tags()), SimMFRC522(tags())
    fw_spi, host_spi = RecordingSpi(fw_chip), SimSpi(host_chip)
    firmware, host = MFRC522(fw_spi, fw_chip.cs), Mfrc522(host_spi)
    assert firmware.init() and host.init()
    for _ in range(3):
        fw_uid, host_uid = firmware.read_uid(), host.read_uid()
        if len(uids) > 1:
            assert fw_uid == FIRMWARE_MANY and host_uid is spi_reader.MANY
        else:
            assert host_uid == fw_uid
        assert (host_uid is None) == (not uids)
        if len(uids) == 1:
            assert host_uid == uids[0]
        assert [t.state for t in host_chip.tags] == [t.state for t in fw_chip.tags]
    assert host_spi.frames == fw_spi.frames
    assert host_chip.regs == fw_chip.regs


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([None, CARD_4, NTAG_A, NTAG_B, "MANY"]), st.integers(1, 400)),
        max_size=40,
    )
)
def test_presence_matches_the_firmware(polls: list[tuple[bytes | str | None, int]]) -> None:
    """The firmware in milliseconds, the host in seconds: the same events."""
    firmware, host = FirmwareTagPresence(500), TagPresence(0.5)
    now_ms = 1000
    names = {"TAGON": TagArrived, "TAGOFF": TagLeft}
    for seen, step_ms in polls:
        now_ms += step_ms
        fw_seen, host_seen = (FIRMWARE_MANY, spi_reader.MANY) if seen == "MANY" else (seen, seen)
        fw = [TagConflict() if kind == "TAGMANY" else names[kind](u) for kind, u in
              firmware.update(fw_seen, now_ms)]  # fmt: skip
        assert host.update(host_seen, now_ms / 1000) == fw  # type: ignore[arg-type]
