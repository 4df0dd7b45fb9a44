"""What one seat may see and do: the source of that seat's display.

A ``SeatView`` holds only public information plus the seat's own cards; another seat's
hidden cards never appear in it (only cards played or shown on the table).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from operator import attrgetter
from typing import TYPE_CHECKING

from .actions import Action, Kind, team_of
from .cards import Card
from .frozen import quick_constructor
from .results import Award

if TYPE_CHECKING:
    from .game import Game, HandPlay, Telling

__all__ = ["SeatView", "seat_views"]


@dataclass(frozen=True, slots=True)
class SeatView:
    seat: int
    team: int
    players: int
    target: int
    ours: int
    theirs: int
    winner: int | None
    hand_number: int
    hand_in_progress: bool
    dealer: int | None
    mano: int | None
    turn: int | None
    baza: int
    cards: tuple[Card, ...] | None  # this seat's cards still in hand, if the table read them
    table: tuple[tuple[int, Card], ...]  # the current baza
    bazas: tuple[int | None, ...]  # team that won each finished baza (None: parda)
    truco_level: int
    truco_pending: tuple[int, int] | None  # (level called, caller's team)
    raise_team: int | None
    envido_chain: tuple[Kind, ...]
    envido_pending: int | None  # caller's team
    envido_result: tuple[int, int] | None  # (seat, points): the winner's only
    flor_announced: tuple[int, ...]
    flor_pending: int | None  # team that must answer a contraflor / al resto
    flor_result: tuple[int, int] | None
    telling: Telling | None
    awards: tuple[Award, ...]  # this hand's (every pica's)
    legal: tuple[Action, ...]  # what this seat may do now
    # A pica-pica hand (RULES.md section 8b): the turn, bazas, calls and tellings above are
    # those of this seat's pica; the score and the awards stay the teams'.
    pica_pica: bool = False
    pica: int | None = None  # the mano seat of this seat's pica
    opponent: int | None = None  # the seat this one plays against in its pica

    @property
    def my_turn(self) -> bool:
        return self.turn == self.seat

    @property
    def challenged(self) -> bool:
        """A call awaits this seat's team's answer."""
        pend = [self.envido_pending, self.truco_pending[1] if self.truco_pending else None]
        return any(p is not None and p != self.team for p in pend) or self.flor_pending == self.team


#: ``SeatView(...)`` made cheaper (``quick_constructor``): a view a seat, every game state
_new_view = quick_constructor(SeatView)


def seat_views(game: Game) -> tuple[SeatView, ...]:
    """Every seat's view at once: what all the seats see alike (the score, the
    hand, each play's bazas, calls and tellings) is read once, the legal actions split
    by seat in one pass; only the seat's own part (its cards, actions, team's side of the
    score, its opponent in a pica) is read per seat. Equal seat by seat to the view read
    field by field (``tests/engine/view_oracle.py``; the public parts are shared objects)."""
    n = game.players
    score = game.score
    awards = game.awards
    pica_pica = game.pica_pica
    hand_number = game.hand_number
    # what every seat of a team sees alike before its play's fields: the seat count,
    # the target, the team's side of the score first, the winner, the hand
    alike = (game.winner, hand_number, game.hand_in_progress, game.dealer, game.mano)
    heads = [(n, game.rules.target, score[team], score[1 - team], *alike) for team in (0, 1)]
    held = game.cards_in_hands() if hand_number else (None,) * n
    legal = _legal_by_seat(game.legal_list(), n)
    # per play (one, or a pica-pica hand's three), its public fields
    publics: list[_Public] = []
    public: _Public | None = None
    views: list[SeatView] = []
    for seat in range(n):
        play = game.play_of(seat)
        if public is None or public.play is not play:  # else the seat before's play
            public = None
            for known in publics:
                if known.play is play:
                    public = known
                    break
            if public is None:
                public = _Public(play, game.pica_live(seat))
                publics.append(public)
        team = team_of(seat)
        opponent: int | None = None
        if pica_pica:
            for other in play.order:
                if other != seat:
                    opponent = other
                    break
        # the fields in SeatView's order, the shared ones unpacked from their tuples
        fields = (
            seat,
            team,
            *heads[team],
            public.turn,
            public.baza,
            held[seat],
            *public.fields,
            awards,
            legal[seat],
            pica_pica,
            public.pica,
            opponent,
        )
        views.append(_new_view(*fields))
    return tuple(views)


_SEAT_OF = attrgetter("seat")


def _legal_by_seat(legal: list[Action], players: int) -> list[tuple[Action, ...]]:
    """``legal`` split by seat, each seat's in its order. A seat's actions come in runs
    (the floor lists one seat's, then the next one's): split a run at a time in C code
    (``groupby``), not an action at a time."""
    by_seat: list[tuple[Action, ...]] = [()] * players
    for seat, run in groupby(legal, _SEAT_OF):
        by_seat[seat] += tuple(run)
    return by_seat


class _Public:
    """A play's fields of ``SeatView``, the same for every seat of the play."""

    __slots__ = (
        "baza",
        "bazas",
        "envido_chain",
        "envido_pending",
        "envido_result",
        "fields",
        "flor_announced",
        "flor_pending",
        "flor_result",
        "pica",
        "play",
        "raise_team",
        "table",
        "telling",
        "truco_level",
        "truco_pending",
        "turn",
    )

    def __init__(self, play: HandPlay, live: bool) -> None:
        self.play = play
        self.turn: int | None = play.turn if live else None
        self.baza: int = play.baza
        self.table: tuple[tuple[int, Card], ...] = play.table_cards
        self.bazas: tuple[int | None, ...] = play.baza_results
        self.truco_level: int = play.truco_level
        self.truco_pending: tuple[int, int] | None = play.truco_pending
        self.raise_team: int | None = play.raise_team
        self.envido_chain: tuple[Kind, ...] = play.envido_chain
        self.envido_pending: int | None = play.envido_pending
        self.envido_result: tuple[int, int] | None = play.envido.result
        self.flor_announced: tuple[int, ...] = tuple(play.flor.ann)
        self.flor_pending: int | None = play.flor_pending
        self.flor_result: tuple[int, int] | None = play.flor.result
        self.telling: Telling | None = play.telling
        self.pica: int | None = play.pica
        # SeatView's fields from ``table`` to ``telling``, in its order
        self.fields = (
            self.table,
            self.bazas,
            self.truco_level,
            self.truco_pending,
            self.raise_team,
            self.envido_chain,
            self.envido_pending,
            self.envido_result,
            self.flor_announced,
            self.flor_pending,
            self.flor_result,
            self.telling,
        )
