"""The decoder's short way for the frames a node sends most (DACK, HB, PRESS, HOLD,
TAGON, TAGOFF): the same events, counters and rejections as the general way (each
line split off and checked by parse_frame and decode_message), whatever the frames."""

from __future__ import annotations

import random

import pytest

from controller.hal.events import DisplayAck, NodeEvent, TagArrived, TagLeft
from controller.hal.frames import (
    BUTTONS,
    TAG_EVENTS_KEPT,
    FrameDecoder,
    crc16,
    encode_frame,
)


def _general(stream: bytes) -> tuple[list[NodeEvent], list[tuple[str, bytes]], dict[str, int]]:
    """What the general way alone makes of a stream."""
    rejects: list[tuple[str, bytes]] = []
    decoder = FrameDecoder(on_reject=lambda reason, line: rejects.append((reason, line)))
    events = []
    for line in decoder._lines(stream):
        event = decoder.decode_line(line)
        if event is not None:
            events.append(event)
    return events, rejects, decoder.stats


def _fed(
    chunks: list[bytes],
) -> tuple[list[NodeEvent], list[tuple[str, bytes]], dict[str, int]]:
    rejects: list[tuple[str, bytes]] = []
    decoder = FrameDecoder(on_reject=lambda reason, line: rejects.append((reason, line)))
    events = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    return events, rejects, decoder.stats


def _frame(rnd: random.Random, seq: int) -> bytes:
    """A frame of a common kind, now and then spoiled in a way the short way must not
    take: a wrong checksum, numbers out of range or with leading zeros, a bad button,
    a UID of odd length, CR LF, a line cut short, the type in lower case."""
    kind = rnd.choice(["DACK", "HB", "PRESS", "HOLD", "TAGON", "TAGOFF", "DLOST", "PANEL"])
    args: list[str]
    if kind in ("DACK", "DLOST"):
        args = [rnd.choice(["0", "7", "65535", "65536", "99999", "017", str(rnd.randrange(70000))])]
    elif kind == "HB":
        args = [
            rnd.choice(["0", "00012", "9999999999", "99999999999", str(rnd.randrange(10**6))]),
            str(rnd.randrange(100)),
            rnd.choice(["OK", "NONE", "ok", "MAYBE"]),
        ]
    elif kind in ("PRESS", "HOLD"):
        args = [rnd.choice([*BUTTONS, "nope", "TRUCO"])]
    elif kind == "PANEL":
        args = ["ssd1306", "3C", "OK"]
    else:
        length = rnd.choice([8, 14, 20, 20, 10, 16])
        args = ["".join(rnd.choice("0123456789ABCDEF") for _ in range(length))]
    if rnd.random() < 0.1:
        args.append("X")  # an argument too many
    body = " ".join((str(seq), kind, *args)).encode()
    crc = crc16(body) ^ (1 if rnd.random() < 0.1 else 0)
    line = b"$%s*%04X" % (body, crc)
    spoil = rnd.random()
    if spoil < 0.05:
        line = line.lower()
    elif spoil < 0.1:
        line = line[: rnd.randrange(len(line))]
    return line + (b"\r\n" if rnd.random() < 0.1 else b"\n")


def _read_as_the_loop(
    chunks: list[bytes],
) -> tuple[list[NodeEvent], list[tuple[str, bytes]], dict[str, int]]:
    """As ``SeatLink._readable`` reads a port: a read that is one lone frame of the
    commonest (a DACK, a button, a card, a heartbeat) is taken by ``lone_frame``, any
    other by ``feed``."""
    rejects: list[tuple[str, bytes]] = []
    decoder = FrameDecoder(on_reject=lambda reason, line: rejects.append((reason, line)))
    events: list[NodeEvent] = []
    for chunk in chunks:
        event = decoder.lone_frame(chunk)
        if event is not None:
            events.append(event)
        else:
            events += decoder.feed(chunk)
    return events, rejects, decoder.stats


