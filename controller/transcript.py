"""The plain-text game record (docs/TRANSCRIPT.md): parse, replay and write.

A transcript is the game's move stack: restoring a table after a power cut, checking a
bug report and testing the rules are all replaying one.

>>> text = '''
... table players=2
... hand
... deal 0: 7C 6C 3E
... deal 1: 2O 1B 4B
... 0 envido
... 1 quiero
... '''
>>> result = replay(parse(text))
>>> result.game.score
(2, 0)
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from .engine import (
    Action,
    Card,
    Game,
    HandResult,
    HouseRules,
    IllegalActionError,
    RefusalCode,
    TrucoError,
)
from .textfile import TextFileError, read_text_file

__all__ = [
    "ActionStmt",
    "DealStmt",
    "DealerStmt",
    "HandStmt",
    "RecordFileError",
    "Rejected",
    "ReplayResult",
    "ScoreStmt",
    "Statement",
    "TableStmt",
    "TranscriptError",
    "parse",
    "read_record",
    "replay",
    "result_json",
    "write",
]


class TranscriptError(TrucoError):
    """A malformed transcript; ``line`` is the 1-based line at fault."""

    def __init__(self, line: int, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}")


@dataclass(frozen=True, slots=True)
class TableStmt:
    line: int
    rules: HouseRules


@dataclass(frozen=True, slots=True)
class ScoreStmt:
    line: int
    score: tuple[int, int]


@dataclass(frozen=True, slots=True)
class DealerStmt:
    line: int
    seat: int


@dataclass(frozen=True, slots=True)
class HandStmt:
    line: int


@dataclass(frozen=True, slots=True)
class DealStmt:
    line: int
    seat: int
    cards: tuple[Card, Card, Card]


@dataclass(frozen=True, slots=True)
class ActionStmt:
    line: int
    action: Action


Statement = TableStmt | ScoreStmt | DealerStmt | HandStmt | DealStmt | ActionStmt


def _seat(word: str, players: int, line: int) -> int:
    if not word.isdigit():
        raise TranscriptError(line, f"expected a seat number, got {word!r}")
    seat = int(word)
    if seat >= players:
        raise TranscriptError(
            line, f"no seat {seat} at a table of {players} (seats 0..{players - 1})"
        )
    return seat


class RecordFileError(TrucoError):
    """A game record that cannot be read as a file (missing, unreadable, not UTF-8)."""


def read_record(path: str | os.PathLike[str]) -> str:
    """A record file's text exactly as stored (UTF-8, no newline translation; a leading
    byte-order mark dropped; at most 4 MiB, see ``controller.textfile``).

    Raises ``RecordFileError`` with a message for the person at the terminal.
    """
    try:
        return read_text_file(path, what="un registro de partida")
    except TextFileError as e:
        raise RecordFileError(str(e)) from None


def parse(text: str) -> list[Statement]:
    """Read a transcript into statements, checking everything that does not need play.

    Raises ``TranscriptError`` naming the line for a malformed file. (A ``hand`` before
    the previous hand ended is found by ``replay``.)
    """
    out: list[Statement] = []
    rules = HouseRules()
    seen_statement = False
    hand_started = False
    hand_has_action = False
    dealt_seats: set[int] = set()
    dealt_cards: set[Card] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        content = raw.split("#", 1)[0].strip()
        if not content:
            continue
        words = content.split()
        head = words[0].lower()
        if head == "table":
            if seen_statement:
                raise TranscriptError(number, "'table' must be the first statement")
            options: dict[str, str] = {}
            for word in words[1:]:
                key, eq, value = word.partition("=")
                if not eq or not key or not value:
                    raise TranscriptError(number, f"expected key=value, got {word!r}")
                if key.lower() in options:
                    raise TranscriptError(number, f"house rule {key!r} given twice")
                options[key.lower()] = value
            try:
                rules = HouseRules.from_options(options)
            except ValueError as e:
                raise TranscriptError(number, str(e)) from None
            out.append(TableStmt(number, rules))
        elif head == "score":
            if hand_started:
                raise TranscriptError(number, "'score' must come before the first hand")
            if len(words) != 3 or not words[1].isdigit() or not words[2].isdigit():
                raise TranscriptError(number, "expected 'score A B' with two numbers")
            a, b = int(words[1]), int(words[2])
            if a >= rules.target or b >= rules.target:
                raise TranscriptError(
                    number, f"a starting score must be below the target ({rules.target})"
                )
            out.append(ScoreStmt(number, (a, b)))
        elif head == "dealer":
            if len(words) != 2:
                raise TranscriptError(number, "expected 'dealer S'")
            out.append(DealerStmt(number, _seat(words[1], rules.players, number)))
        elif head == "hand":
            if len(words) != 1:
                raise TranscriptError(number, "'hand' takes no arguments")
            hand_started = True
            hand_has_action = False
            dealt_seats = set()
            dealt_cards = set()
            out.append(HandStmt(number))
        elif head == "deal":
            rest = " ".join(words[1:]).replace(":", " : ", 1).split()
            if len(rest) < 2 or rest[1] != ":":
                raise TranscriptError(number, "expected 'deal S: C C C'")
            seat = _seat(rest[0], rules.players, number)
            names = rest[2:]
            if len(names) != 3:
                raise TranscriptError(number, f"a deal is 3 cards, got {len(names)}")
            try:
                cards = tuple(Card.from_str(w) for w in names)
            except ValueError as e:
                raise TranscriptError(number, str(e)) from None
            if not hand_started:
                raise TranscriptError(number, "'deal' before the first 'hand'")
            if hand_has_action:
                raise TranscriptError(number, "'deal' after an action in the same hand")
            if seat in dealt_seats:
                raise TranscriptError(number, f"seat {seat} dealt twice in this hand")
            for c in cards:
                if c in dealt_cards:
                    raise TranscriptError(number, f"card {c} dealt twice in this hand")
                dealt_cards.add(c)
            if len(set(cards)) != 3:
                raise TranscriptError(number, "a card dealt twice in this hand")
            dealt_seats.add(seat)
            out.append(DealStmt(number, seat, (cards[0], cards[1], cards[2])))
        elif head.isdigit():
            seat = _seat(head, rules.players, number)
            try:
                action = Action.from_words(seat, words[1:])
            except ValueError as e:
                raise TranscriptError(number, str(e)) from None
            hand_has_action = True
            out.append(ActionStmt(number, action))
        else:
            raise TranscriptError(number, f"unknown statement {words[0]!r}")
        seen_statement = True
    return out


@dataclass(frozen=True, slots=True)
class Rejected:
    """A refused action: its line, seat, action text and refusal code."""

    line: int
    seat: int
    action: str
    code: RefusalCode


class Target(Protocol):
    """What a replay drives: the engine itself, or the mock hardware in front of it."""

    @property
    def game(self) -> Game: ...

    def start_hand(self, dealer: int | None, deal: Mapping[int, tuple[Card, ...]]) -> None: ...

    def act(self, action: Action) -> RefusalCode | None: ...

    def close(self) -> None: ...


class EngineTarget:
    """Replays straight into a ``Game``."""

    def __init__(self, game: Game) -> None:
        self.game = game

    def start_hand(self, dealer: int | None, deal: Mapping[int, tuple[Card, ...]]) -> None:
        self.game.deal(deal or None, dealer=dealer)

    def act(self, action: Action) -> RefusalCode | None:
        try:
            self.game.push(action)
        except IllegalActionError as e:
            return e.code
        return None

    def close(self) -> None:
        pass


@dataclass
class ReplayResult:
    game: Game
    rejected: list[Rejected] = field(default_factory=list)
    #: (line, statement, refusal code or None) for each applied or refused action
    log: list[tuple[int, Statement, RefusalCode | None]] = field(default_factory=list)


def replay(
    statements: Iterable[Statement],
    *,
    target: Callable[[Game], Target] | None = None,
    on_action: Callable[[Game, ActionStmt, RefusalCode | None], None] | None = None,
) -> ReplayResult:
    """Apply statements in order through the same engine the table runs.

    Refused actions are recorded and skipped. ``target`` wraps the new game in what the
    actions go through (default: the engine directly). Raises ``TranscriptError`` when a
    ``hand`` starts before the previous one ended.
    """
    stmts = list(statements)
    rules = HouseRules()
    score = (0, 0)
    for st in stmts:
        if isinstance(st, TableStmt):
            rules = st.rules
        elif isinstance(st, ScoreStmt):
            score = st.score
        elif isinstance(st, HandStmt):
            break
    game = Game(rules, score=score)
    drive: Target = target(game) if target is not None else EngineTarget(game)
    result = ReplayResult(game)
    try:
        _drive(stmts, game, drive, result, on_action)
    finally:
        drive.close()
    return result


def _drive(
    stmts: list[Statement],
    game: Game,
    drive: Target,
    result: ReplayResult,
    on_action: Callable[[Game, ActionStmt, RefusalCode | None], None] | None,
) -> None:
    pending_hand: int | None = None  # line of a `hand` whose deal is still being read
    pending_dealer: int | None = None
    next_dealer: int | None = None
    deal: dict[int, tuple[Card, ...]] = {}

    def flush() -> None:
        nonlocal pending_hand, deal
        if pending_hand is not None:
            drive.start_hand(pending_dealer, deal)
            pending_hand = None
            deal = {}

    for st in stmts:
        if isinstance(st, DealerStmt):
            flush()
            next_dealer = st.seat
        elif isinstance(st, HandStmt):
            flush()
            if game.winner is not None:
                continue
            if game.hand_in_progress:
                raise TranscriptError(st.line, "'hand' before the previous hand ended")
            pending_hand = st.line
            pending_dealer, next_dealer = next_dealer, None
        elif isinstance(st, DealStmt):
            if game.winner is not None or pending_hand is None:
                continue
            deal[st.seat] = st.cards
        elif isinstance(st, ActionStmt):
            flush()
            code: RefusalCode | None
            if game.hand_number == 0 and game.winner is None:
                code = RefusalCode.HAND_OVER
            else:
                code = drive.act(st.action)
            if code is not None:
                a = st.action
                result.rejected.append(Rejected(st.line, a.seat, a.text, code))
            result.log.append((st.line, st, code))
            if on_action is not None:
                on_action(game, st, code)
    flush()


def result_json(result: ReplayResult) -> dict[str, object]:
    """The ``replay --json`` object (docs/TRANSCRIPT.md)."""
    game = result.game
    return {
        "score": list(game.score),
        "winner": game.winner,
        "hands": [_hand_json(h) for h in game.hands],
        "rejected": [
            {"line": r.line, "seat": r.seat, "action": r.action, "code": r.code.value}
            for r in result.rejected
        ],
    }


def _hand_json(hand: HandResult) -> dict[str, object]:
    """One hand of the JSON; a pica-pica hand adds ``pica_pica`` and each award its ``pica``."""
    out: dict[str, object] = {"hand": hand.number, "dealer": hand.dealer, "mano": hand.mano}
    if hand.pica_pica:
        out["pica_pica"] = True
    awards = []
    for a in hand.awards:
        award: dict[str, object] = {"team": a.team, "points": a.points, "reason": a.reason.value}
        if a.pica is not None:
            award["pica"] = a.pica
        awards.append(award)
    out["awards"] = awards
    return out


def dumps_result(obj: Mapping[str, object]) -> str:
    """JSON with one hand and one refusal per line, as docs/TRANSCRIPT.md shows it."""
    lines = ["{"]
    keys = list(obj)
    for i, key in enumerate(keys):
        value = obj[key]
        comma = "," if i < len(keys) - 1 else ""
        if isinstance(value, list) and value and isinstance(value[0], dict):
            items = ",\n    ".join(json.dumps(v, ensure_ascii=False) for v in value)
            lines.append(f'  "{key}": [\n    {items}\n  ]{comma}')
        else:
            lines.append(f'  "{key}": {json.dumps(value, ensure_ascii=False)}{comma}')
    lines.append("}")
    return "\n".join(lines)


def write(game: Game) -> str:
    """The transcript of ``game`` (accepted actions only), which replays to the same game."""
    rules = game.rules
    lines = [rules.to_line()]
    if game.initial_score != (0, 0):
        lines.append(f"score {game.initial_score[0]} {game.initial_score[1]}")
    expected_dealer = rules.players - 1  # a transcript's default first dealer
    for dealer, deal, actions in game.history():
        if dealer != expected_dealer:
            lines.append(f"dealer {dealer}")
        lines.append("hand")
        for seat, cards in enumerate(deal):
            if cards is not None:
                lines.append(f"deal {seat}: " + " ".join(str(c) for c in cards))
        lines.extend(str(a) for a in actions)
        expected_dealer = (dealer + 1) % rules.players
    return "\n".join(lines) + "\n"
