"""The terminal table's Spanish, as an Argentine player says it: the player's own moves
to them (vos: jugás, mostrás), who won a baza and the game, an undo in the history and on
the panels in words (never the record's notation)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from controller.cli.tui import TerminalTable
from controller.engine import Action, Card, HouseRules, Kind
from controller.notices import ActionUndone, GameWon
from controller.render.notices import notice_text
from controller.table.run_mock import MockRun
from tests.helpers import Clock

from .tables import screen


@pytest.fixture
def run() -> Iterator[MockRun]:
    mock = MockRun(HouseRules(players=2), seed=3, human=0)
    yield mock
    mock.close()


def test_an_undo_is_shown_as_such_in_the_history_and_in_words_on_the_panels(
    run: MockRun,
) -> None:
    table = TerminalTable(run, pace=5.0, clock=Clock())
    table.tick()
    table.key("1")
    [card] = [c for s, c in run.game.table_cards if s == 0]
    assert run.mock.service.undo()
    table.tick()
    text = screen(table)
    assert f"vos: jugás {card} · deshecho por el árbitro: vos: jugás {card}" in text
    assert f"DESHECHO: EL 0 JUGÓ {card}" in text.replace(" · ", " ")  # seat 1's panel
    assert "PLAY" not in text and "play" not in text


def test_the_undo_notice_in_a_players_words() -> None:
    assert notice_text(ActionUndone("1 play 12E"), 1) == "Deshecho: jugaste 12E"
    assert notice_text(ActionUndone("1 play 12E"), 0) == "Deshecho: el 1 jugó 12E"
    assert notice_text(ActionUndone("0 declare 33"), 1) == "Deshecho: el 0 dijo 33"
    assert notice_text(ActionUndone("2 mazo"), 2) == "Deshecho: te fuiste al mazo"
    assert notice_text(ActionUndone("3 show 4C 6C"), 1) == "Deshecho: el 3 mostró 4C 6C"
    assert notice_text(ActionUndone("None"), 0) == "Deshecho: el reparto"


def test_the_game_won_said_by_each_side() -> None:
    assert notice_text(GameWon(1, (12, 30)), 1) == "Ganamos nosotros: 30 a 12"
    assert notice_text(GameWon(1, (12, 30)), 0) == "Ganaron ellos: 30 a 12"


def test_the_players_moves_in_the_second_person_and_who_won_each_baza(run: MockRun) -> None:
    table = TerminalTable(run, pace=5.0, clock=Clock())
    table.tick()
    four, seven = Card.from_str("4O"), Card.from_str("7E")
    assert table._baza_winner(((0, seven), (1, four)), 0) == "ganaste vos"
    assert table._baza_winner(((0, four), (1, seven)), 1) == "ganó el 1"
    assert table._baza_winner(((0, four), (1, Card.from_str("4E"))), None) == "parda"
    from controller.cli.tui import LogEntry

    shown = LogEntry(0, Action(0, Kind.SHOW, cards=(four, seven)))
    assert table._say(shown) == "vos: mostrás 4O 7E"
    assert table._say(LogEntry(1, Action(1, Kind.SHOW, cards=(four,)))) == "asiento 1: muestra 4O"
    assert "gana el" not in screen(table)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_end_of_the_game_as_the_player_says_it(seed: int) -> None:
    mock = MockRun(HouseRules(players=2, target=15), seed=seed, human=0, score=(13, 13))
    try:
        table = TerminalTable(mock, pace=0.0, clock=Clock())
        for _ in range(500):
            if mock.game.winner is not None:
                break
            if mock.needs_deal():
                mock.deal()
            elif mock.bot_step() is None:  # ours to act: a card, or no to a call
                view = mock.game.view(0)
                table.key("n" if view.challenged or view.telling is not None else "1")
        assert mock.game.winner is not None
        ours, theirs = mock.game.score
        text = screen(table)
        if mock.game.winner == 0:
            assert f"¡Fin del partido! Ganamos nosotros, {ours} a {theirs}" in text
        else:
            assert f"¡Fin del partido! Ganaron ellos, {theirs} a {ours}" in text
        assert "Ganó el equipo" not in text
    finally:
        mock.close()
