"""A six-seat game's display updates, from the Pi's real link to an emulated Pico.

The Pi's own ``NodeDisplay`` (its ``NodePort`` and ``DisplayWriter``) and ``SeatLink``
drive the seat node's firmware on MicroPython's rp2 image in rp2040js
(``tests/pico/seat-pico.mjs``) through a pseudo-terminal: the link opens the pty's slave
side by its ``/dev/serial/by-id``-style name, as it opens a Pico, and the emulator joins
the master side to the node's USB CDC (a full-speed host's frame timing both ways).

The game is recorded first: seeded bots play a whole six-seat game through the real
``Table`` (``bench/display.py``'s scripted game), and after every hardware event each
seat's screen is drawn (``screen_for``, ``render_screen``, the panel's pages) and kept
with its tiles (``render_tiles``), which the display is given as the service gives them
(``NodeDisplay.show_tiles``; a banner or a card as pages).  Each
seat's screens are then played to one emulated node in turn (one node a seat, the same
image), one event every ``--event-ms`` of emulated time (a quick table), so the node gets
what its panel shows during the whole game.

Time: the emulator runs several times slower than real time (it prints its clock, and
the factor is measured).  The port's clock is the emulator's (``NodePort(clock=...)``),
so its 1 s DACK timeout and every figure are in the node's time; the link's liveness
timeouts (silence, HELLO repeats, REPL reset) are scaled by ``--slow`` (40 by default,
above any factor measured here), so a slow emulator never looks like a dead node.

Printed, one line::

    emulated=rp2040 protocol=5 seats=6 events=... updates=... full_resends=0 lost=0
    asked=... dacks=... unacknowledged=0 dack_ms_p50=... dack_ms_p99=... dack_ms_max=...
    full_dack_ms_max=... slowdown=...

``protocol``: the version the nodes answered (5 with firmware 0.7; 4 with 0.6).
``asked``: the updates that asked for their ``DACK`` (``dacks``: the ``DACK``s that came
back); ``unacknowledged``: updates no ``DACK`` or heartbeat had acknowledged at the end
(2 s of emulated time after the last event).
``full_resends``: whole screens the Pi sent again because the node lost an update
(DLOST) or did not acknowledge one in time (the first whole screen after each PANEL
report is not one: the panel is blank then); ``dack_ms``: from the Pi writing an update
that asks for its DACK to that DACK reaching the Pi, in emulated time; ``full_dack_ms``:
the same for whole screens; ``slowdown``: wall time over emulated time.

    python bench/pico_game.py IMAGE.uf2 [--seed N] [--seats 6] [--events N] [--event-ms 250]

IMAGE defaults to $TRUCO_SEAT_UF2, the bootrom to $TRUCO_PICO_BOOTROM (as bench/pico.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tty
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.display import Bench  # noqa: E402
from controller.hal.display import DisplayConfig  # noqa: E402
from controller.hal.display_planner import BusModel  # noqa: E402
from controller.hal.events import DisplayAck, LinkEvent  # noqa: E402
from controller.hal.node_display import NodeDisplay  # noqa: E402
from controller.hal.panels import Controller  # noqa: E402
from controller.hal.seatlink import SeatLink  # noqa: E402
from controller.render.screen import render_screen, render_tiles, screen_content  # noqa: E402
from controller.table.screens import screen_for  # noqa: E402

RUNNER = ROOT / "tests" / "pico" / "seat-pico.mjs"
SERIAL = "e6614103e7ab4121"
PANEL = "ssd1306"


#: a seat's screen as the service gives it to the node's display: its kept tiles (None
#: for a banner or a card) and its pages
Screen = tuple[tuple[bytes, ...] | None, bytes]


class Recorder(Bench):
    """``bench/display.py``'s scripted game, keeping each seat's screens as they change."""

    def __init__(self, players: int, seed: int) -> None:
        self.screens: list[list[Screen]] = [[] for _ in range(players)]
        super().__init__(players, seed, Controller.SSD1306, BusModel.i2c(4096))

    def redraw(self, change: Callable[[], None] | None, kind: str, counted: bool = True) -> None:
        if change is not None:
            change()
        for seat, screens in enumerate(self.screens):
            screen = screen_for(self.table, seat)
            pages = self.writers[seat].frame_bytes(render_screen(screen))
            if not screens or screens[-1][1] != pages:
                screens.append((render_tiles(screen_content(screen)), pages))


def record(players: int, seed: int) -> list[list[Screen]]:
    recorder = Recorder(players, seed)
    recorder.play()
    return recorder.screens


class EmulatedNode:
    """The emulator with its USB CDC joined to a pty; its clock read as it prints it."""

    def __init__(self, image: str, bootrom: str, by_id: Path, workdir: Path) -> None:
        node = shutil.which("node")
        if node is None:
            raise SystemExit("pico_game: Node.js not found (apt-get install nodejs npm)")
        self._master, slave = os.openpty()
        tty.setraw(slave)
        self._slave = slave  # held open: the master never reads EIO while the link reopens
        self.link = by_id / f"usb-MicroPython_Board_in_FS_mode_{SERIAL}-if00"
        self.link.symlink_to(os.ttyname(slave))
        script = workdir / "script.json"
        steps = [{"bridge": {"fd": self._master, "clock_ms": 2}}]
        script.write_text(json.dumps({"wall_timeout_s": 7200, "steps": steps}))
        self._us = 0
        self._cond = threading.Condition()
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [node, str(RUNNER), bootrom, image, str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=RUNNER.parent,
            pass_fds=(self._master,),
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("C "):
                with self._cond:
                    self._us = int(line[2:])
                    self._cond.notify_all()
            else:
                self.lines.append(line.rstrip("\n"))

    def clock(self) -> float:
        """The emulated RP2040's time, in seconds."""
        return self._us / 1e6

    def wait_until(self, emulated_s: float, wall_timeout: float = 600.0) -> None:
        deadline = time.monotonic() + wall_timeout
        with self._cond:
            while self._us / 1e6 < emulated_s:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("pico_game: the emulator stopped:\n" + self._tail())
                self._cond.wait(0.5)

    def _tail(self) -> str:
        stderr = self.process.stderr
        err = stderr.read() if stderr is not None and self.process.poll() is not None else ""
        return (err or "")[-2000:] + "\n" + "\n".join(self.lines[-5:])

    def close(self) -> None:
        if self.process.poll() is None and self.process.stdin is not None:
            try:
                self.process.stdin.write("end\n")
                self.process.stdin.flush()
                self.process.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self._reader.join(timeout=10)
        self.link.unlink(missing_ok=True)
        os.close(self._master)
        os.close(self._slave)


