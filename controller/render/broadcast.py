"""What the broadcast shows, delayed and with the cards of a hand in play kept back.

A ``BroadcastLog`` is a game told as it happened: the record's statements (``table``,
``score``, ``dealer``, ``hand``, actions), each with the server's clock when it
arrived, the cards dealt in each hand (``deal`` lines, kept apart) and when each hand
ended. ``view(now, delay_s, teaching)`` is what a screen may show at ``now``:

- the game as it stood ``delay_s`` seconds ago (the statements that arrived by then);
- the cards read at a hand's deal only once that hand has ended at the table by ``now``
  (with a delay shorter than the hand, the cards are held back until it ends), or at
  once at a teaching table (``teaching``: the cards are shown to teach, delay 0 allowed);
- cards played are public (they are on the table) and always shown.

Nothing here reads a clock: ``now`` is given. Both the table's own page server
(``controller.table.broadcast``) and the desk build on it; the server, never the page,
applies the delay (``check_delay`` says which delays a table may use).

``frame(game, ...)`` turns a game into the JSON the broadcast page draws: teams, score,
calls, each seat's cards (as read at the deal, and which were played), envido and flor
points, and the best-play line (``controller.engine.bestplay``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..engine import Game, Kind, envido_points, flor_points
from ..engine.bestplay import best_play, position_of
from ..transcript import ActionStmt, TranscriptError, parse, replay
from .notices import card_name

__all__ = [
    "DEFAULT_DELAY_S",
    "BroadcastLog",
    "DelayError",
    "check_delay",
    "frame",
    "hidden_cards",
    "record_log",
]

#: A tournament's delay when its organiser sets none (issue 46).
DEFAULT_DELAY_S: Final = 120.0

#: The calls as the broadcast names them (third person: "Asiento 2 cantó truco").
_SAID: Final[dict[Kind, str]] = {
    Kind.TRUCO: "cantó truco",
    Kind.RETRUCO: "cantó retruco",
    Kind.VALE_CUATRO: "cantó vale cuatro",
    Kind.ENVIDO: "cantó envido",
    Kind.REAL_ENVIDO: "cantó real envido",
    Kind.FALTA_ENVIDO: "cantó falta envido",
    Kind.FLOR: "cantó flor",
    Kind.CONTRAFLOR: "cantó contraflor",
    Kind.CONTRAFLOR_AL_RESTO: "cantó contraflor al resto",
    Kind.CON_FLOR_ME_ACHICO: "se achicó",
    Kind.QUIERO: "dijo quiero",
    Kind.NO_QUIERO: "dijo no quiero",
    Kind.MAZO: "se fue al mazo",
    Kind.SON_BUENAS: "dijo son buenas",
}


class DelayError(ValueError):
    """A delay the table may not use (Spanish, for the organiser or the bar)."""


def check_delay(delay_s: float, *, teaching: bool) -> float:
    """The delay, checked: a number of seconds from 0 to 3600, 0 (or under 10 s) only at
    a table marked as a teaching table."""
    if not 0 <= delay_s <= 3600:
        raise DelayError(f"la demora va de 0 a 3600 segundos, no {delay_s:g}")
    if delay_s < 10 and not teaching:
        raise DelayError(
            f"una demora de {delay_s:g} s solo se permite en una mesa marcada para "
            "enseñar (teaching = true): en las demás las cartas llegarían a la sala"
        )
    return delay_s


@dataclass
class BroadcastLog:
    """A game as it happened, by the server's clock (see the module's docstring).

    ``names``: the teams' names (team 0, team 1); ``table``: the table's name.
    """

    table: str
    names: tuple[str, str] = ("Equipo 0", "Equipo 1")
    #: (arrival, statement line): the record's lines without ``deal`` lines
    lines: list[tuple[float, str]] = field(default_factory=list)
    #: hand number (from 1) -> its ``deal`` lines
    deals: dict[int, list[str]] = field(default_factory=dict)
    #: hand number -> when it ended (server clock)
    ended: dict[int, float] = field(default_factory=dict)
    hands: int = 0

    def add(self, at: float, text: str) -> None:
        """Statements that arrived at ``at`` (one or more lines of a record; ``deal``
        lines are kept with their hand, comments dropped)."""
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            head = line.split(None, 1)[0].lower()
            if head == "table":
                self.lines.clear()
                self.deals.clear()
                self.ended.clear()
                self.hands = 0
            if head == "hand":
                self.hands += 1
            if head == "deal":
                self.deals.setdefault(self.hands, []).append(line)
            else:
                self.lines.append((at, line))

    def add_deal(self, hand: int, deal_lines: Sequence[str]) -> None:
        """The cards read at hand ``hand``'s deal, told apart (the desk hears them only
        when the hand has ended)."""
        self.deals[hand] = [line.split("#", 1)[0].strip() for line in deal_lines]

    def hand_ended(self, hand: int, at: float) -> None:
        self.ended.setdefault(hand, at)

    def drop_hands(self, hand: int) -> None:
        """Forget hand ``hand`` (from 1) and any after it: their statements (with the
        ``dealer`` line before the first), their cards and their ends (a table restarted
        before a hand's first action reads its deal again under the same number)."""
        seen = 0
        for i, (_, line) in enumerate(self.lines):
            if line.split(None, 1)[0].lower() == "hand":
                seen += 1
                if seen == hand:
                    cut = i
                    if cut and self.lines[cut - 1][1].split(None, 1)[0].lower() == "dealer":
                        cut -= 1
                    del self.lines[cut:]
                    break
        for n in [n for n in (*self.deals, *self.ended) if n >= hand]:
            self.deals.pop(n, None)
            self.ended.pop(n, None)
        self.hands = min(self.hands, hand - 1)

    def undo(self) -> None:
        """The referee took the last action back: the hand is being played again (its
        cards are held back again until it ends once more)."""
        self.ended.pop(self.hands, None)
        for i in range(len(self.lines) - 1, -1, -1):
            if self.lines[i][1].split(None, 1)[0].isdigit():
                del self.lines[i]
                return

    def view(self, now: float, delay_s: float, *, teaching: bool = False) -> dict[str, Any]:
        """What a screen may show at ``now`` (``frame``'s JSON, plus ``delay_s``,
        ``as_of``: the arrival time of the last statement shown, and ``held_back``:
        whether a hand's cards were kept back because it is still being played)."""
        upto = now - delay_s
        text: list[str] = []
        hand = 0
        as_of: float | None = None
        for at, line in self.lines:
            if at > upto:
                break
            as_of = at
            text.append(line)
            if line.split(None, 1)[0].lower() == "hand":
                hand += 1
                # the game is replayed as it was played (with the cards the server
                # knows: the engine's judgement depends on them); what is shown is cut
                text += self.deals.get(hand, [])
        over = self.ended.get(hand)
        reveal = teaching or (over is not None and over <= now)
        game = _replayed("\n".join(text))
        out = frame(game, table=self.table, names=self.names, calls=_calls(text), reveal=reveal)
        # the shown hand is in play and its cards are not shown yet (the desk hears them
        # only once it has ended)
        held_back = not reveal and game is not None and game.hand_in_progress
        return out | {"delay_s": delay_s, "teaching": teaching, "as_of": as_of,
                      "held_back": held_back}  # fmt: skip


def record_log(
    text: str, *, table: str, names: tuple[str, str] = ("Equipo 0", "Equipo 1"), step_s: float = 1.0
) -> BroadcastLog:
    """A finished game's record as a broadcast: one statement every ``step_s`` seconds
    from 0, every hand already ended (a record in an archive is of a game over: its
    cards are shown as the replay goes)."""
    log = BroadcastLog(table, names)
    at = 0.0
    for raw in text.splitlines():
        before = len(log.lines)
        log.add(at, raw)
        if len(log.lines) > before:  # a statement shown (a deal line goes with its hand)
            at += step_s
    for hand in range(1, log.hands + 1):
        log.hand_ended(hand, 0.0)
    return log


def _replayed(text: str) -> Game | None:
    if not text.strip():
        return None
    try:
        return replay(parse(text)).game
    except TranscriptError:
        return None


def _cards_known(game: Game | None) -> bool:
    return game is not None and all(game.hand_of(s) is not None for s in range(game.players))


def _calls(lines: list[str]) -> list[str]:
    """The current hand's actions other than cards, as the broadcast says them."""
    start = max((i for i, line in enumerate(lines) if line.lower() == "hand"), default=-1)
    out = []
    for line in lines[start + 1 :]:
        words = line.split()
        if not words[0].isdigit() or words[1].lower() in ("play", "show"):
            continue
        try:
            stmt = parse(f"table players=6\nhand\n{line}")[-1]
        except TranscriptError:
            continue
        if not isinstance(stmt, ActionStmt):
            continue
        a = stmt.action
        said = _SAID.get(a.kind)
        if a.kind is Kind.DECLARE:
            said = f"dijo {a.number}"
        if said is not None:
            out.append(f"Asiento {a.seat} {said}")
    return out


def frame(
    game: Game | None,
    *,
    table: str,
    names: tuple[str, str] = ("Equipo 0", "Equipo 1"),
    calls: Sequence[str] = (),
    reveal: bool = True,
) -> dict[str, Any]:
    """The broadcast page's JSON for ``game`` as it stands (``None``: nothing played
    yet). Only what ``game`` knows is shown: a seat whose cards were not read has
    ``cards: null`` and shows its cards played only. Without ``reveal`` (the hand's cards
    are kept back) no seat's cards read at the deal are in it, nor anything computed
    from them (envido and flor points, best play): only the cards played."""
    if game is None:
        return {
            "table": table,
            "names": list(names),
            "started": False,
            "score": [0, 0],
            "target": 30,
            "players": 0,
            "seats": [],
            "calls": [],
            "best": None,
        }
    rules = game.rules
    dealt_all = reveal and _cards_known(game)
    seats = []
    for s in range(game.players):
        dealt = game.hand_of(s) if reveal else None
        play = game.play_of(s)
        played = [
            (i, c) for i, baza in enumerate(play.played_bazas) for seat, c in baza if seat == s
        ] + [(len(play.played_bazas), c) for seat, c in play.table_cards if seat == s]
        played_at = {str(c): i for i, c in played}
        cards = None
        if dealt is not None:
            cards = [
                {"card": str(c), "name": card_name(str(c)), "baza": played_at.get(str(c))}
                for c in dealt
            ]
        seats.append(
            {
                "seat": s,
                "team": s & 1,
                "cards": cards,
                "played": [{"card": str(c), "baza": i} for i, c in played],
                "envido": envido_points(dealt, flor=rules.flor) if dealt is not None else None,
                "flor": flor_points(dealt) if dealt is not None and rules.flor else None,
                "turn": game.hand_in_progress and s in game.turns,
            }
        )
    best = None
    plays = game.plays if game.hand_in_progress else ()
    if dealt_all:
        lines = []
        for play in plays:
            position = position_of(play)
            if position is None:
                continue
            found = best_play(position)
            lines.append(
                {
                    "team": found.team,
                    "name": names[found.team],
                    "value": found.value,
                    "line": [f"{seat}:{card}" for seat, card in found.line],
                    "choices": [[str(c), t] for c, t in found.choices],
                    "seats": list(play.order),
                }
            )
        best = lines or None
    play0 = game.plays[0]
    hands = game.hands
    return {
        "table": table,
        "names": list(names),
        "started": True,
        "score": list(game.score),
        "target": rules.target,
        "players": game.players,
        "flor": rules.flor,
        "hand": game.hand_number,
        "dealer": game.dealer,
        "mano": game.mano,
        "pica_pica": game.pica_pica,
        "hand_over": not game.hand_in_progress,
        "winner": game.winner,
        "value": play0.hand_value,
        "bazas": [None if b is None else b for b in play0.baza_results],
        "calls": list(calls),
        "awards": [
            {"team": a.team, "points": a.points, "reason": a.reason.value}
            for a in (hands[-1].awards if hands else ())
        ],
        "seats": seats,
        "best": best,
    }


def hidden_cards(game: Game) -> set[str]:
    """The cards of the hand in play that no seat has played or shown yet: what must
    never reach a screen the room can see (the secrecy test's list)."""
    if not game.hand_in_progress or game.winner is not None:
        return set()  # no hand in play (a game won in the middle of a hand ends it)
    out: set[str] = set()
    for s in range(game.players):
        held = game.cards_in_hand(s)
        seen = {str(c) for c in game.seen_cards(s)}
        out |= {str(c) for c in held or ()} - seen
    return out
