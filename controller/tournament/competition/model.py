"""The tournament's values: entrants, the format, matches, results and standings.

Pure values (frozen dataclasses and enums), no I/O, no clock, no randomness: the
competition (:mod:`.tournament`) is a fold over a journal of :data:`Action` values
(what the organiser did and what the tables' sealed records proved), so a desk that
restarts replays its journal and is where it was.

Ids are topic-safe names (letters, digits, ``.``, ``_``, ``-``; 1 to 64): an entrant's
id (``e01``) is how every other value names it; a match's id (``r2-m03``, ``gA-r1-m2``)
is what the table binds into each record's seal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

__all__ = [
    "Action",
    "AssignTable",
    "CloseRound",
    "CompetitionError",
    "Entrant",
    "Format",
    "FormatSpec",
    "GameCounted",
    "Match",
    "MatchResult",
    "MatchStatus",
    "OverrideResult",
    "PairRound",
    "Pairing",
    "Player",
    "Register",
    "Seed",
    "SetTitle",
    "Stage",
    "Standing",
    "Start",
    "Tournament",
    "Walkover",
    "Withdraw",
]


class CompetitionError(ValueError):
    """An action the competition refuses (the text says why, in Spanish, for the
    organiser); subclasses in :mod:`.tournament`."""


# ---------------------------------------------------------------------------- entrants


@dataclass(frozen=True)
class Player:
    name: str
    member_id: str | None = None  # the club's membership number, if any


@dataclass(frozen=True)
class Entrant:
    """A pair (4-seat tables), a single player (2 seats) or a trio (6 seats)."""

    id: str  # e01, e02, ...: stable, topic-safe
    name: str  # "Los del Fondo"
    players: tuple[Player, ...]
    club: str | None = None
    seed: int | None = None  # 1 = top seed; None: unseeded (ordered by registration)


# ---------------------------------------------------------------------------- the format


class Format(StrEnum):
    KNOCKOUT = "knockout"  # single elimination, byes to the top seeds, third-place match
    ROUND_ROBIN = "round-robin"  # a league: everyone plays everyone (``legs`` 1 or 2)
    SWISS = "swiss"  # ``rounds`` rounds, no pairing repeated, paired by score
    GROUPS = "groups"  # round-robin groups, then a knockout of the best of each


@dataclass(frozen=True)
class FormatSpec:
    format: Format
    best_of: int = 1  # games ("chicos") in a match: 1, 3, 5 (the first to best_of//2+1)
    team_size: int = 2  # players per entrant: 1, 2 or 3 (2, 4 or 6 seats)
    legs: int = 1  # round robin (and groups): 2 = home and away
    rounds: int | None = None  # swiss: how many rounds (default: ceil(log2 n))
    groups: int | None = None  # groups: how many groups
    advance: int = 2  # groups: how many of each group go to the knockout
    third_place: bool = True  # knockout (and the knockout after groups)


class Stage(StrEnum):
    """What a round is called on every screen and sheet."""

    ROUND = "round"  # round robin / swiss: "Fecha 3" / "Ronda 3"
    GROUP = "group"  # "Grupo A, fecha 2"
    KNOCKOUT = "knockout"  # "Octavos de final", "Cuartos", "Semifinal", "Final"
    THIRD_PLACE = "third-place"  # "Tercer puesto"


# ---------------------------------------------------------------------------- matches


@dataclass(frozen=True)
class Pairing:
    """Who plays whom: ``home`` is team 0 at the table (seats 0, 2, 4), ``away`` team 1;
    ``away`` None is a bye (``home`` goes through / scores the bye)."""

    home: str
    away: str | None


class MatchStatus(StrEnum):
    WAITING = "waiting"  # paired, no table yet
    ASSIGNED = "assigned"  # at a table, no game counted yet
    PLAYING = "playing"  # at least one game counted, not decided
    DECIDED = "decided"  # a side won best_of//2+1 games
    BYE = "bye"
    WALKOVER = "walkover"  # given by the organiser (a reason is kept)
    OVERRIDDEN = "overridden"  # result set by the organiser (a reason is kept)


@dataclass(frozen=True)
class GameCounted:
    """One game of a match proven by its table's sealed, verified record."""

    match: str
    game: str  # the record's game id (mesa03-g004)
    table: str
    score: tuple[int, int]  # team 0 (home), team 1 (away), as replayed from the record
    winner: int  # 0 home, 1 away
    record_sha256: str


@dataclass(frozen=True)
class MatchResult:
    winner: str | None  # entrant id; None while undecided
    games: tuple[int, int]  # games won: home, away
    points: tuple[int, int]  # points (tantos) summed over the counted games
    status: MatchStatus
    reason: str | None = None  # for a walkover or an override


