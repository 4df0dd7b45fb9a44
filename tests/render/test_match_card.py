"""The match card: what every seat shows before a tournament game (the desk's assignment)."""

from __future__ import annotations

from controller.engine import Card, Game, HouseRules
from controller.hal.events import TagArrived
from controller.hal.mock import MockDeck
from controller.hal.pages import image_to_pages
from controller.notices import TableAlert
from controller.render.screen import (
    MatchCard,
    fit_text,
    render_content,
    render_pages,
    screen_content,
    screen_texts,
    short_name,
    text_width,
)
from controller.table.screens import screen_for
from controller.table.table import Table

DECK = MockDeck(0)
QUARTER = MatchCard("Cuartos de final", "Los del Fondo", "La Barra", 2, 3)


def assigned_table(players: int = 4) -> Table:
    game = Game(HouseRules.from_options({"players": str(players)}))
    table = Table(game.rules, DECK.lookup, game=game)
    table.match = QUARTER
    return table


def test_every_seat_reads_the_match_and_its_own_team() -> None:
    table = assigned_table(6)
    for seat in range(6):
        texts = screen_texts(screen_for(table, seat))
        ours = "LOS DEL FONDO" if seat % 2 == 0 else "LA BARRA"
        assert texts == (
            "CUARTOS DE FINAL", "", "LOS DEL FONDO", "VS", "LA BARRA", "", "CHICO 2 DE 3",
            f"SOS DE {ours}",
        )  # fmt: skip
        card = screen_content(screen_for(table, seat)).card
        assert [line.inverted for line in card].index(True) == 2 + 2 * (seat % 2)


def test_the_card_stays_through_the_deal_until_a_card_is_read() -> None:
    table = assigned_table(2)
    table.new_hand()
    assert screen_for(table, 0).match == QUARTER
    table.handle(0, TagArrived(DECK.uid(Card.from_str("1E"))))
    screen = screen_for(table, 0)
    assert screen.match is None and "CUARTOS DE FINAL" not in screen_texts(screen)


def test_no_card_without_a_match_or_once_the_game_is_on() -> None:
    table = assigned_table(2)
    table.match = None
    assert screen_for(table, 1).match is None
    played = Table(table.rules, DECK.lookup, game=Game(table.rules, score=(3, 1)))
    played.match = QUARTER
    played.new_hand()
    played.start_play()  # the first hand dealt: the game is on
    assert screen_for(played, 0).match is None


def test_an_alert_takes_the_cards_last_line() -> None:
    table = assigned_table(2)
    table.alerts["disk"] = TableAlert.NO_DISK
    texts = screen_texts(screen_for(table, 0))
    assert texts[:7] == screen_texts(screen_for(assigned_table(2), 0))[:7]
    assert texts[7] != "SOS DE LOS DEL FONDO" and texts[7]


def test_long_names_are_shortened_to_fit() -> None:
    assert short_name("Los del Fondo") == "LOS DEL FONDO"
    assert short_name("Club Atlético Independiente de Avellaneda") == "C.A.I. AVELLANEDA"
    assert short_name("Los Muchachos de la Esquina del Barrio") == "M. ESQUINA BARRIO"
    assert short_name("Asociación Atlética Argentinos Juniors") == "A.A.A. JUNIORS"
    word = "Supercalifragilísticoespialidoso" * 2
    assert text_width(short_name(word)) <= 128 and short_name(word) == fit_text([word])
    card = MatchCard("Grupo A, fecha 1", word, "Ñandú", 1, 1)
    table = assigned_table(2)
    table.match = card
    for seat in (0, 1):
        content = screen_content(screen_for(table, seat))
        assert all(text_width(line.text) <= 128 for line in content.card)
        assert content.card[6].text == "CHICO ÚNICO"
        assert render_pages(content) == image_to_pages(render_content(content))
    assert screen_texts(screen_for(table, 1))[7] == "SOS DE ÑANDÚ"
