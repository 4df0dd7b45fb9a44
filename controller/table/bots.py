"""The plain bot (level ``facil``): the practice partner the table had before issue 44.

A bot sees what its seat sees (its own cards and what is public) and picks one of that
seat's legal actions, with a seeded ``random.Random``. It answers calls on its own only
when no human sits on its team (a human partner decides for the team), and always in a
pica-pica hand: there a call is answered in its own pica, where no partner plays.
:class:`Bot` (levels ``normal`` and ``dificil``) plays like a club player.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable
from typing import Final

from ..engine import Action, Card, Game, Kind, SeatView, envido_points, flor_points
from ..engine.cards import ENVIDO_VALUE, STRENGTH, SUIT_OF

__all__ = ["LEVELS", "BasicBot", "Bot", "Signals", "flor_due", "make_bot", "played_cards"]

_RAISES = (Kind.TRUCO, Kind.RETRUCO, Kind.VALE_CUATRO)
_FLOR_KINDS = (Kind.FLOR, Kind.CONTRAFLOR, Kind.CONTRAFLOR_AL_RESTO, Kind.CON_FLOR_ME_ACHICO)


def _strength(cards: tuple[Card, ...]) -> float:
    """0..1: how good a truco hand is."""
    if not cards:
        return 0.0
    return sum(c.strength for c in cards) / (14.0 * len(cards))


def played_cards(game: Game, seat: int) -> set[Card]:
    """The cards ``seat`` has played this hand (in its pica): a card only shown (to prove
    a tanto) is not among them, it is still in the hand to be played."""
    play = game.play_of(seat)
    out: set[Card] = set()
    for baza in (*play.played_bazas, play.table_cards):
        for s, card in baza:
            if s == seat:
                out.add(card)
    return out


def flor_due(game: Game, seat: int, hand: tuple[Card, ...] | None) -> Action | None:
    """The flor ``seat`` holds and may announce now, as a player says it the moment it may
    (before the others go on: with hands unknown a card or a call of anyone else's ends
    the announcements)."""
    dealt = hand or game.hand_of(seat)
    if not dealt or not game.rules.flor or flor_points(dealt) is None:
        return None
    flor = Action(seat, Kind.FLOR)
    return flor if game.is_legal(flor) else None


def _show(seat: int, game: Game, dealt: tuple[Card, ...]) -> Action | None:
    """``seat``'s cards shown to prove its claim, unless all of them are seen already."""
    if set(dealt) <= set(game.seen_cards(seat)):
        return None
    show = Action(seat, Kind.SHOW, cards=dealt)
    return show if game.is_legal(show) else None


def _declare(
    seat: int,
    game: Game,
    view: SeatView,
    by_kind: dict[Kind, list[Action]],
    dealt: tuple[Card, ...],
    unread: Callable[[], int | None],
) -> Action | None:
    """``seat``'s turn in a telling (envido or flor): its own points if it may say them,
    else son buenas, else the first number it may declare; ``unread()`` is what it would
    say with its cards unread (asked only then)."""
    telling = view.telling
    assert telling is not None
    if telling.next_seat != seat:
        return None
    own: int | None
    if not dealt:
        own = unread()
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


class BasicBot:
    """Today's bot of the mock table before issue 44 (kept as level ``facil`` and as the
    benchmark's baseline): fixed thresholds and a coin for its answers."""

    def __init__(self, seat: int, rng: random.Random, *, answers: bool = True) -> None:
        self.seat = seat
        self.rng = rng
        self.answers = answers

    def choose(self, game: Game, hand: tuple[Card, ...] | None = None) -> Action | None:
        """The bot's next action, or None; ``hand`` is the three cards it holds (the table
        may not have read them)."""
        view = game.view(self.seat)
        dealt = hand or game.hand_of(self.seat) or ()
        played = played_cards(game, self.seat)  # shown cards are still to be played
        cards = tuple(c for c in dealt if c not in played) if dealt else (view.cards or ())
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
        return _show(self.seat, game, dealt) if won else None

    def _declare(
        self,
        game: Game,
        view: SeatView,
        by_kind: dict[Kind, list[Action]],
        dealt: tuple[Card, ...],
    ) -> Action | None:
        # its cards unread: a number it may declare, at random
        numbers = [a.number for a in by_kind.get(Kind.DECLARE, [])] or [0]
        return _declare(self.seat, game, view, by_kind, dealt, lambda: self.rng.choice(numbers))