@dataclass(frozen=True)
class Match:
    id: str  # r1-m01 (round 1, match 1); gB-r1-m1 in group B; final, third
    round: int  # 1-based, the tournament's round number
    stage: Stage
    label: str  # "Octavos de final", "Ronda 2", "Grupo B, fecha 1", "Final"
    pairing: Pairing
    best_of: int
    table: str | None = None
    games: tuple[GameCounted, ...] = ()
    result: MatchResult = field(
        default_factory=lambda: MatchResult(None, (0, 0), (0, 0), MatchStatus.WAITING)
    )
    group: str | None = None  # "A", "B", ... in the group stage

    @property
    def chico(self) -> int:
        """The game to play next: 1-based ("chico 2 de 3")."""
        return len(self.games) + 1


# ---------------------------------------------------------------------------- standings


@dataclass(frozen=True)
class Standing:
    """One line of the standings (sorted by the tie-breaks, see :mod:`.standings`)."""

    rank: int
    entrant: str
    played: int  # matches
    won: int
    lost: int
    games_won: int
    games_lost: int
    points_for: int
    points_against: int
    buchholz: int | None = None  # swiss: the sum of the opponents' matches won
    group: str | None = None
    withdrawn: bool = False  # withdrew: kept in the table, ranked after the others

    @property
    def points_diff(self) -> int:
        return self.points_for - self.points_against


# ---------------------------------------------------------------------------- the journal's actions


@dataclass(frozen=True)
class Register:
    entrant: Entrant


@dataclass(frozen=True)
class Withdraw:
    entrant: str
    reason: str


@dataclass(frozen=True)
class Seed:
    """The organiser's seeding (entrant ids, best first); unseeded ones follow."""

    order: tuple[str, ...]


@dataclass(frozen=True)
class Start:
    spec: FormatSpec


@dataclass(frozen=True)
class PairRound:
    """Pair the next round: the desk's pairing (``pairings`` None) or the organiser's."""

    round: int
    pairings: tuple[Pairing, ...] | None = None


@dataclass(frozen=True)
class AssignTable:
    match: str
    table: str


@dataclass(frozen=True)
class CloseRound:
    """The round ends: matches still undecided are settled by the games played so far
    (more games won, then more points, ``reason`` kept on each); while one is level the
    close is refused, naming it: it needs a Walkover or an OverrideResult first."""

    round: int
    reason: str = ""


@dataclass(frozen=True)
class Walkover:
    match: str
    winner: str
    reason: str


@dataclass(frozen=True)
class OverrideResult:
    """A result set by hand. ``points`` None: the points the tables' games recorded
    for this match stay (what a result entered without its points means); given: these
    instead."""

    match: str
    winner: str
    games: tuple[int, int]
    points: tuple[int, int] | None
    reason: str


@dataclass(frozen=True)
class SetTitle:
    """The tournament's display name ("Abierto de Truco de Boedo 2026"), shown on every
    view and printout instead of its id (the topic's ``name``); empty: the id again."""

    title: str


Action = (
    Register
    | Withdraw
    | Seed
    | Start
    | PairRound
    | AssignTable
    | GameCounted
    | CloseRound
    | Walkover
    | OverrideResult
    | SetTitle
)


# ---------------------------------------------------------------------------- the whole


@dataclass(frozen=True)
class Tournament:
    """The competition at one point of its journal (see :func:`.tournament.apply`).

    ``entrants`` in registration order (seeded ones carry ``seed``); ``withdrawn``
    maps an entrant id to the reason; ``matches`` in the order they were made;
    ``round`` the round being played (0 before the first pairing); ``closed`` the
    rounds the organiser (or the last result) closed; ``order`` the entrants' order
    fixed at Start (seeded ones by seed, then by registration: what the round robin's
    fixture and the groups' draw are made from).
    """

    name: str
    spec: FormatSpec | None = None
    entrants: tuple[Entrant, ...] = ()
    withdrawn: tuple[tuple[str, str], ...] = ()
    matches: tuple[Match, ...] = ()
    round: int = 0
    closed: frozenset[int] = frozenset()
    finished: bool = False
    order: tuple[str, ...] = ()
    title: str = ""  # the display name (SetTitle); "" shows the name

    @property
    def display_name(self) -> str:
        """What the views call the tournament: its title, or its name (the topic id)."""
        return self.title or self.name

    def entrant(self, entrant_id: str) -> Entrant:
        for e in self.entrants:
            if e.id == entrant_id:
                return e
        raise KeyError(entrant_id)

    def match(self, match_id: str) -> Match:
        for m in self.matches:
            if m.id == match_id:
                return m
        raise KeyError(match_id)

    def round_matches(self, round_no: int) -> tuple[Match, ...]:
        return tuple(m for m in self.matches if m.round == round_no)
