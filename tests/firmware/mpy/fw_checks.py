"""Checks of the seat node firmware that run under a real MicroPython and CPython alike.

``micropython fw_checks.py`` (with ``firmware``, ``tests/firmware`` and this folder on
``MICROPYPATH``) runs every check and prints ``PASS name`` or ``FAIL name`` and the
traceback, then ``DONE n``; tests/firmware/test_fw_on_micropython.py runs it and
also calls each check under CPython.  Plain asserts, no pytest: the code must be
what MicroPython runs (its annotations are parsed and ignored).
"""

import binascii
import sys

try:
    from collections.abc import Callable
except ImportError:  # MicroPython: it parses annotations and never evaluates them
    pass

from fake_mfrc522 import SimMFRC522, SimTag
from fake_oled import model_for
from seatnode import FIRMWARE_VERSION, display, protocol
from seatnode.compat import TICKS_PERIOD
from seatnode.debounce import FREED, HOLD, PRESS, STUCK, Button, ButtonPad
from seatnode.mfrc522 import MANY, MFRC522
from seatnode.node import NodeApp
from seatnode.panel import Panel
from seatnode.tags import TAGMANY, TAGOFF, TAGON, TagPresence

CHECKS: list[Callable[[], None]] = []  # the check functions, in order

SERIAL = "e6614103e7ab1234"
A = bytes.fromhex("04A224B2C55E80")
B = bytes.fromhex("04A224B2C55E81")  # collides with A in CL2's last byte
C = bytes.fromhex("04B3C4D5E6F708")

# Every way a line from the Pi is rejected (firmware/PROTOCOL.md, "Validation").
REJECTIONS = [
    (b"$0 HB*C20D", "checksum"),
    (b"$0 HB*c20c", "garbage"),  # checksum digits are upper case
    (b"0 HB*C20C", "garbage"),
    (b"$0 HB", "garbage"),
    (b"$00 HB*C20C", "garbage"),  # no leading zeros
    (b"$65536 HB*0000", "garbage"),
    (b"$0  HB*C20C", "garbage"),
    (b"$0 hb*C20C", "garbage"),
    (b"$0 HB \x01*C20C", "garbage"),
    (b"$0 H*B*C20C", "garbage"),
    (b"$0 NINECHARS*0000", "garbage"),
    (b"$1 PRESS " + b"x" * 33 + b"*0000", "garbage"),
    (b"$0 HB " + b"x" * 80 + b"*0000", "oversized"),
]
# Commands that frame correctly but are refused: (type, args, reason).
COMMAND_REJECTIONS = [
    ("HB", ["1"], "malformed"),
    ("IDENT", ["601"], "malformed"),
    ("IDENT", ["x"], "malformed"),
    ("IDENT", [], "malformed"),
    ("LED", ["BLUE"], "malformed"),
    ("HELLO", [], "malformed"),
    ("HELLO", ["x"], "malformed"),
    ("HELLO", ["2"], "malformed"),  # no session
    ("HELLO", ["2", "007"], "malformed"),
    ("HELLO", ["2", "65536"], "malformed"),
    ("HELLO", ["2", "1", "2"], "malformed"),
    ("HELLO", ["1"], "version"),  # an older Pi
    ("HELLO", ["6", "1", "more"], "version"),  # a newer Pi
    ("HELLO", ["3", "1", "more"], "malformed"),  # protocol 3's HELLO is two arguments
    ("HELLO", ["4", "1", "more"], "malformed"),  # and protocol 4's
    ("HELLO", ["5", "1", "more"], "malformed"),  # and protocol 5's
    ("TAGON", ["04"], "unknown"),  # a node -> Pi message is no command
    ("FOO", [], "unknown"),
]


def check(function: Callable[[], None]) -> Callable[[], None]:
    CHECKS.append(function)
    return function


def _repo_file(name: str) -> str:
    here = __file__.replace("\\", "/")
    for _ in range(4):  # .../tests/firmware/mpy/fw_checks.py -> the repository
        here = here.rsplit("/", 1)[0] if "/" in here else "."
    return here + "/" + name


def protocol_md_frames() -> list[bytes]:
    """Every frame written in PROTOCOL.md (tables, ready-made lines, the session)."""
    with open(_repo_file("firmware/PROTOCOL.md")) as f:
        text = f.read()
    frames = []
    start = text.find("$")
    while start >= 0:
        end = start
        while end < len(text) and text[end] not in "`|\n":
            end += 1
        candidate = text[start:end].strip()
        crc = candidate[-4:]
        if (
            len(candidate) > 6
            and candidate[-5] == "*"
            and "0" <= candidate[1] <= "9"
            and all(c in "0123456789ABCDEF" for c in crc)
        ):
            frames.append(candidate.encode())
        start = text.find("$", end)
    return frames


