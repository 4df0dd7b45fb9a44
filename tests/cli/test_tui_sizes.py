"""The terminal table at the sizes people have (80x24, the commonest, 100x30, 120x40), at
2, 4 and 6 seats, hands unknown to the table: the screen read back holds the score in
numbers and matchsticks at every moment, and at each hand's end every baza's cards and
winner (wrapped, never cut), the hand's points and its last calls."""

from __future__ import annotations

import re

import pytest

from controller.cli.tui import STICKS, TerminalTable
from controller.engine import HouseRules
from controller.table.run_mock import MockRun
from controller.table.table import DealReading

SIZES = [(80, 24), (100, 30), (120, 40)]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def sticks(points: int) -> str:
    """The matchsticks the screen draws for ``points`` (a game to 30)."""
    if points == 0:
        return "0"
    halves = []
    for start in range(0, min(points, 30), 15):
        n = min(15, points - start)
        halves.append(STICKS[5] * (n // 5) + STICKS[n % 5])
    return f"{points} " + " ".join(halves) + (f"+{points - 30}" if points > 30 else "")


def bazas_on(text: str) -> list[list[str]]:
    """Every baza read back from the screen: its seat:card pairs, in order."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Bazas: ")), None)
    if start is None:
        return []
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith("  ") or "ª" not in line:
            break
        block.append(line)
    joined = " ".join(block)
    return [re.findall(r"(?:vos|\d):\w+", part) for part in re.split(r"\dª ", joined)[1:]]


@pytest.mark.parametrize("players", [2, 4, 6])
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_every_hand_end_shows_score_bazas_points_and_calls(
    players: int, width: int, height: int
) -> None:
    run = MockRun(HouseRules(players=players), seed=11, human=0, deal_reading=DealReading.NONE)
    clock = Clock()
    table = TerminalTable(run, pace=0.5, clock=clock)
    ends = 0
    try:
        for _ in range(4000):
            clock.now += 0.6
            table.tick()
            lines = table.lines(width, height)
            assert len(lines) <= height and all(len(t) <= width for t, _ in lines)
            text = "\n".join(t for t, _ in lines)
            a, b = run.game.score
            assert f"Nosotros {sticks(a)} · Ellos {sticks(b)}" in text  # always
            if table.held is not None:
                ends += 1
                hand = run.game.hands[-1]
                said = bazas_on(text)
                assert len(said) == len(run.game.played_bazas)  # every finished baza
                for cards, baza in zip(said, run.game.played_bazas, strict=True):
                    assert len(cards) == players
                    assert cards == [f"{'vos' if s == 0 else s}:{c}" for s, c in baza]
                for award in hand.awards:
                    who = "nosotros" if award.team == 0 else "ellos"
                    assert re.search(rf"^  \+{award.points} {who}: ", text, re.M), text
                assert "Cantos de la mano:" in text
                last = table._said(table.log)[-1]
                assert last in text.replace("\n  ", " · "), text  # the last call, seen
                if run.game.winner is not None or ends == 6:
                    break
                table.key("\n")
                continue
            view = run.game.view(0)
            if view.challenged or view.telling is not None:
                table.key("n")  # no quiero / son buenas
                if table.log and table.log[-1].refusal is not None:
                    table.key("q")  # ours to declare first
            elif run.game.turn == 0:
                table.key("1")
        assert ends == 6 or run.game.winner is not None
    finally:
        run.close()
