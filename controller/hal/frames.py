"""The seat node's frame codec: the line protocol of ``firmware/PROTOCOL.md``, on its own.

Frames are encoded (:func:`encode_frame`, protocol 3's counted blocks with
:func:`encode_counted`), checked (:func:`parse_frame`: framing, size, checksum) and
turned into events (:func:`decode_message`); :class:`FrameDecoder` splits a byte stream
into lines and counts what it rejects. The installed package does not depend on
``firmware/``; the Pi's link (``controller.hal.seatlink``) and the mock seat node
(``controller.hal.mock``) both speak through this module.
"""

from __future__ import annotations

import binascii
import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Final

from .events import (
    PROTOCOL_VERSIONS,
    ButtonHeld,
    ButtonPressed,
    ButtonStuck,
    DisplayAck,
    DisplayEvent,
    DisplayLost,
    Heartbeat,
    Hello,
    NodeEvent,
    PanelReport,
    TagArrived,
    TagConflict,
    TagLeft,
)
from .panels import PANEL_KINDS

__all__ = [
    "BUTTONS",
    "CALLBACK_ERRORS",
    "CHECKSUM",
    "FRAMES",
    "GARBAGE",
    "LED_MODES",
    "MALFORMED",
    "MAX_BLOCK_FRAME",
    "MAX_FRAME",
    "OVERSIZED",
    "REJECT_REASONS",
    "REPL_RESETS",
    "SEQ_GAP",
    "SEQ_MODULO",
    "STALE",
    "UNKNOWN",
    "VERSION",
    "VERSIONS_SAID_ES",
    "FrameDecoder",
    "FrameError",
    "crc16",
    "decode_message",
    "encode_counted",
    "encode_frame",
    "encode_update",
    "parse_frame",
]


MAX_FRAME: Final = 80  # bytes in one frame, not counting the CR/LF terminator
# Protocol 3: the frames of a counted block (a DU's DR frames) may be this long.
MAX_BLOCK_FRAME: Final = 1400
SEQ_MODULO: Final = 65536
#: the cards' events a decoder keeps, laid and lifted (``FrameDecoder.lone_frame``; a
#: deck is 40 cards, 80 events)
TAG_EVENTS_KEPT: Final = 512

BUTTONS: Final = (
    "truco",
    "envido",
    "real_envido",
    "falta_envido",
    "flor",
    "quiero",
    "no_quiero",
    "mazo",
)
LED_MODES: Final = ("OFF", "ON", "SLOW", "FAST")

# Why a line was rejected, in the order the checks are made (PROTOCOL.md).
OVERSIZED: Final = "oversized"
GARBAGE: Final = "garbage"
CHECKSUM: Final = "checksum"
UNKNOWN: Final = "unknown"
MALFORMED: Final = "malformed"
VERSION: Final = "version"
REJECT_REASONS: Final = (OVERSIZED, GARBAGE, CHECKSUM, UNKNOWN, MALFORMED, VERSION)
# Other counters in SeatLink.stats.
FRAMES: Final = "frames"  # valid frames received
SEQ_GAP: Final = "seq_gap"  # valid frames whose sequence number was not the expected one
CALLBACK_ERRORS: Final = "callback_errors"  # exceptions raised by on_event
STALE: Final = "stale"  # valid frames dropped: sent before the node answered this session
REPL_RESETS: Final = "repl_resets"  # soft resets sent to a node found in its REPL


# -- frames ---------------------------------------------------------------------------


class FrameError(ValueError):
    """A received line that is not a valid frame; ``reason`` is one of REJECT_REASONS."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor)."""
    return binascii.crc_hqx(data, 0xFFFF)


def encode_frame(seq: int, kind: str, *args: str) -> bytes:
    """One frame, LF-terminated: ``$<seq> <KIND>[ <arg>...]*<CRC>``.

    Checked whole against the grammar with one match (the Pi encodes a frame per
    heartbeat and per display update), and its spaces counted: an argument with a
    space in it would be two."""
    try:
        body = " ".join((str(seq % SEQ_MODULO), kind, *args)).encode("ascii")
    except UnicodeEncodeError:
        raise ValueError(f"bad message type or argument: {kind!r} {args!r}") from None
    frame = b"$%s*%04X\n" % (body, binascii.crc_hqx(body, 0xFFFF))
    end = len(frame) - 1
    if end > MAX_FRAME:
        raise ValueError("frame longer than MAX_FRAME")
    if _FRAME_RE.fullmatch(frame, 0, end) is None or body.count(b" ") != len(args) + 1:
        raise ValueError(f"bad message type or argument: {kind!r} {args!r}")
    return frame


