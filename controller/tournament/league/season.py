"""A league season as clubs run one: divisions, regional groups, a final phase, and the
promotion and relegation that makes the next season.

Pure values and functions (no I/O, no clock). A :class:`Season` has its clubs (the
venues), its divisions (the top one first), each with its regional groups (every club
in exactly one group of one division), the rules of every match, the calendar, and each
club's list of players with the pairs named for its matches (:mod:`.rosters`).

- **Regional groups**: each group a double round robin at the home venues by Berger
  tables (:func:`.fixture.double_round_robin`); every group plays matchday 1 on the
  season's first date. Match ids ``<división>-<grupo>-f03-m02``.
- **Final phase** among the best ``final_size`` of the division: the group winners
  first, then the second places, and so on; within a place by matches won, chicos won
  minus lost, tantos for minus against, tantos for, then the season's order of the
  clubs (the league's tie-breaks, docs/TOURNAMENT.md). Either a **knockout**
  (``final_size`` 2, 4 or 8; seed 1 meets the last; the better seed is home; one match,
  the best of the league's chicos) or a **final group** (one leg, every match at
  ``final_venue``). Its matchdays follow the groups'.
- **Promotion and relegation**: between two divisions next to each other the last
  ``movement`` of the upper one go down and the first ``movement`` of the lower one go
  up; :func:`next_season` swaps each promoted club into the group of the relegated one
  it replaces.

:func:`season_league` is the season as one :class:`~.model.League` with its
``schedule`` (the groups, and the final phase as far as the results decide it): what
the league desk counts records against.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from ..competition.model import Entrant, Pairing, Standing
from .errors import InvalidLeague
from .fixture import berger_rounds, double_round_robin
from .model import Chico, Club, League, LeagueMatch, LeagueRules, check_id
from .rosters import (
    ROSTER_SIZE,
    Lineup,
    Roster,
    Substitution,
    check_lineup,
    check_rosters,
    check_substitution,
    side_players,
)
from .standings import league_standings, match_result

__all__ = [
    "ROUND_NAMES",
    "Division",
    "FinalFormat",
    "Group",
    "Movement",
    "Season",
    "SeasonError",
    "division_order",
    "final_matches",
    "final_standings",
    "group_matchdays",
    "group_matches",
    "group_standings",
    "movements",
    "next_season",
    "qualifiers",
    "season_league",
    "season_matches",
    "stage_of",
]

Played = Mapping[str, Sequence[Chico]]


class SeasonError(InvalidLeague):
    """A season whose divisions, groups or final phase do not hold."""


class FinalFormat(StrEnum):
    KNOCKOUT = "knockout"  # eliminación directa
    GROUP = "group"  # grupo final en una sede


@dataclass(frozen=True)
class Group:
    id: str  # "a"
    name: str  # "Grupo Norte"
    clubs: tuple[str, ...]


@dataclass(frozen=True)
class Division:
    id: str  # "primera"
    name: str  # "Primera"
    groups: tuple[Group, ...]
    final_size: int = 4
    final: FinalFormat = FinalFormat.KNOCKOUT
    final_venue: str | None = None  # the final group's venue

    @property
    def clubs(self) -> tuple[str, ...]:
        return tuple(c for g in self.groups for c in g.clubs)


@dataclass(frozen=True)
class Season:
    league: str
    number: int  # 2027
    clubs: tuple[Club, ...]
    divisions: tuple[Division, ...]  # the top division first
    rules: LeagueRules
    first_date: datetime.date
    days_between: int = 7
    roster_size: int = ROSTER_SIZE
    rosters: tuple[Roster, ...] = ()
    lineups: tuple[Lineup, ...] = ()
    substitutions: tuple[Substitution, ...] = ()
    movement: int = 1  # clubs promoted (and relegated) between two divisions
    _rosters: dict[str, Roster] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        check_id("El nombre de la liga", self.league, SeasonError)
        if isinstance(self.number, bool) or not isinstance(self.number, int) or self.number < 1:
            raise SeasonError(f"La temporada es un número desde 1, no {self.number!r}")
        ids = [c.id for c in self.clubs]
        if len(set(ids)) != len(ids):
            raise SeasonError("Hay una sede dos veces en la temporada")
        if not self.divisions:
            raise SeasonError("Una temporada necesita al menos una división")
        placed: dict[str, str] = {}
        div_ids: set[str] = set()
        for d in self.divisions:
            check_id("El id de la división", d.id, SeasonError)
            if d.id in div_ids:
                raise SeasonError(f"Hay dos divisiones con el id {d.id!r}")
            div_ids.add(d.id)
            if not d.groups:
                raise SeasonError(f"La división {d.name} no tiene grupos")
            group_ids = set()
            for g in d.groups:
                check_id("El id del grupo", g.id, SeasonError)
                if g.id in group_ids:
                    raise SeasonError(f"La división {d.name} tiene dos grupos {g.id!r}")
                group_ids.add(g.id)
                if len(g.clubs) < 2:
                    raise SeasonError(f"El {g.name} de {d.name} necesita al menos dos sedes")
                for c in g.clubs:
                    if c not in ids:
                        raise SeasonError(f"La sede {c!r} del {g.name} no está en la temporada")
                    if c in placed:
                        raise SeasonError(
                            f"La sede {c!r} está en {placed[c]} y en {d.name}: va en un solo grupo"
                        )
                    placed[c] = f"{d.name}, {g.name}"
            if isinstance(d.final_size, bool) or not 2 <= d.final_size <= len(d.clubs):
                raise SeasonError(
                    f"La fase final de {d.name} es entre 2 y {len(d.clubs)} sedes, "
                    f"no {d.final_size!r}"
                )
            if d.final is FinalFormat.KNOCKOUT and d.final_size not in (2, 4, 8):
                raise SeasonError(
                    f"La fase final de {d.name} por eliminación es entre 2, 4 u 8 sedes"
                )
            if d.final is FinalFormat.GROUP and d.final_venue not in ids:
                raise SeasonError(f"El grupo final de {d.name} necesita una sede que esté")
        missing = [c for c in ids if c not in placed]
        if missing:
            raise SeasonError(f"Sedes sin grupo: {', '.join(missing)}")
        if len(self.divisions) > 1 and not 0 <= self.movement <= min(
            len(d.clubs) for d in self.divisions
        ):
            raise SeasonError(f"No pueden subir y bajar {self.movement} sedes")
        rosters = check_rosters(self.rosters, ids, size=self.roster_size,
                                team_size=self.rules.team_size)  # fmt: skip
        self._rosters.update(rosters)
        sides = {m.id: (m.home, m.away) for m in group_matches(self)}
        seen: set[tuple[str, str]] = set()
        for lineup in self.lineups:
            if (lineup.match, lineup.club) in seen:
                raise SeasonError(f"{lineup.club} nombró dos parejas para {lineup.match}")
            seen.add((lineup.match, lineup.club))
            if lineup.match in sides and lineup.club not in sides[lineup.match]:
                raise SeasonError(f"{lineup.club} no juega {lineup.match}")
            check_lineup(lineup, rosters.get(lineup.club), self.rules.team_size)
        for sub in self.substitutions:
            named = self.lineup(sub.match, sub.club)
            if named is None:
                raise SeasonError(f"{sub.club} no nombró pareja para {sub.match}: no hay cambio")
            before = side_players(named, self.substitutions_before(sub), sub.from_chico - 1)
            assert before is not None
            check_substitution(sub, before, rosters.get(sub.club))

    def substitutions_before(self, sub: Substitution) -> tuple[Substitution, ...]:
        return tuple(s for s in self.substitutions[: self.substitutions.index(sub)])

    @property
    def roster_of(self) -> Mapping[str, Roster]:
        return self._rosters

    def club(self, club_id: str) -> Club:
        for c in self.clubs:
            if c.id == club_id:
                return c
        raise SeasonError(f"La sede {club_id!r} no está en la temporada")

    def division(self, division_id: str) -> Division:
        for d in self.divisions:
            if d.id == division_id:
                return d
        raise SeasonError(f"La división {division_id!r} no está en la temporada")

    def division_of(self, club_id: str) -> Division:
        for d in self.divisions:
            if club_id in d.clubs:
                return d
        raise SeasonError(f"La sede {club_id!r} no está en ninguna división")

    def lineup(self, match: str, club: str) -> Lineup | None:
        for lineup in self.lineups:
            if lineup.match == match and lineup.club == club:
                return lineup
        return None

    def players(
        self, match: LeagueMatch, chico: int
    ) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """The home pair and the away pair of chico ``chico`` of ``match`` (None when a
        club named no pair for it)."""
        home = side_players(self.lineup(match.id, match.home), self.substitutions, chico)
        away = side_players(self.lineup(match.id, match.away), self.substitutions, chico)
        if home is None or away is None:
            return None
        return home, away

    def date(self, matchday: int) -> datetime.date:
        return self.first_date + datetime.timedelta(days=(matchday - 1) * self.days_between)

    def entrants(self, clubs: Sequence[str] | None = None) -> tuple[Entrant, ...]:
        return tuple(
            Entrant(c.id, c.name, (), club=c.id)
            for c in self.clubs
            if clubs is None or c.id in clubs
        )


@dataclass(frozen=True)
class Movement:
    club: str
    from_division: str
    to_division: str


def _group_days(season: Season, group: Group) -> list[list[Pairing]]:
    order = [c.id for c in season.clubs if c.id in group.clubs]
    return double_round_robin(order)


def group_matchdays(season: Season) -> int:
    """How many matchdays the longest group takes (the final phase comes after)."""
    return max(len(_group_days(season, g)) for d in season.divisions for g in d.groups)


def group_matches(season: Season, division: Division | None = None,
                  group: Group | None = None) -> tuple[LeagueMatch, ...]:  # fmt: skip
    out: list[LeagueMatch] = []
    for d in season.divisions:
        if division is not None and d.id != division.id:
            continue
        for g in d.groups:
            if group is not None and g.id != group.id:
                continue
            days = _group_days(season, g)
            legs = len(days) // 2
            for n, day in enumerate(days, start=1):
                for m, pairing in enumerate(day, start=1):
                    leg = 1 if n <= legs else 2
                    out.append(LeagueMatch(
                        id=f"{d.id}-{g.id}-f{n:02d}-m{m:02d}", matchday=n,
                        date=season.date(n), leg=leg, pairing=pairing, venue=pairing.home,
                        title=f"{d.name}, {g.name}, fecha {n} ({'ida' if leg == 1 else 'vuelta'})",
                    ))  # fmt: skip
    return tuple(out)


def _only(played: Played, matches: Sequence[LeagueMatch]) -> dict[str, Sequence[Chico]]:
    ids = {m.id for m in matches}
    return {k: v for k, v in played.items() if k in ids}


def _stage_league(season: Season, clubs: Sequence[str], matches: tuple[LeagueMatch, ...]) -> League:
    return League(season.league, season.clubs, season.entrants(clubs), season.rules,
                  season.first_date, season.days_between, schedule=matches)  # fmt: skip


def group_standings(season: Season, division: Division, group: Group,
                    played: Played) -> list[Standing]:  # fmt: skip
    """The group's table, with the league's tie-breaks."""
    matches = group_matches(season, division, group)
    return league_standings(_stage_league(season, group.clubs, matches), _only(played, matches))


def _decided(season: Season, matches: Sequence[LeagueMatch], played: Played) -> bool:
    return all(
        match_result(season.rules, m, played.get(m.id, ())).winner is not None for m in matches
    )


def qualifiers(season: Season, division: Division, played: Played) -> tuple[str, ...] | None:
    """The best ``final_size`` of the division in seed order, once every group match of
    the division is decided (None before)."""
    if not _decided(season, group_matches(season, division), played):
        return None
    order = [c.id for c in season.clubs]
    rows: list[tuple[int, int, int, int, int, int, str]] = []
    for g in division.groups:
        for s in group_standings(season, division, g, played):
            rows.append((s.rank, -s.won, -(s.games_won - s.games_lost),
                         -(s.points_for - s.points_against), -s.points_for,
                         order.index(s.entrant), s.entrant))  # fmt: skip
    rows.sort()
    return tuple(r[-1] for r in rows[: division.final_size])


def _bracket(n: int) -> list[tuple[int, int]]:
    """Seed pairs of the first round, in bracket order (1-8, 4-5, 2-7, 3-6)."""
    order = [1]
    while len(order) < n:
        size = len(order) * 2
        order = [x for s in order for x in (s, size + 1 - s)]
    return [(order[i], order[i + 1]) for i in range(0, n, 2)]


ROUND_NAMES = {1: "Final", 2: "Semifinal", 4: "Cuartos de final"}


def final_matches(season: Season, division: Division, played: Played) -> tuple[LeagueMatch, ...]:
    """The division's final phase as far as the results decide it: nothing before the
    groups end; a knockout round once the one before is decided."""
    seeds = qualifiers(season, division, played)
    if seeds is None:
        return ()
    start = group_matchdays(season)
    pre = f"{division.id}-final"
    if division.final is FinalFormat.GROUP:
        assert division.final_venue is not None
        out = []
        for n, day in enumerate(berger_rounds(list(seeds)), start=1):
            for m, p in enumerate(day, start=1):
                out.append(LeagueMatch(
                    id=f"{pre}-f{n:02d}-m{m:02d}", matchday=start + n, date=season.date(start + n),
                    leg=1, pairing=p, venue=division.final_venue,
                    title=f"{division.name}, grupo final, fecha {n}",
                ))  # fmt: skip
        return tuple(out)
    rank = {c: i for i, c in enumerate(seeds)}
    alive = [(seeds[a - 1], seeds[b - 1]) for a, b in _bracket(len(seeds))]
    out = []
    r = 1
    while alive:
        matches = []
        for m, (x, y) in enumerate(alive, start=1):
            home, away = (x, y) if rank[x] < rank[y] else (y, x)
            matches.append(LeagueMatch(
                id=f"{pre}-r{r}-m{m:02d}", matchday=start + r, date=season.date(start + r),
                leg=1, pairing=Pairing(home, away), venue=home,
                title=f"{division.name}, {ROUND_NAMES.get(len(alive), f'ronda {r}')}",
            ))  # fmt: skip
        out.extend(matches)
        if len(matches) == 1 or not _decided(season, matches, played):
            break
        winners = [match_result(season.rules, m, played.get(m.id, ())).winner for m in matches]
        alive = [(str(winners[i]), str(winners[i + 1])) for i in range(0, len(winners), 2)]
        r += 1
    return tuple(out)


def final_standings(season: Season, division: Division, played: Played) -> list[Standing]:
    """A final group's table (empty for a knockout or before the groups end)."""
    if division.final is not FinalFormat.GROUP:
        return []
    matches = final_matches(season, division, played)
    seeds = qualifiers(season, division, played)
    if seeds is None:
        return []
    return league_standings(_stage_league(season, seeds, matches), _only(played, matches))


