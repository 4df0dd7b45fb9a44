"""``truco-table organiser``: the organiser's commands to a running desk.

Each command is one action of the competition (:mod:`controller.tournament.competition`)
sent to the desk's ``POST /api/organiser`` on the loopback (``--desk``, default
http://127.0.0.1:8080) with the organiser's key (``--key-file``, default the
``$TRUCO_ORGANISER_KEY_FILE``; the desk keeps it in ``organiser.key`` in its folder);
the desk journals it (tamper-evident, on the disk before it takes effect) and applies
it, or refuses it and says why. Registration (one entrant, or a whole spreadsheet with
``import``: checked whole by the desk, every bad line listed, nobody registered while
one is bad), seeding, the start with the format, a manual pairing or table, closing a
round, a walkover, an override with its reason, a withdrawal; ``status`` shows the
round with the ids. Wherever a command takes an entrant it takes the team's name too
(or its id, ``e05``); wherever it takes a match, the match's id (``r2-m03``) or the
name of a team playing it in the round.

Exit statuses: 0 done, 1 the desk refused it (its reason on stderr), 2 a usage error
or no desk answering.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["configure"]

DEFAULT_DESK = "http://127.0.0.1:8080"


class DeskUnreachable(Exception):
    """No desk answers at the URL (the text says what happened)."""


class Refused(Exception):
    """The desk refused the action (the text is its reason)."""


class UsageError(Exception):
    """The command names something the desk does not have (the text says what)."""


def _key(args: argparse.Namespace) -> str:
    path = args.key_file or os.environ.get("TRUCO_ORGANISER_KEY_FILE")
    if not path:
        raise UsageError(
            "falta la clave del organizador: --key-file CARPETA_DE_LA_MESA/organiser.key "
            "(o TRUCO_ORGANISER_KEY_FILE)"
        )
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"no puedo leer la clave del organizador ({path}): {e}") from None


def _post(
    desk: str, action: dict[str, Any], key: str = "", path: str = "/api/organiser",
    body: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    data = json.dumps(body if body is not None else {"action": action},
                      ensure_ascii=False).encode("utf-8")  # fmt: skip
    req = urllib.request.Request(
        desk.rstrip("/") + path, data=data,
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
        method="POST",
    )  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            answer: dict[str, Any] = json.loads(r.read())
            return answer
    except urllib.error.HTTPError as e:
        try:
            answer = json.loads(e.read())
            reason = answer.get("error", e.reason)
            problems = answer.get("problems") or []
        except (ValueError, AttributeError):
            reason, problems = e.reason, []
        if problems and len(problems) > 1:
            reason = f"{reason}\n" + "\n".join(f"  {p}" for p in problems)
        raise Refused(str(reason)) from None
    except (urllib.error.URLError, OSError) as e:
        raise DeskUnreachable(_unreachable(desk, e)) from None


def _unreachable(desk: str, e: Exception) -> str:
    """No desk answers at ``desk``, said in Spanish with what to check."""
    import socket

    reason = getattr(e, "reason", e)
    if isinstance(reason, ConnectionRefusedError):
        why = "nadie escucha en ese puerto: ¿está en marcha la mesa de control?"
    elif isinstance(reason, TimeoutError | socket.timeout):
        why = "no contestó a tiempo"
    elif isinstance(reason, socket.gaierror):
        why = "no conozco esa dirección"
    elif isinstance(reason, OSError):
        why = f"la red no deja llegar (error {reason.errno})"
    else:
        why = "no contestó"
    return f"ninguna mesa de control contesta en {desk}: {why}"


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def entrant_ref(text: str, entrants: list[dict[str, Any]]) -> str:
    """The id of the entrant ``text`` names: its id or its team's name (case and spacing
    ignored)."""
    for e in entrants:
        if e["id"] == text:
            return str(e["id"])
    found = [e for e in entrants if _norm(e["name"]) == _norm(text)]
    if len(found) == 1:
        return str(found[0]["id"])
    names = ", ".join(f"{e['name']} ({e['id']})" for e in entrants[:40]) or "ninguno"
    raise UsageError(f"no hay un equipo {text!r}: los equipos son {names}")


def match_ref(text: str, info: dict[str, Any]) -> str:
    """The id of the match ``text`` names: its id, or a team playing it in the current
    round."""
    matches = info["matches"]
    for m in matches:
        if m["match"] == text:
            return str(m["match"])
    entrant = entrant_ref(text, info["tournament"]["entrants"])
    current = [m for m in matches if m.get("round") == info["tournament"]["round"]
               and entrant in (m["home"], m["away"])]  # fmt: skip
    if not current:
        raise UsageError(f"{text} no juega un partido en la ronda {info['tournament']['round']}")
    return str(current[-1]["match"])


def _get(desk: str) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(desk.rstrip("/") + "/api/tournament", timeout=10) as r:
            answer: dict[str, Any] = json.loads(r.read())
            return answer
    except urllib.error.HTTPError as e:
        raise DeskUnreachable(f"la mesa de control de {desk} no lleva un torneo (contestó "
                              f"{e.code}): ¿la arrancaste con --competition?") from None
    except (urllib.error.URLError, OSError) as e:
        raise DeskUnreachable(_unreachable(desk, e)) from None


def _desk_url(text: str) -> str:
    """The desk's page: an http:// or https:// address."""
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme not in ("http", "https") or not text.split("://", 1)[1].strip("/"):
        raise argparse.ArgumentTypeError(
            f"la página de la mesa de control es una dirección como http://127.0.0.1:8080, "
            f"no {text!r}"
        )
    return text