@pytest.mark.parametrize("seed", range(6))
def test_the_short_way_decodes_as_the_general_way(seed: int) -> None:
    rnd = random.Random(seed)
    frames = []
    seq = rnd.randrange(65536)
    for _ in range(600):
        seq = rnd.choice([seq + 1, seq + 1, seq + 1, seq + 2, 65536, 70000, 0])
        frames.append(_frame(rnd, seq % 100000))
        if rnd.random() < 0.03:
            frames.append(b"\x00garbage " * rnd.randrange(1, 20) + b"\n")
    stream = b"".join(frames)
    expected = _general(stream)
    assert _fed(frames) == expected  # a frame a read
    assert _fed([stream]) == expected  # all at once
    cuts = sorted(rnd.sample(range(1, len(stream)), 300))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    assert _fed(chunks) == expected  # cut anywhere
    # the loop's reads: a lone DACK taken whole, anything else fed (a DACK after a line
    # cut short, a spoiled one, one in a read with others, one cut in two)
    assert _read_as_the_loop(frames) == expected
    assert _read_as_the_loop(chunks) == expected


def test_a_dack_goes_the_short_way(monkeypatch: pytest.MonkeyPatch) -> None:
    decoder = FrameDecoder()

    def general(line: bytes) -> None:
        raise AssertionError(f"the general way for {line!r}")

    monkeypatch.setattr(decoder, "decode_line", general)
    data = b"".join(
        [
            encode_frame(4, "DACK", "17"),
            encode_frame(5, "HB", "1234", "5", "OK"),
            encode_frame(6, "PRESS", "quiero"),
            encode_frame(7, "TAGOFF", "04A1B2C3D4E5F6"),
        ]
    )
    assert len(decoder.feed(data)) == 4
    assert decoder.stats["frames"] == 4


def test_a_lone_dack_is_taken_only_whole_and_valid() -> None:
    decoder = FrameDecoder()
    good = encode_frame(4, "DACK", "17")
    ack = decoder.lone_frame(good)
    assert isinstance(ack, DisplayAck) and ack.update == 17
    assert decoder.stats["frames"] == 1
    for other in (
        good[:-1],  # no LF yet
        good + good,  # two of them: feed's
        good.replace(b"*", b"*0")[:-2] + b"\n",  # a checksum spoiled
        encode_frame(5, "DLOST", "17"),
        encode_frame(5, "DACK", "65535").replace(b"65535", b"65536"),
        b"\n" + encode_frame(5, "DACK", "1"),
    ):
        assert decoder.lone_frame(other) is None, other
    assert decoder.stats["frames"] == 1  # nothing it refused was counted
    decoder.feed(b"$5 DACK")  # half a frame held: the next read is the rest of it
    assert decoder.lone_frame(encode_frame(6, "DACK", "2")) is None


def test_a_lone_frame_is_taken_only_whole_and_valid() -> None:
    decoder = FrameDecoder()
    frames = [
        encode_frame(4, "DACK", "17"),
        encode_frame(5, "HB", "1234", "5", "OK", "17"),
        encode_frame(6, "PRESS", "quiero"),
        encode_frame(7, "HOLD", "mazo"),
        encode_frame(8, "TAGON", "04A1B2C3D4E5F6"),
        encode_frame(9, "TAGOFF", "04A1B2C3D4E5F6"),
    ]
    taken = [decoder.lone_frame(frame) for frame in frames]
    assert taken == FrameDecoder().feed(b"".join(frames))
    assert decoder.stats["frames"] == 6 and decoder.stats["seq_gap"] == 0
    press = encode_frame(10, "PRESS", "truco")
    for other in (
        press[:-1],  # no LF yet
        press + press,  # two of them: feed's
        press.replace(b"*", b"*0")[:-2] + b"\n",  # a checksum spoiled
        encode_frame(10, "PRESS", "nada"),  # no such button
        encode_frame(10, "TAGON", "04A1B2"),  # no such length of a card's id
        encode_frame(10, "HB", "1", "2", "OK", "65535").replace(b"65535", b"65536"),
        encode_frame(10, "DLOST", "17"),  # not one of the commonest
        b"\n" + press,
    ):
        assert decoder.lone_frame(other) is None, other
    assert decoder.stats["frames"] == 6  # nothing it refused was counted
    decoder.feed(b"$10 PRESS")  # half a frame held: the next read is the rest of it
    assert decoder.lone_frame(encode_frame(11, "TAGOFF", "04A1B2C3")) is None


