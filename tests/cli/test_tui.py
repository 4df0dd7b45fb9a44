"""The terminal table as a person meets it: ``truco-table run --mock`` in a real terminal
(tmux on a pseudo-terminal), keys typed with delays, the screen read back."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from controller.transcript import parse, replay

from .tmux import TRUCO_TABLE, Terminal, paste


def mock(*args: str) -> list[str]:
    return [*TRUCO_TABLE, "run", "--mock", *args]


def cards_line(screen: str) -> str:
    return next(line for line in screen.splitlines() if line.startswith(("Tus cartas", "Your")))


def test_a_card_typed_is_played_at_once_and_the_bot_answers_at_its_pace() -> None:
    # the plain bot (facil) answers a card with a card: the pace is what is tested
    with Terminal(mock("--seed", "3", "--pace", "1.5", "--bot", "facil")) as term:
        screen = term.wait_for("turno: vos")
        assert "[3]" in cards_line(screen)
        term.type("1")
        screen = term.wait_for("vos: jugás")
        assert "[3]" not in cards_line(screen)  # played: two cards left
        assert "asiento 1: juega" not in screen  # the bot waits its pace
        term.wait_for("asiento 1: juega", timeout=120)


def test_a_card_tapped_out_of_turn_is_refused_then_and_never_played_later() -> None:
    with Terminal(mock("--seed", "3", "--seat", "1", "--pace", "2")) as term:
        screen = term.wait_for("turno: asiento 0")
        before = cards_line(screen)
        term.type("1")  # the bot is thinking: not our turn
        screen = term.wait_for("NO ES TU TURNO", timeout=120)
        assert "vos: jugás" in screen and "rechazado: No es tu turno" in screen
        screen = term.wait_for("turno: vos", timeout=120)  # the bot led
        assert cards_line(screen) == before  # our card was not played as a lead


def test_typing_during_bot_play_is_read_at_once() -> None:
    """Four players, three bots at a slow pace: a quiero with nothing to answer is
    refused while the bots are still playing."""
    with Terminal(mock("--players", "4", "--seed", "5", "--seat", "2", "--pace", "1")) as term:
        term.wait_for("turno: asiento 0")
        term.type("q")  # nothing of the others' to answer: refused then, not later
        screen = term.wait_for("vos: quiero → rechazado", timeout=120)
        assert "vos: quiero → rechazado: No hay nada que responder" in screen or (
            "asiento 0: ¡truco!" in screen  # our partner was quicker: ours, not to answer
        )


def test_the_end_of_the_hand_stays_until_the_player_goes_on() -> None:
    with Terminal(mock("--seed", "3", "--pace", "0.05", "--bot", "facil")) as term:
        term.wait_for("turno: vos")
        time.sleep(0.3)
        for _ in range(6):  # play the first card each turn until the hand ends
            screen = term.screen()
            if "Terminó la mano 1" in screen:
                break
            term.type("1", delay=0.6)
        screen = term.wait_for("Terminó la mano 1")
        assert re.search(r"\+\d (nosotros|ellos): la mano", screen)
        assert "Bazas: 1ª" in screen and "Enter o espacio: seguir" in screen
        time.sleep(2.0)  # the bots are quick, the end of the hand is held
        assert "Terminó la mano 1" in term.screen()
        term.press("Enter")
        screen = term.wait_for("Mano n.º 2")
        assert "Terminó la mano 1" not in screen


def test_panels_follow_the_width_of_the_terminal() -> None:
    with Terminal(mock("--seed", "3", "--pace", "5"), width=140, height=48) as term:
        term.wait_for("turno: vos")
        screen = term.wait_for("asiento 1 · equipo 1")
        assert "asiento 0 (vos)" in screen
        term.resize(80, 40)  # one panel
        screen = term.wait_for("[asiento 1]")
        assert "asiento 0 (vos) · equipo 0" in screen
        assert max(len(line.rstrip()) for line in screen.splitlines()) <= 80
        term.resize(50, 30)  # no room for a panel: the texts
        screen = term.wait_for("[vos]")
        assert "Tus cartas:" in screen
        term.resize(30, 8)
        term.wait_for("La terminal es chica")
        term.resize(140, 48)
        term.wait_for("asiento 1 · equipo 1")


def test_bots_only_is_a_watchable_demo() -> None:
    with Terminal(mock("--bots-only", "--seed", "2", "--pace", "0.3")) as term:
        screen = term.wait_for("asiento 0: ")  # the first action, after one pace
        assert "Equipo 0: 0 · Equipo 1: 0" in screen
        screen = term.wait_for("Terminó la mano 1", timeout=120)
        assert "sigue en" in screen
        term.wait_for("Mano n.º 2", timeout=120)  # goes on by itself
        term.type("p")
        term.wait_for("EN PAUSA")
        term.type("x")
        assert term.exit_status() == 0


def test_english_text_around_the_panels() -> None:
    with Terminal(mock("--seed", "3", "--lang", "en", "--pace", "5")) as term:
        screen = term.wait_for("turn: you")
        assert "Your cards:" in screen and "This hand's calls:" in screen
        term.type("?")
        term.wait_for("Each key is a button of your pad")
        term.type(" ")
        term.wait_for("turn: you")


def test_quit_with_x() -> None:
    """x asks first while the game goes on; any other key keeps playing, s leaves and the
    terminal is told how the game could have been kept."""
    with Terminal(mock("--seed", "3")) as term:
        term.wait_for("Tus cartas:")
        term.type("x")
        screen = term.wait_for("¿Dejás el partido? s: sí, salir")
        assert "Sin --state el partido no se guarda" in screen
        term.type("n")
        term.wait_for("turno: vos")
        assert term.exit_status_now() is None
        term.type("xs")
        assert term.exit_status() == 0
        assert "Sin --state el partido no se guarda" in term.screen()


def test_quit_with_state_says_how_to_resume(tmp_path: Path) -> None:
    state = tmp_path / "mesa"
    with Terminal(mock("--seed", "3", "--state", str(state))) as term:
        term.wait_for("Tus cartas: [1]")  # the first screen shows the dealt cards
        term.type("1")
        term.wait_for("vos:")  # the card played
        term.type("xs")
        assert term.exit_status() == 0
        assert f"truco-table run --mock --state {state}" in term.screen()
    with Terminal(mock("--seed", "3", "--state", str(state))) as term:
        term.wait_for("Tus cartas:")
        term.wait_for("vos:")  # the game goes on where it was: the card played is there


def test_points_typed_then_enter_and_another_game_after_the_end() -> None:
    """The player calls envido, the bot accepts (seed 10, points declared): the points
    are typed and told with Enter; at 14-14 of a game to 15 the hand ends the game, and
    o (otra) deals a new one."""
    argv = mock("--claims", "declared", "--seed", "10", "--target", "15", "--score", "14", "14")
    with Terminal(argv, width=120, height=44) as term:
        term.wait_for("turno: vos")
        term.type("e")
        screen = term.wait_for("Tus tantos: _")
        assert "↑ ↓ desde tu envido" in screen
        term.type("q")
        term.wait_for("q no canta nada")
        term.press("Up")
        own = re.search(r"desde tu envido \((\d+)\)", screen)
        assert own is not None
        term.wait_for(f"Tus tantos: {own.group(1)}_")
        term.press("Enter")
        term.wait_for(f"vos: tengo {own.group(1)}")
        screen = term.wait_for("¡Fin del partido!", timeout=120)
        assert "o: otra partida · x: salir" in screen
        term.type("o")
        term.wait_for("Partida nueva a 15, 2 jugadores")
        screen = term.wait_for("Mano n.º 1 ")
        assert "Nosotros 0 · Ellos 0" in screen
        term.type("xs")
        assert term.exit_status() == 0


def test_control_undo_reaches_the_terminal_table(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with Terminal(mock("--seed", "3", "--pace", "30", "--state", str(state))) as term:
        screen = term.wait_for("turno: vos")
        before = cards_line(screen)
        term.type("1")
        assert cards_line(term.wait_for("vos: jugás")) != before
        done = subprocess.run(
            [*TRUCO_TABLE, "control", "undo", "--state", str(state)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("undo: deshecho: 0 play ")
        assert "turno: vos" in term.wait_for(before, timeout=120)


def test_the_referee_key_calls_the_referee_on_every_panel() -> None:
    with Terminal(mock("--seed", "3", "--pace", "5"), width=140, height=48) as term:
        term.wait_for("turno: vos")
        term.type("!")  # quiero and no quiero held together on the pad
        screen = term.wait_for("LLAMASTE AL ÁRBITRO: ESPERALO", timeout=120)
        assert "EL ASIENTO 0 LLAMÓ AL · ÁRBITRO" in screen  # the other seat's panel, whole
        assert "turno: vos" in screen  # nothing was played


def test_a_pica_pica_hand_typed_at_six_seats() -> None:
    """Six seats, pica-pica from the first hand (5-0): the player's pica and the two
    others each show their own turn, calls and cards; the keys act in the player's pica
    (seat 3, across the table, answers its truco) while the bots play the others."""
    argv = mock("--players", "6", "--pica-pica", "on", "--score", "5", "0", "--seed", "3")
    with Terminal([*argv, "--pace", "1"], width=140, height=48) as term:
        screen = term.wait_for("Picas: vos–3 turno vos")
        assert "Mano n.º 1 · da: 5 · sale: vos (es mano) · pica-pica" in screen
        assert "En la mesa: vos–3 (baza 1): —" in screen
        term.type("t")
        term.wait_for("[vos–3] vos: ¡truco!")
        term.wait_for("[vos–3] vos: ¡truco! · asiento 3: ", timeout=120)  # its opponent answers
        screen = term.wait_for("[2–5] asiento 2: ", timeout=120)  # the other picas go on
        assert "[1–4] asiento 1: " in screen or "[1–4] asiento 4: " in screen
        first = cards_line(screen).split("[1] ")[1].split()[0]
        for _ in range(40):  # answer what comes (q) and play the first card (1), as it comes
            screen = term.screen()
            if "vos–3 terminó" in screen or "Terminó la mano 1" in screen:
                break
            term.type("q1", delay=0.4)
        else:
            raise AssertionError(f"the player's pica never ended:\n{screen}")
        screen = term.wait_for("Terminó la mano 1", timeout=120)
        if "Bazas: vos–3:" in screen:  # (not when a call ended the pica before a card)
            assert f"Bazas: vos–3: 1ª vos:{first} 3:" in screen  # our lead, in our pica
        assert screen.count("Bazas: ") <= 3
        assert re.search(r"\+\d (nosotros|ellos): [^\n]*\[vos–3\]", screen)  # the pica's points
        assert re.search(r"\+\d (nosotros|ellos): [^\n]*\[(1–4|2–5)\]", screen)


def test_cards_shown_when_the_table_asks_stay_playable() -> None:
    """Hands unknown to the table (--deal-reading none): the player sings flor (the bot
    holds none: it sets no course, the flor is settled when play resumes), plays a card,
    and follows "¡mostrá tus cartas!" (s 1 2 q); the two shown cards stay in the hand and
    finish it."""
    argv = mock("--deal-reading", "none", "--flor", "on", "--seed", "7", "--pace", "0.3")
    with Terminal(argv, width=120, height=44) as term:
        screen = term.wait_for("turno: vos")
        assert "Tus cartas: [1] 10C  [2] 4C  [3] 6C" in screen
        term.type("l")
        term.wait_for("vos: ¡flor!")
        term.type("1")
        screen = term.wait_for("¡mostrá tus cartas!")
        assert "Tus cartas: [1] 4C  [2] 6C" in screen
        term.type("s12q")
        screen = term.wait_for("mostrás 4C 6C")
        assert "Tus cartas: [1] 4C  [2] 6C" in screen  # shown, not played
        for _ in range(10):
            screen = term.screen()
            if "Terminó la mano 1" in screen:
                break
            term.type("q1", delay=0.8)  # quiero (a truco), then a card
        screen = term.wait_for("Terminó la mano 1")
        bazas = " ".join(line for line in screen.splitlines() if "ª" in line)
        assert re.search(r"2ª (1:\S+ vos:4C|vos:4C 1:\S+)", bazas), bazas  # a shown card, played
        assert re.search(r"\+\d+ (ellos|nosotros): la mano", screen)


def test_a_paste_into_the_terminal_plays_nothing_and_says_so() -> None:
    """A chat line pasted (tmux pastes it bracketed, as the table asked it to): no call,
    no card, no referee, and a line that says so; typed keys act as before."""
    chat = "jaja te canto envido y truco, quiero retruco! 1 2 3 ! m q n " * 6
    with Terminal(mock("--seed", "3", "--pace", "5")) as term:
        term.wait_for("turno: vos")
        paste(term, chat)
        term.wait_for("Pegaste")
        time.sleep(0.5)  # the paste's last key read, the frame drawn whole
        screen = term.screen()
        assert f"Pegaste {len(chat)} caracteres: un pegado no juega nada" in screen
        assert "(todavía nada)" in screen and "ÁRBITRO" not in screen
        assert "[3]" in cards_line(screen)
        term.type("1")
        term.wait_for("vos: jugás")


def _hand_end(screen: str) -> tuple[int, list[str], list[tuple[int, str]], tuple[int, int]]:
    """A hand's end read back: its number, the seat:card of its bazas in order, its
    points (points, nosotros/ellos) and the score line's numbers."""
    number = int(re.search(r"Terminó la mano (\d+)", screen).group(1))  # type: ignore[union-attr]
    lines = screen.splitlines()
    cards: list[str] = []
    for i, line in enumerate(lines):
        if line.startswith("Bazas: "):
            block = [line]
            for more in lines[i + 1 :]:
                if not (more.startswith("  ") and "ª" in more):
                    break
                block.append(more)
            for part in re.split(r"\dª ", " ".join(block))[1:]:
                assert re.search(r"\((ganaste vos|ganó el \d|parda)\)", part), part
                cards += re.findall(r"(?:vos|\d):\w+", part)
    points = [
        (int(m.group(1)), m.group(2))
        for m in re.finditer(r"^  \+(\d+) (nosotros|ellos): ", screen, re.M)
    ]
    score = re.search(r"^Nosotros (\d+)[^·]* · Ellos (\d+)", screen, re.M)
    assert score is not None, screen
    return number, cards, points, (int(score.group(1)), int(score.group(2)))


