"""The journal's actions as JSON: one object a line, ``"v": 1`` and a ``"type"``.

An exact round trip (tuples come back as tuples, None as None), and strict going back:
a missing or unknown field, a wrong type, an unknown ``type`` or version raise
:class:`~.errors.ActionJsonError` saying which.

>>> from .model import Walkover
>>> line = dumps_action(Walkover("r1-m02", "e07", "no se presentó"))
>>> line
'{"match": "r1-m02", "reason": "no se presentó", "type": "walkover", "v": 1, "winner": "e07"}'
>>> loads_action(line) == Walkover("r1-m02", "e07", "no se presentó")
True
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .errors import ActionJsonError
from .model import (
    Action,
    AssignTable,
    CloseRound,
    Entrant,
    Format,
    FormatSpec,
    GameCounted,
    OverrideResult,
    Pairing,
    PairRound,
    Player,
    Register,
    Seed,
    SetTitle,
    Start,
    Walkover,
    Withdraw,
)

__all__ = ["VERSION", "action_from_json", "action_to_json", "dumps_action", "loads_action"]

VERSION = 1

_TYPES: dict[type, str] = {
    Register: "register",
    Withdraw: "withdraw",
    Seed: "seed",
    Start: "start",
    PairRound: "pair-round",
    AssignTable: "assign-table",
    GameCounted: "game-counted",
    CloseRound: "close-round",
    Walkover: "walkover",
    OverrideResult: "override-result",
    SetTitle: "set-title",
}

T = TypeVar("T")


# ---------------------------------------------------------------------------- to JSON


def action_to_json(a: Action) -> dict[str, Any]:
    """The action as a JSON object (only str, int, bool, None, lists and objects)."""
    body: dict[str, Any]
    match a:
        case Register():
            body = {"entrant": _entrant_to_json(a.entrant)}
        case Withdraw():
            body = {"entrant": a.entrant, "reason": a.reason}
        case Seed():
            body = {"order": list(a.order)}
        case Start():
            s = a.spec
            body = {
                "spec": {
                    "format": s.format.value,
                    "best_of": s.best_of,
                    "team_size": s.team_size,
                    "legs": s.legs,
                    "rounds": s.rounds,
                    "groups": s.groups,
                    "advance": s.advance,
                    "third_place": s.third_place,
                }
            }
        case PairRound():
            pairings = (
                None
                if a.pairings is None
                else [{"home": p.home, "away": p.away} for p in a.pairings]
            )
            body = {"round": a.round, "pairings": pairings}
        case AssignTable():
            body = {"match": a.match, "table": a.table}
        case GameCounted():
            body = {
                "match": a.match,
                "game": a.game,
                "table": a.table,
                "score": list(a.score),
                "winner": a.winner,
                "record_sha256": a.record_sha256,
            }
        case CloseRound():
            body = {"round": a.round, "reason": a.reason}
        case Walkover():
            body = {"match": a.match, "winner": a.winner, "reason": a.reason}
        case OverrideResult():
            body = {
                "match": a.match,
                "winner": a.winner,
                "games": list(a.games),
                "points": list(a.points) if a.points is not None else None,
                "reason": a.reason,
            }
        case SetTitle():
            body = {"title": a.title}
        case _:  # pragma: no cover - the Action union is closed
            raise TypeError(f"not an action: {a!r}")
    return {"v": VERSION, "type": _TYPES[type(a)], **body}


def _entrant_to_json(e: Entrant) -> dict[str, Any]:
    return {
        "id": e.id,
        "name": e.name,
        "players": [{"name": p.name, "member_id": p.member_id} for p in e.players],
        "club": e.club,
        "seed": e.seed,
    }


def dumps_action(a: Action) -> str:
    """One journal line (no newline in it: JSON escapes them)."""
    return json.dumps(action_to_json(a), ensure_ascii=False, sort_keys=True)


# ---------------------------------------------------------------------------- from JSON


def loads_action(line: str) -> Action:
    """The action of one journal line."""
    try:
        data = json.loads(line)
    except ValueError as error:
        raise ActionJsonError(f"Línea del diario ilegible (no es JSON): {error}") from None
    return action_from_json(data)


def action_from_json(d: object) -> Action:
    """The action of a JSON object made by :func:`action_to_json`."""
    if not isinstance(d, Mapping):
        raise ActionJsonError(f"Una acción del diario es un objeto JSON, no {_kind(d)}")
    version = d.get("v")
    if version != VERSION or isinstance(version, bool):
        raise ActionJsonError(
            f"Versión de acción desconocida: {version!r} (esta versión lee la {VERSION})"
        )
    kind = d.get("type")
    if not isinstance(kind, str) or kind not in _READERS:
        raise ActionJsonError(f"Tipo de acción desconocido: {kind!r}")
    fields, build = _READERS[kind]
    _exact(d, {"v", "type", *fields}, kind)
    return build(_Fields(d, kind))


class _Fields:
    """Typed access to an object's fields, each refusal naming the field."""

    def __init__(self, d: Mapping[str, Any], where: str) -> None:
        self.d, self.where = d, where

    def _bad(self, name: str, wanted: str) -> ActionJsonError:
        return ActionJsonError(
            f"{self.where}: el campo {name!r} tiene que ser {wanted}, no {_kind(self.d[name])}"
        )

    def text(self, name: str) -> str:
        value = self.d[name]
        if not isinstance(value, str):
            raise self._bad(name, "un texto")
        return value

    def opt_text(self, name: str) -> str | None:
        return None if self.d[name] is None else self.text(name)

    def integer(self, name: str) -> int:
        value = self.d[name]
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._bad(name, "un número entero")
        return value

    def opt_integer(self, name: str) -> int | None:
        return None if self.d[name] is None else self.integer(name)

    def boolean(self, name: str) -> bool:
        value = self.d[name]
        if not isinstance(value, bool):
            raise self._bad(name, "true o false")
        return value

    def pair(self, name: str) -> tuple[int, int]:
        value = self.d[name]
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in value)
        ):
            raise self._bad(name, "una lista de dos enteros")
        return (value[0], value[1])

    def opt_pair(self, name: str) -> tuple[int, int] | None:
        return None if self.d[name] is None else self.pair(name)

    def objects(self, name: str, fields: set[str], build: Callable[[_Fields], T]) -> tuple[T, ...]:
        value = self.d[name]
        if not isinstance(value, list):
            raise self._bad(name, "una lista")
        out = []
        for i, item in enumerate(value):
            where = f"{self.where}.{name}[{i}]"
            if not isinstance(item, Mapping):
                raise ActionJsonError(f"{where}: tiene que ser un objeto, no {_kind(item)}")
            _exact(item, fields, where)
            out.append(build(_Fields(item, where)))
        return tuple(out)

    def object(self, name: str, fields: set[str]) -> _Fields:
        value = self.d[name]
        where = f"{self.where}.{name}"
        if not isinstance(value, Mapping):
            raise self._bad(name, "un objeto")
        _exact(value, fields, where)
        return _Fields(value, where)

    def strs(self, name: str) -> tuple[str, ...]:
        value = self.d[name]
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise self._bad(name, "una lista de textos")
        return tuple(value)


