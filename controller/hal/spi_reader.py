"""A seat's MFRC522 card reader on the Pi's own SPI bus (two-seat GPIO tables).

Four- and six-seat tables read each seat's card reader on its seat node, whose
firmware reports ``TAGON``/``TAGOFF`` (``controller.hal.seatlink``). On a two-seat
table built with ``kind = "gpio"`` (``hardware/pinmap-gpio.toml``) both readers hang on
the Pi's SPI0, and this module does the node's job on the Pi, with the same rules
and the same timings, and hands the table the same events:

* a card put on the reader is reported once, as
  :class:`~controller.hal.events.TagArrived`, after two consecutive polls read
  it alike, however long it lies there, even if a poll now and then fails to read it;
* several cards in the field at once (a bit collision in anticollision) are never
  resolved to one of them: :class:`~controller.hal.events.TagConflict`, once;
* it is reported gone, as :class:`~controller.hal.events.TagLeft`, once no poll has
  read it for ``leave_s`` (500 ms); putting a different card on the reader ends the
  old one at once (``TagLeft`` then ``TagArrived``);
* while the reader fails (not answering, SPI errors), polls read nothing, so a card
  that was on it leaves after ``leave_s`` as well.

Wiring (``hardware/wiring.md`` section 3, BCM numbers with physical pins in brackets):
both readers share SCLK GPIO11 (23), MOSI GPIO10 (19), MISO GPIO9 (21) and the reset
line GPIO25 (22); seat 0's SDA (chip select) is CE0 GPIO8 (24), ``/dev/spidev0.0``,
seat 1's is CE1 GPIO7 (26), ``/dev/spidev0.1``. ``dtparam=spi=on`` in config.txt.

How it works
------------
:class:`Mfrc522` is the register-level driver, written for the host after the NXP
MFRC522 data sheet and ISO/IEC 14443-3 type A (the same logic as the seat node's
``firmware/seatnode/mfrc522.py``, which the installed package does not import):
WUPA, anticollision and SELECT per cascade level (4-, 7- and 10-byte UIDs; NTAG213
stickers have 7), HLTA. It talks through any object with spidev's
``xfer2(list[int]) -> list[int]`` (chip select held low for the whole list).

:class:`TagPresence` turns poll results into arrivals and departures (the firmware's
``seatnode/tags.py``, in seconds).

:class:`SpiReader` owns one reader: a background thread polls it every ``poll_s``
(sleeping in between), opens ``/dev/spidevB.D`` with the ``spidev`` module (imported
only then, so the package works without it off the Pi), and keeps going whatever
happens: a reader that does not answer (VersionReg) or an SPI error is logged once,
then retried with a growing delay (0.5 s up to 8 s), and its recovery is logged too.
A chip that lost its settings (a power dip) is noticed and set up again.

The reset line is shared by both readers: the first reader to take it pulses it
(gpiozero ``DigitalOutputDevice``) and then holds it high; the other reader shares
the same device, and a retry uses the chip's soft reset, never the line, so that one
seat's trouble never resets the other seat's reader.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Final, Protocol

from gpiozero import DigitalOutputDevice, Factory

from .callbacks import deliver
from .events import Heartbeat, TagArrived, TagConflict, TagLeft

__all__ = [
    "CONFIRM_READS",
    "LEAVE_S",
    "MANY",
    "NO_CHIP_VERSIONS",
    "POLL_S",
    "Mfrc522",
    "ReaderError",
    "ReaderEvent",
    "SpiDevice",
    "SpiReader",
    "TagEvent",
    "TagEventCallback",
    "TagPresence",
    "crc_a",
]

log = logging.getLogger(__name__)

POLL_S: Final = 0.015  # 2 confirming reads 15 ms apart: a card arrives within 50 ms
CONFIRM_READS: Final = 2
LEAVE_S: Final = 0.5  # the seat node's grace period (firmware/seatnode/tags.py)
RETRY_FIRST_S: Final = 0.5
RETRY_MAX_S: Final = 8.0
_EPSILON_S: Final = 1e-9
SPEED_HZ: Final = 1_000_000  # as the seat node; the MFRC522 allows up to 10 MHz

TagEvent = TagArrived | TagLeft | TagConflict
#: what a reader tells the table: its cards, and its chip answering or not (as a seat
#: node's heartbeat says it)
ReaderEvent = TagEvent | Heartbeat
TagEventCallback = Callable[[int, ReaderEvent], None]

# Registers (data sheet section 9.2).
COMMAND, COM_IRQ, ERROR, FIFO_DATA, FIFO_LEVEL, CONTROL, BIT_FRAMING, COLL = (
    0x01, 0x04, 0x06, 0x09, 0x0A, 0x0C, 0x0D, 0x0E,
)  # fmt: skip
MODE, TX_MODE, RX_MODE, TX_CONTROL, TX_ASK, MOD_WIDTH, RF_CFG = (
    0x11, 0x12, 0x13, 0x14, 0x15, 0x24, 0x26,
)  # fmt: skip
T_MODE, T_PRESCALER, T_RELOAD_H, T_RELOAD_L, VERSION = 0x2A, 0x2B, 0x2C, 0x2D, 0x37
# Commands (section 10.3) and register bits.
CMD_IDLE, CMD_TRANSCEIVE, CMD_SOFT_RESET, POWER_DOWN = 0x00, 0x0C, 0x0F, 0x10
IRQ_RX, IRQ_IDLE, IRQ_TIMER = 0x20, 0x10, 0x01
ERR_BUFFER_OVFL, ERR_COLL, ERR_PARITY, ERR_PROTOCOL = 0x10, 0x08, 0x02, 0x01
COLL_VALUES_AFTER_COLL = 0x80
START_SEND = FLUSH_BUFFER = 0x80
T_MODE_VALUE: Final = 0x80  # TAuto: the timer starts at the end of each transmission
# ISO/IEC 14443-3 type A.
WUPA, REQA, HLTA, SEL_CODES, NVB_SELECT = 0x52, 0x26, 0x50, (0x93, 0x95, 0x97), 0x70
CASCADE_TAG, SAK_CASCADE = 0x88, 0x04
# VersionReg: NXP answers 0x91/0x92, clones other values (0x88, 0x89, 0x90, 0xB2, ...);
# any answer is a chip but what a bus with nothing on it reads (MISO low or floating).
NO_CHIP_VERSIONS: Final = (0x00, 0xFF)
EXCHANGE_TIMEOUT_S: Final = 0.030  # backstop; the chip's own timer ends at 1 ms


class Many(enum.Enum):
    """What a poll read when several tags answered at once."""

    MANY = "MANY"


MANY: Final = Many.MANY
Reading = bytes | Many | None  # one poll: a UID, several tags, or nothing


class SpiDevice(Protocol):
    """What the driver needs of ``spidev.SpiDev``: one full-duplex transfer."""

    def xfer2(self, data: list[int], /) -> list[int]: ...


class ReaderError(Exception):
    """The reader does not answer, or answered something impossible."""


def crc_a(data: bytes | bytearray) -> bytes:
    """ISO/IEC 14443-3 CRC_A (init 0x6363, reflected 0x1021), low byte first."""
    crc = 0x6363
    for byte in data:
        byte ^= crc & 0xFF
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = ((crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)) & 0xFFFF
    return bytes((crc & 0xFF, crc >> 8))


class Mfrc522:
    """An MFRC522 behind ``spi.xfer2``. Call :meth:`init` once, then :meth:`read_uid`."""

    def __init__(self, spi: SpiDevice) -> None:
        self.spi = spi
        self.version = 0

    # -- register access (data sheet section 8.1.2.3) -----------------------------------
    def _xfer(self, frame: list[int]) -> list[int]:
        answer = self.spi.xfer2(frame)
        if len(answer) != len(frame):
            raise ReaderError(f"SPI transfer of {len(frame)} bytes returned {len(answer)}")
        return answer

    def write_reg(self, reg: int, *values: int) -> None:
        self._xfer([(reg << 1) & 0x7E, *(v & 0xFF for v in values)])

    def read_reg(self, reg: int) -> int:
        return self._xfer([0x80 | ((reg << 1) & 0x7E), 0])[1] & 0xFF

    def read_fifo(self, count: int) -> bytes:
        if count <= 0:
            return b""
        return bytes(self._xfer([0x80 | (FIFO_DATA << 1)] * count + [0])[1:])

    # -- set-up -------------------------------------------------------------------------
    def init(self) -> bool:
        """Soft-reset and configure the chip, antenna on; True when a chip answers."""
        self.write_reg(COMMAND, CMD_SOFT_RESET)
        deadline = time.monotonic() + 0.1
        while self.read_reg(COMMAND) & POWER_DOWN and time.monotonic() < deadline:
            time.sleep(0.001)
        self.write_reg(TX_MODE, 0x00)  # 106 kBd, no TX CRC
        self.write_reg(RX_MODE, 0x00)  # 106 kBd, no RX CRC
        self.write_reg(MOD_WIDTH, 0x26)
        # Timer: 13.56 MHz / (2 * 169 + 1) = 40 kHz; reload 20 ticks = 0.525 ms, six
        # times a tag's frame delay time (86 to 91 us, ISO 14443-3; it stops at the
        # answer's first bit), as the seat node's driver (firmware 0.6.0).
        self.write_reg(T_MODE, T_MODE_VALUE)
        self.write_reg(T_PRESCALER, 0xA9)
        self.write_reg(T_RELOAD_H, 0x00)
        self.write_reg(T_RELOAD_L, 0x14)
        self.write_reg(TX_ASK, 0x40)  # 100 % ASK
        self.write_reg(MODE, 0x3D)  # CRC preset 0x6363
        # Receiver gain 38 dB, not the 48 dB maximum: a card on the reader (or laid on
        # it), not one in a hand above it, as the seat node's driver.
        self.write_reg(RF_CFG, 0x50)
        tx = self.read_reg(TX_CONTROL)
        if tx & 0x03 != 0x03:
            self.write_reg(TX_CONTROL, tx | 0x03)  # antenna on (Tx1RFEn, Tx2RFEn)
        self.version = self.read_reg(VERSION)
        return self.version not in NO_CHIP_VERSIONS

    def answering(self) -> bool:
        """True when VersionReg reads as a chip (the wiring is fine)."""
        return self.read_reg(VERSION) not in NO_CHIP_VERSIONS

    def configured(self) -> bool:
        """True while the chip keeps :meth:`init`'s settings (False after a reset)."""
        return self.read_reg(T_MODE) == T_MODE_VALUE and self.read_reg(TX_CONTROL) & 0x03 == 0x03

    # -- Transceive (data sheet section 10.3.1.8) ----------------------------------------
    def transceive(
        self, data: bytes | bytearray, tx_last_bits: int = 0, rx_align: int = 0
    ) -> tuple[str, bytes, int]:
        """Send ``data`` to the tag and receive its answer.

        Returns (``"ok"``, ``"timeout"``, ``"error"`` or ``"collision"``, bytes
        received, valid bits in the last byte (0 = all 8)).
        """
        framing = ((rx_align & 0x07) << 4) | (tx_last_bits & 0x07)
        self.write_reg(COMMAND, CMD_IDLE)
        self.write_reg(COM_IRQ, 0x7F)  # Set1 = 0: clear every interrupt bit
        self.write_reg(FIFO_LEVEL, FLUSH_BUFFER)
        self.write_reg(FIFO_DATA, *data)
        self.write_reg(BIT_FRAMING, framing)
        self.write_reg(COMMAND, CMD_TRANSCEIVE)
        self.write_reg(BIT_FRAMING, framing | START_SEND)
        deadline = time.monotonic() + EXCHANGE_TIMEOUT_S
        while True:
            irq = self.read_reg(COM_IRQ)
            if irq & (IRQ_RX | IRQ_IDLE):
                break
            if irq & IRQ_TIMER or time.monotonic() > deadline:
                self.write_reg(COMMAND, CMD_IDLE)
                return "timeout", b"", 0
            time.sleep(0.0005)  # a frame and its answer take about 1 ms
        self.write_reg(BIT_FRAMING, framing)  # StartSend back to 0
        error = self.read_reg(ERROR)
        if error & ERR_BUFFER_OVFL:
            return "error", b"", 0
        received = self.read_fifo(self.read_reg(FIFO_LEVEL) & 0x7F)
        last_bits = self.read_reg(CONTROL) & 0x07
        if error & ERR_COLL:
            return "collision", received, last_bits
        if error & (ERR_PROTOCOL | ERR_PARITY):
            return "error", received, last_bits
        if not received:
            return "timeout", b"", 0
        return "ok", received, last_bits

    # -- ISO/IEC 14443-3 type A ------------------------------------------------------------
    def wake(self, command: int = WUPA) -> bool:
        """WUPA (or REQA; a 7-bit short frame): True when any tag answers (a collision
        counts)."""
        self.write_reg(COLL, self.read_reg(COLL) & ~COLL_VALUES_AFTER_COLL & 0xFF)
        result, data, _bits = self.transceive(bytes((command,)), tx_last_bits=7)
        return result == "collision" or (result == "ok" and len(data) == 2)

    def _cascade_level(self, sel: int) -> tuple[bytes, int] | Many | None:
        """Anticollision and SELECT for one cascade level: (4 UID CLn bytes, SAK), MANY
        (a bit collision: several tags, none chosen) or None."""
        result, data, _bits = self.transceive(bytes((sel, 0x20)))  # NVB: no bits known
        if result == "collision":
            return MANY
        if result != "ok" or len(data) != 5 or data[0] ^ data[1] ^ data[2] ^ data[3] != data[4]:
            return None
        frame = bytearray((sel, NVB_SELECT)) + data
        frame += crc_a(frame)
        result, answer, bits = self.transceive(frame)
        if result != "ok" or len(answer) != 3 or bits != 0 or crc_a(answer[:1]) != answer[1:]:
            return None
        return bytes(data[:4]), answer[0]

    def select(self) -> Reading:
        """Select the tag that is READY: its full UID (4, 7 or 10 bytes), MANY or None."""
        uid = bytearray()
        for sel in SEL_CODES:
            level = self._cascade_level(sel)
            if level is None or level is MANY:
                return level
            part, sak = level
            if not sak & SAK_CASCADE:
                return bytes(uid + part)
            if part[0] != CASCADE_TAG:
                return None
            uid += part[1:]
        return None

    def halt(self) -> None:
        """HLTA: the selected tag keeps quiet until the next WUPA (no answer expected)."""
        frame = bytes((HLTA, 0x00))
        self.transceive(frame + crc_a(frame))

    def read_uid(self) -> Reading:
        """One poll: wake the tags, read the one there and halt it (MANY: several; None:
        none). The poll always ends with HLTA, so a tag left half-way falls back to
        IDLE/HALT (ISO 14443-3) and the next WUPA wakes it."""
        if not self.wake():
            return None
        uid = self.select()
        self.halt()
        if uid is None or uid is MANY:
            return uid
        # A much fainter second card makes no bit collision (its answer vanishes under
        # the first's): with the first halted, REQA wakes any other one. Nothing is read.
        if self.wake(REQA):
            self.halt()  # that one back to IDLE: the next WUPA wakes both
            return MANY
        return uid