def protocol_md_crc_vectors() -> list[tuple[bytes, int]]:
    """The checksum table of PROTOCOL.md: (body, CRC)."""
    with open(_repo_file("firmware/PROTOCOL.md")) as f:
        lines = f.read().split("\n")
    vectors = []
    for line in lines:
        cells = [c.strip() for c in line.split("|")]
        if len(cells) < 4 or not cells[1].startswith("`") or not cells[2].startswith("`"):
            continue
        body, crc = cells[1].strip("`"), cells[2].strip("`")
        if len(crc) == 4 and all(c in "0123456789ABCDEF" for c in crc):
            vectors.append((body.encode(), int(crc, 16)))
    return vectors


class Wire:
    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def __call__(self, frame: bytes) -> None:
        self.frames.append(frame)

    def take(self) -> list[tuple[str, list[str]]]:
        out = [protocol.parse(f[:-1])[1:] for f in self.frames]
        self.frames = []
        return out


# -- protocol ----------------------------------------------------------------------------


@check
def check_crc_and_protocol_md_vectors() -> None:
    assert protocol.crc16(b"123456789") == 0x29B1
    vectors = protocol_md_crc_vectors()
    assert len(vectors) >= 8, vectors
    for body, crc in vectors:
        assert protocol.crc16(body) == crc, body
    frames = protocol_md_frames()
    assert len(frames) >= 25, frames
    for frame in frames:
        seq, kind, args = protocol.parse(frame)  # raises on a wrong checksum
        assert protocol.encode(seq, kind, args) == frame + b"\n", frame


@check
def check_every_rejection_path() -> None:
    for line, reason in REJECTIONS:
        try:
            protocol.parse(line)
        except protocol.ProtocolError as error:
            assert error.reason == reason, (line, error.reason)
            assert error.args[0] == reason
        else:
            raise AssertionError(line)
    for kind, args, reason in COMMAND_REJECTIONS:
        try:
            protocol.check_command(kind, args)
        except protocol.ProtocolError as error:
            assert error.reason == reason, (kind, args, error.reason)
        else:
            raise AssertionError((kind, args))
    assert protocol.check_command("HELLO", ["2", "0"]) == 0
    assert protocol.check_command("HELLO", ["2", "65535"]) == 65535
    assert protocol.check_command("HELLO", ["3", "0"]) == 0
    assert protocol.check_command("HELLO", ["4", "41"]) == 41
    assert protocol.check_command("HELLO", ["5", "42"]) == 42
    assert protocol.check_command("IDENT", ["600"]) == 600
    assert protocol.check_command("LED", ["FAST"]) == "FAST"
    assert protocol.check_command("REPL", []) is None


@check
def check_line_reader_and_sequence() -> None:
    reader = protocol.LineReader()
    assert reader.feed(b"$0 HB*C20C\r\n$1 H") == [b"$0 HB*C20C"]
    assert reader.feed(b"B*1234\r\r\n\n") == [b"$1 HB*1234"]
    assert reader.feed(b"x" * 500) == [None]
    assert reader.feed(b"y\n$0 HB*C20C\n") == [b"$0 HB*C20C"]
    seq = protocol.Sequencer()
    seq.value = 65534
    assert [seq.next() for _ in range(3)] == [65534, 65535, 0]
    try:
        protocol.encode(1, "PRESS", ["x" * 32, "y" * 32, "z"])
    except ValueError:
        pass
    else:
        raise AssertionError("an 81-byte frame was built")


# -- buttons -------------------------------------------------------------------------------


def _press(button: Button, samples: list[tuple[int, bool]]) -> list[tuple[int, str]]:
    events = []
    for now, raw in samples:
        event = button.update(raw, now)
        if event is not None:
            events.append((now, event))
    return events


