"""Fuzz the host decoder with 100,000 random and mutated frames (seeded, deterministic).

The oracle is independent of controller.hal.seatlink: framing and checksum
come from the firmware's own parser (a separate, procedural implementation
with a bitwise CRC), the message checks are written here from the table in
firmware/PROTOCOL.md.  For every line the decoder must accept exactly what the
oracle accepts, with the same event, and reject everything else under the same
reason; nothing may raise.
"""

from __future__ import annotations

import random
import time
from collections import Counter

from seatnode import protocol as fw

from controller.hal import events as ev
from controller.hal import frames as fr

SEED = 20240607
FRAMES = 100_000
STREAM_FRAMES = 20_000
HEX = "0123456789ABCDEF"
FIRMWARE_CHARS = set("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz._+-")


# -- oracle ------------------------------------------------------------------------------


def expected_message(kind: str, args: list[str]) -> tuple[str, object]:
    """('ok', event) or ('reject', reason) for a frame that passed framing and CRC."""

    def digits(text: str, most: int) -> bool:
        return 1 <= len(text) <= most and all(c in "0123456789" for c in text)

    if kind in ("TAGON", "TAGOFF"):
        if len(args) != 1 or len(args[0]) not in (8, 14, 20) or any(c not in HEX for c in args[0]):
            return "reject", "malformed"
        uid = bytes(int(args[0][i : i + 2], 16) for i in range(0, len(args[0]), 2))
        return "ok", (ev.TagArrived(uid) if kind == "TAGON" else ev.TagLeft(uid))
    if kind in ("PRESS", "HOLD"):
        if len(args) != 1 or args[0] not in fw.BUTTONS:
            return "reject", "malformed"
        return "ok", (ev.ButtonPressed(args[0]) if kind == "PRESS" else ev.ButtonHeld(args[0]))
    if kind == "HB":
        if len(args) not in (3, 4) or not digits(args[0], 10) or not digits(args[1], 10):
            return "reject", "malformed"
        if args[2] not in ("OK", "NONE"):
            return "reject", "malformed"
        written = None  # protocol 4's fourth: the update written, "-" for none
        if len(args) == 4 and args[3] != "-":
            if not digits(args[3], 5) or int(args[3]) > 65535:
                return "reject", "malformed"
            if len(args[3]) > 1 and args[3][0] == "0":
                return "reject", "malformed"
            written = int(args[3])
        return "ok", ev.Heartbeat(int(args[0]), int(args[1]), args[2] == "OK", written)
    if kind == "TAGMANY":
        return ("ok", ev.TagConflict()) if not args else ("reject", "malformed")
    if kind == "HELLO":
        if not args or not digits(args[0], 5):
            return "reject", "malformed"
        if int(args[0]) not in (2, 3, 4, 5):
            return "reject", "version"  # checked first: other versions, other arguments
        if len(args) != 6:
            return "reject", "malformed"
        if not 1 <= len(args[1]) <= 16 or not set(args[1]) <= FIRMWARE_CHARS:
            return "reject", "malformed"
        if args[2] != "-" and args[2] not in ("0", "1", "2", "3", "4", "5"):
            return "reject", "malformed"
        if not 1 <= len(args[3]) <= 32 or any(c not in HEX for c in args[3].upper()):
            return "reject", "malformed"
        if len(args[4]) != 2 or any(c not in HEX for c in args[4]):
            return "reject", "malformed"
        session = args[5]
        if session != "-" and (not digits(session, 5) or (len(session) > 1 and session[0] == "0")):
            return "reject", "malformed"
        if session != "-" and int(session) > 65535:
            return "reject", "malformed"
        seat = None if args[2] == "-" else int(args[2])
        number = None if session == "-" else int(session)
        return "ok", ev.Hello(seat, args[1], args[3].lower(), 2, int(args[4], 16), number)
    if kind == "PANEL":  # PROTOCOL.md, "Display frames"
        if len(args) != 3 or args[0] not in ("ssd1306", "sh1106", "ssd1309"):
            return "reject", "malformed"
        if args[1] not in ("3C", "3D") or args[2] not in ("OK", "MISSING"):
            return "reject", "malformed"
        return "ok", ev.PanelReport(args[0], int(args[1], 16), args[2] == "OK")
    if kind in ("DACK", "DLOST"):
        if len(args) != 1 or not digits(args[0], 5) or int(args[0]) > 65535:
            return "reject", "malformed"
        if len(args[0]) > 1 and args[0][0] == "0":
            return "reject", "malformed"
        update = int(args[0])
        return "ok", (ev.DisplayAck(update) if kind == "DACK" else ev.DisplayLost(update))
    return "reject", "unknown"