def encode_counted(
    seq: int,
    header: Callable[[int], tuple[str, tuple[str, ...]]],
    block: list[tuple[bytes, bytes]],
) -> tuple[bytes, int]:
    """Protocol 3's counted block: the ``header`` frame (``header(count)`` gives its type
    and arguments, ``count`` being the byte count of the frames after it) with sequence
    number ``seq``, then the ``block`` frames (type and joined arguments as bytes, each
    frame up to MAX_BLOCK_FRAME bytes). Returns the bytes and the next sequence number.

    The bytes begin with an LF (an empty line, ignored): it ends whatever partial line
    the node still holds (a line cut short on the way), so the DU is read whole."""
    frames = []
    for kind, args in block:
        seq = (seq + 1) % SEQ_MODULO
        body = b"%d %s %s" % (seq, kind, args)
        frame = b"$%s*%04X\n" % (body, binascii.crc_hqx(body, 0xFFFF))
        if len(frame) > MAX_BLOCK_FRAME + 1:
            raise ValueError("a block frame longer than MAX_BLOCK_FRAME")
        frames.append(frame)
    payload = b"".join(frames)
    head_kind, head_args = header(len(payload))
    first = (seq - len(block)) % SEQ_MODULO
    # the header's type and arguments are the Pi's own (numbers, FULL/DIFF): checked by
    # one match of their own, the frame made as encode_frame makes it
    try:
        head_body = " ".join((str(first), head_kind, *head_args)).encode("ascii")
    except UnicodeEncodeError:
        head_body = b""
    if _HEADER_RE.fullmatch(head_body) is None or head_body.count(b" ") != len(head_args) + 1:
        raise ValueError(f"bad block header: {head_kind!r} {head_args!r}")
    head = b"$%s*%04X\n" % (head_body, binascii.crc_hqx(head_body, 0xFFFF))
    return b"\n" + head + payload, (seq + 1) % SEQ_MODULO


def encode_update(
    seq: int, update: int, regions: bytes, full: bool, bodies: list[bytes], ask_over: int
) -> tuple[bytes, int, int, bool]:
    """Protocol 4's display update: the bytes :func:`encode_counted` makes for the header
    ``DU <update> <regions> <bytes> FULL|DIFF ACK|-`` and the DR frames ``bodies`` (each
    one's type and arguments, ``b"DR <box> <base64>"``), with no callback and no check of
    the header against the grammar (every part of it is a number or a word of the Pi's
    own). The DACK is asked for when the block is more than ``ask_over`` bytes. Returns
    the bytes, the next sequence number, the block's bytes and whether it asked."""
    frames = []
    crc = binascii.crc_hqx
    number = seq
    for body in bodies:
        number = number + 1 if number < SEQ_MODULO - 1 else 0
        line = b"%d %s" % (number, body)
        frame = b"$%s*%04X\n" % (line, crc(line, 0xFFFF))
        if len(frame) > MAX_BLOCK_FRAME + 1:
            raise ValueError("a block frame longer than MAX_BLOCK_FRAME")
        frames.append(frame)
    payload = b"".join(frames)
    size = len(payload)
    ask = size > ask_over
    head = b"%d DU %d %s %d %s" % (
        seq,
        update,
        regions,
        size,
        _FULL_ASK[full, ask],
    )
    data = b"\n$%s*%04X\n%s" % (head, crc(head, 0xFFFF), payload)
    return data, number + 1 if number < SEQ_MODULO - 1 else 0, size, ask


_FULL_ASK: Final = {
    (full, ask): (b"FULL " if full else b"DIFF ") + (b"ACK" if ask else b"-")
    for full in (False, True)
    for ask in (False, True)
}


#: a counted block's header (``DU <update> <regions> <bytes> FULL|DIFF [ACK|-]``, its sequence
#: number first): short enough for any frame, so its length needs no check of its own
_HEADER_RE: Final = re.compile(rb"(?:0|[1-9][0-9]{0,4}) [A-Z]{1,8}(?: (?:[0-9A-Z]{1,8}|-)){0,5}")


