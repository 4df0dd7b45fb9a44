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
from tests.helpers import Clock

SIZES = [(80, 24), (100, 30), (120, 40)]


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
            if view.telling is not None and view.telling.next_seat == 0:
                table.key("n")  # son buenas
                if table.log and table.log[-1].refusal is not None:
                    for key in "25\n":  # ours to declare first: typed, then Enter
                        table.key(key)
            elif view.challenged:
                table.key("n")  # no quiero
            elif run.game.turn == 0:
                table.key("1")
        assert ends == 6 or run.game.winner is not None
    finally:
        run.close()


@pytest.mark.parametrize(("width", "height"), [(80, 24), (100, 30)])
def test_a_pica_pica_hands_end_shows_each_picas_last_calls(width: int, height: int) -> None:
    """Short of rows, the picas keep their last calls, the player's first, each headed by
    its pica; with rows enough, every pica's."""
    run = MockRun(HouseRules(players=6, pica_pica=True), seed=3, human=0, score=(5, 0))
    clock = Clock()
    table = TerminalTable(run, pace=0.5, clock=clock)
    try:
        for _ in range(2000):
            clock.now += 0.6
            table.tick()
            if table.held is not None:
                break
            view = run.game.view(0)
            if view.challenged:
                table.key("q")
            elif view.my_turn:
                table.key("1")
        assert table.held is not None and run.game.pica_pica
        text = "\n".join(t for t, _ in table.lines(width, height))
        after = text.split("Cantos de la mano:\n", 1)[1].splitlines()
        calls = [line for line in after if line.startswith("  ")]
        heads = [line.split("]")[0] + "]" for line in calls if line.startswith("  [")]
        said = []  # the picas with calls, the player's first
        for play in table.held.plays:
            assert play.pica is not None
            if any(table._pica_of(e.seat) == play.pica for e in table.log):
                said.append(f"  [{table._pica_name(play.pica)}]")
        assert said[0] == "  [vos–3]" and heads[0] == said[0]
        assert len(set(heads)) == len(heads) == min(len(said), len(calls))
        if height >= 30:
            assert heads == said
    finally:
        run.close()
