"""``truco-table venue-broker``: the venue's Mosquitto, accounts, ACLs, TLS and keys.

::

    truco-table venue-broker --tournament NAME --tables 20 --desks desk [--screens pantalla]
                             --host 192.168.1.10 [--host broker.local] [--port 8883]
                             [--local-port 8884] [--screen-bind 10.0.0.1 --screen-port 8885]
                             [--rules 'players=2 target=15 flor=off'] --out venue/

    truco-table venue-night --venue salon/ [--desk desk] [--out torneo/] [--http-port 8080]

``venue-night`` is the whole night in one command (:mod:`controller.tournament.venue.night`):
the venue's Mosquitto, then the organiser's desk, and the organiser's login link.

``--tables`` is a count (``mesa01``..``mesaNN``) or names separated by commas. What it
writes and how to use it: :mod:`controller.tournament.venue.broker` and the README
("Tournament security").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from .arguments import door_arguments, house_rules, port

__all__ = [
    "configure",
    "configure_door",
    "configure_night",
    "run_door_command",
    "run_night_command",
    "run_venue",
]


def _names(text: str, prefix: str) -> list[str]:
    text = text.strip()
    if text.isdigit():
        count = int(text)
        if not 1 <= count <= 999:
            raise argparse.ArgumentTypeError("expected 1 to 999 tables")
        return [f"{prefix}{n:02d}" for n in range(1, count + 1)]
    return [name.strip() for name in text.split(",") if name.strip()]


def run_venue(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from ..tournament.venue.broker import VenueError, setup_venue

    out = out or sys.stdout
    try:
        if args.rules:
            house_rules(args.rules, "--rules")
        venue = setup_venue(
            # absolute: openssl runs in the venue's own folders, where "venue/" is not
            Path(args.out).resolve(),
            args.tournament,
            _names(args.tables, "mesa"),
            _names(args.desks, "desk"),
            screens=_names(args.screens, "pantalla") if args.screens else (),
            local_port=args.local_port,
            screen_port=args.screen_port,
            screen_bind=args.screen_bind,
            hosts=tuple(args.host or ["127.0.0.1"]),
            port=args.port,
            bind=args.bind,
            rules=args.rules,
            inner_port=None if args.no_door else _inner_port(args),
        )
    except (ValueError, VenueError, OSError) as e:
        print(f"truco-table venue-broker: {e}", file=sys.stderr)
        return 2
    root = venue.root
    out.write(
        f"salón {venue.tournament}: {_count(len(venue.tables), 'mesa', 'mesas')}, "
        f"{_count(len(venue.desks), 'mesa de control', 'mesas de control')}, "
        f"{_count(len(venue.screens), 'pantalla', 'pantallas')}\n"
        f"broker: mosquitto -c {venue.broker_conf}  (TLS en el puerto {venue.port}"
        + (f", por la puerta; Mosquitto, en 127.0.0.1:{venue.inner_port}"
           if venue.inner_port is not None else "")
        + f"; las mesas de control de esta compu, en el {venue.local_port})\n"
        f"        archivos abiertos: copiá {venue.systemd_limits} a "
        "/etc/systemd/system/mosquitto.service.d/\n"
        + (
            f"puerta: truco-table venue-door --config {venue.front_conf}\n"
            "        (cierra en 5 s la conexión que no manda su CONNECT; venue-night la "
            "arranca con el broker)\n"
            if venue.inner_port is not None
            else ""
        )
        + f"mesas: copiá {root}/tables/<id>/ a cada mesa (que siga en 0600)\n"
        f"mesas de control: truco-table desk --config {root}/desks/<id>/desk.toml "
        f"({venue.organiser}: la del organizador, la única que asigna mesas)\n"
        + (
            f"pantallas: truco-table desk --config {root}/screens/<id>/desk.toml (solo lectura)\n"
            if venue.screens
            else ""
        )
        + f"guardá {root}/ca/ca.key y {root}/secret.key lejos del broker y de las mesas\n"
    )
    return 0


def _inner_port(args: argparse.Namespace) -> int:
    """Mosquitto's tables' listener behind the door: ``--inner-port``, or the first port
    from ``--port`` + 2 that no other listener takes."""
    from ..tournament.venue.broker import default_inner_port

    if args.inner_port is not None:
        return int(args.inner_port)
    return default_inner_port(args.port, args.local_port, args.screen_port)


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def configure(v: argparse.ArgumentParser) -> None:
    """The ``venue-broker`` subcommand's arguments (its ``func`` is :func:`run_venue`)."""
    v.add_argument("--tournament", required=True, metavar="NOMBRE", help="el nombre del torneo")
    v.add_argument(
        "--tables",
        required=True,
        metavar="MESAS",
        help="cuántas mesas (mesa01..) o sus nombres a,b,c",
    )
    v.add_argument(
        "--desks",
        default="desk",
        metavar="NOMBRES",
        help="los nombres de las mesas de control a,b; la primera es la del organizador",
    )
    v.add_argument(
        "--screens",
        metavar="NOMBRES",
        help="los nombres de las pantallas de solo lectura a,b (sin secreto, no publican nada)",
    )
    v.add_argument(
        "--local-port",
        type=int,
        metavar="PUERTO",
        help="el puerto de las mesas de control en 127.0.0.1 (por omisión, el de --port más 1)",
    )
    v.add_argument(
        "--screen-bind",
        metavar="DIRECCIÓN",
        help="la dirección donde escuchan las pantallas (el Wi-Fi del salón)",
    )
    v.add_argument(
        "--screen-port", type=int, metavar="PUERTO", help="el puerto donde escuchan las pantallas"
    )
    v.add_argument(
        "--host",
        action="append",
        metavar="DIRECCIÓN",
        help="la dirección del broker como la ven las mesas (se puede repetir)",
    )
    v.add_argument(
        "--port", type=int, default=8883, metavar="PUERTO", help="el puerto TLS del broker"
    )
    door_arguments(v)
    v.add_argument(
        "--bind",
        metavar="DIRECCIÓN",
        help="la dirección donde escucha (por omisión, el primer --host)",
    )
    v.add_argument(
        "--rules",
        metavar="REGLAS",
        help="las reglas de la casa del torneo, por ejemplo 'players=2 target=15'",
    )
    v.add_argument("--out", required=True, metavar="CARPETA", help="dónde escribir todo")
    v.set_defaults(func=run_venue)


