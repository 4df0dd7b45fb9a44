"""The seat firmware on MicroPython's rp2 image, run on an emulated RP2040.

rp2040js (npm, ``tests/pico``) executes the image's Cortex-M0+ instructions; the seat's
peripherals are the models in ``tests/pico/seat-pico.mjs`` (the MFRC522 on SPI0 with
its receiver, the panel on I2C0, the buttons, USB CDC with a full-speed host's timing).
What the node sends on USB is read back as frames with the Pi's own decoder.

The image is not part of the repository (see firmware/README.md): these tests run when
``TRUCO_SEAT_UF2`` names it and ``TRUCO_PICO_BOOTROM`` the RP2040 bootrom module
(rp2040js's demo/bootrom.ts as an ES module), or when both lie in
``~/.cache/truco-seat/`` (``truco-seat.uf2``, ``bootrom.mjs``); otherwise they skip and
say so. With an image but without Node.js or ``npm ci`` in tests/pico they fail.
"""

from __future__ import annotations

import binascii
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.hal.events import (
    ButtonPressed,
    DisplayAck,
    DisplayLost,
    Heartbeat,
    Hello,
    NodeEvent,
    PanelReport,
    TagArrived,
    TagConflict,
)
from controller.hal.frames import FrameDecoder, encode_counted, encode_frame

ROOT = Path(__file__).resolve().parents[2]
PICO = ROOT / "tests" / "pico"
CACHE = Path.home() / ".cache" / "truco-seat"
UID_A = "04A224B2C55E80"
UID_B = "04B3170AC45E81"


def emulator() -> tuple[str, str, str]:
    image = os.environ.get("TRUCO_SEAT_UF2") or str(CACHE / "truco-seat.uf2")
    bootrom = os.environ.get("TRUCO_PICO_BOOTROM") or str(CACHE / "bootrom.mjs")
    if not Path(image).is_file() or not Path(bootrom).is_file():
        reason = (
            f"no seat image to emulate: set TRUCO_SEAT_UF2 and TRUCO_PICO_BOOTROM (or put "
            f"truco-seat.uf2 and bootrom.mjs in {CACHE}); the image is built outside the "
            "repository (firmware/README.md)"
        )
        print("SKIPPED:", reason)
        pytest.skip(reason)
    node = shutil.which("node")
    if node is None or not (PICO / "node_modules" / "rp2040js").is_dir():
        pytest.fail("an image is given but Node.js or rp2040js is missing: cd tests/pico && npm ci")
    return node, bootrom, image