class TagPresence:
    """Arrivals, departures and conflicts from poll results, as the seat node decides them
    (``firmware/seatnode/tags.py``).

    ``update(reading, now)`` takes one poll (a UID, MANY or None) at time ``now``
    (seconds) and returns the events it causes: a UID read alike on ``confirm``
    consecutive polls arrives; MANY on ``confirm`` consecutive polls is one
    TagConflict (never an arrival); a card leaves ``leave_s`` after the last poll
    that saw something. (Times a nanosecond apart count as equal, so that float sums
    such as ``0.7 - 0.2`` do not miss a deadline.)
    """

    def __init__(self, leave_s: float = LEAVE_S, confirm: int = CONFIRM_READS) -> None:
        self.leave_s = leave_s
        self.confirm = confirm
        self.current: bytes | None = None
        self.conflict = False
        self._last_seen = 0.0
        self._candidate: bytes | Many | None = None
        self._count = 0

    def update(self, seen: Reading, now: float) -> list[TagEvent]:
        events: list[TagEvent] = []
        if seen is None:
            self._candidate, self._count = None, 0
            if now - self._last_seen >= self.leave_s - _EPSILON_S:
                if self.current is not None:
                    events.append(TagLeft(self.current))
                    self.current = None
                self.conflict = False
            return events
        self._last_seen = now
        if seen == self._candidate:
            self._count += 1
        else:
            self._candidate, self._count = seen, 1
        if self._count < self.confirm:
            return events
        if isinstance(seen, Many):
            if not self.conflict:
                self.conflict = True
                events.append(TagConflict())
            return events
        self.conflict = False
        if seen != self.current:
            if self.current is not None:
                events.append(TagLeft(self.current))
            self.current = seen
            events.append(TagArrived(seen))
        return events


