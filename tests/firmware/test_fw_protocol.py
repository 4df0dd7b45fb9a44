"""The node side of the line protocol: checksum vectors, framing, validation."""

from __future__ import annotations

import pytest
from fw_checks import COMMAND_REJECTIONS, REJECTIONS
from hypothesis import given
from hypothesis import strategies as st
from seatnode import protocol
from seatnode.protocol import ProtocolError

# Test vectors from firmware/PROTOCOL.md.
VECTORS = [
    (b"$0 HB*C20C", 0, "HB", []),
    (b"$0 HELLO 2 0*ECD6", 0, "HELLO", ["2", "0"]),
    (b"$0 TAGMANY*7DDD", 0, "TAGMANY", []),
    (b"$0 IDENT 10*9687", 0, "IDENT", ["10"]),
    (b"$0 LED SLOW*7DBC", 0, "LED", ["SLOW"]),
    (b"$0 RESET*F1F5", 0, "RESET", []),
    (b"$0 REPL*C0D1", 0, "REPL", []),
    (b"$0 TAGON 04A224B2C55E80*F434", 0, "TAGON", ["04A224B2C55E80"]),
    (b"$0 PRESS truco*B3D2", 0, "PRESS", ["truco"]),
    (
        b"$0 HELLO 2 0.2.0 2 e6614103e7ab1234 92 -*4564",
        0,
        "HELLO",
        ["2", "0.2.0", "2", "e6614103e7ab1234", "92", "-"],
    ),
]


def test_crc16_check_value() -> None:
    assert protocol.crc16(b"123456789") == 0x29B1  # CRC-16/CCITT-FALSE check value
    assert protocol.crc16(b"") == 0xFFFF


@pytest.mark.parametrize(("line", "seq", "kind", "args"), VECTORS)
def test_vectors_parse_and_encode(line: bytes, seq: int, kind: str, args: list[str]) -> None:
    assert protocol.parse(line) == (seq, kind, args)
    assert protocol.encode(seq, kind, args) == line + b"\n"


@pytest.mark.parametrize(("line", "reason"), REJECTIONS)
def test_rejections(line: bytes, reason: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        protocol.parse(line)
    assert caught.value.reason == reason


def test_sequence_numbers_wrap() -> None:
    seq = protocol.Sequencer()
    seq.value = 65534
    assert [seq.next() for _ in range(3)] == [65534, 65535, 0]
    assert protocol.parse(protocol.encode(65535, "HB").strip())[0] == 65535


@pytest.mark.parametrize(
    ("kind", "args", "expected"),
    [
        ("HB", [], None),
        ("RESET", [], None),
        ("REPL", [], None),
        ("HELLO", ["2", "0"], 0),
        ("HELLO", ["2", "65535"], 65535),
        ("IDENT", ["0"], 0),
        ("IDENT", ["600"], 600),
        ("LED", ["FAST"], "FAST"),
    ],
)
def test_commands_accepted(kind: str, args: list[str], expected: object) -> None:
    assert protocol.check_command(kind, args) == expected


@pytest.mark.parametrize(("kind", "args", "reason"), COMMAND_REJECTIONS)
def test_commands_rejected(kind: str, args: list[str], reason: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        protocol.check_command(kind, args)
    assert caught.value.reason == reason


def test_line_reader_splits_on_cr_and_lf_and_drops_empty_lines() -> None:
    reader = protocol.LineReader()
    assert reader.feed(b"$0 HB*C20C\r\n$1 H") == [b"$0 HB*C20C"]
    assert reader.feed(b"B*1234\r\r\n\n") == [b"$1 HB*1234"]
    assert reader.feed(b"typed by hand\r") == [b"typed by hand"]


def test_line_reader_reports_an_oversized_line_once_and_resyncs() -> None:
    reader = protocol.LineReader()
    out = reader.feed(b"x" * 500)
    out += reader.feed(b"y" * 500 + b"\n$0 HB*C20C\n")
    assert out == [None, b"$0 HB*C20C"]
    assert reader.feed(b"z" * protocol.MAX_FRAME + b"\n") == [b"z" * protocol.MAX_FRAME]


def test_encode_refuses_frames_over_the_limit() -> None:
    with pytest.raises(ValueError):
        protocol.encode(1, "PRESS", ["x" * 32, "y" * 32, "z"])


def test_uid_hex() -> None:
    assert protocol.uid_hex(bytes.fromhex("04a224b2c55e80")) == "04A224B2C55E80"


args_st = st.lists(
    st.text(
        st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="*"),
        min_size=1,
        max_size=12,
    ),
    max_size=4,
)


@given(st.integers(0, 65535), st.from_regex(r"[A-Z]{1,8}", fullmatch=True), args_st)
def test_encode_parse_round_trip(seq: int, kind: str, args: list[str]) -> None:
    frame = protocol.encode(seq, kind, args)
    assert frame.endswith(b"\n") and len(frame) <= protocol.MAX_FRAME + 1
    assert protocol.parse(frame[:-1]) == (seq, kind, args)


@given(st.binary(max_size=120))
def test_parse_never_raises_anything_but_protocol_error(data: bytes) -> None:
    try:
        protocol.parse(data)
    except ProtocolError as error:
        assert error.reason in ("oversized", "garbage", "checksum")


def test_every_frame_in_protocol_md_is_valid() -> None:
    """The example and ready-made lines in PROTOCOL.md must carry correct checksums."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "firmware" / "PROTOCOL.md").read_text()
    frames = re.findall(r"\$[0-9]+ [A-Z]+[^*`|\n]*\*[0-9A-F]{4}", doc)
    assert len(frames) >= 25
    for frame in frames:
        protocol.parse(frame.encode())  # raises on a wrong checksum
    for body, crc in re.findall(r"^\| `([^`]+)` +\| `([0-9A-F]{4})` \|", doc, re.MULTILINE):
        assert protocol.crc16(body.encode()) == int(crc, 16), body