def run(steps: list[dict[str, object]], tmp_path: Path) -> list[str]:
    node, bootrom, image = emulator()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"wall_timeout_s": 240, "steps": steps}))
    done = subprocess.run(
        [node, str(PICO / "seat-pico.mjs"), bootrom, image, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=PICO,
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines and lines[-1].startswith("END"), done.stderr[-2000:]
    return lines


def events(lines: list[str]) -> list[tuple[int, NodeEvent]]:
    """(emulated us, event) of every frame the node sent, decoded as the Pi decodes it."""
    decoder = FrameDecoder()
    out = []
    for line in lines:
        if line.startswith("L "):
            _tag, when, text = line.split(" ", 2)
            for event in decoder.feed(text.encode() + b"\n"):
                out.append((int(when), event))
    stats = decoder.stats
    assert stats.get("checksum", 0) == 0 and stats.get("garbage", 0) == 0
    return out


def marks(lines: list[str], name: str) -> list[int]:
    return [int(x.split()[1]) for x in lines if x.startswith("M ") and x.endswith(" " + name)]


def _updates(version: int) -> tuple[str, str]:
    """A whole screen as the Pi of that protocol sends it (protocols 5 and 4: asking for
    its DACK), then update 1: protocol 5's, 4's and 3's as a counted block of one DR frame
    (5 and 4: not asking, the heartbeat names it), protocol 2's DU and 43 DW pieces."""
    screen = bytes(range(256)) * 4
    block = [(b"DR", b"0 7 0 127 " + binascii.b2a_base64(screen, newline=False))]

    def du(update: int, ack: str) -> Callable[[int], tuple[str, tuple[str, ...]]]:
        tail = (ack,) if version >= 4 else ()
        return lambda count: ("DU", (str(update), "1", str(count), "FULL", *tail))

    full, seq = encode_counted(1, du(0, "ACK"), block)
    if version >= 3:
        second, _seq = encode_counted(seq, du(1, "-"), block)
        return full.decode(), second.decode()
    pieces = [encode_frame(3, "DU", "1", "43", "FULL")]
    for index, offset in enumerate(range(0, 1024, 24)):
        piece = binascii.b2a_base64(screen[offset : offset + 24], newline=False).decode()
        pieces.append(encode_frame(4 + index, "DW", str(index), "0", "7", "0", "127",
                                   str(offset), piece))  # fmt: skip
    return full.decode(), b"".join(pieces).decode()


@pytest.mark.parametrize("version", [5, 4, 3])
def test_the_firmware_on_an_emulated_pico(tmp_path: Path, version: int) -> None:
    """The node on the emulated Pico, in a session of the Pi's protocol (5, the newest; 4
    and 3, a Pi not updated): HELLO, a card, a faint second card on it, a press, two whole
    screens (protocol 3: one asks, protocol 2's pieces; protocols 5 and 4: the first asks
    its DACK, the heartbeat names the second), a panel that lost its settings lit again."""
    full, second = _updates(version)
    steps: list[dict[str, object]] = [
        {"wait_line": "HELLO", "timeout_ms": 3000},
        {"send": encode_frame(0, "HELLO", str(version), "7").decode()},
        {"wait_line": "PANEL", "timeout_ms": 1000},
        {"after_ms": 50},
        {"tags": [[UID_A, 1.0]]},
        {"mark": "card"},
        {"after_ms": 130},
        {"tags": [[UID_A, 1.0], [UID_B, 0.25]]},  # a faint second card joins it
        {"mark": "faint"},
        {"after_ms": 120},
        {"tags": []},
        {"after_ms": 550},
        {"press": "envido"},
        {"after_ms": 80},
        {"release": "envido"},
        {"mark": "released"},
        {"after_ms": 50},
        {"send": full},
        {"mark": "full"},
        {"wait_line": "DACK 0", "timeout_ms": 1500},
        {"send": second},
        {"wait_line": "DACK 1" if version < 4 else "OK 1", "timeout_ms": 2500},
        {"panelreset": True},
        {"after_ms": 2100},
    ]
    lines = run(steps, tmp_path)
    got = events(lines)
    kinds = [type(event) for _when, event in got]
    hellos = [event for _when, event in got if isinstance(event, Hello)]
    assert len(hellos) == 2  # at power-up, then the answer to ours
    assert hellos[0].protocol == 5 and hellos[1].protocol == version
    assert hellos[0].reader_version == 0x92  # VersionReg of the modelled chip
    assert PanelReport("ssd1306", 0x3C, True) in [event for _when, event in got]
    card_at = marks(lines, "card")[0]
    tag_on = [(when, e) for when, e in got if isinstance(e, TagArrived)]
    assert [e.uid.hex().upper() for _when, e in tag_on] == [UID_A]
    assert tag_on[0][0] - card_at < 50_000  # two polls and a read, in emulated time
    faint_at = marks(lines, "faint")[0]
    assert any(isinstance(e, TagConflict) and when > faint_at for when, e in got)
    released = marks(lines, "released")[0]
    presses = [(when, e) for when, e in got if isinstance(e, ButtonPressed)]
    assert [e.name for _when, e in presses] == ["envido"]
    assert presses[0][0] > released
    acks = [e for _when, e in got if isinstance(e, DisplayAck)]
    beats = [e for _when, e in got if isinstance(e, Heartbeat)]
    if version >= 4:
        assert acks == [DisplayAck(0)]  # only the update that asked
        assert beats[-1].written == 1 and beats[-1].rx_errors == 0
    else:
        assert acks == [DisplayAck(0), DisplayAck(1)]
        assert all(beat.written is None for beat in beats)
    reset_at = next(int(x.split()[1]) for x in lines if x.startswith("P ") and x.endswith("reset"))
    relit = [int(x.split()[1]) for x in lines if x.startswith("P ") and x.endswith(" on")]
    assert any(reset_at < when < reset_at + 2_000_000 for when in relit)
    assert kinds.count(TagConflict) == 1


def test_a_cut_block_on_an_emulated_pico(tmp_path: Path) -> None:
    """A whole screen's block cut after 100 of its bytes (the Pi gone mid-write): the rp2
    port's stdin would hold a node that asked for the block until its watchdog bit.  The
    node says the update lost 250 ms after its DU, keeps its heartbeat, reports a press
    made during the cut, and takes the whole screen sent again."""
    full, _second = _updates(5)
    cut = full[: full.index("DR") + 100]
    steps: list[dict[str, object]] = [
        {"wait_line": "HELLO", "timeout_ms": 3000},
        {"send": encode_frame(0, "HELLO", "5", "7").decode()},
        {"wait_line": "PANEL", "timeout_ms": 1000},
        {"send": cut},
        {"mark": "cut"},
        {"after_ms": 100},
        {"press": "truco"},
        {"after_ms": 60},
        {"release": "truco"},
        {"wait_line": "DLOST 0", "timeout_ms": 1000},
        {"wait_line": " HB ", "timeout_ms": 1500},
        {"send": full},
        {"wait_line": "DACK 0", "timeout_ms": 1500},
    ]
    lines = run(steps, tmp_path)
    got = events(lines)
    cut_at = marks(lines, "cut")[0]
    lost = [when for when, e in got if e == DisplayLost(0)]
    assert lost and 250_000 <= lost[0] - cut_at < 400_000
    assert [e.name for when, e in got if isinstance(e, ButtonPressed) and when > cut_at] == [
        "truco"
    ]
    assert any(isinstance(e, Heartbeat) and when > lost[0] for when, e in got)
    assert DisplayAck(0) in [e for _when, e in got]
    assert not [x for x in lines if x.startswith("T ")]  # every wait was met
    assert sum(isinstance(e, Hello) for _when, e in got) == 2  # no reset
