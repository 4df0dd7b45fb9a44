"""A venue's night in one command: ``truco-table venue-night --venue salon/ --out torneo/``.

It starts the venue's Mosquitto (``salon/broker/mosquitto.conf``, its files made
readable by the user Mosquitto runs as, whoever starts it: :func:`.broker.ready_for_broker`),
waits for the desks' listener, then starts the organiser's desk (``truco-table desk
--competition`` with ``salon/desks/<desk>/desk.toml``, its files in ``--out``) and, once
its page answers, prints the organiser's login link (``http://127.0.0.1:PORT/#clave=...``).
From then on it looks after both: a desk or a broker that stops by itself (a crash, a
``kill -9``) is started again at once on the same folder (the desk resumes from its
journal and snapshot); Ctrl-C or SIGTERM stops the desk (cleanly: its exports written)
and then the broker. ``systemd/truco-venue.service`` runs it at boot.

A venue written with ``--inner-port`` has a door in front of the tables' listener
(``salon/broker/truco-front.toml``, :mod:`.front`): it is started with the broker and
looked after the same way.

What each child says goes to ``OUT/mesa-de-control.log``, ``OUT/mosquitto.log`` and
``OUT/puerta.log``; the desk's process id is in ``OUT/desk.pid`` while it runs.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TextIO
from urllib.parse import quote

from ..wire.topics import check_name
from .broker import VenueError, ready_for_broker
from .front import load_front

__all__ = ["Night", "NightError", "find_organiser_desk", "run_night"]

#: A child that dies this many times in a row within ``QUICK_S`` of its start is left
#: down (a bad journal, a configuration that cannot work): the night stops, saying why.
GIVE_UP_AFTER: Final = 5
QUICK_S: Final = 5.0
STOP_S: Final = 15.0  # how long a child has to stop cleanly before it is killed
START_S: Final = 120.0  # how long the broker has to open its ports
SLOW_S: Final = 10.0  # a desk not up by then: the night says it is reading its journals
READING: Final = ("La mesa de control está leyendo sus registros (la primera vez, en una "
                  "noche larga, puede tardar un par de minutos)...")  # fmt: skip
PID_FILE: Final = "desk.pid"
DESK_LOG: Final = "mesa-de-control.log"
BROKER_LOG: Final = "mosquitto.log"
DOOR_LOG: Final = "puerta.log"


class NightError(RuntimeError):
    """The night cannot start or cannot go on (the text, in Spanish, says why)."""


@dataclass(frozen=True)
class Night:
    """What ``venue-night`` runs: the venue's folder, the organiser's desk, where its
    files go, and the page's port."""

    venue: Path
    desk: str
    out: Path
    http_port: int = 8080
    python: str = sys.executable
    tv_port: int = 0  # the bar's TV (desk --tv-port), 0: none


def find_organiser_desk(venue: Path) -> str:
    """The organiser's desk of ``venue`` (the one ``venue-broker`` marks so in its
    ``desk.toml``; the only desk when there is one)."""
    desks = sorted(p.parent.name for p in (venue / "desks").glob("*/desk.toml"))
    if not desks:
        raise NightError(f"{venue}: no hay ninguna mesa de control (desks/*/desk.toml): "
                         "¿es la carpeta que escribió truco-table venue-broker?")  # fmt: skip
    for desk in desks:
        text = (venue / "desks" / desk / "desk.toml").read_text(encoding="utf-8")
        if text.startswith("# the organiser's desk"):
            return desk
    return desks[0]


def _listeners(conf: Path) -> list[tuple[str, int]]:
    """The (address, port) of each listener of a Mosquitto configuration."""
    out = []
    for line in conf.read_text(encoding="utf-8").splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "listener" and words[1].isdigit():
            out.append((words[2] if len(words) > 2 else "127.0.0.1", int(words[1])))
    return out


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host if host != "0.0.0.0" else "127.0.0.1", port), 1):
            return True
    except OSError:
        return False


def _page_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "api/tournament", timeout=2) as r:
            return bool(r.status == 200)
    except (OSError, urllib.error.URLError):
        return False


