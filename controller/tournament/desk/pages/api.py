"""``/api/tournament``: the tournament as JSON, for the desk page and for any screen.

``{"tournament": {name, format, best_of, team_size, round, round_label, closed,
finished, entrants: [...]}, "standings": [...], "matches": [...], "games": [...],
"audit_ok": bool, "desk": {...}}``: the standings, matches and games are the exports'
rows (:mod:`..exports`), ``desk`` the desk page's content (:func:`.desk.desk_view`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...competition.model import Tournament
from ..exports import game_rows, match_rows, standing_rows
from ..records import GameResult
from .common import current_round, round_label
from .desk import desk_view

__all__ = ["tournament_api"]


def tournament_api(
    t: Tournament,
    snapshot: Mapping[str, Any],
    audit_ok: bool,
    results: Iterable[GameResult] = (),
    notes: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The JSON of ``/api/tournament`` (see the module docstring)."""
    spec = t.spec
    withdrawn = dict(t.withdrawn)
    r = current_round(t)
    return {
        "tournament": {
            "name": t.name,
            "display_name": t.display_name,
            "format": spec.format.value if spec is not None else None,
            "best_of": spec.best_of if spec is not None else None,
            "team_size": spec.team_size if spec is not None else None,
            "round": t.round,
            "round_label": round_label(t, r) if r else None,
            "closed": sorted(t.closed),
            "finished": t.finished,
            "entrants": [
                {
                    "id": e.id,
                    "name": e.name,
                    "club": e.club,
                    "seed": e.seed,
                    "players": [{"name": p.name, "member_id": p.member_id} for p in e.players],
                    "withdrawn": withdrawn.get(e.id),
                }
                for e in t.entrants
            ],
        },
        "standings": standing_rows(t),
        "matches": match_rows(t),
        "games": game_rows(t, results),
        "audit_ok": audit_ok,
        "tables": [x["table"] for x in snapshot.get("tables", [])],
        "desk": desk_view(t, snapshot, audit_ok, notes),
    }
