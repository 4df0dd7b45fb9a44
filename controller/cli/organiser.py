"""``truco-table organiser``: the organiser's commands to a running desk.

Each command is one action of the competition (:mod:`controller.tournament.competition`)
sent to the desk's ``POST /api/organiser`` on the loopback (``--desk``, default
http://127.0.0.1:8080); the desk journals it (tamper-evident, on the disk before it
takes effect) and applies it, or refuses it and says why. Registration (one entrant, or
a whole spreadsheet with ``import``), seeding, the start with the format, a manual
pairing or table, closing a round, a walkover, an override with its reason, a
withdrawal; ``status`` shows the round.

Exit statuses: 0 done, 1 the desk refused it (its reason on stderr), 2 a usage error
or no desk answering.
"""

from __future__ import annotations

import argparse
import json
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


def _post(desk: str, action: dict[str, Any]) -> dict[str, Any]:
    data = json.dumps({"action": action}, ensure_ascii=False).encode("utf-8")
    req = urllib.request.Request(
        desk.rstrip("/") + "/api/organiser", data=data,
        headers={"Content-Type": "application/json"}, method="POST",
    )  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            answer: dict[str, Any] = json.loads(r.read())
            return answer
    except urllib.error.HTTPError as e:
        try:
            reason = json.loads(e.read()).get("error", e.reason)
        except (ValueError, AttributeError):
            reason = e.reason
        raise Refused(str(reason)) from None
    except (urllib.error.URLError, OSError) as e:
        raise DeskUnreachable(f"no desk answers at {desk}: {getattr(e, 'reason', e)}") from None


def _get(desk: str) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(desk.rstrip("/") + "/api/tournament", timeout=10) as r:
            answer: dict[str, Any] = json.loads(r.read())
            return answer
    except urllib.error.HTTPError as e:
        raise DeskUnreachable(f"the desk at {desk} runs no tournament ({e.code})") from None
    except (urllib.error.URLError, OSError) as e:
        raise DeskUnreachable(f"no desk answers at {desk}: {getattr(e, 'reason', e)}") from None


def _desk_url(text: str) -> str:
    """The desk's page: an http:// or https:// address."""
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme not in ("http", "https") or not text.split("://", 1)[1].strip("/"):
        raise argparse.ArgumentTypeError(
            f"the desk's page is an address like http://127.0.0.1:8080, not {text!r}"
        )
    return text


def _pair_of_ints(text: str) -> tuple[int, int]:
    try:
        a, b = text.split("-", 1)
        return int(a), int(b)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A-B (two numbers), not {text!r}") from None


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
    if cmd == "import":
        from ..tournament.competition.entrants import parse_entrants_csv

        info = _get(args.desk)["tournament"]
        team_size = args.team_size or info.get("team_size") or 2
        text = Path(args.file).read_text(encoding="utf-8-sig")
        known = {e["id"] for e in info["entrants"]}
        out = []
        for e in parse_entrants_csv(text, team_size):
            if e.id in known:  # the spreadsheet's ids follow the ones already there
                from ..tournament.competition.entrants import new_entrant_id

                e = Entrant(new_entrant_id(known), e.name, e.players, e.club, e.seed)
            known.add(e.id)
            out.append(action_to_json(Register(e)))
        return out
    if cmd == "withdraw":
        return [action_to_json(Withdraw(args.entrant, args.reason))]
    if cmd == "seed":
        return [action_to_json(Seed(tuple(args.entrants)))]
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
                Pairing(p.split(":", 1)[0], p.split(":", 1)[1] if ":" in p else None)
                for p in args.pairing
            )
        return [action_to_json(PairRound(args.round, pairings))]
    if cmd == "assign":
        return [action_to_json(AssignTable(args.match, args.table))]
    if cmd == "close-round":
        return [action_to_json(CloseRound(args.round, args.reason))]
    if cmd == "walkover":
        return [action_to_json(Walkover(args.match, args.winner, args.reason))]
    if cmd == "override":
        return [
            action_to_json(
                OverrideResult(args.match, args.winner, args.games, args.points, args.reason)
            )
        ]
    raise AssertionError(cmd)


