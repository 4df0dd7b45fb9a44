"""Each player's statistics from the records of the chicos they played.

A record (the sealed transcript the table sent) is replayed through the engine; the
seats are the players the clubs named (:func:`.rosters.seats_of`: the home pair at the
even seats). Per player, over the hands of their chicos (docs/organizadores/liga.md,
"Estadísticas"):

- ``hands`` played and ``points``: the tantos their side scored in them (points per
  hand is their quotient);
- envidos **won** and **lost**: hands whose envido (querido or not) went to their side,
  or to the other, with the points of each;
- truco calls **made** (truco, retruco or vale cuatro, by that player), **accepted**
  (the level called was reached: a quiero, or a raise over it) and **won** (the hand's
  truco or mazo points went to the caller's side);
- **flores** sung and **mazos** (going to the deck) by that player.

Only actions the engine took count (a refused press is no call).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

from ...engine import Game
from ...engine.actions import Kind
from ...engine.results import Reason
from ...transcript import ActionStmt, parse, replay
from .collect import Collected
from .model import LeagueMatch
from .rosters import seats_of
from .season import Season

__all__ = ["PlayerStats", "chico_stats", "counted_texts", "season_stats"]

TRUCO_CALLS = {Kind.TRUCO: 1, Kind.RETRUCO: 2, Kind.VALE_CUATRO: 3}


@dataclass
class PlayerStats:
    player: str
    chicos: int = 0
    hands: int = 0
    points: int = 0
    envidos_won: int = 0
    envidos_lost: int = 0
    envido_points_won: int = 0
    envido_points_lost: int = 0
    truco_calls: int = 0
    truco_accepted: int = 0
    truco_won: int = 0
    flores: int = 0
    mazos: int = 0
    _extra: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    @property
    def points_per_hand(self) -> float:
        return self.points / self.hands if self.hands else 0.0

    def add(self, other: PlayerStats) -> None:
        for f in fields(self):
            if f.name not in ("player", "_extra"):
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def as_dict(self) -> dict[str, int | float | str]:
        out: dict[str, int | float | str] = {
            f.name: getattr(self, f.name) for f in fields(self) if f.name != "_extra"
        }
        out["points_per_hand"] = round(self.points_per_hand, 4)
        return out


def chico_stats(text: str, seats: Mapping[int, str]) -> dict[str, PlayerStats]:
    """The statistics of one chico's record, by player (``seats``: seat to player)."""
    calls: list[tuple[int, int, int]] = []  # (hand, seat, level called)
    flores: list[int] = []
    mazos: list[int] = []
    reached: dict[int, int] = {}  # hand: highest truco level accepted

    def seen(game: Game, st: ActionStmt, code: object) -> None:
        if code is not None:
            return
        a = st.action
        hand = game.hand_number
        if a.kind in TRUCO_CALLS:
            calls.append((hand, a.seat, TRUCO_CALLS[a.kind]))
        elif a.kind is Kind.FLOR:
            flores.append(a.seat)
        elif a.kind is Kind.MAZO:
            mazos.append(a.seat)
        if game.hand_in_progress:
            reached[hand] = max(reached.get(hand, 0), game.truco_level)

    game = replay(parse(text), on_action=seen).game
    out = {p: PlayerStats(p, chicos=1) for p in seats.values()}
    for seat, player in seats.items():
        s = out[player]
        team = seat % 2
        for h in game.hands:
            s.hands += 1
            for award in h.awards:
                if award.team == team:
                    s.points += award.points
                if award.reason is Reason.ENVIDO:
                    if award.team == team:
                        s.envidos_won += 1
                        s.envido_points_won += award.points
                    else:
                        s.envidos_lost += 1
                        s.envido_points_lost += award.points
        for hand, caller, level in calls:
            if caller != seat:
                continue
            s.truco_calls += 1
            if reached.get(hand, 0) >= level:
                s.truco_accepted += 1
            awards = game.hands[hand - 1].awards if 0 < hand <= len(game.hands) else ()
            if any(a.team == team and a.reason in (Reason.TRUCO, Reason.MAZO) for a in awards):
                s.truco_won += 1
        s.flores += flores.count(seat)
        s.mazos += mazos.count(seat)
    return out


def counted_texts(desk_folder: Path, count: Collected) -> dict[tuple[str, int], str]:
    """The record of each counted chico, by ``(match, number)``, from the league desk's
    folder (each venue's ``records/``), only when its bytes are the ones counted."""
    out: dict[tuple[str, int], str] = {}
    numbers: dict[str, int] = {}
    for check in sorted(count.counted, key=lambda c: (c.match or "", c.number or 0)):
        if check.match is None:
            continue
        n = check.number if check.number is not None else numbers.get(check.match, 0) + 1
        numbers[check.match] = n
        path = desk_folder / "venues" / check.venue / "records" / f"{check.game}.truco"
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() == check.record_sha256:
            out[(check.match, n)] = data.decode("utf-8")
    return out


def season_stats(
    season: Season,
    matches: Iterable[LeagueMatch],
    texts: Mapping[tuple[str, int], str],
    into: dict[str, PlayerStats] | None = None,
) -> dict[str, PlayerStats]:
    """Every player's statistics over the records ``texts`` of the season's ``matches``
    (added to ``into``: the seasons before)."""
    out = into if into is not None else {}
    by_id = {m.id: m for m in matches}
    for (match_id, n), text in sorted(texts.items()):
        m = by_id.get(match_id)
        if m is None:
            continue
        sides = season.players(m, n)
        if sides is None:
            continue
        for p, s in chico_stats(text, seats_of(*sides)).items():
            out.setdefault(p, PlayerStats(p)).add(s)
    return out
