"""The table service as systemd runs it: start-up, memory, CPU while idle.

The service is the unit's own command, ``truco-table run --config table.toml``, on this
machine: six seat nodes simulated on pseudo-terminals under a by-id folder (as udev
publishes real Picos), a deck registry and a state directory. The package is installed
the way the Pi gets it: not editable, byte-compiled at install time (here: the package
copied into a scratch site folder, ``compileall``, then made read-only, as the unit's
``ProtectSystem=strict`` makes /opt), started in the state directory with the unit's
environment. Prints key=value pairs:

- ``ready_s``: from starting the process to its ``READY=1`` (sd_notify, as systemd sees
  it: hardware up, the game restored, every screen drawn), the best of ``RUNS``;
- ``ready_cpu_s``: the CPU time the process had used by then (user and system, in the
  kernel's 10 ms ticks): what start-up costs a Pi that has nothing else to do, where
  ``ready_s`` on a shared machine also counts the waits for a core;
- ``ready_s_editable``: ``ready_s`` from this checkout's editable install, for comparison;
- ``rss_mb``: the service's resident memory (VmRSS), highest while it runs idle for
  ``IDLE_S`` s after READY (heartbeats of six nodes flowing), no tournament;
- ``rss_mb_publisher``: the same with a ``[tournament]`` section: the publisher loaded
  and connected to a local Mosquitto (``-`` where Mosquitto is not installed);
- ``rss_mb_game``: the highest resident memory of ``run --mock --script`` playing a
  whole six-seat game (every screen drawn, the caches filled);
- ``idle_cpu_pct``: the CPU the service used over those idle seconds.

The panels hang on the seat nodes, as the shipped pin map (``hardware/pinmap.toml``)
has them: each simulated node reports its panel and takes the display frames, so
``ready_s`` and ``ready_cpu_s`` include drawing every screen and sending it whole.

Left out: the Pi's own start-up (systemd, udev, the interpreter coming off the SD card
the first time), the nodes' own work (their panels' initialisation, the I2C writes),
the kernel's side of the ptys.
Run: ``.venv/bin/python bench/service.py``.
"""

from __future__ import annotations

import compileall
import contextlib
import os
import random
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from controller.engine import Card, Game, HouseRules
from controller.engine.playout import random_game
from controller.hal.deck import Deck, DeckRegistry, save_registry
from controller.hal.mock import MockDeck, MockNode
from controller.transcript import write

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.rig import plugged  # noqa: E402

IDLE_S = 5.0
RUNS = 3
SEATS = 6
TICK = os.sysconf("SC_CLK_TCK")
KEY = bytes(range(32))


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


def installed_site(tmp: Path) -> Path:
    """The package as the Pi installs it: copied, byte-compiled, read-only."""
    site = tmp / "site"
    shutil.copytree(
        ROOT / "controller", site / "controller", ignore=shutil.ignore_patterns("__pycache__")
    )
    compileall.compile_dir(site, quiet=1, workers=0)
    for path in site.rglob("*"):
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return site


def table_config(tmp: Path, extra: str = "") -> Path:
    deck = MockDeck(3)
    cards = {deck.uid(c): c for c in (Card.from_index(i) for i in range(40))}
    save_registry(DeckRegistry((Deck("bar", cards),)), tmp / "decks.toml")
    config = tmp / "table.toml"
    serials = [f"e6614103e7{seat:06x}" for seat in range(SEATS)]
    config.write_text(
        f'[table]\nplayers = {SEATS}\nstate_dir = "{tmp / "state"}"\n'
        f'decks = "{tmp / "decks.toml"}"\nnext_deal_after_s = 0\n'
        f'[topology]\nkind = "nodes"\n[nodes]\nby_id_dir = "{tmp / "by-id"}"\n'
        + "".join(f'[[nodes.seat]]\nseat = {i}\nserial = "{s}"\n' for i, s in enumerate(serials))
        # the panels on the nodes, as the shipped pin map (hardware/pinmap.toml) has them
        + "".join(
            f'[[display.seat]]\nseat = {i}\nconnected_to = "node"\naddress = 0x3C\n'
            'driver = "ssd1309"\n'
            for i in range(SEATS)
        )
        + extra
    )
    return config