class _Child:
    """One process the night looks after: started, watched, started again."""

    def __init__(self, name: str, argv: Callable[[], list[str]], log: Path) -> None:
        self.name, self.argv, self.log = name, argv, log
        self.process: subprocess.Popen[bytes] | None = None
        self.started = 0.0
        self.quick_deaths = 0

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                self.argv(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True,  # Ctrl-C reaches the night, which stops them in order
            )  # fmt: skip
        self.started = time.monotonic()

    def died(self) -> int | None:
        """The exit status when it stopped by itself (negative: the signal), else None."""
        if self.process is None:
            return None
        return self.process.poll()

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(STOP_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _how(status: int) -> str:
    if status < 0:
        try:
            return f"la señal {signal.Signals(-status).name}"
        except ValueError:
            return f"la señal {-status}"
    return f"el código {status}"


def run_night(night: Night, out: TextIO, stop: threading.Event | None = None) -> int:
    """Run the night until ``stop`` (or SIGINT/SIGTERM when called on the main thread);
    0 when it was stopped, 1 when a child could not be kept running, 2 when it could not
    start (the reason printed)."""
    stop = stop or threading.Event()
    try:
        return _run(night, out, stop)
    except (NightError, VenueError, OSError) as e:
        print(f"truco-table venue-night: {e}", file=sys.stderr)
        return 2


def _run(night: Night, out: TextIO, stop: threading.Event) -> int:
    from ..desk.sessions import load_or_create_key
    from ..sim.mosquitto import find_mosquitto

    venue = night.venue.resolve()
    desk_dir = venue / "desks" / check_name("desk", night.desk)
    desk_conf = desk_dir / "desk.toml"
    if not (venue / "broker" / "mosquitto.conf").is_file():
        raise NightError(f"{venue}: no está broker/mosquitto.conf (¿es la carpeta que escribió "
                         "truco-table venue-broker?)")  # fmt: skip
    if not desk_conf.is_file():
        raise NightError(f"{desk_conf}: no existe (esa mesa de control no es del salón)")
    binary = find_mosquitto()
    if binary is None:
        raise NightError("no está mosquitto (Debian: sudo apt-get install mosquitto)")
    folder = night.out.resolve()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    conf = ready_for_broker(venue / "broker")
    listeners = _listeners(conf)
    key = load_or_create_key(folder)  # the desk reads the same file
    page = f"http://127.0.0.1:{night.http_port}/"
    broker = _Child("el broker", lambda: [binary, "-c", str(conf)], folder / BROKER_LOG)
    door_conf = venue / "broker" / "truco-front.toml"
    door_argv = [night.python, "-m", "controller.cli", "venue-door", "--config", str(door_conf)]
    door = (
        _Child("la puerta del broker", lambda: door_argv, folder / DOOR_LOG)
        if door_conf.is_file()
        else None
    )
    if door is not None:
        listeners.append(load_front(door_conf).listen)
    desk = _Child(
        "la mesa de control",
        lambda: [night.python, "-m", "controller.cli", "desk", "--config", str(desk_conf),
                 "--competition", "--out", str(folder), "--http-port", str(night.http_port),
                 "--quiet", "--refresh", "3600",
                 *(["--tv-port", str(night.tv_port)] if night.tv_port else [])],
        folder / DESK_LOG,
    )  # fmt: skip
    previous: list[tuple[signal.Signals, Any]] = []
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous.append((signum, signal.signal(signum, lambda *_: stop.set())))
    try:
        print(f"Salón {venue}: arranca el broker (mosquitto -c {conf})", file=out, flush=True)
        broker.start()
        if door is not None:
            door.start()
        _wait(lambda: all(_answers(h, p) for h, p in listeners), broker, stop,
              f"el broker no abrió sus puertos; mirá {folder / BROKER_LOG}")  # fmt: skip
        print(f"Arranca la mesa de control ({night.desk}), con sus archivos en {folder}",
              file=out, flush=True)  # fmt: skip
        _start_desk(desk, folder)
        # a first start on a long night's folder (no snapshot yet) reads its journals
        # whole: as long as the desk runs, it is waited for
        _wait(lambda: _page_answers(page), desk, stop,
              f"la página de la mesa de control no contesta; mirá {folder / DESK_LOG}",
              bound=None, out=out, slow=READING)
        print("Listo. La página del organizador (entra sola con tu clave, no la compartas):\n"
              f"  {page}#clave={quote(key, safe='')}\n"
              "Ctrl-C termina la noche: para la mesa de control y después el broker.",
              file=out, flush=True)  # fmt: skip
        return _watch(broker, desk, folder, stop, out, door)
    finally:
        desk.stop()
        (folder / PID_FILE).unlink(missing_ok=True)
        if door is not None:
            door.stop()
        broker.stop()
        if conf.parent != venue / "broker":  # a copy made for the broker's user: gone too
            shutil.rmtree(conf.parent, ignore_errors=True)
        for signum, handler in previous:
            signal.signal(signum, handler)
        print("La noche terminó: la mesa de control y el broker están parados.", file=out,
              flush=True)  # fmt: skip


def _start_desk(desk: _Child, folder: Path) -> None:
    desk.start()
    assert desk.process is not None
    tmp = folder / (PID_FILE + ".tmp")
    tmp.write_text(f"{desk.process.pid}\n", encoding="ascii")
    os.replace(tmp, folder / PID_FILE)


def _wait(
    ready: Callable[[], bool],
    child: _Child,
    stop: threading.Event,
    why: str,
    *,
    bound: float | None = START_S,
    out: TextIO | None = None,
    slow: str = "",
) -> None:
    """Until ``ready``; an error when ``child`` stops, when asked to stop, or after
    ``bound`` seconds (None: as long as the child runs; ``slow`` said after 10 s)."""
    start = time.monotonic()
    said = False
    while not ready():
        status = child.died()
        if status is not None:
            raise NightError(f"{child.name} se cortó al arrancar ({_how(status)}): {why}")
        if stop.wait(0.1):
            raise NightError("se pidió terminar antes de que todo arrancara")
        waited = time.monotonic() - start
        if bound is not None and waited > bound:
            raise NightError(why)
        if out is not None and slow and not said and waited > SLOW_S:
            print(slow, file=out, flush=True)
            said = True


def _watch(broker: _Child, desk: _Child, folder: Path, stop: threading.Event,
           out: TextIO, door: _Child | None = None) -> int:  # fmt: skip
    """The children kept running until ``stop``."""
    while not stop.wait(0.05):
        for child in (broker, desk, *((door,) if door is not None else ())):
            status = child.died()
            if status is None:
                continue
            quick = time.monotonic() - child.started < QUICK_S
            child.quick_deaths = child.quick_deaths + 1 if quick else 0
            if child.quick_deaths >= GIVE_UP_AFTER:
                print(f"{child.name} se cortó {GIVE_UP_AFTER} veces seguidas al arrancar "
                      f"({_how(status)}): la noche para. Mirá {child.log}", file=out,
                      flush=True)  # fmt: skip
                return 1
            print(f"{child.name} se cortó ({_how(status)}): arranca de nuevo", file=out,
                  flush=True)  # fmt: skip
            if child is desk:
                _start_desk(desk, folder)
            else:
                child.start()
    return 0