def play_seat(
    image: str, bootrom: str, seat: int, screens: list[Screen], event_s: float, slow: float
) -> dict[str, object]:
    """One seat's screens to one emulated node; what the Pi's port saw."""
    with tempfile.TemporaryDirectory() as tmp:
        by_id = Path(tmp) / "by-id"
        by_id.mkdir()
        node = EmulatedNode(image, bootrom, by_id, Path(tmp))
        sent: dict[int, tuple[float, bool]] = {}  # update -> (emulated s sent, full)
        dacks: list[tuple[float, bool]] = []
        resends: list[str] = []  # why each whole screen went again (not the panel's first)
        started = time.monotonic()
        display = NodeDisplay(
            DisplayConfig(driver=PANEL, connected_to="node"), seat=seat, clock=node.clock
        )
        counted = display.send_counted

        def timed(
            header: Callable[[int], tuple[str, tuple[str, ...]]], block: list[tuple[bytes, bytes]]
        ) -> int:
            when = node.clock()

            def stamped(count: int) -> tuple[str, tuple[str, ...]]:
                kind, args = header(count)
                if args[-1] == "ACK":
                    sent[int(args[0])] = (when, args[3] == "FULL")
                return kind, args

            return counted(stamped, block)

        display.send_counted = timed  # type: ignore[method-assign]
        resend_full = display.port._resend_full

        def counted_resend(why: str) -> None:
            if "panel" not in why:  # the panel ready (blank RAM), or re-initialised: not one
                resends.append(why)
            resend_full(why)

        display.port._resend_full = counted_resend  # type: ignore[method-assign]
        port_event = display.port.on_event

        def on_display(event: LinkEvent) -> None:
            if isinstance(event, DisplayAck) and event.update in sent:
                at, full = sent.pop(event.update)
                dacks.append((node.clock() - at, full))
            port_event(event)

        link = SeatLink.for_serial(
            seat,
            SERIAL,
            ignore,
            by_id_dir=by_id,
            heartbeat_timeout=3.5 * slow,
            hello_interval=1.0 * slow,
            repl_after=2.5 * slow,
            backoff_initial=0.05,
            backoff_max=0.5,
            read_timeout=0.05,
        )
        display.attach(link)
        link.display_listener = on_display
        direct = link.send_update  # the port's direct way for most updates (protocol 4, 5)

        def timed_update(
            update: int, regions: bytes, full: bool, bodies: list[bytes], ask_over: int
        ) -> tuple[int, int, bool]:
            when = node.clock()
            written, size, ask = direct(update, regions, full, bodies, ask_over)
            if written and ask:
                sent[update] = (when, full)
            return written, size, ask

        link.send_update = timed_update  # type: ignore[method-assign]
        link.start()
        try:
            node.wait_until(0.5)
            deadline = time.monotonic() + 600
            while display.port.reported is None or not display.port.reported.ok:
                if time.monotonic() > deadline:
                    raise SystemExit("pico_game: the node never reported its panel")
                time.sleep(0.05)
            begin = node.clock()
            for index, (tiles, pages) in enumerate(screens):
                # as the service shows it (TableService._show): the tiles, else the pages
                if tiles is not None:
                    display.show_tiles(tiles)
                else:
                    display.show_pages(pages)
                node.wait_until(begin + (index + 1) * event_s)
            node.wait_until(node.clock() + 2.0)  # the last ones acknowledged (HB, DACK)
            emulated = node.clock()
            protocol = link.protocol  # the session's, as the node answered the HELLO
            unacknowledged = len(display.port.unacknowledged)
        finally:
            link.close()
            node.close()
        stats = display.port.stats
        return {
            "protocol": protocol,
            "events": len(screens),
            "updates": stats.updates,
            "full_resends": len(resends),
            "resend_reasons": resends,
            "lost": stats.lost,
            "dacks": dacks,
            "asked": stats.asked,
            "unacknowledged": unacknowledged,
            "slowdown": (time.monotonic() - started) / max(emulated, 1e-9),
            "errors": display.errors,
        }