def seat_nodes(tmp: Path) -> contextlib.AbstractContextManager[list[MockNode]]:
    by_id = tmp / "by-id"
    shutil.rmtree(by_id, ignore_errors=True)
    # each with its panel (it reports it after HELLO and takes the display frames)
    nodes = [MockNode(seat, f"e6614103e7{seat:06x}", panel=True) for seat in range(SEATS)]
    return plugged(by_id, nodes)


def service(
    tmp: Path, config: Path, site: Path | None, idle_s: float = 0.0
) -> tuple[float, float, float, float]:
    """Starts the service, waits for READY; (ready_s, its CPU s, highest rss_mb,
    idle_cpu_pct)."""
    state = tmp / "state"
    state.mkdir(exist_ok=True)
    notify = tmp / "notify"
    with contextlib.suppress(FileNotFoundError):
        notify.unlink()
    env = dict(os.environ, NOTIFY_SOCKET=str(notify), PYTHONUNBUFFERED="1")
    if site is not None:
        env["PYTHONPATH"] = str(site)
    with seat_nodes(tmp), socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(notify))
        sock.settimeout(30)
        start = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "run", "--config", str(config)],
            cwd=state,  # the unit's WorkingDirectory
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while not sock.recv(4096).startswith(b"READY=1"):
                pass
            ready = time.monotonic() - start
            ready_cpu = cpu_seconds(proc.pid)
            peak = rss_kb(proc.pid)
            idle = 0.0
            if idle_s:
                time.sleep(1.0)  # let start-up settle
                cpu0, wall0 = cpu_seconds(proc.pid), time.monotonic()
                while time.monotonic() - wall0 < idle_s:
                    peak = max(peak, rss_kb(proc.pid))
                    time.sleep(0.1)
                idle = 100.0 * (cpu_seconds(proc.pid) - cpu0) / (time.monotonic() - wall0)
        finally:
            proc.terminate()
            proc.wait(15)
    return ready, ready_cpu, peak / 1024, idle


def publisher_config(tmp: Path, port: int) -> Path:
    key_file = tmp / "table.key"
    key_file.write_text(KEY.hex() + "\n")
    key_file.chmod(0o600)
    return table_config(
        tmp,
        f'[tournament]\nname = "copa"\ntable_id = "mesa1"\nbroker = "127.0.0.1:{port}"\n'
        f'key_file = "{key_file}"\nkey_id = "bench-key"\n',
    )


def rss_during_game(tmp: Path) -> float:
    game = random_game(Game(HouseRules(players=SEATS)), random.Random(5))
    script = tmp / "game.truco"
    script.write_text(write(game))
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "controller.cli", "run", "--mock"),
            *("--players", str(SEATS), "--state", str(tmp / "game"), "--script", str(script)),
        ],
        stdout=subprocess.DEVNULL,
    )
    peak = 0
    while proc.poll() is None:
        peak = max(peak, rss_kb(proc.pid))
        time.sleep(0.01)
    return peak / 1024


def main() -> None:
    from controller.tournament.sim.mosquitto import LocalBroker, find_mosquitto

    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        site = installed_site(tmp)
        config = table_config(tmp)
        runs = [service(tmp, config, site) for _ in range(RUNS)]
        ready, ready_cpu = min(r[0] for r in runs), min(r[1] for r in runs)
        editable = min(service(tmp, config, None)[0] for _ in range(RUNS))
        _, _, rss, idle = service(tmp, config, site, IDLE_S)
        rss_publisher = "-"
        if find_mosquitto() is not None:
            with LocalBroker() as broker:
                pub = service(tmp, publisher_config(tmp, broker.port), site, IDLE_S)
                rss_publisher = f"{pub[2]:.1f}"
        game = rss_during_game(tmp)
    print(
        f"ready_s={ready:.3f} ready_cpu_s={ready_cpu:.2f} ready_s_editable={editable:.3f} "
        f"rss_mb={rss:.1f} rss_mb_publisher={rss_publisher} rss_mb_game={game:.1f} "
        f"idle_cpu_pct={idle:.2f}"
    )


if __name__ == "__main__":
    main()