def test_a_cards_events_read_the_short_way_are_its_own_however_many_cards_come() -> None:
    """A card seen before is not decoded again (its event kept, a frozen value); past
    ``TAG_EVENTS_KEPT`` cards the kept ones are forgotten, never mixed up."""
    decoder = FrameDecoder()
    uids = [bytes([7, n >> 8, n & 0xFF, 1]) for n in range(TAG_EVENTS_KEPT + 40)]
    seq = 0
    for _ in range(2):
        for uid in [*uids, uids[0]]:
            for kind, event in (("TAGON", TagArrived(uid)), ("TAGOFF", TagLeft(uid))):
                assert decoder.lone_frame(encode_frame(seq, kind, uid.hex().upper())) == event
                seq += 1
    assert decoder.stats["frames"] == seq and decoder.stats["seq_gap"] == 0


def _card_frame(rnd: random.Random, seq: int, uids: list[str]) -> bytes:
    """A card of a few laid or lifted, now and then spoiled where only its sequence
    number, its start and its checksum can be: a leading zero, a number too big, a byte
    other than ``$`` first or before it, the checksum wrong or in lower case, a byte more
    before the LF."""
    kind = rnd.choice(["TAGON", "TAGOFF"])
    seq_text = rnd.choice([str(seq)] * 8 + ["0" + str(seq), "+" + str(seq), str(seq + 65536)])
    body = f"{seq_text} {kind} {rnd.choice(uids)}".encode()
    crc = b"%04X" % (crc16(body) ^ (1 if rnd.random() < 0.05 else 0))
    if rnd.random() < 0.05:
        crc = crc.lower()
    end = rnd.choice([b"\n"] * 20 + [b"\r\n", b" \n", b"X\n"])
    start = rnd.choice([b"$"] * 20 + [b"#", b"$$", b"x$"])
    return b"%s%s*%s%s" % (start, body, crc, end)


@pytest.mark.parametrize("seed", range(6))
def test_a_card_seen_before_is_read_the_short_way_as_the_general_way(seed: int) -> None:
    """A card laid and lifted again and again (its frames compared whole, no match
    run): the same events, counters and rejections as the general way."""
    rnd = random.Random(seed)
    uids = ["04A1B2C3", "04A1B2C3D4E5F6", "0123456789ABCDEF0123", "89ABCDEF"]
    seq = rnd.randrange(65536)
    frames = []
    for _ in range(600):
        seq = rnd.choice([seq + 1] * 10 + [seq + 2, 0]) % 65536
        frames.append(_card_frame(rnd, seq, uids))
    expected = _general(b"".join(frames))
    assert _read_as_the_loop(frames) == expected
    assert expected[2]["frames"] > 300  # mostly good frames: the short way was taken


def test_a_card_seen_before_in_sequence_runs_no_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a card's frame was matched, its next ones in sequence are compared whole:
    no match runs for them (the no-op's price, ``bench/noop.py``)."""
    from controller.hal import frames

    decoder = FrameDecoder()
    uid = "04A1B2C3D4E5F6"
    laid = decoder.lone_frame(encode_frame(1, "TAGON", uid))
    lifted = decoder.lone_frame(encode_frame(2, "TAGOFF", uid))
    assert laid == TagArrived(bytes.fromhex(uid)) and lifted == TagLeft(bytes.fromhex(uid))

    class NoMatch:
        def fullmatch(self, data: bytes) -> None:
            raise AssertionError(f"a match ran for {data!r}")

    monkeypatch.setattr(frames, "_FAST_TAG", NoMatch())
    for seq in range(3, 43, 2):
        assert decoder.lone_frame(encode_frame(seq, "TAGON", uid)) is laid
        assert decoder.lone_frame(encode_frame(seq + 1, "TAGOFF", uid)) is lifted
    assert decoder.stats["frames"] == 42 and decoder.stats["seq_gap"] == 0