_FRAME_RE: Final = re.compile(
    rb"\$((0|[1-9][0-9]{0,4}) ([A-Z]{1,8})((?: [!-)+-~]{1,32})*))\*([0-9A-F]{4})"
)


def parse_frame(line: bytes) -> tuple[int, str, tuple[str, ...]]:
    """Check a line's framing and checksum; return (seq, type, args).

    ``line`` excludes the terminator.  Raises FrameError("oversized" |
    "garbage" | "checksum").
    """
    if len(line) > MAX_FRAME:
        raise FrameError(OVERSIZED, f"{len(line)} bytes")
    match = _FRAME_RE.fullmatch(line)
    if match is None:
        raise FrameError(GARBAGE)
    body, seq_text, kind, arg_text, crc_text = match.groups()
    seq = int(seq_text)
    if seq >= SEQ_MODULO:
        raise FrameError(GARBAGE, "sequence number out of range")
    if crc16(body) != int(crc_text, 16):
        raise FrameError(CHECKSUM)
    args = tuple(arg_text.decode("ascii").split(" ")[1:]) if arg_text else ()
    return seq, kind.decode("ascii"), args


_DIGITS: Final = re.compile(r"[0-9]{1,10}")
_FIRMWARE: Final = re.compile(r"[0-9A-Za-z._+-]{1,16}")
_SERIAL: Final = re.compile(r"[0-9A-Fa-f]{1,32}")
_UID: Final = re.compile(r"[0-9A-F]{8}|[0-9A-F]{14}|[0-9A-F]{20}")
_SESSION: Final = re.compile(r"0|[1-9][0-9]{0,4}")


def decode_message(kind: str, args: tuple[str, ...]) -> NodeEvent:
    """Turn a node -> Pi message into an event.

    Raises FrameError("unknown" | "malformed" | "version").
    """
    if kind in ("TAGON", "TAGOFF"):
        if len(args) != 1 or not _UID.fullmatch(args[0]):
            raise FrameError(MALFORMED, kind)
        uid = bytes.fromhex(args[0])
        return TagArrived(uid) if kind == "TAGON" else TagLeft(uid)
    if kind == "TAGMANY":
        if args:
            raise FrameError(MALFORMED, kind)
        return TagConflict()
    if kind in ("PRESS", "HOLD"):
        if len(args) != 1 or args[0] not in BUTTONS:
            raise FrameError(MALFORMED, kind)
        return ButtonPressed(args[0]) if kind == "PRESS" else ButtonHeld(args[0])
    if kind in ("STUCK", "FREED"):
        if len(args) != 1 or args[0] not in BUTTONS:
            raise FrameError(MALFORMED, kind)
        return ButtonStuck(args[0], kind == "STUCK")
    if kind == "HB":
        if (
            len(args) not in (3, 4)
            or not _DIGITS.fullmatch(args[0])
            or not _DIGITS.fullmatch(args[1])
            or args[2] not in ("OK", "NONE")
        ):
            raise FrameError(MALFORMED, kind)
        written = None
        if len(args) == 4 and args[3] != "-":  # protocol 4: the last update written whole
            if not _UPDATE.fullmatch(args[3]) or int(args[3]) >= SEQ_MODULO:
                raise FrameError(MALFORMED, kind)
            written = int(args[3])
        return Heartbeat(int(args[0]), int(args[1]), args[2] == "OK", written)
    if kind == "HELLO":
        # The version comes first: another version's HELLO may have other arguments.
        if not args or not re.fullmatch(r"[0-9]{1,5}", args[0]):
            raise FrameError(MALFORMED, kind)
        if int(args[0]) not in PROTOCOL_VERSIONS:
            raise FrameError(
                VERSION,
                f"node speaks protocol {args[0]}, the table "
                f"{_VERSIONS_SAID}: "
                "update the node's firmware (firmware/README.md)",
            )
        if (
            len(args) != 6
            or not _FIRMWARE.fullmatch(args[1])
            or not re.fullmatch(r"-|[0-5]", args[2])
            or not _SERIAL.fullmatch(args[3])
            or not re.fullmatch(r"[0-9A-F]{2}", args[4])
            or not (args[5] == "-" or _SESSION.fullmatch(args[5]))
            or (args[5] != "-" and int(args[5]) >= SEQ_MODULO)
        ):
            raise FrameError(MALFORMED, kind)
        seat = None if args[2] == "-" else int(args[2])
        session = None if args[5] == "-" else int(args[5])
        return Hello(seat, args[1], args[3].lower(), int(args[0]), int(args[4], 16), session)
    if kind in _DISPLAY_MESSAGES:
        return _decode_display(kind, args)
    raise FrameError(UNKNOWN, kind)


