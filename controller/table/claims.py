"""Claims still to prove, and why a penalty was given: read from the game's public state.

With hands unknown (the table did not read a seat's cards), a seat that wins a telling
of points, or sings a flor, must prove it by the end of the hand: the cards it plays or
shows must make the points it declared, or the other team scores the stake as a
penalty (docs/RULES.md). The table asks such a seat to show its cards while the hand
can still end at any moment (:func:`show_requests`), and names the reason of every
penalty (:func:`penalty_notes`).

Everything here is read from the engine's public state (the telling's result, the flor
announcements, the cards seen), without changing it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..engine import Action, Game, HandPlay, Kind, envido_points, flor_points
from ..engine.results import Award, Reason

__all__ = [
    "FLOR_NOT_SHOWN",
    "FLOR_TAPADA",
    "TANTO_MAL_CANTADO",
    "TANTO_NOT_SHOWN",
    "Claim",
    "penalty_notes",
    "show_requests",
    "unproven_claims",
]

FLOR_TAPADA = "flor tapada"  # a flor played or shown without being sung
TANTO_MAL_CANTADO = "tanto mal cantado"  # points declared that the seat's known cards deny
TANTO_NOT_SHOWN = "tanto sin mostrar"  # an unproven envido claim at the end of the hand
FLOR_NOT_SHOWN = "flor sin mostrar"  # an unproven flor at the end of the hand


@dataclass(frozen=True, slots=True)
class Claim:
    """A seat's claim still to prove: ``kind`` ``envido`` (``points``) or ``flor``."""

    seat: int
    kind: str
    points: int | None = None


def unproven_claims(game: Game) -> tuple[Claim, ...]:
    """The claims of this hand that the cards seen so far do not prove yet (of every pica,
    in a pica-pica hand)."""
    if not game.hand_in_progress:
        return ()
    out: list[Claim] = []
    for play in game.plays:
        if play.live:
            out.extend(_unproven(game, play))
    return tuple(out)


def _unproven(game: Game, play: HandPlay) -> list[Claim]:
    out: list[Claim] = []
    # a seat the table did not read has its claim scored only when the play ends (the
    # engine defers it), so a claim listed here is never scored yet
    result = play.envido_result
    if result is not None:
        seat, points = result
        if (
            game.hand_of(seat) is None
            and envido_points(game.seen_cards(seat), flor=game.rules.flor) != points
        ):
            out.append(Claim(seat, "envido", points))
    result = play.flor_result
    if result is not None:
        seat, points = result
        if game.hand_of(seat) is None and flor_points(game.seen_cards(seat)) != points:
            out.append(Claim(seat, "flor", points))
    elif play.telling is None:  # an open flor too: the hand can end before it closes
        for seat in play.flor_announced:
            if game.hand_of(seat) is None and flor_points(game.seen_cards(seat)) is None:
                out.append(Claim(seat, "flor"))
    return out


def near_the_end(game: Game) -> bool:
    """The hand may end with the next few actions: from the second baza on (the baza
    then finished can decide it), or while a truco call awaits its answer (a no quiero
    ends it)."""
    return game.hand_in_progress and any(
        p.live and (p.baza >= 1 or p.truco_pending is not None) for p in game.plays
    )


_NO_SEATS: frozenset[int] = frozenset()


def show_requests(game: Game) -> frozenset[int]:
    """The seats asked to show their cards now: an unproven claim, near the hand's end."""
    if not near_the_end(game):
        return _NO_SEATS
    claims = unproven_claims(game)
    return frozenset([c.seat for c in claims]) if claims else _NO_SEATS


def penalty_notes(
    action: Action,
    new_awards: Sequence[Award],
    claims_before: Sequence[Claim],
    game: Game,
    hand_ended: bool,
) -> list[str | None]:
    """The reason of each award ``action`` caused (None: not a penalty).

    ``claims_before`` are the unproven claims before the action and ``game`` the state
    after it. A declaration is penalised only for points the seat's known cards deny; at
    the end of the hand every claim still unproven costs its stake (the last penalties,
    in the engine's order); any other penalty is a flor played or shown unsung.
    """
    notes: list[str | None] = [None] * len(new_awards)
    penalties = [i for i, a in enumerate(new_awards) if a.reason is Reason.PENALTY]
    if action.kind is Kind.DECLARE:
        for i in penalties:
            notes[i] = TANTO_MAL_CANTADO
        return notes
    unshown: list[str] = []
    if hand_ended:
        for claim in claims_before:
            seen = game.seen_cards(claim.seat)
            if claim.kind == "envido":
                proven = envido_points(seen, flor=game.rules.flor) == claim.points
            elif claim.points is not None:
                proven = flor_points(seen) == claim.points
            else:
                proven = flor_points(seen) is not None
            if not proven:
                unshown.append(TANTO_NOT_SHOWN if claim.kind == "envido" else FLOR_NOT_SHOWN)
    tail = penalties[len(penalties) - len(unshown) :] if unshown else []
    for i in penalties:
        notes[i] = FLOR_TAPADA
    for i, note in zip(tail, unshown[-len(tail) :] if tail else [], strict=True):
        notes[i] = note
    return notes
