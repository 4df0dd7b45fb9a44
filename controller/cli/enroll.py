"""``truco-table enroll``: teach the table a deck, card by card, on one reader.

::

    truco-table enroll --deck NAME [--registry PATH] [--card CARD ... | --replace]
                       (--port DEVICE | --serial SERIALNO | --mock [--seed N] [--mock-pace S])

Tags are read from one seat node through a real :class:`~controller.hal.seatlink.SeatLink`
(``--port /dev/ttyACM0`` or ``/dev/truco-seat0``, or ``--serial`` with the Pico's
USB serial number, found under ``/dev/serial/by-id``).  The terminal shows
which card to tap next and what each tap did; typing ``u``, ``s`` or ``q``
then Enter undoes the last card, skips a card (asked for again at the end) or
quits.  Ctrl-C or ``q`` quit without writing anything.  When every card has a
tag the deck is added to the registry file (``--registry``; default
``$TRUCO_TABLE_STATE/decks.toml``, else ``/var/lib/truco-table/decks.toml``),
written atomically; a deck missing cards is never written.

``--mock`` needs no hardware: a simulated seat node on a pseudo-terminal pair
sends ``HELLO``, heartbeats and ``TAGON``/``TAGOFF`` frames (made with
``frames.encode_frame``) for 40 deterministic random NTAG213-like UIDs
(``mock_uids(seed)``), with a few realistic mistakes (a card read twice, a card
already enrolled tapped again); a real ``SeatLink`` reads the pty, so the
whole serial path (framing, checksums, HELLO and heartbeats) is exercised.

``controller.cli`` adds the subcommand with :func:`configure`.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import queue
import random
import select
import sys
import threading
import time
import tty
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TextIO

from ..engine.cards import Card
from ..hal.deck import (
    DeckError,
    check_deck_name,
    default_registry_path,
    load_registry,
    save_registry,
    uid_hex,
)
from ..hal.enroll import ENROLL_ORDER, EnrollSession, EnrollStep, StepKind
from ..hal.events import (
    PROTOCOL_VERSION,
    Heartbeat,
    Hello,
    LinkEvent,
    NodeConnected,
    NodeDisconnected,
    TagArrived,
    TagConflict,
    TagLeft,
)
from ..hal.frames import SEQ_MODULO, encode_frame, parse_frame
from ..hal.node_finder import DEFAULT_BY_ID_DIR, find_nodes
from ..hal.seatlink import SeatLink, status_message
from .arguments import duration
from .ctrl_c import CtrlCNoted

__all__ = ["MockReader", "configure", "mock_script", "mock_uids", "run"]

#: Exit codes.
EXIT_OK: Final = 0
EXIT_INCOMPLETE: Final = 1  # quit with "q", or the simulated reader ran out of cards
EXIT_USAGE: Final = 2  # bad arguments, unreadable registry, deck exists
EXIT_INTERRUPTED: Final = 130  # Ctrl-C

NO_READER_HINT_SECONDS: Final = 5.0
MOCK_IDLE_SECONDS: Final = 1.0
MOCK_SERIAL: Final = "00000000c0ffee00"
MOCK_FIRMWARE: Final = "mock"
#: where udev's stable names of the USB serial devices are, when not /dev/serial/by-id
#: (another distribution; the guide's test, whose nodes are simulated)
BY_ID_ENV: Final = "TRUCO_TABLE_BY_ID_DIR"

KEYS_HELP: Final = (
    "Teclas: u+Enter deshace la última carta, s+Enter saltea una carta (se pide de nuevo "
    "al final), q+Enter o Ctrl-C sale sin guardar."
)


# -- the simulated reader ------------------------------------------------------------------


def mock_uids(seed: int, count: int = len(ENROLL_ORDER)) -> tuple[bytes, ...]:
    """``count`` distinct 7-byte UIDs like NTAG213's (first byte 0x04, NXP), from ``seed``."""
    rng = random.Random(seed)
    uids: list[bytes] = []
    while len(uids) < count:
        uid = b"\x04" + rng.randbytes(6)
        if uid not in uids:
            uids.append(uid)
    return tuple(uids)