def run_organiser(args: argparse.Namespace) -> int:
    from ..tournament.competition.model import CompetitionError

    try:
        if args.organiser_command == "status":
            return _status(args)
        actions = _actions(args)
        for action in actions:
            answer = _post(args.desk, action)
        if actions:
            print(f"hecho: ronda {answer['round']}, {answer['journal_lines']} líneas en el diario")
        return 0
    except Refused as e:
        print(f"truco-table organiser: la mesa de control no lo aceptó: {e}", file=sys.stderr)
        return 1
    except CompetitionError as e:  # the spreadsheet, checked here first
        print(f"truco-table organiser: {e}", file=sys.stderr)
        return 1
    except (DeskUnreachable, OSError) as e:
        print(f"truco-table organiser: {e}", file=sys.stderr)
        return 2


def _status(args: argparse.Namespace) -> int:
    data = _get(args.desk)
    t = data["tournament"]
    done = " (terminado)" if t["finished"] else ""
    print(f"{t['name']}: {t['format'] or 'sin empezar'}, ronda {t['round']}{done}, "
          f"{len(t['entrants'])} inscriptos")  # fmt: skip
    for m in data["matches"]:
        if m.get("round") == t["round"]:
            print(f"  {m['match']:<10} {m['table'] or '-':<8} {m['home_name'] or ''} vs "
                  f"{m['away_name'] or '(libre)'}: {m['games_home']}-{m['games_away']} "
                  f"{m['status']}")  # fmt: skip
    return 0


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--desk", type=_desk_url, default=DEFAULT_DESK,
                   help=f"the desk's page (default {DEFAULT_DESK})")  # fmt: skip
    sub = p.add_subparsers(dest="organiser_command", required=True, metavar="COMMAND")
    r = sub.add_parser("register", help="register an entrant (a pair, a player or a trio)")
    r.add_argument("--name", required=True, help="the team's name")
    r.add_argument("--player", action="append", required=True, help="a player's name (each)")
    r.add_argument("--member", action="append", help="each player's member id, in order")
    r.add_argument("--club")
    r.add_argument("--seed", type=int, help="1 = the top seed")
    r.add_argument("--id", help="the entrant's id (default: the next e01, e02, ...)")
    i = sub.add_parser("import", help="register every entrant of a CSV spreadsheet")
    i.add_argument("file", help="nombre;jugador1;jugador2;club;socio1;socio2;cabeza")
    i.add_argument("--team-size", type=int, choices=(1, 2, 3))
    w = sub.add_parser("withdraw", help="an entrant withdraws (their matches: walkovers)")
    w.add_argument("entrant")
    w.add_argument("--reason", required=True)
    s = sub.add_parser("seed", help="the seeding: entrant ids, best first")
    s.add_argument("entrants", nargs="+")
    st = sub.add_parser("start", help="close registration and start in a format")
    st.add_argument("--format", required=True,
                    choices=("knockout", "round-robin", "swiss", "groups"))  # fmt: skip
    st.add_argument("--best-of", type=int, choices=(1, 3, 5), default=1)
    st.add_argument("--team-size", type=int, choices=(1, 2, 3), default=2)
    st.add_argument("--legs", type=int, choices=(1, 2), default=1)
    st.add_argument("--rounds", type=int)
    st.add_argument("--groups", type=int)
    st.add_argument("--advance", type=int, default=2)
    st.add_argument("--no-third-place", action="store_true")
    pr = sub.add_parser("pair", help="pair a round (by hand with --pairing HOME:AWAY)")
    pr.add_argument("round", type=int)
    pr.add_argument("--pairing", action="append", help="HOME:AWAY entrant ids (HOME alone: bye)")
    a = sub.add_parser("assign", help="put a match at a table")
    a.add_argument("match")
    a.add_argument("table")
    c = sub.add_parser("close-round", help="close a round (undecided matches: by games played)")
    c.add_argument("round", type=int)
    c.add_argument("--reason", required=True)
    wo = sub.add_parser("walkover", help="give a match to an entrant")
    wo.add_argument("match")
    wo.add_argument("--winner", required=True)
    wo.add_argument("--reason", required=True)
    o = sub.add_parser("override", help="set a match's result by hand (kept in the audit log)")
    o.add_argument("match")
    o.add_argument("--winner", required=True)
    o.add_argument("--games", type=_pair_of_ints, required=True, help="games won: HOME-AWAY")
    o.add_argument("--points", type=_pair_of_ints, required=True, help="points: HOME-AWAY")
    o.add_argument("--reason", required=True)
    sub.add_parser("status", help="the round and its matches")
    p.set_defaults(func=run_organiser)