def run_night_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from ..tournament.venue.night import Night, NightError, find_organiser_desk, run_night

    venue = Path(args.venue)
    try:
        desk = args.desk or find_organiser_desk(venue)
    except (NightError, OSError) as e:
        print(f"truco-table venue-night: {e}", file=sys.stderr)
        return 2
    night = Night(venue, desk, Path(args.out or f"torneo-{venue.resolve().name}"), args.http_port,
                  tv_port=args.tv_port)  # fmt: skip
    return run_night(night, out or sys.stdout)


def configure_night(n: argparse.ArgumentParser) -> None:
    """The ``venue-night`` subcommand's arguments (its ``func`` is :func:`run_night_command`)."""
    n.add_argument("--venue", required=True, metavar="CARPETA",
                   help="la carpeta que escribió truco-table venue-broker (el salón)")  # fmt: skip
    n.add_argument(
        "--desk", metavar="NOMBRE", help="la mesa de control (por omisión, la del organizador)"
    )
    n.add_argument("--out", metavar="CARPETA",
                   help="los archivos de la mesa de control: el registro de auditoría, los "
                   "chicos, las exportaciones (por omisión torneo-SALÓN)")  # fmt: skip
    n.add_argument("--http-port", type=port, default=8080, metavar="PUERTO",
                   help="el puerto de la página del organizador, en 127.0.0.1")  # fmt: skip
    n.add_argument("--tv-port", type=port, default=0, metavar="PUERTO",
                   help="la TV del bar: todas las mesas, sin cartas, en la red del local "
                   "(0: ninguna)")  # fmt: skip
    n.set_defaults(func=run_night_command)


def run_door_command(args: argparse.Namespace) -> int:
    from ..tournament.venue.front import run_front

    return run_front(Path(args.config))


def configure_door(d: argparse.ArgumentParser) -> None:
    """The ``venue-door`` subcommand's arguments (its ``func`` is :func:`run_door_command`)."""
    d.add_argument(
        "--config",
        required=True,
        metavar="ARCHIVO",
        help="el broker/truco-front.toml que escribió venue-broker",
    )
    d.set_defaults(func=run_door_command)