@pytest.mark.parametrize(
    ("players", "width", "height"),
    [(2, 80, 24), (4, 80, 24), (6, 80, 24), (4, 100, 30), (6, 120, 40)],
)
def test_whole_games_at_80x24_read_back_from_the_screen(
    players: int, width: int, height: int, tmp_path: Path
) -> None:
    """A game at 80x24 (and larger), hands unknown to the table (15 points, from 10 each so that it
    ends in a few hands): at every hand's end the screen shows the score, every baza's
    cards and winner and the hand's points, and they are the game record's."""
    record = tmp_path / "game.truco"
    argv = mock("--players", str(players), "--deal-reading", "none", "--target", "15",
                "--score", "10", "10", "--seed", "4", "--pace", "0.05",
                "--record", str(record))  # fmt: skip
    ends: dict[int, tuple[list[str], list[tuple[int, str]], tuple[int, int]]] = {}
    with Terminal(argv, width=width, height=height) as term:
        term.wait_for("Tus cartas:")
        deadline = time.monotonic() + 600  # a game that never ends, not a slow machine
        while time.monotonic() < deadline:
            screen = term.settled()
            assert re.search(r"^Nosotros \d+", screen, re.M), screen  # the score, always
            if "Terminó la mano" in screen:
                screen = term.wait_for("Terminó la mano")  # the whole frame
                number, cards, points, shown = _hand_end(screen)
                ends[number] = (cards, points, shown)
                if "¡Fin del partido!" in screen:
                    break
                term.press("Enter")
                term.wait_for(f"Mano n.º {number + 1} ")
                continue
            if "Tus tantos:" in screen:  # ours to tell: son buenas, else a number typed
                best = re.search(r"lo mejor: (\d+)", screen)
                term.type("n", delay=0.1)
                if "Tus tantos:" in term.settled():
                    term.type(str(min(int(best.group(1)) + 1, 38)) if best else "25", delay=0.1)
                    term.press("Enter")
                continue
            term.type("nq1", delay=0.1)  # no quiero / son buenas; a card
        else:
            raise AssertionError(f"the game did not end:\n{term.screen()}")
        assert re.search(r"¡Fin del partido! Gan(amos nosotros|aron ellos), 1[5-9] a 1\d", screen)
        term.type("x")
        assert term.exit_status() == 0
    game = replay(parse(record.read_text(encoding="utf-8"))).game
    assert game.winner is not None and sorted(ends) == [h.number for h in game.hands]
    score = [10, 10]
    for hand, (_, _, actions) in zip(game.hands, game.history(), strict=True):
        cards, points, on_screen = ends[hand.number]
        played = [f"{'vos' if a.seat == 0 else a.seat}:{a.card}" for a in actions if a.card]
        assert len(cards) % players == 0 and played[: len(cards)] == cards  # every baza
        assert len(played) - len(cards) < players  # only a baza left unfinished
        said = sorted((a.points, "nosotros" if a.team == 0 else "ellos") for a in hand.awards)
        assert sorted(points) == said
        for award in hand.awards:
            score[award.team] += award.points
        assert list(on_screen) == score
