"""Perft: the number of distinct legal action sequences to the end of a hand.

A strong, cheap check on the legal-action generator, after python-chess's perft suite.
Positions and their counts live in ``perft/hands.perft``: a fixed deal, the actions that
lead to the position, the total, and the count below each legal action (``divide``).
On a mismatch the test prints the per-action breakdown next to the stored one.

Regenerate the counts only after a deliberate rules change, and review the diff::

    python -m tests.engine.test_perft --write
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from controller.engine import Action, Card, Game, HouseRules

DATA = Path(__file__).with_name("perft") / "hands.perft"


@dataclass
class Position:
    id: str
    table: str
    deals: list[str]
    moves: list[str]
    count: int = -1
    divide: dict[str, int] = field(default_factory=dict)

    def game(self) -> Game:
        options = dict(w.split("=") for w in self.table.split()[1:])
        game = Game(HouseRules.from_options(options))
        hands = {}
        for line in self.deals:
            seat, cards = line.split(":")
            hands[int(seat.split()[1])] = [Card.from_str(c) for c in cards.split()]
        game.deal(hands)
        for move in self.moves:
            game.push(Action.from_str(move))
        return game


def read_positions(path: Path = DATA) -> list[Position]:
    positions: list[Position] = []
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        head, _, rest = line.partition(" ")
        if head == "id":
            positions.append(Position(rest, "", [], []))
        elif head == "table":
            positions[-1].table = line
        elif head == "deal":
            positions[-1].deals.append(line)
        elif head == "moves":
            positions[-1].moves = [m.strip() for m in rest.split(",") if m.strip()]
        elif head == "count":
            positions[-1].count = int(rest)
        elif head == "divide":
            action, _, n = rest.rpartition("=")
            positions[-1].divide[action.strip()] = int(n)
        else:
            raise ValueError(f"{path}: unknown line {raw!r}")
    return positions


def perft(game: Game) -> int:
    if not game.hand_in_progress or game.winner is not None:
        return 1
    total = 0
    for action in list(game.legal_list()):
        game.push(action)
        total += perft(game)
        game.pop()
    return total


def divide(game: Game) -> dict[str, int]:
    out: dict[str, int] = {}
    for action in list(game.legal_list()):
        game.push(action)
        out[str(action)] = perft(game)
        game.pop()
    return out


POSITIONS = read_positions()


@pytest.mark.parametrize("position", POSITIONS, ids=[p.id for p in POSITIONS])
def test_perft(position: Position) -> None:
    game = position.game()
    got = divide(game)
    if got != position.divide or sum(got.values()) != position.count:
        rows = sorted(set(got) | set(position.divide))
        report = "\n".join(
            f"  {a:<28} stored {position.divide.get(a, '-'):>8}  now {got.get(a, '-'):>8}"
            + ("" if got.get(a) == position.divide.get(a) else "   <-- differs")
            for a in rows
        )
        pytest.fail(
            f"perft {position.id}: stored {position.count}, now {sum(got.values())}\n{report}"
        )


def test_hand_counted_position() -> None:
    """Counted by hand: the last baza, truco accepted by team 0, seat 1 to play.

    1 play 6B ends the hand (1); 1 mazo (1); 0 retruco (12): seat 1 answers no-quiero (1),
    mazo (1), quiero (6: play, mazo, or vale-cuatro answered three ways, quiero leaving
    play or mazo) or vale-cuatro (4: no-quiero, mazo, quiero then play or mazo).
    """
    [position] = [p for p in POSITIONS if p.id == "last-baza-raises"]
    assert position.count == 14
    assert position.divide == {"1 play 6B": 1, "1 mazo": 1, "0 retruco": 12}


def _write() -> None:
    out: list[str] = []
    header = [line for line in DATA.read_text().splitlines() if line.startswith("#") and not out]
    for position in POSITIONS:
        game = position.game()
        counts = divide(game)
        out.append(f"id {position.id}")
        out.append(position.table)
        out.extend(position.deals)
        out.append("moves " + ", ".join(position.moves))
        out.append(f"count {sum(counts.values())}")
        out.extend(f"divide {a} = {n}" for a, n in counts.items())
        out.append("")
    DATA.write_text("\n".join([*header, "", *out]))


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        _write()
    else:
        print(__doc__)
