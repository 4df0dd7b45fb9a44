"""``truco-table league``: the league's commands (``add-venue``, ``fixture``, ``desk``).

::

    truco-table league add-venue --dir liga/ --venue bar-lopez --tables 4
        [--desks desk] --host 192.168.1.10 [--port 8883] [--inner-port 8885 | --no-door]
        [--rules 'players=4 target=30']
        [--league liga-bares --central 203.0.113.5:8884]   # the first time only
    truco-table league desk --dir liga/ [--http-port 8090] [--central HOST:PORT]

``add-venue`` issues the venue's keys and accounts and writes its folder (``liga/venues/
<id>/``, to copy to the bar) with its broker bridged to the league's central broker, and
rewrites the central broker's accounts and ACL (:mod:`controller.tournament.league.
bridge`; the README's "Liga" section). ``fixture`` prints the season's matches by
matchday (``--venue``: one venue's) from the clubs and entrants in ``league.toml``
(:mod:`controller.tournament.league.codec`). ``desk`` runs the league desk until Ctrl-C
or SIGTERM: connected to the central broker with the ``league-desk`` account, its
journal in ``liga/desk/``, the league's pages on http://127.0.0.1:PORT/
(:mod:`controller.tournament.league.web`; ``--http-port 0``: none). Exit 0 when done, 2
for what cannot be used (one line, in Spanish).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from .arguments import door_arguments, port
from .venue import _names

__all__ = ["configure", "run_add_venue", "run_desk", "run_fixture", "run_season"]


def run_add_venue(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from ..tournament.league.bridge import LeagueSetupError, add_venue
    from ..tournament.league.model import LeagueRules

    out = out or sys.stdout
    try:
        if args.rules:
            LeagueRules.from_text(3, args.rules)  # refused in Spanish before anything is written
        tables = _names(args.tables, "mesa")
        added = add_venue(
            args.dir,
            args.venue,
            tables,
            _names(args.desks, "desk"),
            league=args.league,
            central=args.central,
            hosts=tuple(args.host or ["127.0.0.1"]),
            port=args.port,
            bind=args.bind,
            central_bind=args.central_bind,
            rules=args.rules,
            inner_port=None if args.no_door else _inner_port(args),
        )
    except (LeagueSetupError, ValueError, argparse.ArgumentTypeError) as e:
        print(f"truco-table league add-venue: {e}", file=sys.stderr)
        return 2
    v = added.venue_dir
    host, port = added.central
    out.write(
        f"sede {added.venue} de la liga {added.league}: {len(added.tables)} mesas, "
        f"{len(added.desks)} mesas de control\n"
        f"a la sede: copiá {v}/ (todo 0600; ca/ca.key no hace falta en el broker)\n"
        f"  broker de la sede: mosquitto -c {added.venue_conf}  (puente a {host}:{port})\n"
        + (
            f"  puerta: truco-table venue-door --config {added.front_conf}  (las mesas entran "
            f"por el {added.port}; Mosquitto, en 127.0.0.1:{added.inner_port}; cierra en 5 s "
            "la conexión que no manda su CONNECT)\n"
            if added.inner_port is not None
            else ""
        )
        + f"  cortafuegos: nft -f {added.firewall}  (pocas conexiones por dirección)\n"
        f"  mesas: {v}/tables/<id>/   mesas de control: {v}/desks/<id>/desk.toml\n"
        f"broker central: mosquitto -c {added.central_conf}  "
        f"(si ya corre: kill -HUP para que lea la sede nueva)\n"
        f"la mesa de la liga: cuenta league-desk, {added.root}/desk/; "
        f"{added.root}/secret.key no sale de ahí\n"
    )
    return 0


def _inner_port(args: argparse.Namespace) -> int:
    """Mosquitto's tables' listener behind the venue's door: ``--inner-port``, or the
    first port from ``--port`` + 2 that no other listener takes."""
    from ..tournament.venue.broker import default_inner_port

    if args.inner_port is not None:
        return int(args.inner_port)
    return default_inner_port(args.port)


def run_fixture(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``league fixture``: the season's matches by matchday (one venue's with --venue)."""
    from pathlib import Path

    from ..tournament.league.codec import league_from_toml
    from ..tournament.league.errors import LeagueError
    from ..tournament.league.fixture import fixture

    out = out or sys.stdout
    path = Path(args.dir) / "league.toml"
    try:
        league = league_from_toml(path.read_text(encoding="utf-8"), str(path))
        if args.venue is not None:
            league.club(args.venue)
    except OSError as e:
        print(f"truco-table league fixture: no se puede leer {path}: {e.strerror}", file=sys.stderr)
        return 2
    except UnicodeDecodeError:
        print(f"truco-table league fixture: {path} no es texto UTF-8", file=sys.stderr)
        return 2
    except LeagueError as e:
        print(f"truco-table league fixture: {e}", file=sys.stderr)
        return 2
    names = {e.id: e.name for e in league.entrants}
    clubs = {c.id: c.name for c in league.clubs}
    day = 0
    for m in fixture(league):
        if args.venue is not None and m.venue != args.venue:
            continue
        if m.matchday != day:
            day = m.matchday
            out.write(f"{m.label}, {m.date.isoformat()}\n")
        out.write(f"  {m.id}  {names[m.home]} - {names[m.away]}  en {clubs[m.venue]}\n")
    return 0