def division_order(season: Season, division: Division, played: Played) -> tuple[str, ...] | None:
    """The division's final order once its final phase is decided (None before): the
    final phase's order (the champion first; in a knockout, each round's losers by their
    seed after the ones who went further), then the rest by their groups' order."""
    seeds = qualifiers(season, division, played)
    if seeds is None:
        return None
    matches = final_matches(season, division, played)
    if not matches or not _decided(season, matches, played):
        return None
    if division.final is FinalFormat.GROUP:
        top = [s.entrant for s in final_standings(season, division, played)]
    else:
        last = matches[-1]
        if len(matches) < len(seeds) - 1:
            return None
        champion = match_result(season.rules, last, played.get(last.id, ())).winner
        assert champion is not None
        went: dict[str, int] = {c: 0 for c in seeds}
        for m in matches:
            r = int(m.id.rsplit("-r", 1)[1].split("-")[0])
            went[m.home] = max(went[m.home], r)
            went[m.away] = max(went[m.away], r)
        went[champion] += 1
        top = sorted(seeds, key=lambda c: (-went[c], seeds.index(c)))
    all_rows: list[tuple[int, int, int, int, int, int, str]] = []
    order = [c.id for c in season.clubs]
    for g in division.groups:
        for s in group_standings(season, division, g, played):
            if s.entrant not in top:
                all_rows.append((s.rank, -s.won, -(s.games_won - s.games_lost),
                                 -(s.points_for - s.points_against), -s.points_for,
                                 order.index(s.entrant), s.entrant))  # fmt: skip
    return tuple(top) + tuple(r[-1] for r in sorted(all_rows))