#: the versions the Pi speaks, as a message says them ("2, 3 or 4")
_VERSIONS_SAID: Final = ", ".join(map(str, PROTOCOL_VERSIONS[:-1])) + f" or {PROTOCOL_VERSIONS[-1]}"
VERSIONS_SAID_ES: Final = (
    ", ".join(map(str, PROTOCOL_VERSIONS[:-1])) + f" o {PROTOCOL_VERSIONS[-1]}"
)
_DISPLAY_MESSAGES: Final = ("PANEL", "DACK", "DLOST")
_UPDATE: Final = re.compile(r"0|[1-9][0-9]{0,4}")


def _decode_display(kind: str, args: tuple[str, ...]) -> DisplayEvent:
    if kind == "PANEL":
        if len(args) != 3 or args[2] not in ("OK", "MISSING"):
            raise FrameError(MALFORMED, kind)
        if args[0] not in PANEL_KINDS or args[1] not in ("3C", "3D"):
            raise FrameError(MALFORMED, kind)
        return PanelReport(args[0], int(args[1], 16), args[2] == "OK")
    if len(args) != 1 or not _UPDATE.fullmatch(args[0]) or int(args[0]) >= SEQ_MODULO:
        raise FrameError(MALFORMED, kind)
    update = int(args[0])
    return DisplayAck(update) if kind == "DACK" else DisplayLost(update)


