"""The terminal table's layout and clock, driven without a terminal (a manual clock)."""

from __future__ import annotations

import curses
from collections.abc import Iterator

import pytest

from controller.cli.tui import TerminalTable, _frames
from controller.engine import HouseRules
from controller.table.run_mock import MockRun
from tests.helpers import Clock

from .tables import screen


@pytest.fixture
def run() -> Iterator[MockRun]:
    mock = MockRun(HouseRules(players=4), seed=4, human=0)
    yield mock
    mock.close()


@pytest.mark.parametrize(
    ("width", "height", "panels"),
    [(40, 12, 0), (60, 30, 0), (80, 24, 0), (80, 40, 1), (140, 50, 2), (300, 80, 4)],
)
def test_every_line_fits_the_terminal(run: MockRun, width: int, height: int, panels: int) -> None:
    """Panels as many as the width takes (in one row unless "a"); none where a panel and
    the lines under it do not fit, the seats' texts then in lines of their own."""
    clock = Clock()
    table = TerminalTable(run, pace=1.0, clock=clock)
    table.tick()  # the deal
    for all_seats in (False, True):
        table.all_seats = all_seats
        lines = table.lines(width, height)
        assert len(lines) <= height
        assert all(len(text) <= width for text, _ in lines)
    table.all_seats = False
    text = screen(table, width, height)
    assert text.count("┌") == panels
    assert text.count("[asiento") + text.count("[vos]") == 4 - panels


def test_bots_wait_their_pace_and_the_hand_end_waits_for_the_player(run: MockRun) -> None:
    clock = Clock()
    table = TerminalTable(run, pace=2.0, clock=clock)
    table.tick()
    assert run.game.hand_in_progress and run.game.turn == 0
    table.key("1")  # our lead
    assert "vos: jugás" in screen(table)
    table.tick()
    moves = len(run.game.hand_actions)
    clock.now += 1.9
    table.tick()
    assert len(run.game.hand_actions) == moves  # not yet: the pace is 2 s
    clock.now += 0.2
    table.tick()
    assert len(run.game.hand_actions) == moves + 1
    for _ in range(200):  # we refuse their calls and play our first card; the bots theirs
        if not run.game.hand_in_progress:
            break
        clock.now += 2.1
        view = run.game.view(0)
        if view.challenged or view.telling is not None:
            table.key("n")  # no quiero / son buenas
        elif run.game.turn == 0:
            table.key("1")
        table.tick()
    assert table.held is not None and "Terminó la mano 1" in screen(table)
    clock.now += 60.0
    table.tick()
    assert table.held is not None and not run.game.hand_in_progress  # held until we go on
    table.key("\n")
    assert table.held is None and run.game.hand_number == 2


def test_a_key_out_of_turn_is_refused_at_once(run: MockRun) -> None:
    clock = Clock()
    table = TerminalTable(run, pace=5.0, clock=clock)
    table.tick()
    table.key("1")  # seat 0 leads: fine
    before = run.game.cards_in_hand(0)
    table.key("1")  # seat 1's turn now
    text = screen(table)
    assert "NO ES TU TURNO" in text and "rechazado: No es tu turno" in text
    assert run.game.cards_in_hand(0) == before


def test_the_terminal_too_small() -> None:
    mock = MockRun(HouseRules(), seed=1, human=0)
    try:
        table = TerminalTable(mock, lang="en")
        said = screen(table, 30, 8)
        assert "make it 40x12 or more" in said.replace("\n", " ")
        assert all(len(line) <= 30 for line in said.splitlines())
    finally:
        mock.close()


def test_a_pica_pica_hand_shows_each_pica() -> None:
    """Six seats, pica-pica: each pica's turn, table and calls, the player's first; the
    player's keys act in its own pica; the end of the hand says which pica scored."""
    mock = MockRun(HouseRules(players=6, pica_pica=True), seed=3, human=0, score=(5, 0))
    try:
        clock = Clock()
        table = TerminalTable(mock, pace=1.0, clock=clock)
        table.tick()
        assert mock.game.pica_pica
        text = screen(table)
        assert "Picas: vos–3 turno vos · 1–4 turno 1 · 2–5 turno 2" in text
        assert "En la mesa: vos–3 (baza 1): — · 1–4 (baza 1): — · 2–5 (baza 1): —" in text
        [first, *_] = table._human_cards() or ()
        table.key("1")  # our lead, in our pica: seat 3 is to play there, the others as before
        text = screen(table)
        assert f"vos–3 (baza 1): vos:{first}" in text and "Picas: vos–3 turno 3 · 1–4" in text
        assert mock.game.turn_of(1) == 1 and mock.game.turn_of(2) == 2
        table.key("1")  # not our turn in our pica (seats 1 and 2 lead theirs): refused
        assert "NO ES TU TURNO" in screen(table)
        for _ in range(300):  # we answer quiero and play our first card; the bots theirs
            if not mock.game.hand_in_progress:
                break
            clock.now += 1.1
            view = mock.game.view(0)
            if view.challenged:
                table.key("q")
            elif view.my_turn:
                table.key("1")
            table.tick()
            lines = table.lines(140, 48)
            assert all(len(line) <= 140 for line, _ in lines)
        assert table.held is not None
        text = screen(table)
        assert text.count("Bazas: ") <= 3 and "Picas:" not in text
        picas = {a.pica for a in mock.game.hands[0].awards}
        names = {0: "[vos–3]", 1: "[1–4]", 2: "[2–5]"}
        assert all(names[p] in text for p in picas if p is not None) and picas == {0, 1, 2}
    finally:
        mock.close()