def expected_line(line: bytes) -> tuple[str, object] | None:
    if not line:
        return None
    try:
        _seq, kind, args = fw.parse(line)
    except fw.ProtocolError as error:
        return "reject", error.reason
    return expected_message(kind, args)


# -- generator ---------------------------------------------------------------------------


def random_message(rng: random.Random) -> tuple[str, list[str]]:
    choice = rng.randrange(7)
    if choice == 6:  # the display messages, right and wrong
        return rng.choice(
            [
                ("PANEL", [rng.choice(("ssd1306", "sh1106", "ssd1309")), "3C", "OK"]),
                ("PANEL", ["sh1106", rng.choice(("3C", "3D", "3c", "78")), "MISSING"]),
                ("PANEL", ["st7735", "3C", "OK"]),
                ("PANEL", ["ssd1306", "3C"]),
                ("DACK", [str(rng.randrange(65536))]),
                ("DLOST", [str(rng.randrange(65536))]),
                ("DACK", [rng.choice(("65536", "007", "-1", "x"))]),
                ("DLOST", []),
            ]
        )
    if choice == 0:
        return rng.choice(["TAGON", "TAGOFF"]), [fw.uid_hex(rng.randbytes(rng.choice((4, 7, 10))))]
    if choice == 1:
        return rng.choice(["PRESS", "HOLD"]), [rng.choice(fw.BUTTONS)]
    if choice == 2:
        return "HB", [
            str(rng.randrange(10**6)),
            str(rng.randrange(100)),
            rng.choice(["OK", "NONE"]),
        ]
    if choice == 3:
        seat = rng.choice(["-", "0", "1", "2", "3", "4", "5"])
        reader = rng.choice(["92", "91", "88", "B2", "00", "FF"])
        session = rng.choice(["-", "0", str(rng.randrange(65536))])
        return "HELLO", ["2", "0.2.0", seat, rng.randbytes(8).hex(), reader, session]
    if choice == 4:  # structurally fine, semantically wrong, correct CRC
        return rng.choice(
            [
                ("NOPE", []),
                ("LED", ["ON"]),
                ("TAGON", [rng.randbytes(5).hex().upper()]),
                ("TAGON", [rng.randbytes(7).hex()]),
                ("PRESS", ["retruco"]),
                ("HOLD", []),
                ("HB", ["1", "2"]),
                ("HB", ["x", "0", "OK"]),
                ("HB", ["1", "0", "OK", rng.choice(("-", "0", "65535", "7", "07", "65536", "x"))]),
                ("HB", ["1", "0", "OK", "-", "-"]),
                ("HELLO", [str(rng.randrange(6, 99)), "0.1.0", "1", "ab"]),
                ("HELLO", ["1", "0.1.0", "1", "ab"]),
                ("HELLO", ["2", "0.1.0", "9", "ab", "92", "-"]),
                ("HELLO", ["2", "0.1.0", "1", "xyz", "92", "-"]),
                ("HELLO", ["2", "0.1.0", "1", "ab", "9a", "-"]),
                ("HELLO", ["2", "0.1.0", "1", "ab", "92", "01"]),
                ("HELLO", ["2", "0.1.0", "1", "ab", "92", "70000"]),
                ("HELLO", ["2", "0.1.0", "1", "ab"]),
                ("TAGMANY", []),
                ("TAGMANY", ["2"]),
            ]
        )
    return rng.choice(["PRESS", "HB", "TAGON"]), [
        "".join(
            rng.choice("!#$%&()+,-./0123456789:;<=>?@ABCxyz_~") for _ in range(rng.randint(1, 12))
        )
        for _ in range(rng.randint(0, 3))
    ]