def _season_args(args: argparse.Namespace, name: str) -> tuple[object, bytes] | None:
    """The league of ``--dir`` and its secret, or None (the error printed)."""
    from pathlib import Path

    from ..tournament.league.bridge import LeagueSetupError, read_league_secret
    from ..tournament.league.codec import league_from_toml
    from ..tournament.league.errors import LeagueError

    path = Path(args.dir) / "league.toml"
    try:
        league = league_from_toml(path.read_text(encoding="utf-8"), str(path))
        secret = read_league_secret(Path(args.dir))
    except (OSError, UnicodeDecodeError):
        print(f"{name}: no se puede leer {path}: ¿es la carpeta de una liga?", file=sys.stderr)
        return None
    except (LeagueError, LeagueSetupError) as e:
        print(f"{name}: {e}", file=sys.stderr)
        return None
    return league, secret


def _date(text: str) -> object:
    import datetime

    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} no es una fecha: va AAAA-MM-DD") from None


def run_season(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``league season-pair|season-sub|season-confirm|season-pages``."""
    from ..tournament.league.errors import LeagueError
    from ..tournament.league.model import League
    from ..tournament.league.season_store import (
        ask_substitution,
        confirm_substitution,
        name_pair,
        write_league_site,
        write_next_season,
    )

    out = out or sys.stdout
    order = args.league_command
    name = f"truco-table league {order}"
    got = _season_args(args, name)
    if got is None:
        return 2
    league, secret = got
    assert isinstance(league, League)
    try:
        if order == "season-pair":
            players = [p.strip() for p in args.players.split(",") if p.strip()]
            name_pair(args.dir, league, secret, args.season, args.match, args.club, players)
            out.write(f"{args.club} juega {args.match} con {', '.join(players)}\n")
        elif order == "season-sub":
            ask_substitution(args.dir, league, secret, args.season, args.match, args.club,
                             args.from_chico, args.out, args.into)  # fmt: skip
            out.write(f"cambio pedido en {args.match}: sale {args.out}, entra {args.into} desde "
                      f"el chico {args.from_chico}; cuenta cuando el organizador lo confirme "
                      "(truco-table league season-confirm)\n")  # fmt: skip
        elif order == "season-confirm":
            confirm_substitution(args.dir, league, secret, args.season, args.match, args.club,
                                 args.from_chico)  # fmt: skip
            out.write(f"cambio confirmado en {args.match} desde el chico {args.from_chico}\n")
        elif order == "season-next":
            path = write_next_season(args.dir, league, secret, args.season, args.first_date)
            out.write(f"temporada {args.season + 1} escrita en {path}: con los ascensos y "
                      "descensos y las listas de esta temporada; revisala (cada club "
                      "presenta su lista de nuevo)\n")  # fmt: skip
        else:
            files = write_league_site(args.dir, league, secret, args.out)
            out.write(f"{len(files)} archivos en {args.out}; abrí {args.out}/index.html\n")
    except LeagueError as e:
        print(f"{name}: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{name}: no se puede escribir: {e.strerror or e}", file=sys.stderr)
        return 2
    return 0


def run_desk(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``league desk``: the league desk on the central broker until Ctrl-C or SIGTERM."""
    import signal
    import threading

    from ..tournament.desk.journal import JournalError
    from ..tournament.league.desk import desk_from_folder
    from ..tournament.league.errors import LeagueError
    from ..tournament.league.web import serve_league

    out = out or sys.stdout
    name = "truco-table league desk"
    try:
        desk = desk_from_folder(args.dir, args.central, season=args.season, hand_s=args.hand_s)
    except LeagueError as e:
        print(f"{name}: {e}", file=sys.stderr)
        return 2
    host, port = desk.address
    try:
        count = desk.start()
    except JournalError as e:
        print(f"{name}: el diario de la mesa de la liga no se puede usar: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        desk.ledger.close()
        why = e.strerror or str(e) or type(e).__name__
        print(f"{name}: no hay conexión con el broker central {host}:{port}: {why}",
              file=sys.stderr)  # fmt: skip
        return 2
    if desk.answered.wait(10) and desk.refused is not None:
        desk.stop()
        print(f"{name}: el broker central {host}:{port} rechazó la cuenta league-desk "
              f"({desk.refused}): revisá {args.dir}/desk/broker.pass", file=sys.stderr)  # fmt: skip
        return 2
    server = None
    access = None
    # the organiser's page, with the organiser's key: a season's pairs, changes and tables,
    # and, with or without one, a new key for a table after a key conflict
    from ..tournament.desk.sessions import KEY_FILE, OrganiserAccess, load_or_create_key

    key = load_or_create_key(desk.folder)
    access = OrganiserAccess(key, store=desk.folder)
    if args.http_port:
        try:
            server = serve_league(desk, args.http_port, access=access)
        except OSError as e:
            desk.stop()
            print(f"{name}: no se puede abrir la página en 127.0.0.1:{args.http_port}: "
                  f"{e.strerror or e}", file=sys.stderr)  # fmt: skip
            return 2
    stop = threading.Event()
    previous = []
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous.append((sig, signal.signal(sig, lambda n, f: stop.set())))
    page = f"http://127.0.0.1:{server.server_address[1]}/" if server else "sin página"
    out.write(
        f"mesa de la liga {desk.league.name}: broker central {host}:{port}, diario en "
        f"{desk.ledger.journal.path}, {len(count.counted)} registros contados hasta ahora\n"
        f"páginas: {page} · Ctrl-C termina\n"
    )
    if desk.office is not None and server is not None:
        out.write(f"parejas, cambios y mesas: {page}organizador (la clave del organizador "
                  f"está en {desk.folder / KEY_FILE})\n")  # fmt: skip
    elif server is not None:
        out.write(f"organizador (cambiar la clave de una mesa): {page}organizador (la clave "
                  f"del organizador está en {desk.folder / KEY_FILE})\n")  # fmt: skip
    out.flush()
    try:
        while not stop.wait(0.2):
            pass
    finally:
        for sig, handler in previous:
            signal.signal(sig, handler)
        if server is not None:
            server.shutdown()
            server.server_close()
        desk.stop()
    count = desk.snapshot()
    out.write(
        f"mesa de la liga cerrada: {len(count.counted)} registros contados, "
        f"{len(count.flags)} sin contar, {len(desk.rejections())} mensajes rechazados\n"
    )
    return 0


def _in_spanish(sub: argparse.ArgumentParser, parent: argparse.ArgumentParser) -> None:
    """A subcommand's parser speaks as ``league``'s: argparse's words and errors in Spanish."""
    from . import spanish_parser

    sub.formatter_class = parent.formatter_class
    spanish_parser(sub)
    if hasattr(parent, "spanish"):
        sub.spanish = True  # type: ignore[attr-defined]


def configure(parser: argparse.ArgumentParser) -> None:
    """The ``league`` subcommand and its own subcommands (help in Spanish)."""
    sub = parser.add_subparsers(
        dest="league_command", required=True, title="órdenes", metavar="ORDEN"
    )
    a = sub.add_parser(
        "add-venue",
        help="un salón entra a la liga: claves, cuentas, su broker unido al central",
    )
    _in_spanish(a, parser)
    a.add_argument("--dir", required=True, metavar="CARPETA", help="la carpeta de la liga")
    a.add_argument(
        "--venue", required=True, metavar="SALÓN", help="el id del salón, por ejemplo bar-lopez"
    )
    a.add_argument(
        "--tables", required=True, metavar="MESAS",
        help="cuántas mesas (mesa01..) o sus nombres a,b,c",
    )  # fmt: skip
    a.add_argument(
        "--desks", default="desk", metavar="NOMBRES", help="las mesas de control del salón a,b"
    )
    a.add_argument(
        "--host", action="append", metavar="DIRECCIÓN",
        help="la dirección del broker del salón como la ven sus mesas",
    )  # fmt: skip
    a.add_argument(
        "--port", type=int, default=8883, metavar="PUERTO",
        help="el puerto TLS del broker del salón",
    )  # fmt: skip
    door_arguments(a)
    a.add_argument(
        "--bind", metavar="DIRECCIÓN",
        help="dónde escucha el broker del salón (por omisión, el primer --host)",
    )  # fmt: skip
    a.add_argument(
        "--rules", metavar="REGLAS",
        help="las reglas de la casa de la liga, por ejemplo 'players=4 target=30'",
    )  # fmt: skip
    a.add_argument("--league", metavar="NOMBRE", help="el nombre de la liga (la primera vez)")
    a.add_argument(
        "--central", metavar="HOST:PUERTO", help="el broker central (la primera vez)"
    )
    a.add_argument(
        "--central-bind", metavar="DIRECCIÓN",
        help="dónde escucha el broker central (por omisión, su host)",
    )  # fmt: skip
    a.set_defaults(func=run_add_venue)
    f = sub.add_parser("fixture", help="los partidos de la temporada por fecha, de league.toml")
    _in_spanish(f, parser)
    f.add_argument("--dir", required=True, metavar="CARPETA", help="la carpeta de la liga")
    f.add_argument("--venue", metavar="SALÓN", help="solo los partidos en este salón")
    f.set_defaults(func=run_fixture)
    d = sub.add_parser(
        "desk",
        help="la mesa de control de la liga: los registros de los salones desde el broker "
        "central, sus páginas",
    )
    _in_spanish(d, parser)
    d.add_argument("--dir", required=True, metavar="CARPETA", help="la carpeta de la liga")
    d.add_argument(
        "--http-port", type=port, default=8090, metavar="N",
        help="las páginas de la liga en 127.0.0.1:N (por defecto 8090; 0: ninguna)",
    )  # fmt: skip
    d.add_argument(
        "--central", metavar="HOST:PUERTO", help="otra dirección del broker central"
    )
    d.add_argument(
        "--season", type=int, metavar="AÑO",
        help="la temporada de liga/temporadas/AÑO/ (grupos, fase final; su diario ahí)",
    )  # fmt: skip
    d.add_argument(
        "--hand-s", type=float, default=3.0, metavar="SEGUNDOS",  # Quota.hand_s
        help="lo menos que dura una mano en una mesa de verdad (3): un chico cuyas manos "
        "llegan más rápido queda retenido para el organizador (0: no se revisa)",
    )  # fmt: skip
    d.set_defaults(func=run_desk)
    orders = {
        "season-pair": "un club nombra su pareja para un partido, antes de que empiece",
        "season-sub": "un club pide un cambio entre chicos (cuenta con la confirmación)",
        "season-confirm": "el organizador confirma un cambio pedido",
        "season-pages": "escribe las páginas públicas de la liga, con todas las temporadas",
        "season-next": "escribe la temporada siguiente con los ascensos y descensos",
    }
    for order, text in orders.items():
        o = sub.add_parser(order, help=text)
        _in_spanish(o, parser)
        o.add_argument("--dir", required=True, metavar="CARPETA", help="la carpeta de la liga")
        if order == "season-pages":
            o.add_argument("--out", required=True, metavar="CARPETA",
                           help="dónde escribir las páginas")  # fmt: skip
        elif order == "season-next":
            o.add_argument("--season", required=True, type=int, metavar="AÑO",
                           help="la temporada que terminó")  # fmt: skip
            o.add_argument("--first-date", required=True, type=_date, metavar="AAAA-MM-DD",
                           help="la fecha 1 de la temporada siguiente")  # fmt: skip
        else:
            o.add_argument("--season", required=True, type=int, metavar="AÑO",
                           help="la temporada")  # fmt: skip
            o.add_argument("--match", required=True, metavar="PARTIDO",
                           help="el partido, por ejemplo primera-norte-f01-m01")  # fmt: skip
            o.add_argument("--club", required=True, metavar="SEDE", help="el club")
        if order == "season-pair":
            o.add_argument("--players", required=True, metavar="J1,J2",
                           help="los ids de la pareja, de su lista de buena fe")  # fmt: skip
        if order in ("season-sub", "season-confirm"):
            o.add_argument("--from-chico", required=True, type=int, metavar="N",
                           help="desde qué chico (2 en adelante)")  # fmt: skip
        if order == "season-sub":
            o.add_argument("--out", required=True, metavar="SALE", help="el que sale")
            o.add_argument("--into", required=True, metavar="ENTRA",
                           help="el que entra, de la lista de buena fe")  # fmt: skip
        o.set_defaults(func=run_season)