def ignore(_seat: int, _event: LinkEvent) -> None:
    """The link's events that are not the display's: nothing to do with them here."""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image", nargs="?", default=os.environ.get("TRUCO_SEAT_UF2"))
    parser.add_argument("--bootrom", default=os.environ.get("TRUCO_PICO_BOOTROM"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seats", type=int, default=6)
    parser.add_argument("--events", type=int, default=0, help="a seat's first N screens (0: all)")
    parser.add_argument("--event-ms", type=float, default=250.0)
    parser.add_argument("--slow", type=float, default=40.0)
    parser.add_argument("--jobs", type=int, default=1, help="seats emulated at once")
    args = parser.parse_args()
    if not args.image or not args.bootrom:
        raise SystemExit("pico_game: give the image (or TRUCO_SEAT_UF2) and TRUCO_PICO_BOOTROM")
    screens = record(6, args.seed)
    events = updates = resends = lost = errors = asked = unacknowledged = 0
    dacks: list[tuple[float, bool]] = []
    slowdowns: list[float] = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(
            pool.map(
                lambda seat: play_seat(
                    args.image,
                    args.bootrom,
                    seat,
                    screens[seat][: args.events] if args.events else screens[seat],
                    args.event_ms / 1000,
                    args.slow,
                ),
                range(args.seats),
            )
        )
    for result in results:
        events += int(result["events"])  # type: ignore[call-overload]
        updates += int(result["updates"])  # type: ignore[call-overload]
        resends += int(result["full_resends"])  # type: ignore[call-overload]
        lost += int(result["lost"])  # type: ignore[call-overload]
        errors += int(result["errors"])  # type: ignore[call-overload]
        dacks += result["dacks"]  # type: ignore[arg-type]
        asked += int(result["asked"])  # type: ignore[call-overload]
        unacknowledged += int(result["unacknowledged"])  # type: ignore[call-overload]
        slowdowns.append(float(result["slowdown"]))  # type: ignore[arg-type]
    all_ms = [d * 1000 for d, _full in dacks]
    full_ms = [d * 1000 for d, full in dacks if full]
    figures = {
        "emulated": "rp2040",
        "protocol": "/".join(sorted({str(r["protocol"]) for r in results})),
        "seats": str(args.seats),
        "events": str(events),
        "updates": str(updates),
        "full_resends": str(resends),
        "lost": str(lost),
        "display_errors": str(errors),
        "asked": str(asked),
        "dacks": str(len(all_ms)),
        "unacknowledged": str(unacknowledged),
        "dack_ms_p50": f"{percentile(all_ms, 0.5):.1f}",
        "dack_ms_p99": f"{percentile(all_ms, 0.99):.1f}",
        "dack_ms_max": f"{max(all_ms):.1f}" if all_ms else "nan",
        "full_dack_ms_max": f"{max(full_ms):.1f}" if full_ms else "nan",
        "event_ms": f"{args.event_ms:.0f}",
        "slowdown": f"{max(slowdowns):.1f}",
        "jobs": str(args.jobs),
        "seed": str(args.seed),
    }
    print(" ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