# ---------------------------------------------------------------------------- the club bot

#: the levels of ``truco-table run --bot``: ``facil`` is :class:`BasicBot`
LEVELS: Final = ("facil", "normal", "dificil")

_CHAIN_VALUE: Final = {Kind.ENVIDO: 2, Kind.REAL_ENVIDO: 3}
#: truco points by level (0: not called) and what refusing the call of that level gives
_TRUCO_POINTS: Final = (1, 2, 3, 4)
#: how sure of the hand a call (own initiative) must be, by the level it calls
_CALL_AT: Final = {1: 0.64, 2: 0.72, 3: 0.8}
_SURE: Final = 0.97  # a hand this sure is called up whatever (they fold or pay more)
#: the centre of what an opponent's envido call says of its points, by the call
_CALL_CENTRE: Final = {Kind.ENVIDO: 25.0, Kind.REAL_ENVIDO: 27.0, Kind.FALTA_ENVIDO: 28.5}
_GAME: Final = 40.0  # the worth of a game won or lost, in points, for the expected values


def _pair(a: int, b: int) -> int:
    if SUIT_OF[a] == SUIT_OF[b]:
        return 20 + ENVIDO_VALUE[a] + ENVIDO_VALUE[b]
    return max(ENVIDO_VALUE[a], ENVIDO_VALUE[b])


_PAIR: Final = tuple(tuple(_pair(a, b) for b in range(40)) for a in range(40))


def _env3(a: int, b: int, c: int, flor: bool) -> int:
    if flor and SUIT_OF[a] == SUIT_OF[b] == SUIT_OF[c]:
        return max(ENVIDO_VALUE[a], ENVIDO_VALUE[b], ENVIDO_VALUE[c])
    p = _PAIR
    return max(p[a][b], p[a][c], p[b][c])


_BASE: dict[bool, tuple[float, ...]] = {}


def _base_envido(flor: bool) -> tuple[float, ...]:
    """The envido of three cards drawn from the whole deck: its probability by points
    (0..33); computed once."""
    dist = _BASE.get(flor)
    if dist is None:
        counts = [0] * 34
        for a, b, c in itertools.combinations(range(40), 3):
            counts[_env3(a, b, c, flor)] += 1
        total = sum(counts)
        dist = tuple(n / total for n in counts)
        _BASE[flor] = dist
    return dist


class Signals:
    """What the partners of one team tell each other with their señas, as real partners
    do across the table: each bot posts its own envido and flor and its good cards (the
    ones a seña names: the aces and sevens that beat the rest, the threes and twos) when
    it looks at its hand. A bot reads its partners' posts, never a hidden card."""

    __slots__ = ("envido", "flor", "good", "hand")

    def __init__(self) -> None:
        self.hand = 0
        self.envido: dict[int, int] = {}
        self.flor: dict[int, int | None] = {}
        self.good: dict[int, tuple[Card, ...]] = {}

    def post(self, hand: int, seat: int, cards: tuple[Card, ...], flor: bool) -> None:
        if hand != self.hand:
            self.hand = hand
            self.envido.clear()
            self.flor.clear()
            self.good.clear()
        if seat in self.envido:
            return
        self.envido[seat] = envido_points(cards, flor=flor)
        self.flor[seat] = flor_points(cards) if flor else None
        self.good[seat] = tuple(c for c in cards if c.strength >= 9)