# -- the shared reset line ---------------------------------------------------------------

_reset_lock = threading.Lock()
_reset_lines: dict[tuple[int, int], tuple[Any, int, Factory | None]] = {}


def _acquire_reset(pin: int, factory: Factory | None) -> None:
    """Take the reset line (pulsing it when no reader holds it yet)."""
    key = (id(factory), pin)
    with _reset_lock:
        if key in _reset_lines:
            device, users, _ = _reset_lines[key]
            _reset_lines[key] = (device, users + 1, factory)
            return
        device = DigitalOutputDevice(pin, initial_value=False, pin_factory=factory)
        time.sleep(0.002)  # NRSTPD low: hard reset
        device.on()
        time.sleep(0.05)  # oscillator start-up
        _reset_lines[key] = (device, 1, factory)


def _release_reset(pin: int, factory: Factory | None) -> None:
    key = (id(factory), pin)
    with _reset_lock:
        if key not in _reset_lines:
            return
        device, users, _ = _reset_lines[key]
        if users > 1:
            _reset_lines[key] = (device, users - 1, factory)
            return
        del _reset_lines[key]
    try:
        device.close()
    except Exception as error:
        log.debug("closing the reset line GPIO%d failed: %s", pin, error)


class SpiReader:
    """One seat's MFRC522 on the Pi's SPI, reporting like a seat node.

    ``on_event(seat, event)`` receives ``TagArrived(uid)`` and ``TagLeft(uid)`` (UID
    bytes), the same events a seat node's ``SeatLink`` delivers, from the reader's
    thread (or from :meth:`poll`'s caller), never twice at once; it should return
    quickly. An exception it raises is logged (the first with its traceback), counted
    in :attr:`callback_errors`, and does not stop the reader. It may call :meth:`close`.

    ``bus``/``device``: ``/dev/spidev<bus>.<device>`` (device = chip select, 0 = CE0,
    1 = CE1), opened with the ``spidev`` module at ``speed_hz``. ``spi``: an object
    with ``xfer2`` to use instead (tests, or a device opened elsewhere); it is not
    closed by :meth:`close`. ``reset_pin``: BCM pin of the reader's RST, driven with
    gpiozero on ``pin_factory`` (None: gpiozero's default), shared by readers on the
    same pin; ``reset_pin=None`` leaves RST alone. ``clock`` gives the time in seconds
    for the presence rules and the retry delays; a test may drive it by hand and call
    :meth:`poll` (with ``start=False`` there is no thread at all).

    :attr:`ok` says whether the reader answers now. :meth:`close` (or leaving a
    ``with`` block) stops the thread and releases SPI and the reset line; no
    ``on_event`` call happens after it returns.
    """

    def __init__(
        self,
        seat: int,
        on_event: TagEventCallback,
        *,
        bus: int = 0,
        device: int = 0,
        reset_pin: int | None = 25,
        poll_s: float = POLL_S,
        leave_s: float = LEAVE_S,
        spi: SpiDevice | None = None,
        clock: Callable[[], float] = time.monotonic,
        pin_factory: Factory | None = None,
        speed_hz: int = SPEED_HZ,
        start: bool = True,
    ) -> None:
        for name, value in (("seat", seat), ("bus", bus), ("device", device)):
            if type(value) is not int or value < 0:
                raise ValueError(f"{name} must be a number >= 0, not {value!r}")
        if reset_pin is not None and (type(reset_pin) is not int or reset_pin < 0):
            raise ValueError(f"reset_pin must be a BCM GPIO number or None, not {reset_pin!r}")
        if not poll_s > 0 or not leave_s >= 0:
            raise ValueError(f"need poll_s > 0 and leave_s >= 0 (got {poll_s!r}, {leave_s!r})")
        self.seat = seat
        self.bus = bus
        self.device = device
        self.reset_pin = reset_pin
        self.poll_s = poll_s
        self.leave_s = leave_s
        self.speed_hz = speed_hz
        self.callback_errors = 0
        self.failures = 0  # failed opens and polls, all told
        self._on_event = on_event
        self._clock = clock
        self._pin_factory = pin_factory
        self._injected = spi
        self._spi: Any = spi  # the open SPI device, or None
        self._chip: Mfrc522 | None = None  # set while the reader works
        self._presence = TagPresence(leave_s)
        self._reset_held = False
        self._reset_warned = False
        self._failing: str | None = None  # why the reader fails now (logged once)
        self._retry_at: float | None = None
        self._retry_s = RETRY_FIRST_S
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None
        if start:
            self._thread = threading.Thread(
                target=self._run, name=f"spi-reader-{seat}", daemon=True
            )
            self._thread.start()

    # -- public API --------------------------------------------------------------------
    @property
    def name(self) -> str:
        return f"/dev/spidev{self.bus}.{self.device}"

    @property
    def ok(self) -> bool:
        """True while the reader answers (set up, last poll fine)."""
        return self._chip is not None

    @property
    def version(self) -> int | None:
        """The chip's VersionReg (0x91/0x92 for NXP's), None while it does not answer."""
        chip = self._chip
        return chip.version if chip is not None else None

    @property
    def present(self) -> bytes | None:
        """UID of the card on the reader now (as last reported), or None."""
        return self._presence.current

    @property
    def closed(self) -> bool:
        return self._closed

    def poll(self) -> None:
        """One poll: (re)open the reader if due, read, deliver the events it causes.

        The thread does this every ``poll_s``; call it yourself with ``start=False``.
        """
        with self._lock:
            if self._closed:
                return
            now = self._clock()
            uid = self._read(now)
            for event in self._presence.update(uid, now):
                if self._closed:
                    return
                self._deliver(event)

    def close(self, timeout: float = 2.0) -> None:
        """Stop the thread, release SPI and the reset line. Idempotent; may be called from
        on_event."""
        self._closed = True
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        with self._lock:  # a poll in progress (on the caller's thread) ends first
            self._drop()
            if self._reset_held and self.reset_pin is not None:
                self._reset_held = False
                _release_reset(self.reset_pin, self._pin_factory)

    def __enter__(self) -> SpiReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "ok" if self.ok else "not answering"
        return f"<SpiReader seat {self.seat} {self.name} {state}>"

    # -- internals ---------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll()
            except Exception:  # a bug here must not pass silently, nor stop the reader
                log.exception("asiento %d: falló la lectura del lector de cartas", self.seat)
            self._stop.wait(self.poll_s)

    def _read(self, now: float) -> Reading:
        """One read, opening the reader first when needed; None on any failure."""
        chip = self._chip
        try:
            if chip is None:
                if self._retry_at is not None and now < self._retry_at:
                    return None
                chip = self._open()
            uid = chip.read_uid()
            if uid is None:
                if not chip.answering():
                    raise ReaderError("the reader stopped answering (VersionReg)")
                if not chip.configured():  # reset by a power dip: set it up again
                    log.info(
                        "asiento %d: el lector de cartas %s se reinició; configurándolo",
                        self.seat,
                        self.name,
                    )
                    if not chip.init():
                        raise ReaderError("the reader stopped answering after a reset")
            return uid
        except Exception as error:
            self._fail(error, now)
            return None

    def _open(self) -> Mfrc522:
        if self.reset_pin is not None and not self._reset_held:
            try:
                _acquire_reset(self.reset_pin, self._pin_factory)
                self._reset_held = True
            except Exception as error:
                if not self._reset_warned:
                    log.warning(
                        "asiento %d: no está la línea de reset del lector, GPIO%d (%s); "
                        "sigo sin ella",
                        self.seat, self.reset_pin, error,
                    )  # fmt: skip
                self._reset_warned = True
        if self._spi is None:
            try:
                import spidev
            except ImportError as error:
                raise ReaderError("the spidev module is not installed") from error
            spi = spidev.SpiDev()
            try:
                spi.open(self.bus, self.device)
            except OSError as error:
                raise ReaderError(
                    f"cannot open {self.name} ({error}); is dtparam=spi=on in config.txt?"
                ) from error
            spi.max_speed_hz = self.speed_hz
            spi.mode = 0
            self._spi = spi
        chip = Mfrc522(self._spi)
        if not chip.init():
            raise ReaderError(
                f"no MFRC522 answering on {self.name} (VersionReg 0x{chip.version:02X}); "
                "check its wiring"
            )
        if self._failing is not None:
            log.info(
                "asiento %d: el lector de cartas %s contesta de nuevo (MFRC522 versión 0x%02X)",
                self.seat, self.name, chip.version,
            )  # fmt: skip
            self._say_reader(True)
        else:
            log.debug("seat %d: card reader %s ready (0x%02X)", self.seat, self.name, chip.version)
        self._failing = None
        self._retry_at = None
        self._retry_s = RETRY_FIRST_S
        self._chip = chip
        return chip

    def _fail(self, error: Exception, now: float) -> None:
        self.failures += 1
        reason = (
            str(error) if isinstance(error, ReaderError) else f"{type(error).__name__}: {error}"
        )
        if self._failing is None:
            log.warning(
                "asiento %d: lector de cartas %s: %s; reintentando", self.seat, self.name, reason,
                exc_info=not isinstance(error, ReaderError | OSError),
            )  # fmt: skip
            self._failing = reason
            self._say_reader(False)
        else:
            log.debug("seat %d: card reader %s still failing: %s", self.seat, self.name, reason)
        self._failing = reason
        self._drop()
        self._retry_at = now + self._retry_s
        self._retry_s = min(self._retry_s * 2, RETRY_MAX_S)

    def _drop(self) -> None:
        """Forget the chip and close the SPI device we opened (reopened on retry)."""
        self._chip = None
        if self._spi is not None and self._spi is not self._injected:
            try:
                self._spi.close()
            except Exception as error:
                log.debug("seat %d: closing %s failed: %s", self.seat, self.name, error)
            self._spi = None

    def _say_reader(self, ok: bool) -> None:
        """The reader stopped answering, or answers again: told as a seat node's
        heartbeat tells it (``Heartbeat.reader_ok``), so the table says it the same way."""
        self.callback_errors = deliver(
            log, self.seat, self._on_event, Heartbeat(reader_ok=ok), self.callback_errors
        )

    def _deliver(self, event: TagEvent) -> None:
        log.debug("seat %d: %r", self.seat, event)
        self.callback_errors = deliver(log, self.seat, self._on_event, event, self.callback_errors)
