"""The whole stack on mock hardware: pty seat nodes, real SeatLinks, the table, the engine.

Every scenario transcript fed as button presses and card taps gives the same JSON as the
direct replay; the scripted mock table plays whole games.
"""

from __future__ import annotations

import io
import json
import random
import sys
import time
from pathlib import Path

import pytest

from controller.cli import main
from controller.cli.run import _interactive
from controller.engine import Game, HouseRules
from controller.engine.playout import random_game
from controller.table.controls import Button
from controller.table.mock_table import MockTable
from controller.table.run_mock import MockRun
from controller.transcript import parse, replay, result_json, write

SCENARIOS = Path(__file__).parent.parent / "scenarios"
CASES = sorted(SCENARIOS.glob("*.truco"))


def _players(path: Path) -> int:
    from controller.transcript import TableStmt

    tables = [st for st in parse(path.read_text()) if isinstance(st, TableStmt)]
    return tables[0].rules.players if tables else 2


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_through_mock_equals_direct_replay(path: Path) -> None:
    from controller.table.mock_table import mock_target

    statements = parse(path.read_text())
    direct = result_json(replay(statements))
    through = result_json(replay(statements, target=mock_target))
    assert through == direct


TWO_SEATS = [p for p in CASES if _players(p) == 2]


@pytest.mark.parametrize("path", TWO_SEATS, ids=[p.stem for p in TWO_SEATS])
def test_through_gpio_pads_equals_direct_replay(path: Path) -> None:
    """Two-seat tables with pads on GPIO: real gpiozero Buttons on MockFactory pins."""
    from controller.table.mock_table import mock_gpio_target

    statements = parse(path.read_text())
    direct = result_json(replay(statements))
    through = result_json(replay(statements, target=mock_gpio_target))
    assert through == direct


def test_cli_through_mock(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["replay", str(SCENARIOS / "four-players.truco"), "--json", "--through", "mock"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["score"] == [3, 0]
    assert [r["code"] for r in out["rejected"]] == ["not_your_turn", "raise_not_allowed"]


def test_mock_buttons_reach_the_engine() -> None:
    with MockTable(HouseRules()) as mock:
        from controller.engine import Card

        mock.deal(
            {
                0: [Card.from_str(c) for c in ("7C", "6C", "3E")],
                1: [Card.from_str(c) for c in ("2O", "1B", "4B")],
            }
        )
        mock.press(1, Button.TRUCO)  # out of turn: allowed
        assert mock.game.truco_pending == (1, 1)
        mock.press(0, Button.TRUCO)  # quiero retruco
        assert mock.game.truco_pending == (2, 0) and mock.game.truco_level == 1
        mock.hold(1, Button.TRUCO)
        mock.press(1, Button.TRUCO)
        mock.press(1, Button.TRUCO)
        mock.press(1, Button.QUIERO)  # explicitly: vale cuatro
        assert mock.game.truco_pending == (3, 1)
        assert all(link.stats["checksum"] == 0 for link in mock.hardware.links.values())


def test_several_cards_on_a_mock_reader_show_una_carta_por_vez() -> None:
    """TAGMANY through the pty, SeatLink and the service: the seat's display says so."""
    from controller.engine import Card
    from controller.notices import LinkNotice
    from controller.render.screen import render_screen, screen_texts
    from controller.table.screens import screen_for

    with MockTable(HouseRules()) as mock:
        mock.deal(
            {
                0: [Card.from_str(c) for c in ("7C", "6C", "3E")],
                1: [Card.from_str(c) for c in ("2O", "1B", "4B")],
            }
        )
        moves = len(mock.game.hand_actions)
        mock.parts.nodes[0].tag_conflict()
        deadline = time.monotonic() + 5
        while mock.table.notice(0) is None and time.monotonic() < deadline:
            mock.pump(0.05)
        assert mock.table.notice(0) is LinkNotice.ONE_CARD
        screen = screen_for(mock.table, 0)
        assert screen_texts(screen) == ("UNA CARTA POR VEZ",)
        shown = mock.parts.displays[0].image
        assert shown.tobytes() == render_screen(screen).convert(shown.mode).tobytes()
        assert len(mock.game.hand_actions) == moves  # nothing was played


@pytest.mark.parametrize("players", [2, 4, 6])
def test_script_plays_a_whole_game(tmp_path: Path, players: int) -> None:
    """A random game's record, fed as a script to the mock table, ends the same."""
    rules = HouseRules(players=players, flor=players == 4)
    game = random_game(Game(rules), random.Random(players))
    assert game.winner is not None
    script = tmp_path / "game.truco"
    script.write_text(write(game))
    out = io.StringIO()
    old, sys.stdout = sys.stdout, out
    try:
        code = main(
            [
                "run",
                "--mock",
                "--players",
                str(players),
                "--flor",
                "on" if players == 4 else "off",
                "--script",
                str(script),
            ]
        )
    finally:
        sys.stdout = old
    assert code == 0
    result = json.loads(out.getvalue())
    assert result["score"] == list(game.score)
    assert result["winner"] == game.winner
    assert result["rejected"] == []


def test_bots_play_to_the_end_and_record_replays(tmp_path: Path) -> None:
    record = tmp_path / "record.truco"
    lines: list[str] = []
    run = MockRun(HouseRules(players=4), seed=9, human=None, on_record=lines.append)  # whole lines
    try:
        run.play_out()
        assert run.game.winner is not None
        final = run.game.score
    finally:
        run.close()
    record.write_text(HouseRules(players=4).to_line() + "\n" + "\n".join(lines) + "\n")
    again = replay(parse(record.read_text()))
    assert again.game.score == final and not again.rejected


def test_interactive_keyboard_game_to_30() -> None:
    """A person at the keyboard (always the first card, answering quiero) against a bot."""
    run = MockRun(HouseRules(), seed=4, human=0)
    keys = io.StringIO("1\nq\n" * 2000)
    out = io.StringIO()
    try:
        assert _interactive(run, keys, out, pace=0) == 0
        assert run.game.winner is not None
        assert max(run.game.score) >= 30
    finally:
        run.close()
    assert "¡Fin del partido!" in out.getvalue()  # the line mode speaks Spanish


def test_the_nodes_are_read_on_the_loops_thread_with_no_link_thread() -> None:
    """The seat links are read in the service loop's own wait: no thread of the table
    reads a node, and a press is handled on the thread that pumps the table."""
    import threading

    from controller.engine import Card
    from controller.table.service import Accepted, ServiceEvent

    with MockTable(HouseRules()) as mock:
        names = [t.name for t in threading.enumerate()]
        assert not [n for n in names if n.startswith(("seatlink", "seatbus"))], names
        heard: list[tuple[ServiceEvent, int]] = []
        mock.service.listeners.append(lambda event: heard.append((event, threading.get_ident())))
        mock.deal(
            {
                0: [Card.from_str(c) for c in ("7C", "6C", "3E")],
                1: [Card.from_str(c) for c in ("2O", "1B", "4B")],
            }
        )
        mock.press(0, Button.ENVIDO)
        envido = [
            who for event, who in heard if isinstance(event, Accepted) and "envido" in event.text
        ]
        assert envido == [threading.get_ident()]
        assert {who for _, who in heard} == {threading.get_ident()}
