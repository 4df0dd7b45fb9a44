"""The seat node's frame codec (controller.hal.frames): the vectors of PROTOCOL.md,
messages decoded and refused, the firmware's own module and the Pi's agreeing both ways,
the decoder's reassembly and counters."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st
from seatnode import FIRMWARE_VERSION
from seatnode import protocol as fw
from seatnode.node import NodeApp

from controller.hal import events as ev
from controller.hal import frames as fr
from controller.hal.events import PROTOCOL_VERSION as NEWEST
from controller.hal.events import (
    ButtonHeld,
    ButtonPressed,
    Heartbeat,
    Hello,
    LinkEvent,
    TagArrived,
    TagConflict,
    TagLeft,
)
from controller.hal.frames import FrameDecoder, FrameError

UID = bytes.fromhex("04A224B2C55E80")
SERIAL = "e6614103e7ab1234"


# -- frames ---------------------------------------------------------------------------

VECTORS = [
    (b"$0 HB*C20C", "HB", ()),
    (b"$0 TAGON 04A224B2C55E80*F434", "TAGON", ("04A224B2C55E80",)),
    (b"$0 PRESS truco*B3D2", "PRESS", ("truco",)),
    (b"$0 TAGMANY*7DDD", "TAGMANY", ()),
    (
        b"$0 HELLO 2 0.2.0 2 e6614103e7ab1234 92 -*4564",
        "HELLO",
        ("2", "0.2.0", "2", SERIAL, "92", "-"),
    ),
]


@pytest.mark.parametrize(("line", "kind", "args"), VECTORS)
def test_protocol_md_vectors(line: bytes, kind: str, args: tuple[str, ...]) -> None:
    assert fr.parse_frame(line) == (0, kind, args)
    assert fr.encode_frame(0, kind, *args) == line + b"\n"


def test_crc_check_value() -> None:
    assert fr.crc16(b"123456789") == 0x29B1


@pytest.mark.parametrize(
    ("kind", "args", "event"),
    [
        ("TAGON", ("04A224B2C55E80",), TagArrived(UID)),
        ("TAGOFF", ("DEADBEEF",), TagLeft(bytes.fromhex("DEADBEEF"))),
        ("PRESS", ("no_quiero",), ButtonPressed("no_quiero")),
        ("HOLD", ("mazo",), ButtonHeld("mazo")),
        ("HB", ("12", "3", "OK"), Heartbeat(12, 3, True)),
        ("HB", ("0", "0", "NONE"), Heartbeat(0, 0, False)),
        ("TAGMANY", (), TagConflict()),
        ("HELLO", ("2", "0.2.0", "5", "E661", "92", "-"), Hello(5, "0.2.0", "e661", 2, 0x92)),
        (
            "HELLO",
            ("2", "0.1.0", "-", "e661", "88", "4711"),
            Hello(None, "0.1.0", "e661", 2, 0x88, 4711),
        ),
    ],
)
def test_decode_messages(kind: str, args: tuple[str, ...], event: LinkEvent) -> None:
    assert fr.decode_message(kind, args) == event


@pytest.mark.parametrize(
    ("kind", "args", "reason"),
    [
        ("TAGON", ("04A2",), "malformed"),
        ("TAGON", ("04a224b2c55e80",), "malformed"),  # UIDs are upper-case hex
        ("PRESS", ("retruco",), "malformed"),
        ("HOLD", (), "malformed"),
        ("HB", ("1", "2"), "malformed"),
        ("HB", ("1", "2", "MAYBE"), "malformed"),
        ("TAGMANY", ("04A2",), "malformed"),
        ("HELLO", ("2", "0.1.0", "6", "e661", "92", "-"), "malformed"),
        ("HELLO", ("2", "0.1.0", "1", "e661"), "malformed"),  # version 1's arguments
        ("HELLO", ("2", "0.1.0", "1", "e661", "9", "-"), "malformed"),
        ("HELLO", ("2", "0.1.0", "1", "e661", "92", "007"), "malformed"),
        ("HELLO", ("2", "0.1.0", "1", "e661", "92", "65536"), "malformed"),
        ("HELLO", ("1", "0.1.0", "1", "e661"), "version"),  # a node not updated
        ("HELLO", ("x",), "malformed"),
        ("LED", ("ON",), "unknown"),  # a command, not something a node sends
        ("XYZZY", (), "unknown"),
    ],
)
def test_decode_rejections(kind: str, args: tuple[str, ...], reason: str) -> None:
    with pytest.raises(FrameError) as caught:
        fr.decode_message(kind, args)
    assert caught.value.reason == reason


def test_encode_refuses_what_the_protocol_cannot_carry() -> None:
    for kind, args in [("led", ("ON",)), ("LED", ("a b",)), ("LED", ("*",)), ("LED", ("",))]:
        with pytest.raises(ValueError):
            fr.encode_frame(0, kind, *args)
    with pytest.raises(ValueError):
        fr.encode_frame(0, "PRESS", "x" * 32, "y" * 32, "z")


# -- interoperability: the firmware's module and this one agree both ways --------------

node_events = st.one_of(
    st.binary(min_size=4, max_size=4).map(lambda u: ("TAGON", u)),
    st.binary(min_size=7, max_size=7).map(lambda u: ("TAGOFF", u)),
    st.binary(min_size=10, max_size=10).map(lambda u: ("TAGON", u)),
    st.sampled_from(fw.BUTTONS).map(lambda b: ("PRESS", b)),
    st.sampled_from(fw.BUTTONS).map(lambda b: ("HOLD", b)),
)


@given(st.integers(0, 65535), node_events)
def test_firmware_frames_decode_on_the_host(seq: int, kind_value: tuple[str, object]) -> None:
    kind, value = kind_value
    arg = fw.uid_hex(value) if isinstance(value, bytes) else str(value)
    frame = fw.encode(seq, kind, [arg])
    decoder = FrameDecoder()
    events = decoder.feed(frame)
    expected = {
        "TAGON": TagArrived,
        "TAGOFF": TagLeft,
        "PRESS": ButtonPressed,
        "HOLD": ButtonHeld,
    }[kind](value)
    assert events == [expected]
    assert fr.parse_frame(frame.rstrip())[0] == seq


@given(
    st.integers(0, 65535),
    st.integers(0, 10**9),
    st.integers(0, 10**6),
    st.booleans(),
    st.one_of(st.none(), st.integers(0, 5)),
)
def test_firmware_hello_and_heartbeat_decode_on_the_host(
    seq: int, uptime_ms: int, errors: int, reader_ok: bool, seat: int | None
) -> None:
    frames: list[bytes] = []
    app = fw_app(frames.append, seat)
    app.rx_errors = errors
    app.reader_ok = reader_ok
    app._uptime_ms = uptime_ms
    app.seq.value = seq
    app.send_heartbeat()
    decoder = FrameDecoder()
    events = decoder.feed(b"".join(frames))
    assert events == [
        Hello(seat, FIRMWARE_VERSION, SERIAL, NEWEST, 0x92),
        Heartbeat(uptime_ms // 1000, errors, reader_ok),
    ]


@given(st.one_of(st.none(), st.integers(0, 65535)), st.sampled_from(["-", "00", "65536", "x"]))
def test_a_heartbeat_of_protocol_4_says_the_update_written(written: int | None, bad: str) -> None:
    """Protocol 4's HB ends in the last display update written whole (or ``-``); the
    host takes 0 to 65535 without leading zeros, on the fast path and the general one
    (a frame after a partial line), and rejects anything else as malformed."""
    text = "-" if written is None else str(written)
    frame = fr.encode_frame(5, "HB", "12", "0", "OK", text)
    for prefix in (b"", b"$1 PRE"):  # whole, or after a cut line (the general way)
        decoder = FrameDecoder()
        assert decoder.feed(prefix + b"\n" + frame if prefix else frame) == [
            Heartbeat(12, 0, True, written)
        ]
    decoder = FrameDecoder()
    events = decoder.feed(fr.encode_frame(6, "HB", "12", "0", "OK", bad))
    assert events == ([Heartbeat(12, 0, True)] if bad == "-" else [])
    assert decoder.stats["malformed"] == (0 if bad == "-" else 1)


def fw_app(write: Callable[[bytes], None], seat: int | None = 0) -> NodeApp:
    return NodeApp(write, seat, SERIAL, 0, reader_version=0x92)


@given(
    st.integers(0, 65535),
    st.one_of(
        st.just(("HB",)),
        st.just(("RESET",)),
        st.just(("REPL",)),
        st.integers(0, 65535).map(lambda session: ("HELLO", "2", str(session))),
        st.integers(0, 600).map(lambda s: ("IDENT", str(s))),
        st.sampled_from(fr.LED_MODES).map(lambda m: ("LED", m)),
    ),
)
def test_host_commands_parse_in_the_firmware(seq: int, command: tuple[str, ...]) -> None:
    frame = fr.encode_frame(seq, *command)
    got_seq, kind, args = fw.parse(frame.rstrip(b"\n"))
    assert (got_seq, kind, tuple(args)) == (seq, command[0], command[1:])
    fw.check_command(kind, args)  # no ProtocolError


@given(st.binary(max_size=100))
def test_both_crc_implementations_agree(data: bytes) -> None:
    assert fr.crc16(data) == fw.crc16(data)


# -- the decoder ---------------------------------------------------------------------


def test_decoder_reassembles_frames_split_anywhere() -> None:
    stream = b"".join(fw.encode(i, "PRESS", [fw.BUTTONS[i % 8]]) for i in range(50))
    rng = random.Random(7)
    decoder = FrameDecoder()
    events: list[object] = []
    pos = 0
    while pos < len(stream):
        step = rng.randint(1, 13)
        events += decoder.feed(stream[pos : pos + step])
        pos += step
    assert events == [ButtonPressed(fw.BUTTONS[i % 8]) for i in range(50)]
    assert decoder.stats["frames"] == 50
    assert decoder.stats["seq_gap"] == 0


def test_decoder_counts_every_kind_of_bad_line() -> None:
    rejected: list[tuple[str, bytes]] = []
    decoder = FrameDecoder(on_reject=lambda reason, line: rejected.append((reason, line)))
    good = fw.encode(0, "PRESS", ["flor"])
    stream = (
        good
        + b"MicroPython v1.24.1 on 2024-11-29; Raspberry Pi Pico with RP2040\r\n"
        + b"$1 PRESS flor*0000\n"  # checksum
        + b"x" * 5000  # oversized, no terminator for a long time
        + b"\n"
        + fw.encode(2, "NOPE")  # unknown
        + fw.encode(3, "PRESS", ["retruco"])  # malformed
        + fw.encode(4, "HELLO", ["7", "9.9", "1", "ab"])  # version
        + b"\xff\xfe\x00\x03\r\n"  # garbage
        + fw.encode(9, "PRESS", ["flor"])  # gap: 5..8 missing
        + b"\r\n\r\n"  # empty lines are fine
    )
    events = decoder.feed(stream)
    assert events == [ButtonPressed("flor"), ButtonPressed("flor")]
    stats = decoder.stats
    assert {k: stats[k] for k in fr.REJECT_REASONS} == {
        "oversized": 1,
        "garbage": 2,
        "checksum": 1,
        "unknown": 1,
        "malformed": 1,
        "version": 1,
    }
    assert stats["frames"] == 2 and stats["seq_gap"] == 1
    assert [r for r, _ in rejected] == [
        "garbage",
        "checksum",
        "oversized",
        "unknown",
        "malformed",
        "version",
        "garbage",
    ]
    assert all(len(line) <= fr.MAX_FRAME + 1 for _, line in rejected)


def test_hello_restarts_the_sequence_without_a_gap() -> None:
    decoder = FrameDecoder()
    decoder.feed(fw.encode(40, "PRESS", ["flor"]) + fw.encode(41, "PRESS", ["flor"]))
    hello = fw.encode(0, "HELLO", ["2", "0.1.0", "0", "ab", "92", "-"])
    decoder.feed(hello + fw.encode(1, "HB", ["0", "0", "OK"]))
    assert decoder.stats["seq_gap"] == 0
    decoder.feed(fw.encode(65535, "PRESS", ["flor"]) + fw.encode(0, "PRESS", ["flor"]))
    assert decoder.stats["seq_gap"] == 1  # 1 -> 65535 is a gap, 65535 -> 0 is not


def test_stuck_and_freed_buttons_are_decoded_and_checked() -> None:
    """Issue 49: a button down for the node's stuck time (STUCK) and let go (FREED)."""
    assert fr.decode_message("STUCK", ("truco",)) == ev.ButtonStuck("truco", True)
    assert fr.decode_message("FREED", ("no_quiero",)) == ev.ButtonStuck("no_quiero", False)
    for kind, args in (("STUCK", ()), ("STUCK", ("boton",)), ("FREED", ("truco", "x"))):
        with pytest.raises(fr.FrameError) as info:
            fr.decode_message(kind, args)
        assert info.value.reason == fr.MALFORMED
    # the firmware's own frames, read back by the Pi's decoder
    decoder = fr.FrameDecoder()
    frames = fw.encode(0, fw.STUCK, ("mazo",)) + fw.encode(1, fw.FREED, ("mazo",))
    assert decoder.feed(frames) == [ev.ButtonStuck("mazo", True), ev.ButtonStuck("mazo", False)]