def mock_script(seed: int) -> list[tuple[str, bytes]]:
    """The frames the simulated node sends: (``TAGON`` | ``TAGOFF``, uid), in order.

    Card i of ``mock_uids(seed)`` is tapped when card i of the enroll order is
    asked for.  Now and then a card bounces (read, lost and read again while it
    lies on the reader) or an earlier card is tapped by mistake first; the
    session ignores or refuses those, so the deck still comes out right.
    """
    uids = mock_uids(seed)
    rng = random.Random(f"truco-table mock script {seed}")
    script: list[tuple[str, bytes]] = []
    for i, uid in enumerate(uids):
        if i >= 3 and rng.random() < 0.06:
            stray = uids[rng.randrange(i - 1)]
            script += [("TAGON", stray), ("TAGOFF", stray)]
        script.append(("TAGON", uid))
        if rng.random() < 0.1:
            script += [("TAGOFF", uid), ("TAGON", uid)]
        script.append(("TAGOFF", uid))
    return script


class MockReader:
    """A tiny simulated seat node on a pseudo-terminal pair.

    ``port`` is the pty's slave path, for ``SeatLink``.  The node answers the
    Pi's ``HELLO``, sends a heartbeat every ``heartbeat`` seconds and then plays
    ``script`` (see :func:`mock_script`), one frame every ``pace`` seconds.
    ``done`` is set when the script has been sent.  ``seat``: the seat number
    the node says it has in its HELLO (None: not set).
    """

    def __init__(
        self,
        script: Sequence[tuple[str, bytes]],
        *,
        pace: float = 0.05,
        heartbeat: float = 0.5,
        serial: str = MOCK_SERIAL,
        seat: int | None = None,
    ) -> None:
        self.script = list(script)
        self.seat = seat
        self.pace = pace
        self.heartbeat = heartbeat
        self.serial = serial
        self.done = threading.Event()
        self._stop = threading.Event()
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)
        os.set_blocking(self._master, False)
        self.port = os.ttyname(self._slave)
        self._seq = 0
        self._thread = threading.Thread(target=self._run, name="mock-reader", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        for fd in (self._master, self._slave):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> MockReader:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _send(self, kind: str, *args: str) -> None:
        frame = encode_frame(self._seq, kind, *args)
        self._seq = (self._seq + 1) % SEQ_MODULO
        # Nobody listening: USB CDC drops the data too.
        with contextlib.suppress(OSError):
            os.write(self._master, frame)

    def _host_said_hello(self, buffer: bytearray) -> str | None:
        """The session number of the host's last HELLO in ``buffer``, if it sent one."""
        session = None
        while b"\n" in buffer:
            line, _, rest = bytes(buffer).partition(b"\n")
            buffer[:] = rest
            with contextlib.suppress(ValueError):
                _seq, kind, args = parse_frame(line.strip(b"\r"))
                if kind == "HELLO" and len(args) == 2:
                    session = args[1]
        return session

    def _run(self) -> None:
        buffer = bytearray()
        greeted = False
        position = 0
        next_frame = next_heartbeat = time.monotonic()
        while not self._stop.is_set():
            try:
                readable, _, _ = select.select([self._master], [], [], 0.01)
                data = os.read(self._master, 4096) if readable else b""
            except (BlockingIOError, InterruptedError):
                data = b""
            except (OSError, ValueError):
                return
            buffer += data
            session = self._host_said_hello(buffer)
            if session is not None:
                if not greeted:
                    next_frame = time.monotonic() + self.pace  # show the first prompt first
                greeted = True
                seat = "-" if self.seat is None else str(self.seat)
                self._send(
                    "HELLO", str(PROTOCOL_VERSION), MOCK_FIRMWARE, seat, self.serial, "92", session
                )
            if not greeted:
                continue
            now = time.monotonic()
            if now >= next_heartbeat:
                next_heartbeat = now + self.heartbeat
                self._send("HB", str(int(now)), "0", "OK")
            while position < len(self.script) and now >= next_frame:
                kind, uid = self.script[position]
                self._send(kind, uid_hex(uid))
                position += 1
                next_frame = now + self.pace
                if self.pace > 0:
                    break
            if position == len(self.script):
                self.done.set()


# -- the command -------------------------------------------------------------------------------


def _card(text: str) -> Card:
    """A card by its name (``7E``: rank 1-7, 10-12, then E, B, O or C)."""
    try:
        return Card.from_str(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"no hay carta {text!r}: un número (1-7, 10-12) y después E, B, O o C, por ejemplo 7E"
        ) from None


def configure(p: argparse.ArgumentParser) -> None:
    """The ``enroll`` subcommand's arguments (its ``func`` is :func:`run`)."""
    p.description = (
        "Tocá las cartas de un mazo en un lector, en el orden del mazo (1 a 7, 10, 11 y 12 "
        "de espadas, después bastos, oros y copas), y la mesa guarda qué etiqueta es cada "
        "carta en el registro de mazos. Mirá docs/bares/armado.md."
    )
    p.epilog = KEYS_HELP
    p.add_argument("--deck", required=True, metavar="NOMBRE", help="el nombre del mazo")
    p.add_argument(
        "--registry",
        type=Path,
        metavar="ARCHIVO",
        help="el registro de mazos (por defecto: $TRUCO_TABLE_STATE/decks.toml, "
        "si no /var/lib/truco-table/decks.toml)",
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--card",
        type=_card,
        action="append",
        metavar="CARTA",
        help="vuelve a leer solo esta carta (por ejemplo 7E) de un mazo que ya está; se "
        "puede repetir",
    )
    what.add_argument(
        "--replace", action="store_true", help="vuelve a leer un mazo que ya está, desde cero"
    )
    reader = p.add_mutually_exclusive_group(required=True)
    reader.add_argument("--port", metavar="PUERTO", help="el puerto serie del lector")
    reader.add_argument(
        "--serial", metavar="SERIE", help="el número de serie USB del nodo del lector"
    )
    reader.add_argument(
        "--mock", action="store_true", help="un lector simulado que toca 40 etiquetas inventadas"
    )
    p.add_argument(
        "--seed",
        type=int,
        metavar="SEMILLA",
        help="con --mock: qué etiquetas inventadas (por defecto 0)",
    )
    p.add_argument(
        "--mock-pace",
        type=duration,
        metavar="SEGUNDOS",
        help="con --mock: el tiempo entre lectura y lectura simuladas (por defecto 0,05)",
    )
    p.set_defaults(func=run)


@dataclass(frozen=True)
class _Key:
    text: str


class _QuietSeatCheck(logging.Filter):
    """Any seat's reader may enroll: drop SeatLink's "node says it is seat N" warning."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "says it is seat" not in str(record.msg)


def _read_keys(stream: TextIO, items: queue.Queue[LinkEvent | _Key]) -> None:
    while True:
        try:
            line = stream.readline()
        except (OSError, ValueError):
            return
        if not line:
            return
        items.put(_Key(line.strip().lower()))


def run(
    args: argparse.Namespace,
    *,
    out: TextIO | None = None,
    keys: TextIO | None = None,
    by_id_dir: Path | None = None,
) -> int:
    """Run ``truco-table enroll``; returns the exit code.

    ``out`` defaults to stdout and ``keys`` (the typed commands) to stdin; ``by_id_dir``
    to ``$TRUCO_TABLE_BY_ID_DIR``, else ``/dev/serial/by-id`` (udev's stable names).
    """
    if by_id_dir is None:
        by_id_dir = Path(os.environ.get(BY_ID_ENV) or DEFAULT_BY_ID_DIR)
    stdout = sys.stdout if out is None else out
    key_stream = sys.stdin if keys is None else keys

    def say(text: str = "") -> None:
        print(text, file=stdout, flush=True)

    def fail(text: str, code: int = EXIT_USAGE) -> int:
        print(f"truco-table enroll: {text}", file=sys.stderr, flush=True)
        return code

    if not args.mock and (args.seed is not None or args.mock_pace is not None):
        return fail("--seed y --mock-pace van con --mock")
    path: Path = args.registry if args.registry is not None else default_registry_path()
    try:
        name = check_deck_name(args.deck)
        registry = load_registry(path, missing_ok=True)
    except DeckError as error:
        return fail(str(error))
    existing = registry.get(name)
    if existing is not None and not args.card and not args.replace:
        return fail(
            f"{path} ya tiene un mazo que se llama {existing.name!r}: usá --replace para "
            f"leerlo de nuevo, o --card CARTA para volver a leer cartas sueltas"
        )
    try:
        session = EnrollSession(name, registry, cards=args.card)
    except DeckError as error:
        return fail(f"{error} (en {path}; mazos: {', '.join(registry.names) or 'ninguno'})")

    items: queue.Queue[LinkEvent | _Key] = queue.Queue()
    mock: MockReader | None = None
    port: str
    if args.mock:
        seed = 0 if args.seed is None else args.seed
        pace = 0.05 if args.mock_pace is None else max(0.0, args.mock_pace)
        mock = MockReader(mock_script(seed), pace=pace)
        port = mock.port
        where = f"nodo simulado en {port} (semilla {seed}), leído con SeatLink"
        link = SeatLink(0, port, lambda _seat, event: items.put(event))
    elif args.serial is not None:
        where = f"el nodo con número de serie USB {args.serial.lower()} (en {by_id_dir})"
        link = SeatLink.for_serial(0, args.serial, lambda _seat, event: items.put(event), by_id_dir)
    else:
        where = str(args.port)
        link = SeatLink(0, args.port, lambda _seat, event: items.put(event))

    what = "de nuevo " + " ".join(str(c) for c in session.targets) if args.card else "40 cartas"
    say(f"Registrando el mazo {name!r} en {path}: {what}.")
    say("Poné cada carta en el lector cuando te la pida, y después sacala.")
    say(KEYS_HELP)
    say(f"Lector: {where}")

    seatlink_log = logging.getLogger("controller.hal.seatlink")
    quiet = _QuietSeatCheck()
    seatlink_log.addFilter(quiet)
    started = time.monotonic()
    hinted = False
    connected = False
    reader_warned = False
    prompt_due = False

    def show_prompt() -> None:
        done, total = session.progress
        say(f"[{done + 1:2d}/{total}] {session.prompt}")

    def show_step(step: EnrollStep) -> None:
        mark = "ok" if step.accepted else "!!" if step.refused else "--"
        say(f"        {mark} {step.message}")
        if step.kind in (StepKind.REPEAT, StepKind.COMPLETE, StepKind.NOTHING_TO_UNDO):
            return  # nothing changed: the prompt above still holds
        if not session.finished:
            show_prompt()

    def incomplete(reason: str) -> str:
        done, total = session.progress
        missing = " ".join(str(c) for c in session.missing)
        return (
            f"{reason}: no se escribió nada en {path}. Se tocaron {done} de {total} cartas; "
            f"faltan: {missing}."
        )

    interrupted = CtrlCNoted()
    try:
        if mock is not None:
            mock.start()
        link.start()
        threading.Thread(
            target=_read_keys, args=(key_stream, items), name="enroll-keys", daemon=True
        ).start()
        say("Esperando el lector...")
        last_tag = time.monotonic()
        while not session.finished:
            try:
                item: LinkEvent | _Key | None = items.get(timeout=0.1)
            except queue.Empty:
                item = None
            if interrupted.is_set():
                raise KeyboardInterrupt
            now = time.monotonic()
            if isinstance(item, TagArrived | TagLeft):
                last_tag = now
            if (
                item is None
                and mock is not None
                and mock.done.is_set()
                and now - last_tag > MOCK_IDLE_SECONDS
            ):
                say(incomplete("El lector simulado no tiene más cartas"))
                return EXIT_INCOMPLETE
            if link.busy is not None:
                return fail(_busy_message(link.busy))
            if not connected and not hinted and now - started > NO_READER_HINT_SECONDS:
                hinted = True
                say(_no_reader_hint(args, by_id_dir))
            if prompt_due and not isinstance(item, Hello | NodeConnected):
                prompt_due = False  # the first prompt, once the reader is there
                show_prompt()
            if isinstance(item, _Key):
                if item.text in ("q", "quit"):
                    say(incomplete("Saliste"))
                    return EXIT_INCOMPLETE
                if item.text in ("u", "undo"):
                    show_step(session.undo())
                elif item.text in ("s", "skip"):
                    show_step(session.skip())
                elif item.text == "":
                    show_prompt()
                else:
                    say(KEYS_HELP)
            elif isinstance(item, TagArrived):
                show_step(session.tap(item.uid))
            elif isinstance(item, NodeConnected):
                connected = True
                prompt_due = True
                say(f"Lector conectado en {item.port}")
            elif isinstance(item, TagConflict):
                say("        !! Hay varias cartas en el lector a la vez: poné una sola")
            elif isinstance(item, Hello):
                say(
                    f"Nodo del lector {item.serial}, firmware {item.firmware}, "
                    f"MFRC522 versión 0x{item.reader_version:02X}"
                )
                if prompt_due:
                    prompt_due = False
                    show_prompt()
            elif isinstance(item, NodeDisconnected):
                connected = False
                say(status_message(item) or f"Se fue el lector ({item.reason})")
            elif isinstance(item, Heartbeat) and not item.reader_ok and not reader_warned:
                reader_warned = True
                say(status_message(item) or "No se encuentra el lector de cartas")
    except KeyboardInterrupt:
        say()
        say(incomplete("Interrumpido"))
        return EXIT_INTERRUPTED
    finally:
        interrupted.restore()
        link.close()
        if mock is not None:
            mock.close()
        seatlink_log.removeFilter(quiet)

    try:
        deck = session.deck()
        # Read the file again: another enrollment may have saved meanwhile.
        registry = load_registry(path, missing_ok=True).with_deck(deck)
        save_registry(registry, path)
    except DeckError as error:
        return fail(f"no se guardó: {error}", EXIT_INCOMPLETE)
    except OSError as error:
        return fail(f"no se guardó: no puedo escribir {path}: {error.strerror}", EXIT_INCOMPLETE)
    n = len(registry)
    say(
        f"Quedó guardado el mazo {deck.name!r} ({len(deck)} cartas) en {path}. "
        f"El registro tiene {n} mazo{'s' if n != 1 else ''}: {', '.join(registry.names)}."
    )
    return EXIT_OK


def _busy_message(why: str) -> str:
    return (
        f"{why} (¿el servicio de la mesa, truco-table run?), y un nodo atiende a un solo "
        "programa a la vez. Pará el servicio (sudo systemctl stop truco-table), registrá el "
        "mazo y volvé a arrancarlo (sudo systemctl start truco-table)."
    )


def _no_reader_hint(args: argparse.Namespace, by_id_dir: Path) -> str:
    if args.serial is not None:
        nodes = ", ".join(find_nodes(by_id_dir, product_prefix="")) or "ninguno"
        return (
            f"No hay enchufado ningún nodo con número de serie {args.serial.lower()} "
            f"(nodos que hay: {nodes}). Sigo esperando; Ctrl-C sale."
        )
    if args.mock:
        return "El lector simulado no responde. Sigo esperando; Ctrl-C sale."
    return (
        f"No responde ningún lector en {args.port}: revisá el cable. Sigo esperando; Ctrl-C sale."
    )
