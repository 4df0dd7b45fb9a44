"""``truco-table desk`` and ``truco-table tournament-demo``.

::

    truco-table desk [--config tournament.toml] [--tournament NAME] [--broker HOST:PORT]
                     [--key-file PATH] [--out DIR] [--http-port 8080] [--profile tournament]
    truco-table tournament-demo [--tables 20] [--games 1] [--speed 10] [--flaky 4] ...

``desk`` follows every table of the tournament until interrupted (Ctrl-C, SIGTERM, or
``--duration``): the scoreboard in the terminal every ``--refresh`` seconds, the web
page on http://127.0.0.1:PORT/ (``--http-port 0``: no page), the records in
``DIR/records/``, ``DIR/results.csv`` and ``DIR/results.json`` kept current and written
once more on exit. ``--config`` is the tournament's TOML (``[tournament]`` ``name``,
``broker``, ``key``/``key_file``, ``key_id``); options given on the command line win.

``controller.cli`` adds them with :func:`configure` and :func:`configure_demo`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import signal
import sys
import threading
import time
import tomllib
from pathlib import Path
from typing import Any, Final, TextIO
from urllib.parse import quote

from ..engine import HouseRules
from ..textfile import TextFileError, os_reason, read_text_file
from ..tournament.venue.access import access_from_section
from ..tournament.wire.keys import load_private_key
from ..tournament.wire.seal import KeyConfigError, TournamentKey
from ..tournament.wire.topics import check_name, parse_broker
from .arguments import duration, house_rules, port

__all__ = ["configure", "configure_demo", "run_demo_command", "run_desk"]

log = logging.getLogger(__name__)


def _tournament_section(path: str | None) -> dict[str, Any]:
    if path is None:
        return {}
    text = read_text_file(path, limit=1024 * 1024, what="una configuración de torneo")
    data = tomllib.loads(text)
    section = data.get("tournament", {})
    return section if isinstance(section, dict) else {}


def _not_toml(path: object, e: tomllib.TOMLDecodeError) -> str:
    """A configuration that is no TOML, said in Spanish with its line."""
    from ..table.config import _toml_position, _toml_words

    reason, line, column = _toml_position(e)
    return f"{path}{'' if line is None else f':{line}'}: no es TOML válido: " + _toml_words(
        reason, column
    )


def _os_words(e: OSError) -> str:
    """Why the system refused, in Spanish (a port taken, a folder not writable...)."""
    import errno

    words = {
        errno.EADDRINUSE: "ese puerto ya está en uso: elegí otro",
        errno.EACCES: "no hay permiso: revisá los permisos (o el puerto, si es menor que 1024)",
        errno.EPERM: "no hay permiso: revisá los permisos",
        errno.ENOSPC: "no queda lugar en el disco",
        errno.EROFS: "el disco es de solo lectura",
        errno.EADDRNOTAVAIL: "esa dirección no es de esta máquina",
    }
    if e.errno in words:
        return words[e.errno]
    return os_reason(e)


def run_desk(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    from ..tournament.desk import Desk, DeskState, serve_http
    from ..tournament.desk.state import Quota

    out = out or sys.stdout
    err = err or sys.stderr
    try:
        section = _tournament_section(args.config)
    except TextFileError as e:
        print(f"truco-table desk: {e}", file=err)
        return 2
    except tomllib.TOMLDecodeError as e:
        print(f"truco-table desk: {_not_toml(args.config, e)}", file=err)
        return 2
    try:
        name = check_name("tournament", args.tournament or str(section.get("name", "torneo")))
        host, port = parse_broker(args.broker or str(section.get("broker", "127.0.0.1:1883")))
    except ValueError as e:
        print(f"truco-table desk: {e}", file=err)
        return 2
    key: TournamentKey | None = None
    try:
        if args.key_file is not None:
            key = load_private_key(args.key_file)
        elif args.config is not None and ("key" in section or "key_file" in section):
            key = load_private_key(args.config, kind="config")
    except KeyConfigError as e:
        print(f"truco-table desk: la clave no sirve: {e}", file=err)
        return 2
    if key is None:
        print("truco-table desk: sin el secreto del torneo: los mensajes y los registros no se "
              "verifican", file=err)  # fmt: skip
    try:
        where = f"{args.config}: tournament"
        access = (
            access_from_section(section, Path(args.config).parent, where) if args.config else None
        )
        roster = section.get("tables")
        if roster is not None and (
            not isinstance(roster, list) or not all(isinstance(t, str) for t in roster)
        ):
            raise ValueError(f"{where}.tables: va una lista de nombres de mesa, como "
                             '["mesa01", "mesa02"]')  # fmt: skip
        rules_text = args.rules or section.get("rules")
        rules = None
        if rules_text is not None:
            if not isinstance(rules_text, str):
                raise ValueError(f"{where}.rules: van las reglas de la casa como texto, "
                                 "como \"target=15\"")  # fmt: skip
            rules = house_rules(rules_text, f"{where}.rules" if args.rules is None else "--rules")
        desk_name = check_name("desk", args.name or (access.username if access else "desk"))
    except ValueError as e:
        print(f"truco-table desk: {e}", file=err)
        return 2
    folder = Path(args.out or f"desk-{name}")
    if args.competition:
        return _run_competition(args, folder, name, key, roster, rules, host, port, access,
                                desk_name, out, err)  # fmt: skip
    state = DeskState(
        name, out_dir=folder, key=key, profile=args.profile, tables=roster, rules=rules,
        quota=Quota(hand_s=args.hand_s),
    )  # fmt: skip
    if not _broadcast_settings(args, state, err):
        return 2
    desk = Desk(state, host, port, access=access, name=desk_name, reverify_s=args.reverify).start()
    server = None
    if args.http_port:
        try:
            server = serve_http(state, args.http_port)
        except OSError as e:
            print(f"truco-table desk: no puedo abrir la página en el puerto {args.http_port}: "
                  f"{_os_words(e)}", file=err)  # fmt: skip
            desk.stop()
            return 2
    page = f"http://127.0.0.1:{server.server_address[1]}/" if server is not None else "-"
    print(f"mesa de control: torneo {name}, broker {host}:{port}, página {page}, archivos en "
          f"{folder}", file=out)  # fmt: skip
    tv = _start_tv(args, state, out, err)
    if tv is False:
        desk.stop()
        if server is not None:
            server.shutdown()
            server.server_close()
        return 2

    def close() -> None:
        desk.stop()
        for each in (server, tv):
            if each is not None and each is not False:
                each.shutdown()
                each.server_close()

    _follow(args, state, page, close, out)
    out.write(f"resultados: {folder / 'results.csv'}, {folder / 'results.json'}\n")
    return 0


def _follow(args: argparse.Namespace, state: Any, page: str, close: Any, out: TextIO) -> None:
    """The board every ``--refresh`` s until Ctrl-C, SIGTERM or ``--duration``."""
    from ..tournament.desk import render_board

    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    previous: list[tuple[int, Any]] = []
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous.append((sig, signal.signal(sig, on_signal)))
    tty = out.isatty()
    deadline = time.monotonic() + args.duration if args.duration else None
    try:
        while not stop.wait(args.refresh):
            if deadline is not None and time.monotonic() >= deadline:
                break
            board = render_board(state)
            if tty:
                out.write("\033[H\033[2J" + board + f"\n\npágina {page} · Ctrl-C termina\n")
            elif not args.quiet:
                out.write(board + "\n\n")
            out.flush()
    finally:
        for sig_number, handler in previous:
            signal.signal(sig_number, handler)
        close()
    out.write(render_board(state) + "\n")


def _run_competition(
    args: argparse.Namespace,
    folder: Path,
    name: str,
    key: TournamentKey | None,
    roster: list[str] | None,
    rules: HouseRules | None,
    host: str,
    port: int,
    access: Any,
    desk_name: str,
    out: TextIO,
    err: TextIO,
) -> int:
    """``desk --competition``: the desk runs the tournament (registration, rounds,
    tables, standings); the organiser's commands come through ``truco-table organiser``."""
    from ..tournament.desk.journal import JournalError
    from ..tournament.desk.running import DeskRun
    from ..tournament.desk.state import Quota

    if key is None or not roster:
        print("truco-table desk: --competition necesita el secreto del torneo y la lista de sus "
              "mesas ([tournament] tables = [...])", file=err)  # fmt: skip
        return 2
    organiser_key = None
    if args.organiser_key_file:
        try:
            organiser_key = Path(args.organiser_key_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as e:
            why = _os_words(e) if isinstance(e, OSError) else "no es texto UTF-8"
            print(f"truco-table desk: --organiser-key-file: no puedo leer "
                  f"{args.organiser_key_file}: {why}", file=err)  # fmt: skip
            return 2
        if len(organiser_key) < 8:
            print("truco-table desk: la clave del organizador necesita al menos 8 caracteres",
                  file=err)  # fmt: skip
            return 2
    try:
        run = DeskRun(folder, name, key=key, tables=roster, rules=rules, host=host, port=port,
                      access=access, name=desk_name, profile=args.profile,
                      http_port=args.http_port or None, reverify_s=args.reverify,
                      organiser_key=organiser_key, quota=Quota(hand_s=args.hand_s))  # fmt: skip
    except JournalError as e:
        print(f"truco-table desk: {folder / 'journal.jsonl'}: {e}; "
              "la mesa de control no arranca con un diario en el que no puede confiar "
              "(truco-table desk-audit dice dónde)", file=err)  # fmt: skip
        return 1
    except OSError as e:
        print(f"truco-table desk: no puede arrancar: {_os_words(e)}", file=err)
        return 2
    page = run.page or "-"
    print(f"mesa de control: torneo {name} (con la competencia), broker {host}:{port}, "
          f"página {page}, archivos en {folder}", file=out)  # fmt: skip
    where = args.organiser_key_file or folder / "organiser.key"
    print(f"mesa de control: la página del organizador pide la clave del organizador (está en "
          f"{where}); truco-table organiser --key-file {where} ...", file=out)  # fmt: skip
    if run.page is not None:
        print(f"La página del organizador (entra sola con tu clave, no la compartas): "
              f"{run.page}#clave={quote(run.organiser_key, safe='')}", file=out)  # fmt: skip
    if not _broadcast_settings(args, run.state, err):
        run.stop()
        return 2
    tv = _start_tv(args, run.state, out, err)
    if tv is False:
        run.stop()
        return 2

    def stop() -> None:
        run.stop()
        if tv is not None:
            tv.shutdown()
            tv.server_close()

    _follow(args, run.state, page, stop, out)
    out.write(f"posiciones: {folder / 'standings.csv'}, {folder / 'standings.json'}\n")
    return 0


def _broadcast_settings(args: argparse.Namespace, state: Any, err: TextIO) -> bool:
    """The broadcast's delay, key and teaching tables on ``state`` (False: refused, said
    on ``err``)."""
    from ..render.broadcast import DelayError, check_delay

    try:
        state.broadcast_delay_s = check_delay(args.broadcast_delay, teaching=False)
    except DelayError as e:
        print(f"truco-table desk: --broadcast-delay: {e} (marcá la mesa con "
              "--teaching-table para mostrarla sin demora)", file=err)  # fmt: skip
        return False
    if args.broadcast_key_file:
        try:
            key = Path(args.broadcast_key_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as e:
            print(f"truco-table desk: --broadcast-key-file: {e}", file=err)
            return False
        if len(key) < 16:
            print("truco-table desk: la clave de la transmisión tiene que tener 16 caracteres "
                  "o más", file=err)  # fmt: skip
            return False
        state.broadcast_key = key
    state.teaching = frozenset(args.teaching_table)
    return True


def _start_tv(args: argparse.Namespace, state: Any, out: TextIO, err: TextIO) -> Any:
    """The bar's TV on ``--tv-port`` (``None``: not asked for; ``False``: the port could
    not be opened, said on ``err``)."""
    if not args.tv_port:
        return None
    from ..tournament.desk.tv import serve_tv

    try:
        tv = serve_tv(state, args.tv_port)
    except OSError as e:
        print(f"truco-table desk: no se puede abrir el puerto {args.tv_port} de la TV: "
              f"{e.strerror or e}", file=err)  # fmt: skip
        return False
    print(f"La TV del bar (todas las mesas, sin cartas): http://<esta-máquina>:"
          f"{tv.server_address[1]}/tv", file=out)  # fmt: skip
    return tv


def run_demo_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from ..tournament.sim.demo import DemoOptions, run_demo

    logging.basicConfig(
        level=logging.ERROR if not args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.format is not None:
        return _run_cup(args, out or sys.stdout)
    tables = args.tables or 20
    opts = DemoOptions(
        tables=tables,
        games=args.games,
        speed=args.speed,
        players=args.players,
        target=args.target,
        flor=args.flor == "on",
        flaky=min(args.flaky, tables),
        cut_every=args.cut_every,
        cut_for=args.cut_for,
        mistakes=args.mistakes,
        seed=args.seed,
        out=Path(args.out) if args.out else None,
        http_port=args.http_port,
        broker=args.broker,
        timeout=args.timeout,
        board=not args.quiet,
    )
    try:
        return run_demo(opts, out or sys.stdout)
    except (FileNotFoundError, RuntimeError) as e:
        print(f"truco-table tournament-demo: {e}", file=sys.stderr)
        return 2


def _run_cup(args: argparse.Namespace, out: TextIO) -> int:
    from ..tournament.competition.model import Format
    from ..tournament.sim.cup import CupOptions, run_cup

    opts = CupOptions(
        format=Format(args.format),
        entrants=args.entrants,
        best_of=args.best_of,
        target=args.target,
        team_size=args.players // 2,
        legs=args.legs,
        rounds=args.rounds,
        groups=args.groups,
        advance=args.advance,
        third_place=not args.no_third_place,
        tables=args.tables,
        speed=args.speed if args.speed_given else 1000.0,
        seed=args.seed,
        cut_desk=not args.no_desk_cut,
        out=Path(args.out) if args.out else None,
        http_port=args.http_port,
        timeout=args.timeout,
        quiet=args.quiet,
    )
    try:
        return run_cup(opts, out)
    except (FileNotFoundError, RuntimeError, ValueError) as e:
        print(f"truco-table tournament-demo: {e}", file=sys.stderr)
        return 2


class _Given(argparse.Action):
    """Stores the value and notes it was given (``speed_given``)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        setattr(namespace, self.dest, values)
        namespace.speed_given = True


def _positive(kind: type) -> Any:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0 or value == float("inf"):  # nan and inf too
            raise argparse.ArgumentTypeError(f"expected a positive number, not {text}")
        return value

    return parse


def configure(d: argparse.ArgumentParser) -> None:
    """The ``desk`` subcommand's arguments (its ``func`` is :func:`run_desk`)."""
    d.add_argument("--config", metavar="ARCHIVO", help="el TOML del torneo ([tournament])")
    d.add_argument("--tournament", metavar="NOMBRE",
                   help="el nombre del torneo (los temas truco/NOMBRE/...)")  # fmt: skip
    d.add_argument("--broker", metavar="HOST:PUERTO", help="por defecto 127.0.0.1:1883")
    d.add_argument("--key-file", metavar="ARCHIVO",
                   help="el secreto del torneo en hexadecimal (0600)")  # fmt: skip
    d.add_argument("--name", metavar="NOMBRE",
                   help="el nombre de esta mesa de control: su id en el broker (por omisión, "
                   "su cuenta del broker)")  # fmt: skip
    d.add_argument("--rules", metavar="'K=V ...'",
                   help="las reglas de la casa del torneo, por ejemplo 'target=15'")  # fmt: skip
    d.add_argument("--reverify", type=_positive(float), default=60.0, metavar="S",
                   help="revisar los registros guardados cada S segundos")  # fmt: skip
    d.add_argument("--out", metavar="CARPETA",
                   help="los registros y los resultados (por defecto desk-NOMBRE)")  # fmt: skip
    d.add_argument("--http-port", type=port, default=8080, metavar="PUERTO",
                   help="la página en 127.0.0.1 (0: ninguna)")  # fmt: skip
    d.add_argument("--broadcast-delay", type=float, default=120.0, metavar="S",
                   help="la transmisión (/transmision/MESA, con clave) muestra lo que pasó "
                   "hace S segundos (10 o más)")  # fmt: skip
    d.add_argument("--broadcast-key-file", metavar="ARCHIVO",
                   help="una clave propia de la transmisión (además de la del "
                   "organizador)")  # fmt: skip
    d.add_argument("--teaching-table", action="append", default=[], metavar="MESA",
                   help="una mesa para enseñar: su transmisión, a cartas vistas y sin "
                   "demora")  # fmt: skip
    d.add_argument("--tv-port", type=port, default=0, metavar="PUERTO",
                   help="la TV del bar: todas las mesas, sin cartas, en todas las "
                        "direcciones de la red del local (0: ninguna)")  # fmt: skip
    d.add_argument("--profile", choices=("tournament", "house"), default="tournament",
                   help="tournament (torneo) o house (la casa)")  # fmt: skip
    d.add_argument("--refresh", type=_positive(float), default=1.0, metavar="S",
                   help="cada cuántos segundos se redibuja el tablero")  # fmt: skip
    d.add_argument("--duration", type=duration, default=0, metavar="S",
                   help="parar después de tantos segundos (0: nunca)")  # fmt: skip
    d.add_argument(
        "--hand-s", type=duration, default=3.0, metavar="SEGUNDOS",  # Quota.hand_s
        help="lo menos que dura una mano en una mesa de verdad (3): un chico cuyas manos "
        "llegan más rápido queda retenido para el organizador (0: no se revisa)",
    )  # fmt: skip
    d.add_argument("--quiet", action="store_true",
                   help="sin tablero, salvo en una terminal")  # fmt: skip
    d.add_argument(
        "--competition", action="store_true",
        help="llevar también el torneo: inscripción, rondas, mesas, posiciones (necesita "
        "el secreto y la lista de mesas)",
    )  # fmt: skip
    d.add_argument(
        "--organiser-key-file", metavar="ARCHIVO",
        help="la clave del organizador para la página y `organiser` (al menos 8 caracteres; "
        "por omisión, una al azar que la mesa de control escribe en OUT/organiser.key, 0600)",
    )  # fmt: skip
    d.set_defaults(func=run_desk)


def configure_demo(t: argparse.ArgumentParser) -> None:
    """The ``tournament-demo`` subcommand's arguments (its ``func`` is :func:`run_demo_command`)."""
    t.add_argument("--tables", type=_positive(int), default=None,
                   help="cuántas mesas (por omisión 20; con --format, las de su ronda más "
                   "grande)")  # fmt: skip
    t.add_argument("--games", type=_positive(int), default=1, help="partidas por mesa")
    t.add_argument(
        "--speed", type=_positive(float), default=10.0, action=_Given,
        help="cuántas veces el ritmo humano (3 s por jugada; con --format, 1000 por omisión)",
    )  # fmt: skip
    t.set_defaults(speed_given=False)
    c = t.add_argument_group("un torneo entero (con --format)")
    c.add_argument(
        "--format", choices=("knockout", "round-robin", "swiss", "groups"), default=None,
        help="jugar un torneo entero con este formato, de la inscripción a las posiciones",
    )  # fmt: skip
    c.add_argument("--entrants", type=_positive(int), default=16, help="cuántos equipos")
    c.add_argument("--best-of", type=int, choices=(1, 3, 5), default=1, help="chicos por partido")
    c.add_argument("--legs", type=int, choices=(1, 2), default=1,
                   help="todos contra todos: 2 = ida y vuelta")  # fmt: skip
    c.add_argument("--rounds", type=_positive(int), default=None, help="rondas del suizo")
    c.add_argument("--groups", type=_positive(int), default=None, help="grupos: cuántos")
    c.add_argument("--advance", type=_positive(int), default=2, help="grupos: cuántos pasan")
    c.add_argument("--no-third-place", action="store_true",
                   help="eliminación directa: sin tercer puesto")  # fmt: skip
    c.add_argument("--no-desk-cut", action="store_true",
                   help="sin corte de luz en la mesa de control")  # fmt: skip
    t.add_argument("--players", type=int, choices=(2, 4, 6), default=2, help="jugadores por mesa")
    t.add_argument("--target", type=int, choices=(15, 30), default=15, help="a cuántos tantos")
    t.add_argument("--flor", choices=("on", "off"), default="off", help="con flor o sin flor")
    t.add_argument("--flaky", type=int, default=4,
                   help="mesas a las que se les corta la red cada tanto")  # fmt: skip
    t.add_argument("--cut-every", type=duration, default=8.0, help="segundos entre cortes")
    t.add_argument("--cut-for", type=duration, default=2.0, help="segundos que dura un corte")
    t.add_argument(
        "--mistakes",
        type=float,
        default=0.02,
        help="probabilidad por jugada de un toque rechazado (un tercio de eso, un deshacer; un "
        "cuarto, un llamado al árbitro)",
    )
    t.add_argument("--seed", type=int, default=0, help="la semilla de los bots")
    t.add_argument("--out", metavar="CARPETA",
                   help="dónde dejar todo (por omisión tournament-FECHA-HORA)")  # fmt: skip
    t.add_argument("--http-port", type=port, default=8080, metavar="PUERTO",
                   help="la página de la mesa de control (0: uno libre)")  # fmt: skip
    t.add_argument("--broker", metavar="HOST:PUERTO",
                   help="un broker que ya anda (por omisión arranca uno)")  # fmt: skip
    t.add_argument("--timeout", type=duration, default=900.0, metavar="SEGUNDOS",
                   help="segundos como máximo")  # fmt: skip
    t.add_argument("--quiet", action="store_true", help="sin tablero, solo líneas de avance")
    t.add_argument("--verbose", action="store_true",
                   help="el registro de las mesas y de la mesa de control")  # fmt: skip
    t.set_defaults(func=run_demo_command)


JOURNAL_KEYS: Final = {"n", "t", "who", "body", "prev", "mac"}


def _looks_like_a_journal(path: Path) -> bool:
    """Whether any line of ``path`` is a journal line in shape (a JSON object with the
    journal's fields): a file with none is no tournament journal at all, not a changed one."""
    try:
        with path.open("rb") as f:
            for line in f:
                with contextlib.suppress(UnicodeDecodeError, ValueError):
                    obj = json.loads(line.decode("utf-8"))
                    if isinstance(obj, dict) and set(obj) == JOURNAL_KEYS:
                        return True
    except OSError:
        return False
    return False


def _whole_lines(path: Path) -> bool:
    """Whether ``path`` holds a whole line (a journal's first line torn by a power cut
    holds none: it is a journal that never took a line, not some other file)."""
    try:
        with path.open("rb") as f:
            return b"\n" in f.read(1 << 20)
    except OSError:
        return False


def run_audit(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``desk-audit``: check a desk's journal at rest; 0 intact, 1 changed (alterado), 2
    usage (no such folder, a file that is no tournament journal, a journal signed with
    the tournament's secret checked without it: it cannot be verified, not "alterado")."""
    from ..tournament.desk.journal import audit, journal_key, signed_with_a_key

    out = out or sys.stdout
    try:
        section = _tournament_section(args.config)
        name = check_name("tournament", args.tournament or str(section.get("name", "torneo")))
        key = load_private_key(args.config, kind="config") if args.config else None
    except (TextFileError, tomllib.TOMLDecodeError, ValueError, KeyConfigError) as e:
        print(f"truco-table desk-audit: {e}", file=sys.stderr)
        return 2
    given = Path(args.folder)
    if not given.exists():
        print(f"truco-table desk-audit: {given}: no existe (la carpeta de la mesa de control, "
              "o su journal.jsonl)", file=sys.stderr)  # fmt: skip
        return 2
    path = given if given.is_file() else given / "journal.jsonl"
    if path.is_file() and _whole_lines(path) and not _looks_like_a_journal(path):
        print(f"truco-table desk-audit: no es un registro de torneo: {path} (ninguna línea es "
              "del diario de una mesa de control)", file=sys.stderr)  # fmt: skip
        return 2
    if key is None and signed_with_a_key(path):
        print(f"truco-table desk-audit: no se puede verificar sin la clave: {path} está firmado "
              "con la clave del torneo; pasá --config con el archivo del torneo (el que "
              "tiene su clave)", file=sys.stderr)  # fmt: skip
        return 2
    verdict = audit(path, name, journal_key(key.key, name) if key is not None else None)
    how = "con la clave del torneo" if verdict.keyed else "SIN la clave: solo cambios por error"
    if verdict.ok:
        print(f"íntegro: {verdict.lines} líneas ({how}); {verdict.reason}",
              file=out)  # fmt: skip
        return 0
    print(f"alterado: línea {verdict.first_bad_line}: {verdict.reason} "
          f"({verdict.lines} líneas antes de ella están bien; {how})", file=out)  # fmt: skip
    return 1


def configure_audit(a: argparse.ArgumentParser) -> None:
    """The ``desk-audit`` subcommand's arguments."""
    a.add_argument("folder", metavar="CARPETA",
                   help="la carpeta de la mesa de control (su journal.jsonl)")  # fmt: skip
    a.add_argument("--config", metavar="ARCHIVO",
                   help="el TOML del torneo (nombre y clave)")  # fmt: skip
    a.add_argument("--tournament", metavar="NOMBRE",
                   help="el nombre del torneo (por omisión, el de --config)")  # fmt: skip
    a.set_defaults(func=run_audit)