def test_a_tournament_match_is_named_above_the_panels(run: MockRun) -> None:
    """The desk's assignment: the match line, the teams' names on the panels, and every
    panel the match card until the first card of the deal is read."""
    from controller.render.screen import MatchCard

    players = (("Ana", "Beto"), ("Carla", "Dani"))
    card = MatchCard("Cuartos de final", "Los del Fondo", "La Barra", 2, 3, players)
    run.mock.service.set_match(card)
    table = TerminalTable(run, pace=1.0, clock=Clock())
    text = screen(table)
    assert "Cuartos de final · Los del Fondo vs La Barra · chico 2 de 3" in text
    assert "Los del Fondo: Ana, Beto · La Barra: Carla, Dani" in text
    assert "asiento 0 (vos) · equipo Los del Fondo" in text
    assert "asiento 2 · equipo Los del Fondo" in text
    # under each panel, with the seat's own pair (issue 47)
    assert " LOS DEL FONDO · VS · LA BARRA · ANA Y BETO · CHICO 2 DE 3 · " in text
    assert ("[asiento 1] CUARTOS DE FINAL │ LOS DEL FONDO │ VS │ LA BARRA │ CARLA Y DANI │ "
            "CHICO 2 DE 3") in text  # fmt: skip
    table.tick()  # the deal: the game's own screens, the match still named on top
    text = screen(table)
    assert "chico 2 de 3" in text and "CHICO 2 DE 3" not in text


def test_a_bracketed_paste_plays_nothing_and_says_so(run: MockRun) -> None:
    clock = Clock()
    table = TerminalTable(run, pace=5.0, clock=clock)
    table.tick()
    chat = "que tal, te canto envido y truco! quiero retruco 1 2 3 ! m " * 6
    for ch in "\x1b[200~" + chat + "\x1b[201~":
        table.feed(ch)
    assert run.game.hand_actions == () and not table.log  # no key of it acted
    text = screen(table)
    assert "ÁRBITRO" not in text and "ENVIDO" not in text.split("└")[-1]  # no call, no referee
    assert f"Pegaste {len(chat)} caracteres: un pegado no juega nada" in text
    clock.now += 6.0
    assert "Pegaste" not in screen(table)  # said for a while
    for ch in "\x1b[A1":  # a function key is dropped; the key after it acts
        table.feed(ch)
    assert len(run.game.hand_actions) == 1


def test_a_refusal_repeated_in_a_row_is_said_once_with_its_count(run: MockRun) -> None:
    table = TerminalTable(run, pace=5.0, clock=Clock())
    table.tick()
    for _ in range(12):
        table.key("q")  # nothing to answer
    text = screen(table)
    assert "vos: quiero → rechazado: No hay nada que responder x12" in text
    assert text.count("rechazado") == 1


class _Window:
    """A curses window that keeps the frames drawn and has no key to give: the loop ends
    after its first frame."""

    def __init__(self, table: TerminalTable) -> None:
        self.table = table
        self.frames: list[list[str]] = []
        self._lines: list[str] = []

    def getmaxyx(self) -> tuple[int, int]:
        return (40, 140)

    def erase(self) -> None:
        self._lines = []

    def clearok(self, flag: bool) -> None:
        pass

    def addnstr(self, y: int, x: int, text: str, n: int, style: int) -> None:
        self._lines.append(text[:n])

    def refresh(self) -> None:
        self.frames.append(self._lines)

    def timeout(self, ms: int) -> None:
        pass

    def get_wch(self) -> str:
        self.table.quit = True  # no key in the first frame's wait
        raise curses.error("no input")


def test_the_first_frame_shows_the_cards_a_key_plays(run: MockRun) -> None:
    """The first deal is read before the first frame is drawn: a key typed on the first
    screen plays a card shown on it (it drew "la mesa no leyó tus cartas" and ate the key
    typed on it: a card played on a slow machine was lost)."""
    table = TerminalTable(run, pace=1.0, clock=Clock())
    window = _Window(table)
    _frames(window, table, {"": 0, "bold": 0, "reverse": 0})  # type: ignore[arg-type]
    first = "\n".join(window.frames[0])
    assert "Tus cartas: [1] " in first, first