class FrameDecoder:
    """Splits the byte stream into lines and turns valid frames into events.

    Every rejected line is counted in ``stats`` under its reason and passed to
    ``on_reject(reason, line)``.  CR and LF both end a line; empty lines are
    ignored; a line longer than MAX_FRAME is dropped up to its terminator.
    """

    def __init__(self, on_reject: Callable[[str, bytes], None] | None = None) -> None:
        self.on_reject = on_reject
        self._lock = threading.Lock()
        self._stats: Counter[str] = Counter(
            {
                key: 0
                for key in (FRAMES, SEQ_GAP, CALLBACK_ERRORS, STALE, REPL_RESETS, *REJECT_REASONS)
            }
        )
        self._frames = 0  # the ``frames`` counter: counted by the one thread that feeds
        self._buf = bytearray()
        self._skipping = False
        self._expected_seq: int | None = None
        # A card's events read the short way, one object a card and kind (the events are
        # frozen values: the same card lifted again is the same TagLeft), by the message
        # as the frame writes it (``TAGOFF 04A1B2C3``): no id decoded, no event built for
        # a card seen before; and for one of its frames that comes in sequence, no match
        # run either (its sequence number and checksum written out as they must read and
        # compared whole). Only a message a match took is kept, so a frame read that way
        # is one the match would take, to the byte. At most TAG_EVENTS_KEPT (forgotten
        # all at once past that).
        self._seen: dict[bytes, TagArrived | TagLeft] = {}

    @property
    def frames(self) -> int:
        """Valid frames so far (the ``frames`` counter, without copying them all)."""
        return self._frames

    @property
    def stats(self) -> dict[str, int]:
        """A snapshot of the counters: frames, seq_gap and one per reject reason."""
        with self._lock:
            snapshot = dict(self._stats)
        snapshot[FRAMES] = self._frames
        return snapshot

    def count(self, key: str) -> None:
        """One more of ``key`` (a reject reason, a gap, ...; frames are counted as they
        are accepted)."""
        with self._lock:
            self._stats[key] += 1

    def reset(self) -> None:
        """Forget partial input and sequence state (a new connection); keep the counters."""
        self._buf.clear()
        self._skipping = False
        self._expected_seq = None

    def lone_frame(self, data: bytes) -> NodeEvent | None:
        """The event that ``data`` is, when it is exactly one whole valid frame of those
        a node sends most (``DACK``, ``HB``, ``PRESS``, ``HOLD``, ``TAGON``, ``TAGOFF``)
        at the start of a line, nothing held from an earlier read: counted and its
        sequence number checked as :meth:`feed` would. None (nothing taken) for anything
        else: it goes to :meth:`feed`. A read of the port is most often one frame alone:
        a display update's DACK, a button, a card laid or lifted."""
        if self._buf or self._skipping:
            return None
        # the message's first letter (after "$<seq> ") says which match may take it
        start = data.find(b" ") + 1
        first = data[start : start + 1]
        if first == b"D":
            match = _FAST_DACK.fullmatch(data)  # the commonest on a node's panel
            if match is not None:
                return self._fast_ack(match)
        elif first == b"T":
            # a card seen before, in sequence (most: a card is laid and lifted again)
            expected = self._expected_seq
            message = data[start:-6]
            event = self._seen.get(message)
            if event is not None and expected is not None:
                body = b"%d %s" % (expected, message)  # the frame it must be, to the byte
                if data == b"$%s*%04X\n" % (body, binascii.crc_hqx(body, 0xFFFF)):
                    self._frames += 1
                    self._expected_seq = (expected + 1) % SEQ_MODULO
                    return event
            match = _FAST_TAG.fullmatch(data)  # two a card, laid and lifted
            if match is not None:
                body, seq_text, kind, uid, crc_text = match.groups()
                seq = int(seq_text)
                if seq >= SEQ_MODULO or binascii.crc_hqx(body, 0xFFFF) != int(crc_text, 16):
                    return None
                message = body[len(seq_text) + 1 :]
                event = self._seen.get(message)
                if event is None:
                    tag = TagLeft if kind == b"TAGOFF" else TagArrived
                    event = self._keep(message, tag(binascii.a2b_hex(uid)))
                # _accepted's, for a frame that is no HELLO
                self._frames += 1
                expected = self._expected_seq
                if expected is not None and seq != expected:
                    self.count(SEQ_GAP)
                self._expected_seq = (seq + 1) % SEQ_MODULO
                return event
        match = _FAST_FRAME.fullmatch(data)
        return None if match is None else self._fast_frame(match)

    def _keep(self, message: bytes, event: TagArrived | TagLeft) -> TagArrived | TagLeft:
        """``event`` kept for the next frame of that card and kind (``lone_frame``)."""
        seen = self._seen
        if len(seen) >= TAG_EVENTS_KEPT:  # ids from everywhere: a bad node, a flood
            seen.clear()
        seen[message] = event
        return event

    def _fast_ack(self, match: re.Match[bytes]) -> DisplayAck | None:
        """The DACK a ``_FAST_DACK`` match is, counted and its sequence checked; None
        when its numbers or its checksum leave it to the general way."""
        body, seq_text, update, crc_text = match.groups()
        seq, number = int(seq_text), int(update)
        if (
            seq >= SEQ_MODULO
            or number >= SEQ_MODULO
            or binascii.crc_hqx(body, 0xFFFF) != int(crc_text, 16)
        ):
            return None
        event = DisplayAck(number)
        self._accepted(seq, event)
        return event

    def _fast_frame(self, match: re.Match[bytes]) -> NodeEvent | None:
        """The event a ``_FAST_FRAME`` match is, counted and its sequence checked; None
        when its numbers or its checksum leave it to the general way."""
        body, seq_text, *message, crc_text = match.groups()
        seq = int(seq_text)
        if seq >= SEQ_MODULO or binascii.crc_hqx(body, 0xFFFF) != int(crc_text, 16):
            return None
        event = _fast_event(*message)
        if event is not None:
            self._accepted(seq, event)
        return event

    def feed(self, data: bytes) -> list[NodeEvent]:
        """Take bytes as they arrive; return the events of the complete valid frames.

        The frames a node sends most (DACK, HB, PRESS, HOLD, TAGON, TAGOFF), whole and
        LF-ended at the start of a line, are read by one match (``_FAST_FRAME``) that
        checks what the line grammar and the message's own checks would; anything else,
        or one of those the match leaves in doubt (a checksum, a number out of range),
        goes the general way from its first byte on: the same events, counters and
        rejections."""
        events: list[NodeEvent] = []
        at = 0
        if not self._buf and not self._skipping:
            dack, fast = _FAST_DACK.match, _FAST_FRAME.match
            size = len(data)
            while at < size:
                event: NodeEvent | None
                match = dack(data, at)  # the most frequent: one a display update
                if match is not None:
                    event = self._fast_ack(match)
                else:
                    match = fast(data, at)
                    if match is None:
                        break
                    event = self._fast_frame(match)
                if event is None:
                    break
                events.append(event)
                at = match.end()
            if at == size:
                return events
            if at:
                data = data[at:]
        for line in self._lines(data):
            event = self.decode_line(line)
            if event is not None:
                events.append(event)
        return events

    def _lines(self, data: bytes) -> list[bytes]:
        lines: list[bytes] = []
        buf = self._buf
        for chunk in re.split(rb"([\r\n])", data):
            if chunk in (b"\r", b"\n"):
                if self._skipping:
                    self._skipping = False
                elif buf:
                    lines.append(bytes(buf))
                buf.clear()
            elif chunk and not self._skipping:
                if len(buf) + len(chunk) > MAX_FRAME:
                    lines.append(bytes(buf) + chunk[: MAX_FRAME + 1 - len(buf)])
                    buf.clear()
                    self._skipping = True
                else:
                    buf += chunk
        return lines

    def decode_line(self, line: bytes) -> NodeEvent | None:
        """Validate one line (no terminator); return its event, or None if rejected."""
        if not line:
            return None
        try:
            seq, kind, args = parse_frame(line)
            event = decode_message(kind, args)
        except FrameError as error:
            self.count(error.reason)
            if self.on_reject is not None:
                self.on_reject(error.reason, line)
            return None
        self._accepted(seq, event)
        return event

    def _accepted(self, seq: int, event: NodeEvent) -> None:
        """A valid frame: counted, its sequence number checked against the last's. On the
        one thread that feeds the decoder (the loop's, or a link's own): the frame count
        takes no lock, a ``stats`` snapshot made meanwhile on another thread may have it
        one frame behind its gap count."""
        self._frames += 1
        expected = self._expected_seq
        # A HELLO starts a new count (the node may have restarted).
        if expected is not None and seq != expected and not isinstance(event, Hello):
            self.count(SEQ_GAP)
        self._expected_seq = (seq + 1) % SEQ_MODULO


