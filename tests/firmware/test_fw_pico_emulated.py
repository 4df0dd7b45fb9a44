"""The seat firmware frozen into MicroPython's rp2 image, run on an emulated RP2040.

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
from pathlib import Path

import pytest

from controller.hal.seatlink import (
    ButtonPressed,
    DisplayAck,
    FrameDecoder,
    Hello,
    NodeEvent,
    PanelReport,
    TagArrived,
    TagConflict,
    encode_counted,
    encode_frame,
)

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


def test_the_frozen_firmware_on_an_emulated_pico(tmp_path: Path) -> None:
    screen = bytes(range(256)) * 4
    # protocol 3: the DU announcing its block's bytes, the whole screen in one DR frame
    block = [(b"DR", b"0 7 0 127 " + binascii.b2a_base64(screen, newline=False))]
    full, _seq = encode_counted(1, lambda count: ("DU", ("0", "1", str(count), "FULL")), block)
    # protocol 2's pieces (what a Pi not updated sends) are taken too: update 1
    pieces = [encode_frame(3, "DU", "1", "43", "FULL")]
    for index, offset in enumerate(range(0, 1024, 24)):
        piece = binascii.b2a_base64(screen[offset : offset + 24], newline=False).decode()
        pieces.append(encode_frame(4 + index, "DW", str(index), "0", "7", "0", "127",
                                   str(offset), piece))  # fmt: skip
    steps: list[dict[str, object]] = [
        {"wait_line": "HELLO", "timeout_ms": 3000},
        {"send": encode_frame(0, "HELLO", "3", "7").decode()},
        {"at_ms": 250},
        {"tags": [[UID_A, 1.0]]},
        {"mark": "card"},
        {"at_ms": 380},
        {"tags": [[UID_A, 1.0], [UID_B, 0.25]]},  # a faint second card joins it
        {"mark": "faint"},
        {"at_ms": 500},
        {"tags": []},
        {"at_ms": 1050},
        {"press": "envido"},
        {"at_ms": 1130},
        {"release": "envido"},
        {"mark": "released"},
        {"at_ms": 1180},
        {"send": full.decode()},
        {"mark": "full"},
        {"wait_line": "DACK", "timeout_ms": 1500},
        {"send": b"".join(pieces).decode()},
        {"wait_line": "DACK 1", "timeout_ms": 1500},
        {"panelreset": True},
        {"at_ms": 3300},
    ]
    lines = run(steps, tmp_path)
    got = events(lines)
    kinds = [type(event) for _when, event in got]
    hellos = [event for _when, event in got if isinstance(event, Hello)]
    assert len(hellos) == 2  # at power-up, then the answer to ours
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
    assert DisplayAck(0) in [e for _when, e in got]
    assert DisplayAck(1) in [e for _when, e in got]
    assert hellos[1].protocol == 3
    reset_at = next(int(x.split()[1]) for x in lines if x.startswith("P ") and x.endswith("reset"))
    relit = [int(x.split()[1]) for x in lines if x.startswith("P ") and x.endswith(" on")]
    assert any(reset_at < when < reset_at + 2_000_000 for when in relit)
    assert kinds.count(TagConflict) == 1
