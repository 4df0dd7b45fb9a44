"""Seat screens: pixel-exact goldens of every screen kind and every score, the sticks
counted back from the screen's pixels, what each screen says, and that no screen ever
shows another seat's hidden cards.

The screens come from real game states (``controller.cli.gallery``: real actions on a
real ``Table``, then ``screen_for``). Regenerate the goldens deliberately with
``TRUCO_REGEN_GOLDEN=1 pytest tests/render`` (the tests then write the PNGs and skip).
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import fields, replace
from pathlib import Path

import pytest

from controller.cli.gallery import (
    HANDS_6,
    Shot,
    refusal_shots,
    score_shots,
    state_shots,
    table_at,
)
from controller.engine import Action, Card, Game, HouseRules, Kind, RefusalCode
from controller.engine.playout import random_deal
from controller.hal.events import ButtonHeld, ButtonPressed, TagArrived, TagLeft
from controller.hal.mock import MockDeck
from controller.hal.pages import image_to_pages
from controller.notices import TableAlert
from controller.render.matchsticks import SCREEN_SIZE
from controller.render.screen import (
    BANNER_BOX,
    SCORE_BOX,
    SeatScreen,
    plain,
    render_content,
    render_pages,
    render_screen,
    render_tiles,
    screen_content,
    screen_lines,
    screen_texts,
    text_width,
)
from controller.table.controls import Button
from controller.table.screens import pad_prompt, screen_for
from controller.table.table import Table

from .golden import check_golden, same
from .test_matchsticks import expected_reading, read_team

GOLDEN_DIR = Path(__file__).parent / "golden" / "screens"

STATES = state_shots()
REFUSALS = refusal_shots()
SCORES = score_shots()
ALL = STATES + REFUSALS + SCORES

# the two teams' squares on a seat screen (below the labels, left and right of x = 63)
LEFT_SQUARES = (0, 8, 63, SCORE_BOX[3])
RIGHT_SQUARES = (64, 8, 128, SCORE_BOX[3])


# --------------------------------------------------------------------------- goldens


@pytest.mark.parametrize("shot", ALL, ids=[s.name for s in ALL])
def test_golden(shot: Shot) -> None:
    image = render_screen(shot.screen)
    assert image.mode == "1" and image.size == SCREEN_SIZE
    check_golden(image, GOLDEN_DIR / f"{shot.name}.png", str(screen_texts(shot.screen)))


@pytest.mark.parametrize("shot", ALL, ids=[s.name for s in ALL])
def test_pages_are_the_golden_image_in_panel_layout(shot: Shot) -> None:
    """What the OLEDs are sent (tiles' pages joined) is the very image of the golden."""
    content = screen_content(shot.screen)
    assert render_pages(content) == image_to_pages(render_content(content))
    assert render_pages(content) == image_to_pages(render_screen(shot.screen))


@pytest.mark.parametrize("shot", ALL, ids=[s.name for s in ALL])
def test_tiles_are_the_pages_cut_where_the_kept_tiles_meet(shot: Shot) -> None:
    """What a seat node's port is given (``render_tiles``): the same pages, cut into the
    score's five pages, the strip's and the two lines'; the same objects again for the
    same content (the port compares tiles by identity); none for a banner or a card."""
    content = screen_content(shot.screen)
    tiles = render_tiles(content)
    if content.banner or content.card:
        assert tiles is None
        return
    assert tiles is not None
    assert b"".join(tiles) == render_pages(content)
    assert [len(tile) for tile in tiles] == [5 * 128, 128, 128, 128]
    again = render_tiles(replace(content))  # an equal content, another object
    assert again is not None and all(a is b for a, b in zip(again, tiles, strict=True))


def test_no_stray_goldens() -> None:
    wanted = {f"{s.name}.png" for s in ALL}
    present = {p.name for p in GOLDEN_DIR.glob("*.png")}
    assert present <= wanted, sorted(present - wanted)


def test_shot_names_are_unique() -> None:
    names = [s.name for s in ALL]
    assert len(names) == len(set(names))


def test_every_screen_kind_is_covered() -> None:
    names = {s.name for s in STATES}
    for kind in (
        "truco_pending",
        "retruco_pending",
        "vale_cuatro_pending",
        "truco_accepted_ours",
        "retruco_accepted",
        "vale_cuatro_accepted",
        "envido_e",
        "envido_e_e",
        "envido_e_r",
        "envido_e_e_r_f",
        "falta_envido",
        "flor_pending",
        "contraflor_pending",
        "al_resto_pending",
        "telling_mine",
        "telling_other",
        "envido_esta_primero",
        "envido_won",
        "flor_won",
        "flor_tapada",
        "mal_cantado",
        "show_request",
        "hand_won",
        "game_won",
        "dealing_seats",
        "dealing_dealer",
        "menu_truco",
        "number_entry",
        "reader_unplugged",
        "players_4_truco",
        "players_6_envido",
        "pica_turn_mine",
        "pica_truco",
        "pica_ended",
    ):
        assert kind in names
    assert {s.name for s in REFUSALS} == {f"refusal_{c.value}" for c in RefusalCode}
    scores = {(s.screen.view.target, s.screen.view.ours) for s in SCORES}
    assert scores == {(t, p) for t in (15, 30) for p in range(t + 1)}


# ------------------------------------------------------------ sticks from the pixels


@pytest.mark.parametrize("shot", SCORES, ids=[s.name for s in SCORES])
def test_sticks_counted_from_the_screen(shot: Shot) -> None:
    view = shot.screen.view
    image = render_screen(shot.screen)
    for region, points in ((LEFT_SQUARES, view.ours), (RIGHT_SQUARES, view.theirs)):
        reading = read_team(image, region)
        assert reading.halves == expected_reading(points, view.target), (points, reading)
        assert reading.overflow_marks == 0
        assert reading.stroke is None or reading.stroke >= 2


def test_overflow_marked_on_the_screen() -> None:
    won = next(s for s in STATES if s.name == "game_won")  # 31 - 27
    image = render_screen(won.screen)
    assert read_team(image, LEFT_SQUARES).overflow_marks > 0
    assert read_team(image, RIGHT_SQUARES).overflow_marks == 0


def test_every_score_reads_differently_on_the_screen() -> None:
    for target in (15, 30):
        readings = {
            read_team(render_screen(s.screen), LEFT_SQUARES).halves
            for s in SCORES
            if s.screen.view.target == target
        }
        assert len(readings) == target + 1


# ------------------------------------------------------------------- what they say


def texts(name: str) -> tuple[str, ...]:
    return screen_texts(next(s for s in ALL if s.name == name).screen)


def test_every_text_fits_its_line() -> None:
    for shot in ALL:
        for text in screen_texts(shot.screen):
            assert text_width(text) <= SCREEN_SIZE[0], (shot.name, text)
        assert text_width(plain(shot.title)) <= SCREEN_SIZE[0], shot.title


@pytest.mark.parametrize("shot", REFUSALS, ids=[s.name for s in REFUSALS])
def test_refusal_banner_says_the_code_message(shot: Shot) -> None:
    code = RefusalCode(shot.name.removeprefix("refusal_"))
    assert " ".join(screen_texts(shot.screen)) == plain(code.message)


@pytest.mark.parametrize("shot", REFUSALS, ids=[s.name for s in REFUSALS])
def test_refusal_banner_leaves_the_score_alone(shot: Shot) -> None:
    calm = replace(shot.screen, message=None, refusal=False)
    banner, plain_screen = render_screen(shot.screen), render_screen(calm)
    score = (0, 0, SCREEN_SIZE[0], BANNER_BOX[1])
    assert same(banner.crop(score), plain_screen.crop(score))
    inverted = banner.crop(BANNER_BOX).convert("L")
    assert sum(inverted.histogram()[128:]) > 0.7 * inverted.width * inverted.height


def test_calls_answers_and_announcements() -> None:
    assert texts("truco_pending")[1:] == ("TRUCO?", "QUIERO·NO·MAZO·RETRUCO")
    assert texts("truco_called")[1:] == ("CANTAMOS TRUCO", "")
    assert texts("envido_e_called")[1:] == ("TURNO: VOS", "CANTAMOS ENVIDO")
    assert texts("retruco_pending")[1:] == ("RETRUCO?", "QUIERO·NO·MAZO·VALE 4")
    assert texts("envido_e_e_r_f")[1:] == ("ENV ENV REAL FALTA?", "QUIERO·NO")
    assert texts("envido_e_r")[1:] == ("ENVIDO REAL ENVIDO?", "QUIERO·NO·FALTA")
    # el envido está primero: the truco's answers and the envido calls
    first, second = texts("envido_esta_primero")[1:]
    assert first.startswith("TRUCO?") and "ENV" in second and "REAL" in second
    assert texts("contraflor_pending")[1] == "CONTRAFLOR?"
    assert texts("al_resto_pending")[1] == "CONTRAFLOR AL RESTO?"
    # the winner's points, for both teams alike; never the loser's (25)
    assert texts("envido_won")[2] == "+2 NOS: ENVIDO 33"
    assert texts("envido_lost")[2] == "+2 ELLOS: ENVIDO 33"
    assert not any("25" in t for t in texts("envido_won") + texts("envido_lost"))
    assert texts("flor_won")[2] == "+6 NOS: FLOR 33"
    assert texts("hand_won")[1] == "+2 NOS: LA MANO"
    assert texts("hand_lost")[1] == "+2 ELLOS: LA MANO"
    assert texts("game_won")[1] == "FIN: GANAMOS"
    assert texts("game_lost")[1] == "FIN: PERDIMOS"


def test_a_kept_award_line_is_never_another_screens() -> None:
    """The hand's last award line is kept for a team's seats by the identity of the
    awards, their notes and the tanto results: a screen of the very same awards with
    another note, another tanto or the other team says its own line, and the first
    screen says its own again after them."""
    penalty = next(s for s in STATES if s.name == "mal_cantado").screen
    (note,) = penalty.award_notes
    assert note is not None
    said = screen_lines(penalty)[1]
    assert "MAL CANTADO" in said
    other_note = replace(penalty, award_notes=("tanto sin mostrar",))
    assert screen_lines(other_note)[1] == said.replace("MAL CANTADO", "SIN MOSTRAR")
    assert "PENALIDAD" in screen_lines(replace(penalty, award_notes=(None,)))[1]
    won = next(s for s in STATES if s.name == "envido_won").screen
    view = won.view
    assert view.envido_result is not None
    told = replace(won, view=replace(view, envido_result=(view.envido_result[0], 31)))
    assert told.view.awards is view.awards
    theirs = replace(won, view=replace(view, team=1 - view.team))
    for _ in range(2):
        assert screen_lines(won)[1] == "+2 NOS: ENVIDO 33"
        assert screen_lines(told)[1] == "+2 NOS: ENVIDO 31"
        assert screen_lines(theirs)[1] == "+2 ELLOS: ENVIDO 33"
        assert screen_lines(penalty)[1] == said


def test_strip_marks() -> None:
    strip = screen_content(next(s for s in STATES if s.name == "hand_won").screen).strip
    assert (strip.mano, strip.dealer, strip.seat) == (0, 1, 0)
    assert [b.value for b in strip.bazas] == ["won", "lost", "won"]
    ours = screen_content(next(s for s in STATES if s.name == "truco_accepted_ours").screen)
    theirs = screen_content(next(s for s in STATES if s.name == "truco_accepted_theirs").screen)
    assert ours.strip.truco == theirs.strip.truco == 1
    assert ours.strip.quiero_ours and not theirs.strip.quiero_ours
    parda = screen_content(next(s for s in STATES if s.name == "baza_parda").screen).strip
    assert parda.bazas[0].value == "parda"


def test_pad_screens() -> None:
    assert texts("menu_truco")[1] == "[TRUCO] RETRUCO VALE 4"
    assert texts("menu_envido")[1] == "ENVIDO [TANTO] MOSTRAR"
    assert texts("number_entry")[1] == "DECLARAR 32?"  # own 33, one down
    assert texts("show_cards")[1] == "MOSTRAR: 7C"
    assert texts("telling_mine")[1:] == ("TENGO 33?", "Q: SÍ·E+10 R+1 F-1")
    assert texts("telling_son_buenas")[1:] == ("TENGO 25? MEJOR 33", "Q: SÍ·NO: SON BUENAS")
    table = _press(table_at(), 0, hold="flor")
    assert pad_prompt(table, 0) == "elegir: flor?"


def _press(table: Table, seat: int, *buttons: str, hold: str | None = None) -> Table:
    if hold is not None:
        table.handle(seat, ButtonHeld(hold))
    for name in buttons:
        table.handle(seat, ButtonPressed(name))
    return table


def test_screen_lines_compatibility() -> None:
    first, second = screen_lines(next(s for s in STATES if s.name == "truco_pending").screen)
    assert (first, second) == ("TRUCO?", "QUIERO·NO·MAZO·RETRUCO")
    banner = screen_lines(next(s for s in REFUSALS if "call_pending" in s.name).screen)
    assert banner == ("HAY UN CANTO SIN", "RESPONDER")


def test_notices_and_alerts() -> None:
    screen = screen_for(table_at(), 1)
    alert = replace(screen, alert=TableAlert.NO_DISK)
    assert "DISCO" in " ".join(screen_lines(alert))
    # not over a call this seat must answer
    pending = screen_for(table_at(["0 truco"]), 1)
    assert screen_lines(replace(pending, alert=TableAlert.NO_DISK)) == screen_lines(pending)


def test_pica_pica_each_seat_shows_its_own_pica() -> None:
    """RULES.md section 8b: the seat's pica's mano, bazas, calls and turn, its opponent
    named; another pica's truco and points never reach it."""
    assert texts("pica_turn_mine") == ("M0 D5 #__", "PICA CON 0·TURNO: VOS", "")
    assert texts("pica_turn_other") == ("M0 D5 X__", "PICA CON 3·TURNO: 3", "")
    assert texts("pica_truco")[:2] == ("M1 D5 ___", "TRUCO? QUIERO·NO·MAZO")
    assert texts("pica_other_truco") == ("M2 D5 ___", "PICA CON 2·TURNO: 2", "")
    assert texts("pica_ended") == ("M2 D5 ___", "+2 NOS: MAZO", "")  # its pica over
    assert texts("pica_envido") == ("M0 D5 ___", "PICA CON 0·TURNO: 0", "+2 ELLOS: ENVIDO 33")
    shot = next(s for s in ALL if s.name == "pica_ended")
    assert (shot.screen.view.ours, shot.screen.view.theirs) == (9, 13)  # the teams' score


def test_pica_pica_hand_over_shows_each_seats_pica() -> None:
    picas_0_2 = ["0 mazo", "2 mazo"]
    pica_1 = ["1 truco", "4 quiero", "1 play 4B", "4 play 1E", "4 play 4C", "1 play 2O"]
    table = table_at(
        [*picas_0_2, *pica_1, "1 play 12O", "4 play 6O"],
        hands=HANDS_6,
        players=6,
        rules={"pica_pica": "on"},
    )
    assert not table.game.hand_in_progress
    got = [screen_texts(screen_for(table, seat))[:2] for seat in range(6)]
    assert got == [
        ("M0 D5 ___", "+2 ELLOS: MAZO"),
        ("M1 D5 X## TRUCO", "+2 NOS: LA PICA"),
        ("M2 D5 ___", "+2 ELLOS: MAZO"),
        ("M0 D5 ___", "+2 NOS: MAZO"),
        ("M1 D5 #XX TRUCO", "+2 ELLOS: LA PICA"),
        ("M2 D5 ___", "+2 NOS: MAZO"),
    ]


def test_penalties_say_why_and_a_claimant_is_asked_to_show() -> None:
    assert texts("flor_tapada")[2] == "+3 ELLOS: FLOR TAPADA"
    assert texts("mal_cantado")[2] == "+2 ELLOS: MAL CANTADO"  # "tanto mal cantado" is too wide
    assert texts("show_request")[2] == "MOSTRÁ TUS CARTAS"


def test_plain() -> None:
    assert plain("Esa carta ya se jugó") == "ESA CARTA YA SE JUGÓ"
    assert plain("No tenés flor") == "NO TENÉS FLOR"
    assert plain("¿Qué?  ¡Sí!") == "¿QUÉ? ¡SÍ!"
    assert plain("compañero, pingüino") == "COMPAÑERO, PINGÜINO"
    # the font's other Latin-1 capitals are drawn; a mark it cannot draw (the cedilla
    # under the baseline, a letter outside Latin-1) comes off its letter
    assert plain("Ça, à, è, João") == "CA, À, È, JOÃO"
    assert plain("Dvořák, Łódź") == "DVORÁK, ÓDZ"  # no Ł: a space
    assert plain("tab\there €") == "TAB HERE"  # what the font cannot draw is a space


def test_render_is_fast() -> None:
    screens = [s.screen for s in ALL]
    for screen in screens:
        render_screen(screen)
    start = time.perf_counter()
    for _ in range(3):
        for screen in screens:
            render_screen(screen)
    mean = (time.perf_counter() - start) / (3 * len(screens))
    assert mean < 1e-3, f"{mean * 1e3:.2f} ms a screen"


# ------------------------------------------------- never another seat's hidden cards

CARD_NAME = re.compile(r"(?<![0-9A-Z])(1[0-2]|[1-7])([EBOC])(?![0-9A-Z])")


def _strings(screen: SeatScreen) -> list[str]:
    """Every text a screen carries (its fields) and shows (its lines)."""
    out = list(screen_texts(screen))
    for f in fields(screen):
        value = getattr(screen, f.name)
        if isinstance(value, str):
            out.append(plain(value))
        elif isinstance(value, tuple):
            out.extend(plain(v) for v in value if isinstance(v, str))
    return out


def _hidden(game: Game, seat: int) -> set[Card]:
    """Cards of other seats that are not public (not played or shown)."""
    hidden: set[Card] = set()
    for other in range(game.players):
        hand = game.hand_of(other)
        if other == seat or hand is None:
            continue
        hidden |= set(hand) - set(game.seen_cards(other))
    return hidden


def _random_table(rng: random.Random) -> tuple[Table, MockDeck, dict[int, list[Card]]]:
    players = rng.choice((2, 4, 6))
    rules = HouseRules(
        players=players,
        flor=rng.random() < 0.5,
        target=rng.choice((15, 30)),
        claims=rng.choice(list(type(HouseRules().claims))),
    )
    deck = MockDeck(rng.randrange(1000))
    return Table(rules, deck.lookup, clock=lambda: 0.0), deck, {}


@pytest.mark.parametrize("seed", range(12))
def test_no_screen_shows_another_seats_hidden_cards(seed: int) -> None:
    rng = random.Random(seed)
    table, deck, _ = _random_table(rng)
    game = table.game
    checked = 0
    for _ in range(400):
        if game.winner is not None:
            break
        if not game.hand_in_progress:
            table.new_hand()
            deal = random_deal(rng, game.players)
            for seat, cards in deal.items():
                for card in cards:
                    table.handle(seat, TagArrived(deck.uid(card)))
                    table.handle(seat, TagLeft(deck.uid(card)))
                    _check_all(table)
            continue
        roll = rng.random()
        seat = rng.randrange(game.players)
        if roll < 0.08:  # a pad menu, a show, a number
            button = rng.choice(list(Button))
            table.handle(seat, ButtonHeld(button.value))
            if button is Button.ENVIDO and rng.random() < 0.5:
                table.handle(seat, ButtonPressed("envido"))
                table.handle(seat, ButtonPressed("envido"))
                table.handle(seat, ButtonPressed("quiero"))  # show mode
                own = game.hand_of(seat) or ()
                for card in own[: rng.randint(1, 3)]:  # its own cards only
                    table.handle(seat, TagArrived(deck.uid(card)))
                    table.handle(seat, TagLeft(deck.uid(card)))
        elif roll < 0.15:  # a mistake: someone else's move, refused
            table.attempt(Action(seat, rng.choice([Kind.QUIERO, Kind.FLOR, Kind.ENVIDO])))
        else:
            legal = game.legal_list()
            table.attempt(legal[rng.randrange(len(legal))])
        checked += _check_all(table)
    assert checked > 0


def _check_all(table: Table) -> int:
    for seat in range(table.game.players):
        hidden = {str(c) for c in _hidden(table.game, seat)}
        for text in _strings(screen_for(table, seat)):
            for match in CARD_NAME.finditer(text):
                assert match.group(0) not in hidden, (seat, text)
    return 1
