"""Simple bots for the mock table: they play the seats nobody sits at.

A bot sees what its seat sees (its own cards and what is public) and picks one of that
seat's legal actions, with a seeded ``random.Random``. It answers calls on its own only
when no human sits on its team (a human partner decides for the team), and always in a
pica-pica hand: there a call is answered in its own pica, where no partner plays.
"""

from __future__ import annotations

import random

from ..engine import Action, Card, Game, Kind, SeatView, envido_points, flor_points

__all__ = ["Bot"]

_RAISES = (Kind.TRUCO, Kind.RETRUCO, Kind.VALE_CUATRO)


def _strength(cards: tuple[Card, ...]) -> float:
    """0..1: how good a truco hand is."""
    if not cards:
        return 0.0
    return sum(c.strength for c in cards) / (14.0 * len(cards))


class Bot:
    def __init__(self, seat: int, rng: random.Random, *, answers: bool = True) -> None:
        self.seat = seat
        self.rng = rng
        self.answers = answers

    def choose(self, game: Game, hand: tuple[Card, ...] | None = None) -> Action | None:
        """The bot's next action, or None; ``hand`` is the three cards it holds (the table
        may not have read them)."""
        view = game.view(self.seat)
        dealt = hand or game.hand_of(self.seat) or ()
        seen = set(game.seen_cards(self.seat))
        cards = tuple(c for c in dealt if c not in seen) if dealt else (view.cards or ())
        legal = [a for a in view.legal if a.kind is not Kind.PLAY or not dealt or a.card in cards]
        if not legal:
            return None
        by_kind: dict[Kind, list[Action]] = {}
        for a in legal:
            by_kind.setdefault(a.kind, []).append(a)
        if view.telling is not None:
            return self._declare(game, view, by_kind, dealt)
        proof = self._proof(game, dealt)
        if proof is not None:
            return proof
        if Kind.FLOR in by_kind and dealt and flor_points(dealt) is not None:
            return by_kind[Kind.FLOR][0]  # always sing a flor (no flor tapada)
        if view.challenged and not self.answers and not view.pica_pica:
            return None
        flor_rule = game.rules.flor
        if view.envido_pending is not None and view.envido_pending != view.team:
            pts = envido_points(dealt, flor=flor_rule) if dealt else 25
            if pts >= 31 and Kind.REAL_ENVIDO in by_kind and self.rng.random() < 0.5:
                return by_kind[Kind.REAL_ENVIDO][0]
            kind = Kind.QUIERO if pts >= 27 or self.rng.random() < 0.2 else Kind.NO_QUIERO
            return by_kind[kind][0]
        if view.flor_pending == view.team:
            return by_kind.get(Kind.QUIERO, legal)[0]
        if game.play_of(self.seat).flor_course_team == view.team:
            return by_kind.get(Kind.FLOR, by_kind.get(Kind.CON_FLOR_ME_ACHICO, legal))[0]
        if view.truco_pending is not None and view.truco_pending[1] != view.team:
            return self._answer_truco(view, by_kind, cards, dealt, flor_rule)
        if not view.my_turn:
            return None
        wants_envido = dealt and envido_points(dealt, flor=flor_rule) >= 27
        if Kind.ENVIDO in by_kind and wants_envido and self.rng.random() < 0.7:
            return by_kind[Kind.ENVIDO][0]
        calls = [a for a in legal if a.kind in _RAISES]
        if calls and _strength(cards) > 0.6 and self.rng.random() < 0.3:
            return calls[0]
        plays = by_kind.get(Kind.PLAY)
        if not plays:
            return by_kind.get(Kind.MAZO, legal)[0]
        return self._play(view, plays)

    def _answer_truco(
        self,
        view: SeatView,
        by_kind: dict[Kind, list[Action]],
        cards: tuple[Card, ...],
        dealt: tuple[Card, ...],
        flor_rule: bool,
    ) -> Action:
        s = _strength(cards)
        raises = [a for k in (Kind.RETRUCO, Kind.VALE_CUATRO) for a in by_kind.get(k, [])]
        if raises and s > 0.7 and self.rng.random() < 0.3:
            return raises[0]
        primero = view.baza == 0 and Kind.ENVIDO in by_kind and dealt
        if primero and envido_points(dealt, flor=flor_rule) >= 29:
            return by_kind[Kind.ENVIDO][0]  # el envido está primero
        kind = Kind.QUIERO if s > 0.45 or self.rng.random() < 0.25 else Kind.NO_QUIERO
        return by_kind[kind][0]

    def _play(self, view: SeatView, plays: list[Action]) -> Action:
        ordered = sorted(plays, key=lambda a: a.card.strength if a.card else 0)
        theirs = max((c.strength for s, c in view.table if s % 2 != view.team), default=0)
        ours = max((c.strength for s, c in view.table if s % 2 == view.team), default=0)
        if ours > theirs:
            return ordered[0]  # the partner is winning: throw the lowest
        for a in ordered:
            if a.card is not None and a.card.strength > theirs:
                return a  # the lowest card that wins
        return ordered[0]

    def _proof(self, game: Game, dealt: tuple[Card, ...]) -> Action | None:
        """With hands unknown, a bot that won a telling shows its cards before the end."""
        if not dealt or game.hand_of(self.seat) is not None:
            return None
        play = game.play_of(self.seat)
        won = [r for r in (play.envido_result, play.flor_result) if r and r[0] == self.seat]
        if not won or set(dealt) <= set(game.seen_cards(self.seat)):
            return None
        show = Action(self.seat, Kind.SHOW, cards=dealt)
        return show if game.is_legal(show) else None

    def _declare(
        self,
        game: Game,
        view: SeatView,
        by_kind: dict[Kind, list[Action]],
        dealt: tuple[Card, ...],
    ) -> Action | None:
        telling = view.telling
        assert telling is not None
        if telling.next_seat != self.seat:
            return None
        own: int | None
        if not dealt:
            own = self.rng.choice([a.number for a in by_kind.get(Kind.DECLARE, [])] or [0])
        elif telling.kind == "flor":
            own = flor_points(dealt)
        else:
            own = envido_points(dealt, flor=game.rules.flor)
        for a in by_kind.get(Kind.DECLARE, []):
            if a.number == own:
                return a
        if Kind.SON_BUENAS in by_kind:
            return by_kind[Kind.SON_BUENAS][0]
        declarations = by_kind.get(Kind.DECLARE)
        return declarations[0] if declarations else None