def _pair_of_ints(text: str) -> tuple[int, int]:
    try:
        a, b = text.split("-", 1)
        return int(a), int(b)
    except ValueError:
        raise argparse.ArgumentTypeError(f"va A-B (dos números), no {text!r}") from None


def _actions(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The actions (as the codec's JSON) the command asks for."""
    from ..tournament.competition.codec import action_to_json
    from ..tournament.competition.model import (
        AssignTable,
        CloseRound,
        Entrant,
        Format,
        FormatSpec,
        OverrideResult,
        Pairing,
        PairRound,
        Player,
        Register,
        Seed,
        Start,
        Walkover,
        Withdraw,
    )

    cmd = args.organiser_command
    if cmd == "register":
        members = list(args.member or [])
        players = tuple(
            Player(name, members[i] if i < len(members) else None)
            for i, name in enumerate(args.player)
        )
        from ..tournament.competition.entrants import new_entrant_id

        ids = [e["id"] for e in _get(args.desk)["tournament"]["entrants"]]
        entrant = Entrant(args.id or new_entrant_id(ids), args.name, players,
                          club=args.club, seed=args.seed)  # fmt: skip
        return [action_to_json(Register(entrant))]
    if cmd == "title":
        from ..tournament.competition.model import SetTitle

        return [action_to_json(SetTitle(args.title))]
    info = _get(args.desk)
    entrants = info["tournament"]["entrants"]
    if cmd == "withdraw":
        return [action_to_json(Withdraw(entrant_ref(args.entrant, entrants), args.reason))]
    if cmd == "seed":
        return [action_to_json(Seed(tuple(entrant_ref(e, entrants) for e in args.entrants)))]
    if cmd == "start":
        spec = FormatSpec(
            Format(args.format), best_of=args.best_of, team_size=args.team_size, legs=args.legs,
            rounds=args.rounds, groups=args.groups, advance=args.advance,
            third_place=not args.no_third_place,
        )  # fmt: skip
        return [action_to_json(Start(spec))]
    if cmd == "pair":
        pairings = None
        if args.pairing:
            pairings = tuple(
                Pairing(
                    entrant_ref(p.split(":", 1)[0], entrants),
                    entrant_ref(p.split(":", 1)[1], entrants) if ":" in p else None,
                )
                for p in args.pairing
            )
        return [action_to_json(PairRound(args.round, pairings))]
    if cmd == "assign":
        return [action_to_json(AssignTable(match_ref(args.match, info), args.table))]
    if cmd == "close-round":
        return [action_to_json(CloseRound(args.round, args.reason))]
    match = match_ref(args.match, info)
    winner = entrant_ref(args.winner, entrants)
    if cmd == "walkover":
        return [action_to_json(Walkover(match, winner, args.reason))]
    if cmd == "override":
        row = next(m for m in info["matches"] if m["match"] == match)
        if args.games is not None:
            games = args.games  # home-away, as the match lists them
        else:
            won = args.winner_games if args.winner_games is not None else None
            if won is None:
                raise UsageError("falta el resultado: --chicos GANADOR-PERDEDOR (o --games)")
            w, lost = won
            games = (w, lost) if winner == row["home"] else (lost, w)
        points = args.points  # None: the points the tables recorded stay
        return [action_to_json(OverrideResult(match, winner, games, points, args.reason))]
    raise AssertionError(cmd)


def run_organiser(args: argparse.Namespace) -> int:
    from ..tournament.competition.model import CompetitionError

    try:
        if args.organiser_command == "status":
            return _status(args)
        key = _key(args)
        if args.organiser_command == "import":
            return _import(args, key)
        actions = _actions(args)
        for action in actions:
            answer = _post(args.desk, action, key)
        if actions:
            print(f"hecho: ronda {answer['round']}, {answer['journal_lines']} líneas en el diario")
        return 0
    except Refused as e:
        print(f"truco-table organiser: la mesa de control no lo aceptó: {e}", file=sys.stderr)
        return 1
    except CompetitionError as e:  # the spreadsheet, checked here first
        print(f"truco-table organiser: {e}", file=sys.stderr)
        return 1
    except (DeskUnreachable, UsageError, OSError) as e:
        print(f"truco-table organiser: {e}", file=sys.stderr)
        return 2


def _import(args: argparse.Namespace, key: str) -> int:
    """The sheet checked whole by the desk (every bad line printed), then registered."""
    data = base64.b64encode(Path(args.file).read_bytes()).decode("ascii")
    body = {"data": data, "team_size": args.team_size, "commit": False}
    preview = _post(args.desk, {}, key, "/api/organiser/import", body)
    if preview["problems"]:
        n = len(preview["problems"])
        print(f"truco-table organiser: {args.file}: {n} {'línea' if n == 1 else 'líneas'} con "
              "problemas; no se anotó a nadie:", file=sys.stderr)  # fmt: skip
        for p in preview["problems"]:
            print(f"  {p}", file=sys.stderr)
        return 1
    done = _post(args.desk, {}, key, "/api/organiser/import", body | {"commit": True})
    n = done["registered"]
    print(f"hecho: {n} {'equipo inscripto' if n == 1 else 'equipos inscriptos'} "
          f"(leída como {done['encoding']})")
    return 0


def _status(args: argparse.Namespace) -> int:
    data = _get(args.desk)
    t = data["tournament"]
    done = " (terminado)" if t["finished"] else ""
    print(f"{t['name']}: {t['format'] or 'sin empezar'}, ronda {t['round']}{done}, "
          f"{len(t['entrants'])} inscriptos")  # fmt: skip
    for e in t["entrants"]:
        gone = f" (retirado: {e['withdrawn']})" if e.get("withdrawn") else ""
        print(f"  {e['id']:<6} {e['name']}{gone}")
    for m in data["matches"]:
        if m.get("round") == t["round"]:
            away = f"{m['away_name']} ({m['away']})" if m["away"] else "(libre)"
            print(f"  {m['match']:<10} {m['table'] or '-':<8} {m['home_name'] or ''} "
                  f"({m['home']}) vs {away}: chicos {m['games_home']}-{m['games_away']} "
                  f"(local-visitante) {m['status']}")  # fmt: skip
    return 0


def _in_spanish(sub: argparse.ArgumentParser, parent: argparse.ArgumentParser) -> None:
    """An order's parser speaks as ``organiser``'s: argparse's words and errors in Spanish."""
    from . import spanish_parser

    sub.formatter_class = parent.formatter_class
    spanish_parser(sub)
    if hasattr(parent, "spanish"):
        sub.spanish = True  # type: ignore[attr-defined]


_MATCH = "el partido: su id (r2-m03) o un equipo que lo juega en esta ronda"
_TEAM = "el nombre o el id del equipo"


def configure(p: argparse.ArgumentParser) -> None:
    """The ``organiser`` subcommand and its orders (help in Spanish)."""
    p.add_argument("--desk", type=_desk_url, default=DEFAULT_DESK, metavar="DIRECCIÓN",
                   help=f"la página de la mesa de control (por defecto "
                   f"{DEFAULT_DESK})")  # fmt: skip
    p.add_argument("--key-file", metavar="ARCHIVO",
                   help="la clave del organizador (OUT/organiser.key de la mesa de control; "
                   "por omisión $TRUCO_ORGANISER_KEY_FILE)")  # fmt: skip
    sub = p.add_subparsers(dest="organiser_command", required=True, metavar="ORDEN",
                           title="órdenes")  # fmt: skip

    def order(name: str, text: str, **kwargs: Any) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, help=text, **kwargs)
        _in_spanish(parser, p)
        return parser

    r = order("register", "inscribir a un equipo (una pareja, un jugador o un trío)")
    r.add_argument("--name", required=True, metavar="NOMBRE", help="el nombre del equipo")
    r.add_argument("--player", action="append", required=True, metavar="JUGADOR",
                   help="el nombre de un jugador (uno por vez)")  # fmt: skip
    r.add_argument("--member", action="append", metavar="SOCIO",
                   help="el número de socio de cada jugador, en orden")  # fmt: skip
    r.add_argument("--club", metavar="CLUB", help="el club del equipo")
    r.add_argument("--seed", type=int, metavar="N", help="1 = el primer cabeza de serie")
    r.add_argument("--id", metavar="ID",
                   help="el id del equipo (por omisión, el siguiente: e01, e02, ...)")  # fmt: skip
    ti = order("title", "el nombre del torneo que muestra cada vista")
    ti.add_argument("title", metavar="TÍTULO",
                    help='por ejemplo "Abierto de Truco de Boedo" ("" vuelve a mostrar '
                    "el id)")  # fmt: skip
    i = order("import", "inscribir a todos los equipos de una planilla CSV")
    i.add_argument("file", metavar="ARCHIVO",
                   help="nombre;jugador1;jugador2;club;socio1;socio2;cabeza")  # fmt: skip
    i.add_argument("--team-size", type=int, choices=(1, 2, 3),
                   help="jugadores por equipo")  # fmt: skip
    w = order("withdraw", "un equipo se retira (sus partidos: por abandono)")
    w.add_argument("entrant", metavar="EQUIPO", help=_TEAM)
    w.add_argument("--reason", required=True, metavar="MOTIVO", help="por qué")
    s = order("seed", "los cabezas de serie: nombres o ids de los equipos, el mejor primero")
    s.add_argument("entrants", nargs="+", metavar="EQUIPO", help=_TEAM)
    st = order("start", "cerrar la inscripción y empezar con un formato")
    st.add_argument("--format", required=True,
                    choices=("knockout", "round-robin", "swiss", "groups"),
                    help="eliminación, todos contra todos, suizo o grupos")  # fmt: skip
    st.add_argument("--best-of", type=int, choices=(1, 3, 5), default=1,
                    help="chicos por partido")  # fmt: skip
    st.add_argument("--team-size", type=int, choices=(1, 2, 3), default=2,
                    help="jugadores por equipo")  # fmt: skip
    st.add_argument("--legs", type=int, choices=(1, 2), default=1,
                    help="todos contra todos: 2 = ida y vuelta")  # fmt: skip
    st.add_argument("--rounds", type=int, metavar="N", help="suizo: cuántas rondas")
    st.add_argument("--groups", type=int, metavar="N", help="grupos: cuántos")
    st.add_argument("--advance", type=int, default=2, metavar="N",
                    help="grupos: cuántos pasan de cada uno")  # fmt: skip
    st.add_argument("--no-third-place", action="store_true",
                    help="eliminación: sin partido por el tercer puesto")  # fmt: skip
    pr = order("pair", "armar los partidos de una ronda (a mano con --pairing LOCAL:VISITANTE)")
    pr.add_argument("round", type=int, metavar="RONDA", help="el número de la ronda")
    pr.add_argument("--pairing", action="append", metavar="LOCAL:VISITANTE",
                    help="nombres o ids de los equipos (LOCAL solo: queda libre)")  # fmt: skip
    a = order("assign", "poner un partido en una mesa")
    a.add_argument("match", metavar="PARTIDO", help=_MATCH)
    a.add_argument("table", metavar="MESA", help="la mesa, por ejemplo mesa03")
    c = order("close-round", "cerrar una ronda (los partidos sin definir: por chicos jugados)")
    c.add_argument("round", type=int, metavar="RONDA", help="el número de la ronda")
    c.add_argument("--reason", required=True, metavar="MOTIVO", help="por qué")
    wo = order("walkover", "darle un partido a un equipo")
    wo.add_argument("match", metavar="PARTIDO", help=_MATCH)
    wo.add_argument("--winner", required=True, metavar="EQUIPO", help="el que gana: " + _TEAM)
    wo.add_argument("--reason", required=True, metavar="MOTIVO", help="por qué")
    o = order(
        "override", "poner a mano el resultado de un partido (queda en el registro de auditoría)",
        description="El resultado como lo decide el organizador. --chicos 2-1 son los chicos "
        "que ganó el GANADOR primero, después los del perdedor; --games 1-2 es lo mismo en el "
        "orden del partido: primero el equipo LOCAL (el que `status` nombra primero), haya "
        "ganado quien haya ganado.",
    )  # fmt: skip
    o.add_argument("match", metavar="PARTIDO", help=_MATCH)
    o.add_argument("--winner", required=True, metavar="EQUIPO", help="el que gana: " + _TEAM)
    o.add_argument("--chicos", dest="winner_games", type=_pair_of_ints, metavar="G-P",
                   help="chicos ganados: GANADOR-PERDEDOR (2-1)")  # fmt: skip
    o.add_argument("--games", type=_pair_of_ints, metavar="L-V",
                   help="chicos ganados en el orden del partido: LOCAL-VISITANTE (no "
                   "ganador-perdedor)")  # fmt: skip
    o.add_argument("--points", type=_pair_of_ints, metavar="L-V",
                   help="tantos: LOCAL-VISITANTE (por omisión, los que anotaron las "
                   "mesas)")  # fmt: skip
    o.add_argument("--reason", required=True, metavar="MOTIVO", help="por qué")
    order("status", "los equipos y los partidos de la ronda, con sus ids")
    p.set_defaults(func=run_organiser)
