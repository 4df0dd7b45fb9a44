"""What one seat may see and do: the source of that seat's display.

A ``SeatView`` holds only public information plus the seat's own cards; another seat's
hidden cards never appear in it (only cards played or shown on the table).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .actions import Action, Kind
from .cards import Card
from .results import Award

if TYPE_CHECKING:
    from .game import Game, Telling

__all__ = ["SeatView", "seat_view"]


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


def seat_view(game: Game, seat: int) -> SeatView:
    team = seat % 2
    score = game.score
    play = game.play_of(seat)  # the whole hand, or the seat's pica
    live = game.pica_live(seat)
    flor = play.flor
    opponents = [s for s in play.order if s != seat] if game.pica_pica else []
    return SeatView(
        seat=seat,
        team=team,
        players=game.players,
        target=game.rules.target,
        ours=score[team],
        theirs=score[1 - team],
        winner=game.winner,
        hand_number=game.hand_number,
        hand_in_progress=game.hand_in_progress,
        dealer=game.dealer,
        mano=game.mano,
        turn=play.turn if live else None,
        baza=play.baza,
        cards=game.cards_in_hand(seat) if game.hand_number else None,
        table=play.table_cards,
        bazas=play.baza_results,
        truco_level=play.truco_level,
        truco_pending=play.truco_pending,
        raise_team=play.raise_team,
        envido_chain=play.envido_chain,
        envido_pending=play.envido_pending,
        envido_result=play.envido.result,
        flor_announced=tuple(flor.ann),
        flor_pending=play.flor_pending,
        flor_result=flor.result,
        telling=play.telling,
        awards=game.awards,
        legal=tuple(a for a in game.legal_list() if a.seat == seat),
        pica_pica=game.pica_pica,
        pica=play.pica,
        opponent=opponents[0] if opponents else None,
    )
