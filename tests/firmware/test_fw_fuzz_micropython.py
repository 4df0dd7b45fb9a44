"""Differential fuzz: 10,000 random and mutated lines to the node, under MicroPython and CPython.

The same script (mpy/fuzz_node.py) runs the firmware's ``NodeApp`` in a real
MicroPython process and in CPython; every line's answer (frames sent, rx_errors,
host state, LED, reset/REPL requests) must be identical, and the node must live
through all of them.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

from micropython_unix import FIRMWARE, MPY_DIR, run_script
from seatnode import protocol

LINES = 10_000
SEED = 20261201


def valid_command(rng: random.Random) -> bytes:
    kind, args = rng.choice(
        [
            ("HB", []),
            ("HELLO", [rng.choice(["2", "3", "4"]), str(rng.randrange(65536))]),
            ("HELLO", ["1"]),
            ("HELLO", [str(rng.randrange(3, 10)), "1"]),
            ("IDENT", [str(rng.randrange(0, 700))]),
            ("LED", [rng.choice(["OFF", "ON", "SLOW", "FAST", "PINK"])]),
            ("RESET", []),
            ("REPL", []),
            ("TAGON", ["04A224B2C55E80"]),
            ("FRAME", ["0", "AAAA"]),  # a command a newer Pi might send
        ]
    )
    frame: bytes = protocol.encode(rng.randrange(65536), kind, args)
    return frame[:-1]


def mutate(rng: random.Random, line: bytes) -> bytes:
    data = bytearray(line)
    for _ in range(rng.randint(1, 3)):
        how = rng.randrange(9)
        at = rng.randrange(len(data) + 1)
        if how == 0 and data:
            data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)  # a flipped bit
        elif how == 1:
            data.insert(at, rng.randrange(256))
        elif how == 2 and data:
            del data[min(at, len(data) - 1)]
        elif how == 3:
            data = data[:at]  # cut short
        elif how == 4:
            data.insert(at, rng.choice(b"\r\n\x03\x04\x02\x01 *$"))
        elif how == 5:
            data = data.lower() if rng.random() < 0.5 else data.upper()
        elif how == 6:
            data += data[: rng.randrange(len(data) + 1)] * rng.randint(1, 4)  # repeated
        elif how == 7 and len(data) > 5:
            data[-4:] = rng.choice([b"0000", b"FFFF", bytes(data[-4:]).lower()])
        else:
            data = bytearray(valid_command(rng)) + data  # two lines run together
    return bytes(data)


def fuzz_lines(seed: int = SEED, count: int = LINES) -> list[bytes]:
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.2:
            lines.append(valid_command(rng))
        elif kind < 0.75:
            lines.append(mutate(rng, valid_command(rng)))
        elif kind < 0.9:
            lines.append(rng.randbytes(rng.randint(0, 120)))
        else:
            alphabet = b"$*0123456789ABCDEF HELLO HB IDENT LED\x03"
            lines.append(bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 90))))
    return lines


def test_the_node_answers_alike_on_both_interpreters(tmp_path: Path) -> None:
    lines = fuzz_lines()
    source = tmp_path / "lines.hex"
    source.write_text("".join(line.hex() + "\n" for line in lines))
    script = MPY_DIR / "fuzz_node.py"
    on_micropython = run_script(script, str(source))
    assert on_micropython.returncode == 0, on_micropython.stderr
    env = dict(os.environ, PYTHONPATH=os.pathsep.join((str(FIRMWARE), str(MPY_DIR))))
    on_cpython = subprocess.run(
        [sys.executable, str(script), str(source)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    mp_lines = on_micropython.stdout.splitlines()
    cp_lines = on_cpython.stdout.splitlines()
    assert len(mp_lines) == len(cp_lines) == LINES + 1
    for i, (mp, cp) in enumerate(zip(mp_lines, cp_lines, strict=True)):
        assert mp == cp, (
            f"line {i} {lines[i - 1] if i else b''!r}: MicroPython {mp!r}, CPython {cp!r}"
        )
    # Not vacuous: the node obeyed the good lines and refused the bad ones.
    answers = sum(f" HELLO {v} " in line for line in cp_lines for v in (2, 3, 4))
    errors = int(cp_lines[-1].split()[1])
    assert answers > 100 and errors > 6000, (answers, errors)
    assert any(line.endswith(" reset") for line in cp_lines)
    assert any(" IDENT" in line for line in cp_lines)