def movements(season: Season, played: Played) -> tuple[Movement, ...] | None:
    """Who goes up and who goes down, once every division is decided (None before)."""
    orders = [division_order(season, d, played) for d in season.divisions]
    if any(o is None for o in orders):
        return None
    out: list[Movement] = []
    k = season.movement
    for i in range(len(season.divisions) - 1):
        upper, lower = orders[i], orders[i + 1]
        assert upper is not None and lower is not None
        if k == 0:
            continue
        upper_d, lower_d = season.divisions[i], season.divisions[i + 1]
        for c in upper[-k:]:
            out.append(Movement(c, upper_d.id, lower_d.id))
        for c in lower[:k]:
            out.append(Movement(c, lower_d.id, upper_d.id))
    return tuple(out)


def next_season(season: Season, played: Played, *, number: int,
                first_date: datetime.date) -> Season:  # fmt: skip
    """The next season's divisions and groups after promotion and relegation: each
    promoted club takes the group place of a relegated one (in order), lists and pairs
    empty (each club registers its list again)."""
    moved = movements(season, played)
    if moved is None:
        raise SeasonError(f"La temporada {season.number} todavía no terminó: no hay ascensos")
    swap: dict[str, str] = {}
    for i in range(len(season.divisions) - 1):
        d, lower = season.divisions[i].id, season.divisions[i + 1].id
        down = [m.club for m in moved if m.from_division == d and m.to_division == lower]
        up = [m.club for m in moved if m.from_division == lower and m.to_division == d]
        for a, b in zip(down, up, strict=True):
            swap[a], swap[b] = b, a
    divisions = tuple(
        replace(
            d,
            groups=tuple(
                replace(g, clubs=tuple(swap.get(c, c) for c in g.clubs)) for g in d.groups
            ),
            final_venue=d.final_venue,
        )
        for d in season.divisions
    )
    return Season(season.league, number, season.clubs, divisions, season.rules, first_date,
                  season.days_between, season.roster_size, movement=season.movement)  # fmt: skip


def season_matches(season: Season, played: Played) -> tuple[LeagueMatch, ...]:
    """Every match of the season known so far: the groups, then each final phase."""
    out = list(group_matches(season))
    for d in season.divisions:
        out.extend(final_matches(season, d, played))
    return tuple(out)


def season_league(season: Season, played: Played) -> League:
    """The season as the league desk counts it: every club an entrant, the schedule
    every match known after ``played``."""
    return League(season.league, season.clubs, season.entrants(), season.rules,
                  season.first_date, season.days_between,
                  schedule=season_matches(season, played))  # fmt: skip


def stage_of(season: Season, match_id: str) -> tuple[Division, Group | None]:
    """The division and group (None: the final phase) of a match id."""
    for d in season.divisions:
        if match_id.startswith(f"{d.id}-final-"):
            return d, None
        for g in d.groups:
            if match_id.startswith(f"{d.id}-{g.id}-"):
                return d, g
    raise SeasonError(f"El partido {match_id!r} no es de la temporada {season.number}")