def mutate(rng: random.Random, frame: bytes) -> bytes:
    data = bytearray(frame)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        op = rng.randrange(12)
        if op == 0 and data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif op == 1 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif op == 2:
            data.insert(rng.randrange(len(data) + 1), rng.randrange(256))
        elif op == 3 and data:
            del data[rng.randrange(len(data))]
        elif op == 4:
            del data[rng.randrange(len(data) + 1) :]
        elif op == 5 and data:
            i = rng.randrange(len(data))
            data[i:i] = data[i : i + rng.randint(1, 20)]
        elif op == 6 and len(data) > 1:
            i, j = rng.randrange(len(data)), rng.randrange(len(data))
            data[i], data[j] = data[j], data[i]
        elif op == 7:
            data = bytearray(rng.randbytes(rng.randint(0, 100)))
        elif op == 8:
            data = bytearray(
                "".join(rng.choice("$* 0123456789ABCDEF HELLO TAGON") for _ in range(40)).encode()
            )
        elif op == 9:
            data += b"A" * rng.randint(1, 200)
        elif op == 10:
            data = bytearray(data.lower())
        elif op == 11 and len(data) > 5:
            data[-rng.randint(1, 4)] = ord(rng.choice("0123456789ABCDEF"))
    return bytes(data)


def generate(rng: random.Random, count: int, allow_terminators: bool) -> list[bytes]:
    lines = []
    for _ in range(count):
        kind, args = random_message(rng)
        try:
            frame = fw.encode(rng.randrange(65536), kind, args).rstrip(b"\n")
        except ValueError:  # too long for a frame
            frame = b"$1 " + kind.encode() + b"*0000"
        if rng.random() < 0.75:
            frame = mutate(rng, frame)
        if not allow_terminators:
            frame = frame.replace(b"\n", b"\x00").replace(b"\r", b"\x00")
        lines.append(frame)
    return lines


# -- tests -------------------------------------------------------------------------------


def test_fuzz_100k_frames_line_by_line() -> None:
    rng = random.Random(SEED)
    lines = generate(rng, FRAMES, allow_terminators=False)
    rejected: list[str] = []
    decoder = fr.FrameDecoder(on_reject=lambda reason, _line: rejected.append(reason))
    expected_counts: Counter[str] = Counter()
    accepted = 0
    started = time.monotonic()
    for line in lines:
        before = len(rejected)
        event = decoder.decode_line(line)
        expected = expected_line(line)
        if expected is None:
            assert event is None and len(rejected) == before, line
        elif expected[0] == "ok":
            assert event == expected[1], line
            accepted += 1
        else:
            assert event is None, line
            assert rejected[before:] == [expected[1]], line
            expected_counts[str(expected[1])] += 1
    elapsed = time.monotonic() - started
    stats = decoder.stats
    assert stats["frames"] == accepted
    assert {r: stats[r] for r in fr.REJECT_REASONS} == {
        r: expected_counts[r] for r in fr.REJECT_REASONS
    }
    assert sum(expected_counts.values()) == len(rejected)
    # The mix really exercises every path.
    assert accepted > FRAMES // 10
    assert all(expected_counts[r] > 100 for r in fr.REJECT_REASONS), expected_counts
    assert elapsed < 45, f"fuzzing took {elapsed:.1f} s"


def test_fuzz_stream_with_random_chunks_and_terminators() -> None:
    rng = random.Random(SEED + 1)
    lines = generate(rng, STREAM_FRAMES, allow_terminators=True)
    stream = b"".join(line + rng.choice((b"\n", b"\r\n", b"\r", b"\n\n")) for line in lines)
    # Oracle: the firmware's line splitter, then the per-line oracle.
    expected_events: list[object] = []
    expected_counts: Counter[str] = Counter()
    for line in fw.LineReader().feed(stream):
        if line is None:
            expected_counts["oversized"] += 1
            continue
        result = expected_line(line)
        if result is None:
            continue
        if result[0] == "ok":
            expected_events.append(result[1])
        else:
            expected_counts[str(result[1])] += 1
    decoder = fr.FrameDecoder()
    events: list[object] = []
    pos = 0
    while pos < len(stream):
        step = rng.choice((1, 2, 7, 64, 200, 4096))
        events += decoder.feed(stream[pos : pos + step])
        pos += step
    assert events == expected_events
    stats = decoder.stats
    assert stats["frames"] == len(expected_events)
    assert {r: stats[r] for r in fr.REJECT_REASONS} == {
        r: expected_counts[r] for r in fr.REJECT_REASONS
    }