# The frames a node sends most, whole with their LF, each message's arguments as
# decode_message checks them (the numbers' ranges and the checksum are checked after).
_FAST_FRAME: Final = re.compile(
    rb"\$((0|[1-9][0-9]{0,4}) (?:"
    rb"(DACK) (0|[1-9][0-9]{0,4})"
    rb"|(HB) ([0-9]{1,10}) ([0-9]{1,10}) (OK|NONE)(?: (-|0|[1-9][0-9]{0,4}))?"
    rb"|(PRESS|HOLD) (" + b"|".join(name.encode() for name in BUTTONS) + rb")"
    rb"|(TAGON|TAGOFF) ([0-9A-F]{8}|[0-9A-F]{14}|[0-9A-F]{20})"
    rb"))\*([0-9A-F]{4})\n"
)


_FAST_TAG: Final = re.compile(
    rb"\$((0|[1-9][0-9]{0,4}) (TAGON|TAGOFF) ([0-9A-F]{8}|[0-9A-F]{14}|[0-9A-F]{20}))"
    rb"\*([0-9A-F]{4})\n"
)


_FAST_DACK: Final = re.compile(
    rb"\$((0|[1-9][0-9]{0,4}) DACK (0|[1-9][0-9]{0,4}))\*([0-9A-F]{4})\n"
)


def _fast_event(
    dack: bytes | None,
    update: bytes | None,
    hb: bytes | None,
    uptime: bytes | None,
    reads: bytes | None,
    reader: bytes | None,
    written: bytes | None,
    press: bytes | None,
    button: bytes | None,
    tag: bytes | None,
    uid: bytes | None,
) -> NodeEvent | None:
    """The event of a ``_FAST_FRAME`` match's message groups, or None if the general
    way must judge it (a number out of range)."""
    if dack is not None and update is not None:
        number = int(update)
        return DisplayAck(number) if number < SEQ_MODULO else None
    if hb is not None and uptime is not None and reads is not None:
        said = None if written is None or written == b"-" else int(written)
        if said is not None and said >= SEQ_MODULO:
            return None
        return Heartbeat(int(uptime), int(reads), reader == b"OK", said)
    if press is not None and button is not None:
        name = button.decode("ascii")
        return ButtonPressed(name) if press == b"PRESS" else ButtonHeld(name)
    if uid is None:  # pragma: no cover - the pattern has no other alternative
        return None
    card = bytes.fromhex(uid.decode("ascii"))
    return TagArrived(card) if tag == b"TAGON" else TagLeft(card)
