"""The table service on mock hardware: memory, start-up time, CPU while idle.

Prints key=value pairs:

- ``rss_mb``: peak resident memory of ``truco-table run --mock`` playing a whole scripted
  game (four seats, sampled every 10 ms from /proc);
- ``ready_s``: from starting ``truco-table run --mock --serve`` to its ``READY=1``
  (sd_notify, as systemd sees it; hardware up and game restored);
- ``idle_cpu_pct``: CPU used by that service while nothing happens (nobody at the
  table), over ``IDLE_S`` seconds: no busy polling should show as near zero.

Run: ``.venv/bin/python bench/service.py``.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from controller.engine import Game, HouseRules
from controller.engine.playout import random_game
from controller.transcript import write

IDLE_S = 5.0
TICK = os.sysconf("SC_CLK_TCK")


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "controller.cli", "run", "--mock", *args]


def rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def peak_rss_during_game(tmp: Path) -> float:
    game = random_game(Game(HouseRules(players=4)), random.Random(5))
    script = tmp / "game.truco"
    script.write_text(write(game))
    proc = subprocess.Popen(
        command("--players", "4", "--state", str(tmp / "game"), "--script", str(script)),
        stdout=subprocess.DEVNULL,
    )
    peak = 0
    while proc.poll() is None:
        peak = max(peak, rss_kb(proc.pid))
        time.sleep(0.01)
    return peak / 1024


def ready_and_idle(tmp: Path) -> tuple[float, float]:
    path = str(tmp / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(path)
        sock.settimeout(30)
        env = dict(os.environ, NOTIFY_SOCKET=path)
        start = time.monotonic()
        proc = subprocess.Popen(
            command("--serve", "--players", "4", "--state", str(tmp / "idle")),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while not sock.recv(4096).startswith(b"READY=1"):
                pass
            ready = time.monotonic() - start
            time.sleep(1.0)  # let start-up settle
            cpu0, wall0 = cpu_seconds(proc.pid), time.monotonic()
            time.sleep(IDLE_S)
            cpu = cpu_seconds(proc.pid) - cpu0
            idle = 100.0 * cpu / (time.monotonic() - wall0)
        finally:
            proc.terminate()
            proc.wait(10)
    return ready, idle


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rss = peak_rss_during_game(Path(tmp))
        ready, idle = ready_and_idle(Path(tmp))
    print(f"rss_mb={rss:.1f} ready_s={ready:.2f} idle_cpu_pct={idle:.2f}")


if __name__ == "__main__":
    main()
