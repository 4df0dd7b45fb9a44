"""Each player's rating from every counted chico: OpenSkill's Plackett-Luce model (the
Weng-Lin Bayesian rating for teams; why this library: docs/dev/tournament.md, "League seasons").

A chico is a game between two pairs (or two trios, or two single players): the winning
side ranks first. Every player starts at the model's defaults (mu 25, sigma 25/3); the
rating shown is the conservative ``mu - 3 sigma`` (what the player is at least, with
99.7% confidence), which starts at 0 and grows as the chicos prove more. Ratings carry
over from one season to the next: :func:`rate` takes the ratings so far.

The chicos are rated in the season's order (:func:`season_chicos`): by their match's
date, then the match id, then the chico's number; a chico whose pairs were not named
(no lineup) is not rated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from openskill.models import PlackettLuce

from .model import Chico
from .season import Season, season_matches

__all__ = ["RatedChico", "Rating", "rate", "season_chicos"]


@dataclass(frozen=True)
class RatedChico:
    match: str
    number: int  # 1-based, in its match
    home: tuple[str, ...]
    away: tuple[str, ...]
    winner: int  # 0 home, 1 away


@dataclass(frozen=True)
class Rating:
    player: str
    mu: float
    sigma: float
    chicos: int = 0
    won: int = 0

    @property
    def shown(self) -> float:
        """The rating the pages show: mu - 3 sigma."""
        return self.mu - 3 * self.sigma


def _model() -> PlackettLuce:
    return PlackettLuce()


def rate(
    chicos: Iterable[RatedChico], start: Mapping[str, Rating] | None = None
) -> dict[str, Rating]:
    """The ratings after ``chicos`` (in order), from ``start`` (a player not in it: the
    model's defaults)."""
    model = _model()
    out: dict[str, Rating] = dict(start or {})
    for c in chicos:
        teams = []
        for side in (c.home, c.away):
            team = []
            for p in side:
                r = out.get(p)
                team.append(model.rating(mu=r.mu, sigma=r.sigma) if r else model.rating())
            teams.append(team)
        ranks = [0.0, 1.0] if c.winner == 0 else [1.0, 0.0]
        new = model.rate(teams, ranks=ranks)
        for s, side in enumerate((c.home, c.away)):
            for p, rating in zip(side, new[s], strict=True):
                old = out.get(p)
                out[p] = Rating(p, float(rating.mu), float(rating.sigma),
                                (old.chicos if old else 0) + 1,
                                (old.won if old else 0) + (1 if c.winner == s else 0))  # fmt: skip
    return out


def season_chicos(season: Season, played: Mapping[str, tuple[Chico, ...]]) -> list[RatedChico]:
    """The season's counted chicos with who played them, in rating order."""
    out: list[RatedChico] = []
    for m in sorted(season_matches(season, played), key=lambda m: (m.date, m.id)):
        for n, chico in enumerate(played.get(m.id, ()), start=1):
            sides = season.players(m, n)
            if sides is not None:
                out.append(RatedChico(m.id, n, sides[0], sides[1], chico.winner))
    return out