def make_bot(
    level: str,
    seat: int,
    rng: random.Random,
    *,
    answers: bool = True,
    signals: Signals | None = None,
) -> BasicBot | Bot:
    """A bot of ``level`` (:data:`LEVELS`)."""
    if level == "facil":
        return BasicBot(seat, rng, answers=answers)
    if level not in LEVELS:
        raise ValueError(f"no bot level {level!r}")
    return Bot(seat, rng, answers=answers, level=level, signals=signals)


class Bot:
    """A bot that plays like a decent club player, from what its seat may know: its own
    cards, the cards played and shown, the calls, the score, and its partners' señas
    (:class:`Signals`).

    Envido and flor answers weigh the points at stake (the falta as the variant counts it,
    the game when it decides it) against the chance its team's points are best: the other
    team's envido is drawn from the cards they may hold, narrowed by the cards they have
    shown or played and weighted by what their calls say. Truco calls and answers weigh
    the chance of the hand from the bazas won and left, the cards still unseen and who
    plays after whom. It goes to the mazo only with a hand it cannot win, and it bluffs
    at a measured rate (``bluff``). ``normal`` misjudges its chances by a little noise;
    ``dificil`` does not."""

    def __init__(
        self,
        seat: int,
        rng: random.Random,
        *,
        answers: bool = True,
        level: str = "normal",
        signals: Signals | None = None,
    ) -> None:
        self.seat = seat
        self.rng = rng
        self.answers = answers
        self.level = level
        self.signals = signals
        self.noise = 0.06 if level == "normal" else 0.0
        self.bluff = 0.06 if level == "normal" else 0.05
        self.last: tuple[str, float] | None = None  # the last estimate (for the checker)

    # ---- what it knows

    def look(self, game: Game, hand: tuple[Card, ...] | None = None) -> None:
        """Look at its cards at the deal and tell its partners (señas)."""
        dealt = hand or game.hand_of(self.seat)
        if dealt and self.signals is not None:
            self.signals.post(game.hand_number, self.seat, tuple(dealt), game.rules.flor)

    def choose(self, game: Game, hand: tuple[Card, ...] | None = None) -> Action | None:
        """The bot's next action, or None; ``hand`` is the three cards it holds (the table
        may not have read them)."""
        view = game.view(self.seat)
        dealt = tuple(hand or game.hand_of(self.seat) or ())
        proof = self._proof(game, view, dealt)
        if proof is not None:
            return proof  # (a show is never in the legal list: it is asked at any time)
        if not view.legal:
            return None
        if dealt and self.signals is not None:
            self.signals.post(game.hand_number, self.seat, dealt, game.rules.flor)
        played = played_cards(game, self.seat)  # shown cards are still to be played
        cards = tuple(c for c in dealt if c not in played) if dealt else (view.cards or ())
        by_kind: dict[Kind, list[Action]] = {}
        for a in view.legal:
            if a.kind is Kind.PLAY and dealt and a.card not in cards:
                continue
            by_kind.setdefault(a.kind, []).append(a)
        if not by_kind:
            return None
        self.last = None
        flor_rule = game.rules.flor
        my_flor = flor_points(dealt) if dealt and flor_rule else None
        if view.telling is not None:
            if Kind.FLOR in by_kind and my_flor is not None:
                return by_kind[Kind.FLOR][0]  # announced before the flor's telling begins
            return self._declare(game, view, by_kind, dealt)
        if Kind.FLOR in by_kind and my_flor is not None:
            course = game.play_of(self.seat).flor_course_team == view.team
            if course and Kind.CONTRAFLOR in by_kind and self._team_flor(my_flor) >= 34:
                return by_kind[Kind.CONTRAFLOR][0]
            return by_kind[Kind.FLOR][0]  # always sung (no flor tapada)
        if view.challenged and not self.answers and not view.pica_pica:
            return None
        if view.envido_pending is not None and view.envido_pending != view.team:
            return self._answer_envido(game, view, by_kind, dealt)
        if view.flor_pending == view.team:
            return self._answer_flor(game, view, by_kind, my_flor)
        if view.truco_pending is not None and view.truco_pending[1] != view.team:
            return self._answer_truco(game, view, by_kind, cards, dealt)
        if not view.my_turn:
            return None
        if dealt and view.baza == 0 and Kind.ENVIDO in by_kind:
            call = self._call_envido(game, view, by_kind, dealt)
            if call is not None:
                return call
        raise_ = self._call_truco(game, view, by_kind, cards)
        if raise_ is not None:
            return raise_
        plays = by_kind.get(Kind.PLAY)
        if plays and Kind.MAZO in by_kind and self._lost(game, view, cards, dealt):
            return by_kind[Kind.MAZO][0]
        if not plays:
            if Kind.MAZO in by_kind:
                return by_kind[Kind.MAZO][0]
            # never a flor it does not hold, nor a call out of nothing: wait for the others
            rest = [a for a in view.legal if a.kind not in _FLOR_KINDS and a.kind is not Kind.SHOW]
            return rest[0] if rest else None
        return self._play(game, view, plays, cards)

    def due_proof(self, game: Game, hand: tuple[Card, ...] | None = None) -> Action | None:
        """The show that proves a claim this bot must prove (hands unknown), as soon as it
        may: asked before any other seat acts, since the hand may end at any action."""
        dealt = tuple(hand or game.hand_of(self.seat) or ())
        return self._proof(game, game.view(self.seat), dealt)

    def _partners(self, game: Game) -> list[int]:
        if self.signals is None:
            return []
        play = game.play_of(self.seat)
        return [s for s in play.order if s != self.seat and s % 2 == self.seat % 2]

    def _team_envido(self, game: Game, mine: int) -> tuple[int, int]:
        """The team's best envido by the señas, and the seat that holds it."""
        best, seat = mine, self.seat
        if self.signals is not None and self.signals.hand == game.hand_number:
            for s in self._partners(game):
                pts = self.signals.envido.get(s)
                if pts is not None and pts > best:
                    best, seat = pts, s
        return best, seat

    def _team_flor(self, mine: int) -> int:
        best = mine
        if self.signals is not None:
            for s, pts in self.signals.flor.items():
                if s % 2 == self.seat % 2 and pts is not None and pts > best:
                    best = pts
        return best

    def _unseen(self, game: Game, dealt: tuple[Card, ...]) -> list[int]:
        """The cards this seat has not seen: not its own, not played or shown by anyone."""
        out = [True] * 40
        for c in dealt:
            out[c.index] = False
        for s in range(game.players):
            for c in game.seen_cards(s):
                out[c.index] = False
        return [i for i in range(40) if out[i]]

    # ---- envido

    def _opponents(self, game: Game) -> list[int]:
        play = game.play_of(self.seat)
        return [s for s in play.order if s % 2 != self.seat % 2]

    def _their_envido(self, game: Game, view: SeatView, dealt: tuple[Card, ...]) -> list[float]:
        """The other team's best envido: probability by points, from what can be seen."""
        flor = game.rules.flor
        unseen = self._unseen(game, dealt)
        cdf = [1.0] * 34
        for s in self._opponents(game):
            seen = [c.index for c in game.seen_cards(s)]
            if not seen:
                dist = list(_base_envido(flor))
            else:
                counts = [0.0] * 34
                if len(seen) >= 3:
                    counts[_env3(seen[0], seen[1], seen[2], flor)] = 1.0
                elif len(seen) == 2:
                    a, b = seen
                    for c in unseen:
                        counts[_env3(a, b, c, flor)] += 1
                else:
                    a = seen[0]
                    for b, c in itertools.combinations(unseen, 2):
                        counts[_env3(a, b, c, flor)] += 1
                total = sum(counts) or 1.0
                dist = [n / total for n in counts]
            acc = 0.0
            for x in range(34):
                acc += dist[x]
                cdf[x] *= min(1.0, acc)
        pmf = [cdf[0]] + [max(0.0, cdf[x] - cdf[x - 1]) for x in range(1, 34)]
        # what their calls say: the last call of theirs in the chain
        chain = view.envido_chain
        caller = view.envido_pending
        theirs_call: Kind | None = None
        if chain and caller is not None:
            team = caller
            for kind in reversed(chain):
                if team != view.team:
                    theirs_call = kind
                    break
                team = 1 - team
        if theirs_call is not None:
            centre = _CALL_CENTRE.get(theirs_call, 25.0)
            pmf = [
                p * (0.15 + 0.85 / (1.0 + math.exp((centre - x) / 1.5))) for x, p in enumerate(pmf)
            ]
            total = sum(pmf) or 1.0
            pmf = [p / total for p in pmf]
        return pmf

    def _envido_chance(self, game: Game, view: SeatView, dealt: tuple[Card, ...]) -> float:
        """The chance the team's envido is best (ties to the seat first from the mano)."""
        mine = envido_points(dealt, flor=game.rules.flor)
        best, holder = self._team_envido(game, mine)
        pmf = self._their_envido(game, view, dealt)
        order = game.play_of(self.seat).order
        first_opp = min(order.index(s) for s in self._opponents(game))
        win_tie = order.index(holder) < first_opp
        p = sum(pmf[:best]) + (pmf[best] if win_tie and best < 34 else 0.0)
        if self.noise:
            p += self.rng.uniform(-self.noise, self.noise)
        return min(1.0, max(0.0, p))

    def _stake(self, game: Game, chain: tuple[Kind, ...], winner: int) -> int:
        play = game.play_of(self.seat)
        if Kind.FALTA_ENVIDO in chain:
            return 6 if play.pica is not None else play.falta(winner)
        return min(sum(_CHAIN_VALUE[k] for k in chain), 6 if play.pica is not None else 99)

    def _worth(self, game: Game, team: int, points: int) -> float:
        """Points to ``team`` as the bot weighs them: a game won or lost weighs a game."""
        score = game.score[team]
        return _GAME if score + points >= game.rules.target else float(points)

    def _answer_envido(
        self, game: Game, view: SeatView, by_kind: dict[Kind, list[Action]], dealt: tuple[Card, ...]
    ) -> Action | None:
        chain = view.envido_chain
        us, them = view.team, 1 - view.team
        refused = 1 if len(chain) == 1 else self._stake(game, chain[:-1], them)
        if not dealt:  # cards nobody knows, not even the bot: take the small risk
            answer = by_kind.get(Kind.NO_QUIERO) or by_kind.get(Kind.QUIERO)
            return answer[0] if answer else None
        p = self._envido_chance(game, view, dealt)
        self.last = ("envido", p)
        win = self._worth(game, us, self._stake(game, chain, us))
        lose = self._worth(game, them, self._stake(game, chain, them))
        cost_refuse = self._worth(game, them, refused)
        # raises: real envido or falta with a hand that is very likely best
        for kind, need in ((Kind.FALTA_ENVIDO, 0.9), (Kind.REAL_ENVIDO, 0.78)):
            if kind in by_kind and p >= need:
                raised = (*chain, kind)
                gain = p * self._worth(game, us, self._stake(game, raised, us))
                loss = (1 - p) * self._worth(game, them, self._stake(game, raised, them))
                if gain - loss > p * win - (1 - p) * lose:
                    return by_kind[kind][0]
        accept = p * win - (1 - p) * lose > -cost_refuse
        kind = Kind.QUIERO if accept else Kind.NO_QUIERO
        if kind not in by_kind:
            kind = Kind.QUIERO if Kind.QUIERO in by_kind else Kind.NO_QUIERO
        return by_kind[kind][0] if kind in by_kind else None

    def _call_envido(
        self, game: Game, view: SeatView, by_kind: dict[Kind, list[Action]], dealt: tuple[Card, ...]
    ) -> Action | None:
        p = self._envido_chance(game, view, dealt)
        self.last = ("envido", p)
        us, them = view.team, 1 - view.team
        if Kind.FALTA_ENVIDO in by_kind and p >= 0.93:
            falta = (Kind.FALTA_ENVIDO,)
            if p * self._worth(game, us, self._stake(game, falta, us)) > 3 * (1 - p) * self._worth(
                game, them, self._stake(game, falta, them)
            ):
                return by_kind[Kind.FALTA_ENVIDO][0]
        if Kind.REAL_ENVIDO in by_kind and p >= 0.8:
            return by_kind[Kind.REAL_ENVIDO][0]
        if p >= 0.6:
            return by_kind[Kind.ENVIDO][0]
        if p >= 0.2 and self.rng.random() < self.bluff:
            return by_kind[Kind.ENVIDO][0]  # a bluff: never a falta
        return None

    def _answer_flor(
        self, game: Game, view: SeatView, by_kind: dict[Kind, list[Action]], mine: int | None
    ) -> Action:
        best = self._team_flor(mine or 0)
        resto = game.play_of(self.seat).flor_call is Kind.CONTRAFLOR_AL_RESTO
        need = 35 if resto else 33
        if best >= need and Kind.QUIERO in by_kind:
            return by_kind[Kind.QUIERO][0]
        for kind in (Kind.NO_QUIERO, Kind.CON_FLOR_ME_ACHICO, Kind.QUIERO):
            if kind in by_kind:
                return by_kind[kind][0]
        return next(iter(by_kind.values()))[0]

    # ---- truco

    def _hand_chance(self, game: Game, view: SeatView, cards: tuple[Card, ...]) -> float:
        """The chance the team wins the hand's bazas, from the bazas so far, the cards on
        the table, the bot's cards, its partners' señas and the cards still unseen."""
        play = game.play_of(self.seat)
        us = view.team
        dealt = tuple(cards) + tuple(played_cards(game, self.seat))
        unseen = self._unseen(game, dealt)
        hist = [0] * 16
        for i in unseen:
            hist[STRENGTH[i]] += 1
        n = max(1, len(unseen))
        below = [0.0] * 16
        acc = 0
        for x in range(16):
            below[x] = (acc + 0.5 * hist[x]) / n
            acc += hist[x]
        opps = self._opponents(game)
        k = len(opps)
        partners = [s for s in play.order if s != self.seat and s % 2 == us]
        table = view.table
        on_table = {s for s, _ in table}
        opp_best = max((c.strength for s, c in table if s % 2 != us), default=0)
        our_best = max((c.strength for s, c in table if s % 2 == us), default=0)
        opp_left = sum(1 for s in opps if s not in on_table)
        mine = sorted((c.strength for c in cards), reverse=True)
        good: list[int] = []
        if self.signals is not None and self.signals.hand == game.hand_number:
            for s in partners:
                gone = played_cards(game, s)
                good += [c.strength for c in self.signals.good.get(s, ()) if c not in gone]
        good.sort(reverse=True)

        def beat(x: int, m: int) -> float:
            return below[x] ** m if m else 1.0

        def partner_help(m: int) -> float:
            # a partner's card in a baza: a signalled good card, else an unknown low one
            if not partners:
                return 0.0
            if good:
                return beat(good[0], m)
            return 0.35 ** max(1, m) * len(partners)

        results: list[int | None] = []
        for r in view.bazas:
            results.append(None if r is None else (1 if r == us else 0))
        probs: list[float] = []
        if view.baza < 3 and (table or self.seat in play.order):
            if self.seat not in on_table and mine:
                need = [x for x in sorted(mine) if x > opp_best]
                if our_best > opp_best and opp_left == 0:
                    p_cur = 1.0
                    mine.remove(min(mine))
                elif need:
                    x = need[0]
                    for y in need:
                        if beat(y, opp_left) >= 0.6:
                            x = y
                            break
                    p_cur = beat(x, opp_left)
                    mine.remove(x)
                else:
                    p_cur = 0.0
                    mine.remove(min(mine))
                if our_best > opp_best:
                    p_cur = max(p_cur, beat(our_best, opp_left))
            else:
                p_cur = beat(our_best, opp_left) if our_best > opp_best else 0.0
            if partners and opp_left:
                p_cur = 1 - (1 - p_cur) * (1 - 0.5 * partner_help(opp_left))
            probs.append(p_cur)
        for x in mine:
            p = beat(x, k)
            if partners:
                p = 1 - (1 - p) * (1 - partner_help(k))
            probs.append(p)
        mano_us = game.mano is not None and game.mano % 2 == us
        if play.pica is not None:
            mano_us = play.pica % 2 == us
        return _chance(results, probs, mano_us)

    def _estimate(self, game: Game, view: SeatView, cards: tuple[Card, ...]) -> float:
        p = self._hand_chance(game, view, cards)
        if self.noise and 0.0 < p < 1.0:
            p = min(1.0, max(0.0, p + self.rng.uniform(-self.noise, self.noise)))
        self.last = ("truco", p)
        return p

    def _answer_truco(
        self,
        game: Game,
        view: SeatView,
        by_kind: dict[Kind, list[Action]],
        cards: tuple[Card, ...],
        dealt: tuple[Card, ...],
    ) -> Action | None:
        assert view.truco_pending is not None
        level = view.truco_pending[0]
        us, them = view.team, 1 - view.team
        if dealt and view.baza == 0 and Kind.ENVIDO in by_kind:  # el envido está primero
            call = self._call_envido(game, view, by_kind, dealt)
            if call is not None:
                return call
        if not cards:
            answer = by_kind.get(Kind.QUIERO) or by_kind.get(Kind.NO_QUIERO)
            return answer[0] if answer else None
        p = self._estimate(game, view, cards)
        p_adj = p * (0.85 if p < 1.0 else 1.0)  # they called it: their hand is likely good
        raise_kind = (None, Kind.RETRUCO, Kind.VALE_CUATRO, None)[level]
        if raise_kind is not None and raise_kind in by_kind and p_adj >= _CALL_AT[level + 1]:
            return by_kind[raise_kind][0]
        win = self._worth(game, us, _TRUCO_POINTS[level])
        lose = self._worth(game, them, _TRUCO_POINTS[level])
        cost_refuse = self._worth(game, them, _TRUCO_POINTS[level - 1])
        accept = p_adj * win - (1 - p_adj) * lose > -cost_refuse
        if not accept and p_adj > 0.15 and self.rng.random() < self.bluff:
            accept = True
        kind = Kind.QUIERO if accept else Kind.NO_QUIERO
        if kind not in by_kind:
            kind = Kind.QUIERO if Kind.QUIERO in by_kind else Kind.NO_QUIERO
        return by_kind[kind][0] if kind in by_kind else None

    def _call_truco(
        self, game: Game, view: SeatView, by_kind: dict[Kind, list[Action]], cards: tuple[Card, ...]
    ) -> Action | None:
        calls = [k for k in _RAISES if k in by_kind]
        if not calls or not cards:
            return None
        level = view.truco_level + 1
        p = self._estimate(game, view, cards)
        if p >= _CALL_AT.get(level, 1.0) or p >= _SURE:
            return by_kind[calls[0]][0]
        if level == 1 and 0.3 <= p < 0.55 and self.rng.random() < self.bluff:
            return by_kind[calls[0]][0]  # a bluff
        return None

    def _lost(
        self, game: Game, view: SeatView, cards: tuple[Card, ...], dealt: tuple[Card, ...]
    ) -> bool:
        """The hand cannot be won and folding now costs no more than playing it out: the
        envido's window is over for the team (nothing left to win there)."""
        if view.baza == 0 and not view.envido_chain and not view.flor_announced:
            return False  # the envido may still be worth something (or the mazo's point)
        p = self._hand_chance(game, view, cards)
        return p <= 0.0

    def _play(
        self, game: Game, view: SeatView, plays: list[Action], cards: tuple[Card, ...]
    ) -> Action:
        ordered = sorted(plays, key=lambda a: a.card.strength if a.card else 0)
        us = view.team
        table = view.table
        opp_best = max((c.strength for s, c in table if s % 2 != us), default=0)
        our_best = max((c.strength for s, c in table if s % 2 == us), default=0)
        on_table = {s for s, _ in table}
        opp_left = sum(1 for s in self._opponents(game) if s not in on_table)
        won = [r for r in view.bazas if r is not None]
        if our_best > opp_best and opp_left == 0:
            return ordered[0]  # the partner wins it: throw the lowest
        winners = [a for a in ordered if a.card is not None and a.card.strength > opp_best]
        if opp_left == 0:
            if winners:
                return winners[0]  # the lowest card that wins
            if (
                not view.bazas
                and opp_best
                and any(a.card is not None and a.card.strength == opp_best for a in ordered)
            ):
                # parda in the first baza with the best card kept
                return next(
                    a for a in ordered if a.card is not None and a.card.strength == opp_best
                )
            return ordered[0]
        if not table:  # leading
            if len(ordered) == 3 and not view.bazas:
                return ordered[1]  # the middle card first: the best one kept
            if won and won[0] == us:
                return (
                    ordered[0]
                    if ordered[-1].card and ordered[-1].card.strength < 12
                    else ordered[-1]
                )
            return ordered[-1]
        if our_best > opp_best and our_best >= 11:
            return ordered[0]
        if winners:
            return winners[-1] if len(winners) == 1 or opp_left > 1 else winners[len(winners) // 2]
        return ordered[0]

    # ---- proofs and tellings

    def _proof(self, game: Game, view: SeatView, dealt: tuple[Card, ...]) -> Action | None:
        """With hands unknown, a bot with a claim to prove (a telling won, a flor
        announced) shows its cards once the calls are over."""
        if not dealt or game.hand_of(self.seat) is not None:
            return None
        if not view.hand_in_progress or view.telling is not None:
            return None
        if view.envido_pending is not None or view.flor_pending is not None:
            return None
        play = game.play_of(self.seat)
        won = [r for r in (play.envido_result, play.flor_result) if r and r[0] == self.seat]
        if not won and self.seat not in view.flor_announced:
            return None
        return _show(self.seat, game, dealt)

    def _declare(
        self,
        game: Game,
        view: SeatView,
        by_kind: dict[Kind, list[Action]],
        dealt: tuple[Card, ...],
    ) -> Action | None:
        return _declare(self.seat, game, view, by_kind, dealt, lambda: None)


def _decided(results: list[int | None], mano_us: bool) -> int | None:
    """The hand's winner by its bazas (1: us, 0: them; None: a parda), or None while
    undecided (section 3's parda table)."""
    wins = results.count(1)
    losses = results.count(0)
    if wins >= 2:
        return 1
    if losses >= 2:
        return 0
    if len(results) >= 2:
        first = results[0]
        if first is None:
            for r in results[1:]:
                if r is not None:
                    return r
            if len(results) == 3:
                return 1 if mano_us else 0
            return None
        if results[1] is None or len(results) == 3:
            return first if results[-1] is None or results[1] is None else results[-1]
    return None


def _chance(results: list[int | None], probs: list[float], mano_us: bool) -> float:
    """The chance the hand is ours, each baza left won with its probability."""
    done = _decided(results, mano_us)
    if done is not None:
        return float(done)
    if len(results) >= 3 or not probs:
        return 0.5
    p = probs[0]
    rest = probs[1:]
    return p * _chance([*results, 1], rest, mano_us) + (1 - p) * _chance(
        [*results, 0], rest, mano_us
    )
