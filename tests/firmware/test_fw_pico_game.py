"""The Pi's real link drives the emulated Pico through a pty: ``bench/pico_game.py`` as a
developer runs it, on the first screens of a recorded six-seat game's seat 0.

The Pi's ``NodeDisplay`` and ``SeatLink`` open a pty joined to the emulated node's USB
CDC (tests/pico/seat-pico.mjs, its ``bridge`` step); the port's clock is the emulator's,
so its DACK timeout is in the node's time however slow the emulator runs.  What is
judged is what the issue asks of it: no whole screen sent again, no update lost, every
update acknowledged in the end (protocol 5: a DACK when the window fills, else the
heartbeat; a quick game's first screens seldom fill 8 KB, and the emulated test checks a
DACK asked in a session of 5), every DACK asked back within the port's 1 s timeout.
(The figures themselves are the bench's.)

Like the other emulated tests, it runs only when an image is given (``TRUCO_SEAT_UF2``,
built outside the repository: firmware/README.md) and skips, saying so, otherwise; with
an image, a missing Node.js or rp2040js fails it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from test_fw_pico_emulated import emulator

ROOT = Path(__file__).resolve().parents[2]


def test_a_recorded_games_screens_reach_the_emulated_node_with_no_resend() -> None:
    _node, bootrom, image = emulator()
    done = subprocess.run(
        [sys.executable, "bench/pico_game.py", image, "--bootrom", bootrom, "--seats", "1",
         "--events", "12", "--event-ms", "250"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = done.stdout.splitlines()
    figures = dict(re.findall(r"(\w+)=(\S+)", line))
    assert figures["protocol"] == "5" and figures["events"] == "12", line
    assert int(figures["updates"]) >= 12, line  # every screen went out (none merged away)
    assert figures["full_resends"] == "0" and figures["lost"] == "0", line
    assert figures["display_errors"] == "0", line
    assert figures["unacknowledged"] == "0", line  # by a DACK or a heartbeat, each
    assert figures["dacks"] == figures["asked"], line  # every DACK asked came back
    if int(figures["dacks"]):
        assert float(figures["dack_ms_max"]) < 1000, line  # within the port's timeout
