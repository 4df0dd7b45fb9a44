"""The node's loop allocates nothing a pass (MicroPython's speed guide), on the real
MicroPython: 10,000 passes of ``seatnode.main.run`` weighed one by one with
``gc.mem_alloc()`` (tests/firmware/mpy/loop_alloc.py), the garbage collector off.

A pass that sends a frame to the Pi makes that frame (new bytes: HELLO, PANEL, the
heartbeats, TAGON, TAGOFF, PRESS); every other pass, idle or polling the reader with
and without a card on it, sampling the buttons, blinking the LED, writing the panel's
liveness refresh, allocates nothing at all."""

from __future__ import annotations

import os
import subprocess

from micropython_unix import MPY_DIR, environment, require_micropython

PASSES = 10000


def test_ten_thousand_passes_of_the_loop_allocate_nothing_but_the_frames_sent() -> None:
    read_end, write_end = os.pipe()  # the Pi's side, held open and silent: no EOF
    try:
        done = subprocess.run(
            [require_micropython(), str(MPY_DIR / "loop_alloc.py"), str(PASSES)],
            stdin=read_end,
            capture_output=True,
            env=environment(),
            timeout=300,
        )
    finally:
        os.close(read_end)
        os.close(write_end)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    figures = dict(line.split("=", 1) for line in done.stderr.decode().split())
    frames = done.stdout.decode().splitlines()
    kinds = [line.split()[1] for line in frames]
    # the run covered what a pass does: reader polls with and without the card, the
    # card's TAGON and TAGOFF, a press, heartbeats, the liveness refresh
    assert int(figures["passes"]) == PASSES
    assert int(figures["polls"]) > 1000 and int(figures["card_reads"]) >= 100, figures
    assert int(figures["refreshes"]) >= 10, figures
    assert kinds.count("TAGON") == 1 and kinds.count("TAGOFF") == 1, kinds
    assert kinds.count("PRESS") == 1 and kinds.count("HB") >= 30, kinds
    assert int(figures["frames"]) == len(frames)
    # ... and no pass allocated a byte unless it sent a frame
    assert figures["allocating_passes"] == "0", figures
    assert figures["worst_bytes"] == "0", figures
    # the loop collects its garbage every 10 s when the Pi sends nothing (config.py)
    expected = int(figures["fake_ms"]) // 10000
    assert expected - 1 <= int(figures["collections"]) <= expected + 1, figures
