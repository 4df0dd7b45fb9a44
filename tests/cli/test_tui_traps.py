"""The terminal table's last traps (issue 44), driven without a terminal: the points told
in digits and Enter (never q), up and down from the player's own envido, a refused raise
said as it was tried, x asking before it leaves a game, "otra" after the end, ``a`` and a
small terminal saying why seats are not shown, the help naming what is on the screen,
the header saying whose answer is awaited."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.cli.tui import TEXTS, LogEntry, TerminalTable, line_mode
from controller.engine import Action, Claims, HouseRules, Kind, RefusalCode, envido_points
from controller.table.run_mock import MockRun
from tests.helpers import Clock

from .tables import screen


def settle(table: TerminalTable, clock: Clock, steps: int = 60) -> None:
    """The bots act (their pace passes) until the player has something to do."""
    for _ in range(steps):
        clock.now += 1.0
        table.tick()


@pytest.fixture
def telling() -> Iterator[tuple[MockRun, TerminalTable, Clock]]:
    """Seed 10, claims declared: the player (seat 0, mano) calls envido, the bot accepts
    and the player is the first to tell the points."""
    run = MockRun(HouseRules(players=2, claims=Claims.DECLARED), seed=10, human=0)
    clock = Clock()
    table = TerminalTable(run, pace=0.5, clock=clock)
    settle(table, clock)
    table.key("e")
    settle(table, clock)
    assert run.game.telling is not None and run.game.telling.next_seat == 0
    yield run, table, clock
    run.close()


def test_points_are_typed_in_digits_and_enter_never_q(
    telling: tuple[MockRun, TerminalTable, Clock],
) -> None:
    run, table, _ = telling
    before = run.game.hand_actions
    for key in "qerf ":
        table.key(key)  # none of them tells a number
    assert run.game.hand_actions == before
    assert "q no canta nada" in screen(table)
    table.key("2")
    table.key("9")
    table.key("9")  # two digits at most
    assert "Tus tantos: 29_" in screen(table)
    table.key("\x7f")  # Retroceso
    table.key("4")
    assert "Tus tantos: 24_" in screen(table)
    table.key("\n")
    assert run.game.hand_actions[-1] == Action(0, Kind.DECLARE, number=24)
    assert "vos: tengo 24" in screen(table)


def test_enter_alone_asks_for_the_number(telling: tuple[MockRun, TerminalTable, Clock]) -> None:
    run, table, _ = telling
    before = run.game.hand_actions
    table.key("\n")
    assert run.game.hand_actions == before
    assert "Escribí tus tantos (el número) y después Enter" in screen(table)


def test_up_and_down_start_from_the_players_own_envido(
    telling: tuple[MockRun, TerminalTable, Clock],
) -> None:
    run, table, _ = telling
    hand = run.game.hand_of(0)
    assert hand is not None
    own = envido_points(hand)
    assert f"↑ ↓ desde tu envido ({own})" in screen(table)
    table.arrow(1)
    assert table.entry == str(own)
    table.arrow(1)
    table.arrow(-1)
    table.feed("\x1b[A")  # the terminal's own up arrow
    table.feed("\x1b[B")
    assert table.entry == str(own)
    table.key("\r")
    assert run.game.hand_actions[-1] == Action(0, Kind.DECLARE, number=own)


def test_a_refused_raise_is_said_as_it_was_tried() -> None:
    run = MockRun(HouseRules(players=4), seed=1, human=0)
    try:
        table = TerminalTable(run, pace=0.5, clock=Clock())
        entry = LogEntry(3, Action(3, Kind.RETRUCO), RefusalCode.RAISE_NOT_ALLOWED)
        said = table._say(entry)
        assert said.startswith("asiento 3: ¡retruco! → rechazado")
        assert table._say(LogEntry(3, Action(3, Kind.RETRUCO))) == "asiento 3: ¡quiero retruco!"
    finally:
        run.close()


def test_x_asks_before_leaving_a_game_and_says_how_to_resume() -> None:
    run = MockRun(HouseRules(players=2), seed=3, human=0)
    try:
        clock = Clock()
        table = TerminalTable(run, pace=0.5, clock=clock)
        settle(table, clock)
        table.key("x")
        assert not table.quit
        text = screen(table)
        assert "¿Dejás el partido? s: sí, salir" in text
        assert "Sin --state el partido no se guarda" in text
        table.key("n")  # any other key: the game goes on
        assert not table.quit and not table.asking_quit
        table.key("x")
        table.key("s")
        assert table.quit
        assert table.farewell is not None and "--state" in table.farewell
    finally:
        run.close()


def test_with_state_the_farewell_gives_the_command_to_resume(
    tmp_path: Path,
) -> None:
    state = tmp_path / "mesa"
    state.mkdir()
    run = MockRun(HouseRules(players=2), seed=3, human=0, state_dir=state)
    try:
        clock = Clock()
        table = TerminalTable(run, pace=0.5, clock=clock)
        settle(table, clock)
        table.key("x")
        assert f"truco-table run --mock --state {state}" in screen(table)
        table.key("x")  # x again: yes
        assert table.quit and table.farewell is not None and str(state) in table.farewell
    finally:
        run.close()


def play_to_the_end(run: MockRun, table: TerminalTable, clock: Clock) -> None:
    for _ in range(3000):
        if run.game.winner is not None:
            return
        settle(table, clock, 3)
        view = run.game.view(0)
        if view.telling is not None and view.telling.next_seat == 0:
            table.key("n")
            if run.game.view(0).telling is not None:
                for ch in "25\n":
                    table.key(ch)
        elif view.challenged:
            table.key("q")
        elif run.game.turn == 0:
            table.key("1")
        table.key("\n")
    raise AssertionError("the game did not end")


def test_otra_after_the_end_starts_a_new_game() -> None:
    run = MockRun(HouseRules(players=2, target=15), seed=5, human=0, score=(14, 14))
    try:
        clock = Clock()
        table = TerminalTable(run, pace=0.5, clock=clock)
        table.key("o")  # no game won yet: nothing new
        assert run.game.score == (14, 14)
        play_to_the_end(run, table, clock)
        text = screen(table)
        assert "¡Fin del partido!" in text and "o: otra partida · x: salir" in text
        table.key("x")  # a game over is left at once
        assert table.quit
        table.quit = False
        table.key("o")
        assert "Partida nueva a 15, 2 jugadores, las mismas reglas" in screen(table)
        settle(table, clock)
        assert run.game.winner is None and run.game.score == (0, 0)
        assert run.game.hand_number == 1
        assert "Mano n.º 1 " in screen(table)
    finally:
        run.close()


def test_all_seats_at_80x24_says_why_they_do_not_fit() -> None:
    run = MockRun(HouseRules(players=4), seed=4, human=0)
    try:
        clock = Clock()
        table = TerminalTable(run, pace=0.5, clock=clock)
        settle(table, clock)
        table.lines(80, 24)
        table.key("a")
        text = "\n".join(t for t, _ in table.lines(80, 24))
        assert "a: no entran los paneles de los 4 asientos en 80x24" in text
        table.key("a")  # off again
        table.lines(220, 70)
        table.key("a")
        assert table.flash is None or "no entran" not in table.flash[0]
    finally:
        run.close()


def test_a_terminal_too_small_for_every_seat_says_so() -> None:
    run = MockRun(HouseRules(players=6), seed=4, human=0)
    try:
        clock = Clock()
        table = TerminalTable(run, pace=0.5, clock=clock)
        settle(table, clock)
        rows = table.lines(40, 12)
        text = "\n".join(t for t, _ in rows)
        shown = sum(1 for t, _ in rows if t.startswith("["))
        assert shown < 6
        assert f"Faltan {6 - shown} asientos: agrandá la terminal" in text
    finally:
        run.close()


def test_the_help_explains_every_element_on_screen() -> None:
    help_text = TEXTS["es"]["help"]
    for element in ("M0 D1 #X_", "Nosotros/Ellos", "Mano n.º", "sale", "turno", "contestamos",
                    "En la mesa", "Bazas", "Tus cartas", "Cantos de la mano", "Tus tantos",
                    "otra partida"):  # fmt: skip
        assert element in help_text, element
    assert "q canta el número" not in help_text


def test_the_header_says_the_mano_and_which_team_must_answer() -> None:
    run = MockRun(HouseRules(players=4), seed=4, human=0)
    try:
        clock = Clock()
        table = TerminalTable(run, pace=0.5, clock=clock)
        settle(table, clock)
        text = screen(table)
        hand = run.game.hands[-1]
        assert f"Mano n.º 1 · da: {hand.dealer} · sale: vos (es mano)" in text
        assert "turno: vos" in text
        table.key("t")  # our truco: the other team answers
        assert "contestan ellos" in screen(table)
    finally:
        run.close()


def test_the_help_is_read_whole_at_80x24_page_by_page() -> None:
    run = MockRun(HouseRules(players=2), seed=3, human=0)
    try:
        table = TerminalTable(run, pace=0.5, clock=Clock())
        table.key("?")
        seen: list[str] = []
        for _ in range(10):
            rows = table.lines(80, 24)
            assert len(rows) <= 24 and all(len(text) <= 80 for text, _ in rows)
            seen += [text for text, _ in rows]
            table.key(" ")
            if not table.help:
                break
        assert not table.help
        said = " ".join(" ".join(seen).split())
        for line in TEXTS["es"]["help"].split("\n"):
            assert " ".join(line.split()) in said, line
        assert "(sigue: cualquier tecla)" in seen
    finally:
        run.close()


def test_the_line_mode_takes_the_points_typed_and_asks_before_leaving() -> None:
    run = MockRun(HouseRules(players=2, claims=Claims.DECLARED), seed=10, human=0)
    try:
        table = TerminalTable(run, pace=0.0)
        out = io.StringIO()
        assert line_mode(table, io.StringIO("e\n27\nx\nn\nx\ns\n"), out) == 0
        said = out.getvalue()
        assert "Tus tantos: _" in said and "vos: tengo 27" in said
        assert said.count("¿Dejás el partido? s: sí, salir") == 2  # n: the game went on
        assert "Sin --state el partido no se guarda" in said
    finally:
        run.close()


def test_the_line_mode_offers_another_game_at_the_end() -> None:
    run = MockRun(HouseRules(players=2, target=15), seed=5, human=0, score=(14, 14))
    try:
        clock = Clock()
        table = TerminalTable(run, pace=0.5, clock=clock)
        play_to_the_end(run, table, clock)
        table.pace = 0.0
        out = io.StringIO()
        assert line_mode(table, io.StringIO("otra\nx\ns\n"), out) == 0
        said = out.getvalue()
        assert "Escribí otra (o) para jugar otra partida" in said
        assert run.game.winner is None and run.game.score == (0, 0)
        assert "¿Dejás el partido?" in said  # the new game is in play: asked first
        done = io.StringIO()
        play_to_the_end(run, table, clock)
        assert line_mode(table, io.StringIO("1\n"), done) == 0  # any other line leaves
    finally:
        run.close()