def _kind(value: object) -> str:
    names = {str: "un texto", int: "un número", float: "un número con decimales"}
    names |= {bool: "un booleano", list: "una lista", dict: "un objeto", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _exact(d: Mapping[str, Any], fields: set[str], where: object) -> None:
    missing = sorted(fields - set(d))
    if missing:
        raise ActionJsonError(f"{where}: falta el campo {missing[0]!r}")
    extra = sorted(set(d) - fields, key=str)
    if extra:
        raise ActionJsonError(f"{where}: campo desconocido {extra[0]!r}")


_PLAYER = {"name", "member_id"}
_ENTRANT = {"id", "name", "players", "club", "seed"}
_SPEC = {"format", "best_of", "team_size", "legs", "rounds", "groups", "advance", "third_place"}


def _entrant(f: _Fields) -> Entrant:
    return Entrant(
        id=f.text("id"),
        name=f.text("name"),
        players=f.objects(
            "players", _PLAYER, lambda p: Player(p.text("name"), p.opt_text("member_id"))
        ),
        club=f.opt_text("club"),
        seed=f.opt_integer("seed"),
    )


def _spec(f: _Fields) -> FormatSpec:
    name = f.text("format")
    try:
        kind = Format(name)
    except ValueError:
        raise ActionJsonError(
            f"{f.where}: formato desconocido {name!r} (van {', '.join(x.value for x in Format)})"
        ) from None
    return FormatSpec(
        format=kind,
        best_of=f.integer("best_of"),
        team_size=f.integer("team_size"),
        legs=f.integer("legs"),
        rounds=f.opt_integer("rounds"),
        groups=f.opt_integer("groups"),
        advance=f.integer("advance"),
        third_place=f.boolean("third_place"),
    )


def _pair_round(f: _Fields) -> PairRound:
    pairings = None
    if f.d["pairings"] is not None:
        pairings = f.objects(
            "pairings", {"home", "away"}, lambda p: Pairing(p.text("home"), p.opt_text("away"))
        )
    return PairRound(f.integer("round"), pairings)


_READERS: dict[str, tuple[set[str], Callable[[_Fields], Action]]] = {
    "register": ({"entrant"}, lambda f: Register(_entrant(f.object("entrant", _ENTRANT)))),
    "withdraw": ({"entrant", "reason"}, lambda f: Withdraw(f.text("entrant"), f.text("reason"))),
    "seed": ({"order"}, lambda f: Seed(f.strs("order"))),
    "start": ({"spec"}, lambda f: Start(_spec(f.object("spec", _SPEC)))),
    "pair-round": ({"round", "pairings"}, _pair_round),
    "assign-table": ({"match", "table"}, lambda f: AssignTable(f.text("match"), f.text("table"))),
    "game-counted": (
        {"match", "game", "table", "score", "winner", "record_sha256"},
        lambda f: GameCounted(
            f.text("match"),
            f.text("game"),
            f.text("table"),
            f.pair("score"),
            f.integer("winner"),
            f.text("record_sha256"),
        ),
    ),
    "close-round": (
        {"round", "reason"},
        lambda f: CloseRound(f.integer("round"), f.text("reason")),
    ),
    "walkover": (
        {"match", "winner", "reason"},
        lambda f: Walkover(f.text("match"), f.text("winner"), f.text("reason")),
    ),
    "set-title": ({"title"}, lambda f: SetTitle(f.text("title"))),
    "override-result": (
        {"match", "winner", "games", "points", "reason"},
        lambda f: OverrideResult(
            f.text("match"), f.text("winner"), f.pair("games"), f.opt_pair("points"),
            f.text("reason"),
        ),
    ),
}