@check
def check_debounce_and_long_press() -> None:
    b = Button("truco", debounce_ms=20, hold_ms=800)
    assert _press(b, [(t, 100 <= t < 300) for t in range(0, 400, 5)]) == [(320, PRESS)]
    b = Button("truco", debounce_ms=20, hold_ms=800)
    chatter = [(t, (t // 5) % 2 == 1) for t in range(0, 15, 5)]
    assert _press(b, chatter + [(t, False) for t in range(15, 200, 5)]) == []
    b = Button("mazo", debounce_ms=20, hold_ms=800)
    assert _press(b, [(t, t < 2000) for t in range(0, 2500, 10)]) == [(800, HOLD)]
    b = Button("flor", debounce_ms=20, hold_ms=800)
    start = TICKS_PERIOD - 400
    wrapped = [((start + i) % TICKS_PERIOD, i < 1000) for i in range(0, 1500, 10)]
    assert _press(b, wrapped) == [((start + 800) % TICKS_PERIOD, HOLD)]
    pad = ButtonPad(("truco", "quiero"), debounce_ms=20, hold_ms=800)
    events = []
    for t in range(0, 400, 10):
        events += pad.update([False, 50 <= t < 150], t)
    assert events == [(PRESS, "quiero")]


@check
def check_two_buttons_held_together_are_two_holds() -> None:
    # the referee call (quiero and no quiero held together, controller/table/chord.py):
    # each button's HOLD 800 ms after its own press, in press order; nothing on release
    pad = ButtonPad(("truco", "quiero", "no_quiero"), debounce_ms=20, hold_ms=800)
    events = []
    for t in range(0, 2000, 10):
        for event in pad.update([False, 100 <= t < 1300, 250 <= t < 1350], t):
            events.append((t, event))
    assert events == [(900, (HOLD, "quiero")), (1050, (HOLD, "no_quiero"))], events


@check
def check_a_stuck_button_says_stuck_once_then_freed() -> None:
    # issue 49: a line stuck to GND (or a jammed key) is said to the Pi, once, and its
    # release after that; a long hold shorter than the stuck time is only a HOLD
    b = Button("truco", debounce_ms=20, hold_ms=800, stuck_ms=10000)
    samples = [(t, t < 14000) for t in range(0, 15000, 10)]
    assert _press(b, samples) == [(800, HOLD), (10000, STUCK), (14020, FREED)]
    b = Button("mazo", debounce_ms=20, hold_ms=800, stuck_ms=10000)
    assert _press(b, [(t, t < 9000) for t in range(0, 12000, 10)]) == [(800, HOLD)]
    b = Button("flor", debounce_ms=20, hold_ms=800, stuck_ms=10000)  # down at power-up
    assert _press(b, [(t, True) for t in range(0, 20000, 10)]) == [(800, HOLD), (10000, STUCK)]
    wire = Wire()
    app = NodeApp(wire, seat=1, serial=SERIAL, now=0, stuck_ms=2000)
    wire.take()
    for t in range(0, 3000, 10):
        app.buttons([t < 2500] + [False] * 7, t)
    assert wire.take() == [("HOLD", ["truco"]), ("STUCK", ["truco"]), ("FREED", ["truco"])]


@check
def check_the_reader_stopping_is_said_at_once() -> None:
    # issue 49: the heartbeat after the reader stops answering (or answers again) goes
    # in the next pass, not up to a second later
    wire = Wire()
    app = NodeApp(wire, seat=1, serial=SERIAL, now=0, reader_version=0x92)
    app.reader_ok = True
    app.tick(0)
    assert [m[0] for m in wire.take()] == ["HELLO", "HB"]
    app.tick(100)
    assert wire.take() == []
    app.reader_ok = False  # main.py: a read failed and the chip does not answer
    app.tick(110)
    assert wire.take() == [("HB", ["0", "0", "NONE", "-"])]
    app.reader_ok = False  # unchanged: nothing more than the usual heartbeat
    app.tick(500)
    assert wire.take() == []
    app.reader_ok = True
    app.tick(520)
    assert wire.take() == [("HB", ["0", "0", "OK", "-"])]
    app.tick(1519)
    assert wire.take() == []
    app.tick(1520)
    assert wire.take() == [("HB", ["1", "0", "OK", "-"])]


# -- tags ------------------------------------------------------------------------------------


@check
def check_tag_presence_confirms_and_leaves_after_grace() -> None:
    tags = TagPresence(grace_ms=500, confirm=2)
    assert tags.update(A, 0) == []  # one read is not an arrival
    assert tags.update(A, 15) == [(TAGON, A)]
    events = []
    for t in range(30, 3000, 15):
        events += tags.update(A if (t // 15) % 4 else None, t)  # every 4th poll misses
    assert events == []
    assert tags.update(None, 3480) == []  # last read at 2985: grace until 3485
    assert tags.update(None, 3500) == [(TAGOFF, A)]
    tags = TagPresence(grace_ms=500, confirm=2)
    tags.update(A, 0)
    tags.update(A, 15)
    assert tags.update(C, 30) == []
    assert tags.update(C, 45) == [(TAGOFF, A), (TAGON, C)]
    tags = TagPresence(grace_ms=500, confirm=2)
    assert tags.update(A, 0) == [] and tags.update(None, 15) == [] and tags.update(A, 30) == []
    assert tags.update(A, 45) == [(TAGON, A)]  # consecutive reads, a miss starts over


@check
def check_tag_presence_reports_a_conflict_once() -> None:
    tags = TagPresence(grace_ms=500, confirm=2)
    assert tags.update(MANY, 0) == []
    assert tags.update(MANY, 15) == [(TAGMANY, None)]
    assert tags.update(MANY, 30) == [] and tags.update(None, 45) == []
    assert tags.update(MANY, 60) == [] and tags.update(MANY, 75) == []  # the same conflict
    assert tags.update(A, 90) == [] and tags.update(A, 105) == [(TAGON, A)]  # one left
    assert tags.update(MANY, 120) == [] and tags.update(MANY, 135) == [(TAGMANY, None)]
    for t in range(150, 1000, 15):
        assert tags.update(MANY, t) == []  # A stays: the field is busy, its grace holds
    assert tags.update(A, 1000) == [] and tags.update(A, 1015) == []
    assert tags.current == A and not tags.conflict
    for t in range(1030, 1515, 15):
        assert tags.update(None, t) == []
    assert tags.update(None, 1515) == [(TAGOFF, A)]  # 500 ms after the last read


def _orders(names: list[str]) -> list[list[tuple[str, str]]]:
    """Every order of each tag's arrival and departure (arrival first)."""
    steps = [("on", n) for n in names] + [("off", n) for n in names]
    out: list[list[tuple[str, str]]] = []

    def extend(prefix: list[tuple[str, str]], left: list[tuple[str, str]]) -> None:
        if not left:
            out.append(prefix)
            return
        for i in range(len(left)):
            step = left[i]
            if step[0] == "off" and ("on", step[1]) not in prefix:
                continue
            extend(prefix + [step], left[:i] + left[i + 1 :])

    extend([], steps)
    return out


def multi_tag_run(names: list[str], together: int, hold: int) -> int:
    """Every arrival/departure order of the tags, through the chip, driver and presence.

    ``together``: how many arrivals at the start happen between two polls (cards
    laid on stacked, at once); ``hold``: polls between the other steps.  Checks that a TAGON only
    ever names a tag that was alone in the field for the polls that confirmed it,
    that every stretch of several tags in the field long enough to confirm gives a
    TAGMANY, and that an empty reader ends with the card gone.  Returns the runs.
    """
    uids = {"A": A, "B": B, "C": C}
    runs = 0
    for order in _orders(names):
        if together and not all(step[0] == "on" for step in order[:together]):
            continue
        chip = SimMFRC522([])
        driver = MFRC522(chip, chip.cs)
        assert driver.init()
        presence = TagPresence(grace_ms=500, confirm=2)
        field: list[str] = []
        history: list[list[str]] = []  # the field at each poll
        now = 0
        conflict_polls = 0
        pending_many = False
        for index, (what, name) in enumerate(order):
            if what == "on":
                field.append(name)
            else:
                field.remove(name)
            chip.tags = [SimTag(uids[n]) for n in field]
            polls = 0 if index < together - 1 else hold
            for _ in range(polls):
                seen = driver.read_uid()
                history.append(list(field))
                expected = None if not field else (uids[field[0]] if len(field) == 1 else MANY)
                assert seen == expected, (order, field, seen)
                conflict_polls = conflict_polls + 1 if len(field) > 1 else 0
                if conflict_polls == 2 and not presence.conflict:
                    pending_many = True
                for kind, uid in presence.update(seen, now):
                    if kind == TAGON:
                        for past in history[-2:]:
                            assert len(past) == 1 and uids[past[0]] == uid, (order, history)
                    if kind == TAGMANY:
                        pending_many = False
                now += 15
                assert not pending_many, (order, history)
        for _ in range(40):
            presence.update(driver.read_uid(), now)
            now += 15
        assert presence.current is None and not presence.conflict
        runs += 1
    return runs


@check
def check_two_and_three_tags_in_every_order() -> None:
    assert multi_tag_run(["A", "B"], together=0, hold=4) == 6
    assert multi_tag_run(["A", "B"], together=2, hold=4) == 4  # stacked: laid on at once
    assert multi_tag_run(["A", "B", "C"], together=0, hold=3) == 90
    assert multi_tag_run(["A", "B", "C"], together=3, hold=3) == 36


# -- the node -----------------------------------------------------------------------------


@check
def check_node_hello_and_commands() -> None:
    wire = Wire()
    app = NodeApp(wire, seat=2, serial=SERIAL, now=0, reader_version=0x88)
    hello = [FIRMWARE_VERSION, "2", SERIAL, "88"]
    assert wire.take() == [("HELLO", ["5"] + hello + ["-"])]  # at power-up: its newest
    app.receive(protocol.encode(0, "HELLO", ["2", "4711"]), 10)  # a Pi of protocol 2
    assert wire.take() == [("HELLO", ["2"] + hello + ["4711"])]  # answered in its version
    assert app.version == 2
    app.receive(protocol.encode(1, "HELLO", ["3", "4712"]), 10)
    assert wire.take() == [("HELLO", ["3"] + hello + ["4712"])]
    assert app.version == 3
    app.receive(protocol.encode(2, "HELLO", ["4", "4713"]), 10)
    assert wire.take() == [("HELLO", ["4"] + hello + ["4713"])]
    assert app.version == 4 and app.rx_errors == 0
    app.receive(protocol.encode(3, "HELLO", ["5", "4714"]), 10)
    assert wire.take() == [("HELLO", ["5"] + hello + ["4714"])]
    assert app.version == 5 and app.rx_errors == 0
    app.receive(protocol.encode(4, "HELLO", ["6", "4715"]), 10)  # a newer Pi: refused
    assert wire.take() == [] and app.rx_errors == 1 and app.version == 5
    app.rx_errors = 0
    assert app.host_alive(10)
    app.receive(protocol.encode(1, "LED", ["SLOW"]) + protocol.encode(2, "IDENT", ["3"]), 20)
    assert app.led.mode == "SLOW" and app.led.pattern(1000, True, True) == "IDENT"
    app.receive(protocol.encode(3, "RESET"), 30)
    assert app.reset_requested and app.rx_errors == 0
    wire2 = Wire()
    NodeApp(wire2, seat=None, serial="ab", now=0)
    assert wire2.take() == [("HELLO", ["5", FIRMWARE_VERSION, "-", "ab", "00", "-"])]


@check
def check_node_counts_every_bad_line_and_says_nothing() -> None:
    wire = Wire()
    app = NodeApp(wire, seat=0, serial=SERIAL, now=0)
    wire.take()
    bad = [line for line, _reason in REJECTIONS]
    bad += [protocol.encode(0, kind, args)[:-1] for kind, args, _reason in COMMAND_REJECTIONS]
    bad += [b"\x03\x03\x02\x04", b"import machine", b">>> "]
    for line in bad:
        app.receive(line + b"\r\n", 0)
    assert app.rx_errors == len(bad), app.rx_errors
    assert wire.take() == [] and not app.host_alive(0) and not app.exit_requested
    app.tick(0)  # protocol 5 from power-up (its HELLO's): no update written yet
    assert wire.take() == [("HB", ["0", str(len(bad)), "NONE", "-"])]


@check
def check_node_reports_tags_conflicts_and_buttons() -> None:
    wire = Wire()
    app = NodeApp(wire, seat=0, serial=SERIAL, now=0)
    wire.take()
    states = [False] * 8
    for t in range(0, 200, 10):
        states[protocol.BUTTONS.index("real_envido")] = 20 <= t < 100
        app.buttons(states, t)
    for t, seen in ((300, A), (315, A), (330, MANY), (345, MANY), (360, None), (900, None)):
        app.tag(seen, t)
    assert wire.take() == [
        ("PRESS", ["real_envido"]),
        ("TAGON", ["04A224B2C55E80"]),
        ("TAGMANY", []),
        ("TAGOFF", ["04A224B2C55E80"]),
    ]


@check
def check_every_module_imports() -> None:
    import os

    names = [n[:-3] for n in os.listdir(_repo_file("firmware/seatnode")) if n.endswith(".py")]
    assert "protocol" in names and "main" in names, names
    for name in names:
        if name == "main" and sys.implementation.name != "micropython":
            continue  # CPython has no machine module: test_fw_main.py fakes one
        module = "seatnode" if name == "__init__" else "seatnode." + name
        __import__(module)  # under MicroPython, main gets the stand-in machine module
        assert module in sys.modules, module
    if sys.implementation.name == "micropython":
        assert sys.modules["seatnode.main"].serial_number() == SERIAL


# -- protocol 3's counted blocks ----------------------------------------------------------

# PROTOCOL.md's example: update 7, a matchstick's diagonal (pages 1-2 x columns 39-47)
DIAGONAL_DU = b"$40 DU 7 1 47 DIFF*BEC8"
DIAGONAL_DR = b"$41 DR 1 2 39 47 AAECAwQFBgcICQoLDA0ODxAR*CA55"


@check
def check_line_reader_takes_a_counted_block_whole() -> None:
    reader = protocol.LineReader()
    stream = b"\n" + DIAGONAL_DU + b"\n" + DIAGONAL_DR + b"\n$0 HB*C20C\n"
    got = []
    for item in reader.items(stream[:30]):
        got.append(item)
        if item == DIAGONAL_DU:
            reader.expect(len(DIAGONAL_DR) + 1)
    assert got == [DIAGONAL_DU] and reader.wanted == len(DIAGONAL_DR) + 1 - (28 - len(DIAGONAL_DU))
    for item in reader.items(stream[30:]):
        got.append(item)
    assert got == [DIAGONAL_DU, protocol.BLOCK, b"$0 HB*C20C"], got
    assert bytes(reader.block()) == DIAGONAL_DR + b"\n"
    # a block longer than a line may be, read straight into the buffer (readinto)
    long_frame = b"$9 DR 0 7 0 127 " + b"A" * 1364 + b"AA==*0000\n"
    reader.expect(len(long_frame))
    space = reader.space()
    space[:] = long_frame
    assert reader.filled(len(long_frame)) and bytes(reader.block()) == long_frame
    # a block given up: the rest of its line is no frame, the next line is
    reader.expect(100)
    assert reader.feed(b"$9 DR 0 0 0") == []
    reader.abandon()
    assert reader.wanted == 0
    assert reader.feed(b" 3 AAAA*D245\n$0 HB*C20C\n") == [b"$0 HB*C20C"]


@check
def check_region_frames_and_blocks() -> None:
    assert display.parse_region(DIAGONAL_DR) == (1, 2, 39, 47, bytes(range(18)))
    assert display.parse_block(DIAGONAL_DR + b"\n", 1) == [(1, 2, 39, 47, bytes(range(18)))]
    for block, regions in (
        (DIAGONAL_DR, 1),  # no LF at its end: cut short
        (DIAGONAL_DR + b"\n", 2),
        (DIAGONAL_DR + b"\n" + DIAGONAL_DR + b"\n", 1),
        (DIAGONAL_DR[:-1] + b"6\n", 1),  # its checksum
        (b"\n", 1),
    ):
        try:
            display.parse_block(block, regions)
        except protocol.ProtocolError:
            pass
        else:
            raise AssertionError(block)
    assert display.check("DU", ["7", "1", "47", "DIFF"]) == (7, 1, 47, False, True)  # DACK
    assert display.check("DU", ["7", "1", "47", "DIFF", "-"]) == (7, 1, 47, False, False)
    assert display.check("DU", ["9", "1", "1391", "FULL", "ACK"]) == (9, 1, 1391, True, True)
    assert display.check("DU", ["0", "43", "FULL"]) == (0, 43, True)  # protocol 2's
    for args in (
        ["7", "0", "47", "DIFF"],
        ["7", "1", "2049", "FULL"],
        ["7", "33", "9", "FULL"],
        ["7", "0", "47", "DIFF", "-"],
        ["7", "1", "2049", "FULL", "ACK"],
        ["7", "1", "47", "ACK", "DIFF"],
        ["7", "1", "47", "DIFF", "-", "ACK"],
    ):
        try:
            display.check("DU", args)
        except protocol.ProtocolError as error:
            assert error.reason == "malformed"
        else:
            raise AssertionError(args)


@check
def check_node_writes_a_counted_update_and_acknowledges_it() -> None:
    wire = Wire()
    app = NodeApp(wire, seat=2, serial=SERIAL, now=0)
    app.display.panel = None  # what it writes is tested with the panel models elsewhere
    app.display.synced, app.display._last = True, 6  # update 6 shown: 7 is its DIFF
    panel = FakePanel()
    app.display.panel = panel
    wire.take()
    app.receive(b"\n" + DIAGONAL_DU + b"\n" + DIAGONAL_DR[:20], 0)
    assert app.block_wanted == len(DIAGONAL_DR) + 1 - 20
    space = app.block_space()
    tail = DIAGONAL_DR[20:] + b"\n"
    space[: len(tail)] = tail
    app.block_read(len(tail), 1)
    while app.display.pending:
        app.tick(2)
    assert panel.writes == [(1, 2, 39, 47, 0, bytes(range(18)))]
    assert ("DACK", ["7"]) in wire.take() and app.rx_errors == 0


# -- protocol 4: acknowledged on request ----------------------------------------------------

# A fifth argument of DU other than ACK or "-": malformed (the type's known, its args bad).
BAD_ACK_ARGS = ["ack", "ACK2", "", "--", "NACK", "DACK", "Ack", "1", "FULL", " ACK"]


def _framed(seq: int, body: bytes) -> bytes:
    """A frame of any length (protocol.encode stops at 80 bytes: a DR may be longer)."""
    full = str(seq).encode() + b" " + body
    return b"$" + full + b"*" + f"{protocol.crc16(full):04X}".encode()


def _update(
    seq: int,
    update: int,
    data: bytes,
    full: bool = False,
    ack: str | None = "-",
    box: tuple[int, int, int, int] = (1, 1, 39, 47),
) -> bytes:
    """What the Pi writes for one update of one window: LF, the DU, its counted block
    of one DR frame.  ``ack``: DU's fifth argument (protocol 4), None: protocol 3's DU."""
    window = " ".join(str(n) for n in box).encode()
    text = binascii.b2a_base64(data)[:-1]
    block = _framed(seq + 1, b"DR " + window + b" " + text) + b"\n"
    args = [str(update), "1", str(len(block)), "FULL" if full else "DIFF"]
    if ack is not None:
        args.append(ack)
    du: bytes = protocol.encode(seq, "DU", args)
    return b"\n" + du + block


class PanelNode:
    """A NodeApp driving the panel model of fake_oled.py (an SSD1306 fresh from power-up)
    in a session of ``version`` (the Pi's HELLO), its clock run by ``write``/``beat``."""

    def __init__(self, version: int = 4, panel: bool = True) -> None:
        self.model = model_for("ssd1306")
        self.model.power_cycle()
        self.wire = Wire()
        self.now = 0
        self.seq = 0
        self.app = NodeApp(
            self.wire,
            seat=1,
            serial=SERIAL,
            now=0,
            panel=Panel(self.model, "ssd1306") if panel else None,
        )
        hello = [FIRMWARE_VERSION, "1", SERIAL, "00"]
        report = [("PANEL", ["ssd1306", "3C", "OK"])] if panel else []
        self.app.tick(0)  # its first heartbeat: protocol 5's, as its power-up HELLO says
        sent = self.wire.take()
        beat = ("HB", ["0", "0", "NONE", "-"])
        assert sent == [("HELLO", ["5"] + hello + ["-"])] + report + [beat], sent
        self.send(protocol.encode(0, "HELLO", [str(version), "77"]))
        sent = self.wire.take()
        assert sent == [("HELLO", [str(version)] + hello + ["77"])] + report, sent

    def send(self, data: bytes) -> None:
        self.now += 1
        self.app.receive(data, self.now)
        self.settle()

    def settle(self) -> None:
        while self.app.display.pending or self.app.block_wanted:
            self.now += 1
            self.app.tick(self.now)
        self.now += 1
        self.app.tick(self.now)

    def write(self, update: int, data: bytes, **options: object) -> list[tuple[str, list[str]]]:
        """One update sent and worked through: what the node said meanwhile."""
        self.send(_update(self.seq, update, data, **options))  # type: ignore[arg-type]
        self.seq += 2
        return self.wire.take()

    def beat(self) -> list[str]:
        """The arguments of the node's next heartbeat (the clock run up to it)."""
        self.wire.take()
        self.now += 1000
        self.app.tick(self.now)
        sent = self.wire.take()
        beats = [args for kind, args in sent if kind == "HB"]
        assert len(beats) == 1, sent
        return beats[0]

    def shown(self, box: tuple[int, int, int, int] = (1, 1, 39, 47)) -> bytes:
        """The glass's bytes in window ``box`` (pages p0..p1, columns c0..c1)."""
        glass = self.model.glass()
        p0, p1, c0, c1 = box
        return b"".join(glass[page * 128 + c0 : page * 128 + c1 + 1] for page in range(p0, p1 + 1))


NINE = bytes(range(1, 10))  # a window of page 1, columns 39 to 47
NINE_B = bytes(range(11, 20))
NINE_C = bytes(range(21, 30))


@check
def check_protocol_4_updates_are_acknowledged_on_request() -> None:
    for version in (4, 5):  # protocol 5's updates are protocol 4's
        acknowledged_on_request(version)


def acknowledged_on_request(version: int) -> None:
    node = PanelNode(version)
    assert node.shown() == bytes(9)  # initialised: blank
    assert node.write(0, NINE, full=True, ack="-") == []  # written, no DACK
    assert node.shown() == NINE and node.app.display.written == 0
    assert node.write(1, NINE_B, ack="ACK") == [("DACK", ["1"])]
    assert node.shown() == NINE_B and node.app.display.written == 1
    assert node.write(2, NINE_C, ack=None) == [("DACK", ["2"])]  # protocol 3's: always
    assert node.shown() == NINE_C and node.app.display.written == 2
    assert node.write(3, NINE, ack="-") == []
    assert node.shown() == NINE and node.app.display.written == 3
    # a whole screen, one 1,393-byte DR frame asked to be acknowledged
    screen = bytes(i * 7 & 0xFF for i in range(1024))
    assert node.write(4, screen, full=True, ack="ACK", box=(0, 7, 0, 127)) == [("DACK", ["4"])]
    assert node.model.glass() == screen
    assert node.app.rx_errors == 0 and node.app.display.lost == 0


@check
def check_protocol_4_and_3_updates_in_every_session() -> None:
    for version in (2, 3, 4, 5):  # a node of protocol 5 takes every kind in any session
        node = PanelNode(version)
        assert node.write(0, NINE, full=True, ack="-") == []
        assert node.write(1, NINE_B, ack="ACK") == [("DACK", ["1"])]
        assert node.write(2, NINE_C, ack=None) == [("DACK", ["2"])]
        assert node.shown() == NINE_C and node.app.rx_errors == 0, version


@check
def check_a_bad_fifth_argument_of_du_is_malformed() -> None:
    for mode in BAD_ACK_ARGS:
        try:
            display.check("DU", ["7", "1", "47", "DIFF", mode])
        except protocol.ProtocolError as error:
            assert error.reason == "malformed", (mode, error.reason)
        else:
            raise AssertionError(mode)
    node = PanelNode(4)
    node.write(0, NINE, full=True)
    errors = 0
    for update, mode in enumerate(["ack", "ACK2", "NACK", "ACK-", "--"], start=1):
        said = node.write(update, NINE_B, ack=mode)
        errors += 2  # the DU (malformed), then its DR outside a block (unknown)
        assert node.app.rx_errors == errors, (mode, node.app.rx_errors)
        assert not node.app.block_wanted and node.shown() == NINE, mode  # nothing written
        assert ("DACK", [str(update)]) not in said, (mode, said)
    assert node.app.display.written is None  # its DR without a DU: a lost update
    assert node.write(9, NINE_C, full=True) == [] and node.shown() == NINE_C


@check
def check_protocol_4_heartbeats_say_the_update_written() -> None:
    for version in (4, 5):  # protocol 5's heartbeats are protocol 4's
        heartbeats_say_the_update_written(version)


def heartbeats_say_the_update_written(version: int) -> None:
    node = PanelNode(version)
    assert node.beat() == ["1", "0", "NONE", "-"]  # none written yet
    node.write(0, NINE, full=True)
    assert node.beat() == ["2", "0", "NONE", "0"]
    node.write(1, NINE_B)
    node.write(2, NINE_C, ack="ACK")
    assert node.beat() == ["3", "0", "NONE", "2"]
    assert node.write(4, NINE) == [("DLOST", ["4"])]  # 3 never came: out of sync
    assert node.beat() == ["4", "0", "NONE", "-"]
    node.write(5, NINE)  # a DIFF after the lost one: not taken
    beat = node.beat()
    assert beat == ["5", "0", "NONE", "-"] and node.shown() == NINE_C
    assert node.write(6, NINE_B, full=True) == []  # a FULL one: in sync again
    assert node.beat() == ["6", "0", "NONE", "6"] and node.shown() == NINE_B
    node.app.reader_ok = True
    node.send(b"\n" + protocol.encode(60, "DU", ["7", "1", "47", "DIFF", "-"]))  # no block
    for _ in range(30):  # its block never comes: lost after 250 ms
        node.now += 10
        node.app.tick(node.now)
    assert ("DLOST", ["7"]) in node.wire.take()
    assert node.beat() == ["7", "1", "OK", "-"]
    node.write(8, NINE_C, full=True, ack="ACK")
    assert node.beat() == ["8", "1", "OK", "8"]
    # a new session (the Pi's HELLO): none of the last one's updates is named
    node.send(protocol.encode(70, "HELLO", ["4", "78"]))
    assert node.beat() == ["9", "1", "OK", "-"]
    node.write(0, NINE, full=True)
    assert node.beat() == ["10", "1", "OK", "0"]
    # the panel gone: out of sync, nothing written
    node.model.unplugged = True
    node.write(1, NINE_B)
    assert node.beat()[3] == "-"


def queue_run(version: int, updates: int, whole: bool = False) -> "PanelNode":
    """``updates`` DIFF updates arriving at once, no pass of the node's loop between them
    (what a Pi that ignored its window would send), in a session of ``version``: tiny ones
    (one byte of the panel, a 26-byte block) or whole screens (a 1,395-byte block)."""
    node = PanelNode(version)
    node.write(0, NINE, full=True)
    box = (0, 7, 0, 127) if whole else (0, 0, 0, 0)
    stream = b""
    for n in range(1, updates + 1):
        data = bytes((n * 7 + i) & 0xFF for i in range(1024)) if whole else bytes((n,))
        stream += _update(node.seq, n, data, box=box)
        node.seq += 2
    node.app.receive(stream, node.now)
    assert len(node.app.display.queue) <= node.app.display.max_queue
    node.settle()
    return node


@check
def check_the_display_queue_is_four_times_larger_in_a_session_of_protocol_5() -> None:
    # protocols 2 to 4 (a Pi of those versions): 64 updates and 2,048 bytes, as ever
    assert (display.MAX_QUEUE, display.MAX_QUEUED_BYTES) == (64, 2048)
    assert (display.MAX_QUEUE_5, display.MAX_QUEUED_BYTES_5) == (128, 8192)
    for version, entries, screens in ((3, 64, 1), (4, 64, 1), (5, 128, 5)):
        node = queue_run(version, entries)  # as many tiny updates as the queue holds
        assert node.app.display.dropped == 0 and node.app.display.written == entries, version
        assert node.shown((0, 0, 0, 0)) == bytes((entries,)), version
        node = queue_run(version, entries + 1)  # one more overflows it
        assert node.app.display.dropped > 0 and node.app.display.written is None, version
        assert "DLOST" in [kind for kind, _args in node.wire.take()], version
        node = queue_run(version, screens, whole=True)  # as many whole screens as it holds
        assert node.app.display.dropped == 0 and node.app.display.written == screens, version
        node = queue_run(version, screens + 1, whole=True)
        assert node.app.display.dropped > 0 and node.app.display.written is None, version
    # the session's version sets the bound: a node of protocol 5 whose Pi speaks 4 holds 2 KB
    node = PanelNode(5)
    assert node.app.display.max_queued_bytes == 8192
    node.send(protocol.encode(90, "HELLO", ["4", "91"]))
    assert (node.app.display.max_queue, node.app.display.max_queued_bytes) == (64, 2048)


@check
def check_heartbeats_of_protocol_3_and_2_sessions_have_three_arguments() -> None:
    for version in (2, 3):
        node = PanelNode(version)
        assert node.beat() == ["1", "0", "NONE"]
        node.write(0, NINE, full=True, ack="-")
        assert node.beat() == ["2", "0", "NONE"]
        node.send(protocol.encode(80, "HELLO", ["4", "79"]))  # then a Pi of protocol 4
        assert node.beat() == ["3", "0", "NONE", "-"]
        node.send(protocol.encode(81, "HELLO", ["5", "80"]))  # then one of protocol 5
        assert node.beat() == ["4", "0", "NONE", "-"]
        node.send(protocol.encode(82, "HELLO", [str(version), "81"]))
        assert node.beat() == ["5", "0", "NONE"]


@check
def check_a_node_without_a_panel_says_none_written() -> None:
    node = PanelNode(4, panel=False)  # it says no PANEL
    assert node.beat() == ["1", "0", "NONE", "-"]
    node.write(0, NINE, full=True, ack="ACK")
    assert node.beat() == ["2", "0", "NONE", "-"]


class FakePanel:
    kind = "ssd1306"
    address = 0x3C
    ok = True
    slice_bytes = 128  # what Panel takes from an I2C bus: a page row a pass

    def __init__(self) -> None:
        self.writes: list[tuple[int, int, int, int, int, bytes]] = []

    def window(self, p0: int, p1: int, c0: int, c1: int, offset: int, data: bytes) -> None:
        self.writes.append((p0, p1, c0, c1, offset, bytes(data)))

    def refresh(self, step: int) -> int:
        return 0


def main() -> None:
    failed = 0
    for function in CHECKS:
        try:
            function()
        except Exception as error:
            failed += 1
            print("FAIL", function.__name__)
            if sys.implementation.name == "micropython":
                sys.print_exception(error)  # type: ignore[attr-defined]
            else:
                raise
        else:
            print("PASS", function.__name__)
    print("DONE", len(CHECKS), "failed", failed)


if __name__ == "__main__":
    main()
