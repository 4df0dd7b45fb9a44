"""The panel font holds every letter a panel can show: every notice, refusal, alert and
prompt, every kind of seat screen (the gallery of real game states), and the match card
with the names a tournament registers. A letter the font does not have fails here (the
screen would silently drop its mark, or draw a space). The Spanish capitals are drawn as
capitals: each accented letter is its capital under its mark, not a small letter."""

from __future__ import annotations

import dataclasses
import typing
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.cli.gallery import shots
from controller.engine import Card, RefusalCode
from controller.engine.results import Reason
from controller.notices import (
    ActionUndone,
    AskConfirm,
    CardAlreadyRead,
    CardInAnotherHand,
    DealStarted,
    GameWon,
    LinkNotice,
    Notice,
    NotTheDealer,
    PanelMissingAt,
    RecordDamaged,
    RefereeCalled,
    Refusal,
    Scored,
    SeatFault,
    SeatTest,
    TableAlert,
    TableNotice,
)
from controller.render.notices import alert_text, notice_text
from controller.render.pixelfont import FONT_STRIP, FONT_TEXT, load_pcf_glyphs
from controller.render.screen import (
    LADDER,
    MatchCard,
    match_lines,
    plain,
    render_content,
    screen_content,
    screen_texts,
)
from controller.table.controls import Button
from controller.tournament.competition.entrants import clean_text

SPANISH_CAPITALS = "ÁÉÍÓÚÜÑ"

#: one example of each notice that carries values (the enums are taken whole)
EXAMPLES: dict[type, tuple[object, ...]] = {
    Refusal: tuple(Refusal(code) for code in RefusalCode),
    DealStarted: (DealStarted(1, True), DealStarted(0, True), DealStarted(2, False)),
    NotTheDealer: (NotTheDealer(3),),
    CardAlreadyRead: (CardAlreadyRead(Card.from_str("7E")),),
    CardInAnotherHand: (CardInAnotherHand(Card.from_str("1B")),),
    Scored: (
        *(Scored(3, 0, reason, (1, 33) if reason is Reason.ENVIDO else None) for reason in Reason),
        Scored(3, 1, Reason.PENALTY, None, "flor tapada"),
    ),
    GameWon: (GameWon(0, (30, 12)), GameWon(1, (9, 15))),
    AskConfirm: (AskConfirm("undo"), AskConfirm("new-game")),
    ActionUndone: (ActionUndone("1 play 12E"), ActionUndone("0 truco"), ActionUndone("")),
    RecordDamaged: (RecordDamaged(12),),
    RefereeCalled: (RefereeCalled(0), RefereeCalled(2)),
    PanelMissingAt: (PanelMissingAt(0), PanelMissingAt(5)),
    SeatTest: (
        *(SeatTest(button=button.value) for button in Button),
        *(SeatTest(card=card) for card in (Card.from_str("7E"), Card.from_str("1B"))),
    ),
}

#: team names as organisers register them (cleaned as registration cleans them)
REGISTERED = (
    "Los Ñandúes de Güemes",
    "Peña «El Ombú»",
    "¿Quién Corta?",
    "¡Vamos Atlético!",
    "Club Atlético Independiente de Avellaneda",
    "São Paulo Açúcar",
    "Crème Brûlée",
)


def notices() -> list[object]:
    found: list[object] = []
    for kind in typing.get_args(Notice):
        enums = LinkNotice | TableNotice | TableAlert | SeatFault
        if isinstance(kind, type) and issubclass(kind, enums):
            found += list(kind)
        else:
            assert isinstance(kind, type) and dataclasses.is_dataclass(kind), kind
            assert kind in EXAMPLES, f"a notice without an example here: {kind.__name__}"
            found += EXAMPLES[kind]
    return found


def panel_strings() -> list[str]:
    """Every text the panel can be given, as the screen is given it."""
    texts: list[str] = []
    for notice in notices():
        texts += [notice_text(notice, seat) for seat in range(2)]  # type: ignore[arg-type]
        texts.append(alert_text(notice))  # type: ignore[arg-type]
    texts += LADDER.values()
    for shot in shots():
        texts += screen_texts(shot.screen)
    return texts


def missing(text: str) -> set[str]:
    """The letters of ``text`` (upper-cased, as a panel draws it) the font lacks."""
    drawn = unicodedata.normalize("NFC", text.upper())
    return {char for char in drawn if not char.isspace() and not FONT_TEXT.supports(char)}


def test_every_panel_string_has_every_glyph() -> None:
    texts = panel_strings()
    assert len(texts) > 300
    lacking = {text: missing(text) for text in texts if missing(text)}
    assert lacking == {}
    for text in texts:
        FONT_TEXT.pixels(plain(text))  # raises on a glyph it does not have


def test_the_strip_s_words_are_in_the_strip_font() -> None:
    for word in LADDER.values():
        FONT_STRIP.pixels(word)
    for char in "MD0123456789":
        assert FONT_STRIP.supports(char)


@pytest.mark.parametrize("name", REGISTERED)
def test_registered_names_reach_the_match_card_whole(name: str) -> None:
    cleaned = clean_text(name, "el nombre del equipo")
    card = MatchCard("Cuartos de final", cleaned, "La Barra", 1, 3)
    lines = [line.text for line in match_lines(card, 0)]
    # what the card draws is the name in capitals with its marks (shortened to fit the
    # panel, never a letter lost to the font)
    for text in lines:
        assert missing(text) == set(), text
    words = [w for w in unicodedata.normalize("NFC", cleaned.upper()).split() if len(w) > 2]
    home = " ".join(lines)
    assert any(word.strip("«»¿?¡!") in home for word in words), (cleaned, lines)


def test_the_cedilla_and_other_marks_outside_the_font_come_off_their_letter() -> None:
    assert not FONT_TEXT.supports("Ç")  # the cedilla is under the baseline
    assert plain("São Paulo Açúcar") == "SÃO PAULO ACÚCAR"


def _plain_by_letter(text: str) -> str:
    """The panel's text rule, a letter at a time: upper case; a letter the font draws
    kept; else its marks taken off, what is left drawn or a space; spaces collapsed."""
    out = []
    for char in unicodedata.normalize("NFC", text.upper()):
        if char in FONT_TEXT.glyphs:
            out.append(char)
            continue
        for part in unicodedata.normalize("NFKD", char):
            if not unicodedata.combining(part):
                out.append(part if part in FONT_TEXT.glyphs else " ")
    return " ".join("".join(out).split())


@given(
    st.text(alphabet=st.sampled_from("abcñáéíóúüÑÁÉ ¿¡?!.,:-·çÇãß\t\n0123456789") | st.characters())
)
def test_plain_text_follows_the_rule_a_letter_at_a_time(text: str) -> None:
    """``plain`` (a whole text the font draws taken at once) says what the rule says, and
    the text's width is its letters' advances, less the last one's spacing."""
    drawn = plain(text)
    assert drawn == _plain_by_letter(text)
    width = FONT_TEXT.width + FONT_TEXT.spacing
    advances = [FONT_TEXT.advances.get(char, width) for char in drawn]
    assert FONT_TEXT.text_width(drawn) == (sum(advances) - FONT_TEXT.spacing if drawn else 0)
    assert FONT_TEXT.supports(drawn)
    assert FONT_TEXT.supports(text) == all(char in FONT_TEXT.glyphs for char in text)


@pytest.mark.parametrize("char", SPANISH_CAPITALS + "¿¡")
def test_the_spanish_letters_are_drawn(char: str) -> None:
    assert FONT_TEXT.supports(char)
    assert FONT_TEXT.pixels(char)


@pytest.mark.parametrize("char", SPANISH_CAPITALS)
def test_an_accented_capital_is_a_capital_under_its_mark(char: str) -> None:
    """The letter under the mark is at least 6 rows tall (the plain capitals are 7, a
    small letter would be 5) and sits on the capitals' baseline; the mark is above it,
    a blank row or none between."""
    rows = FONT_TEXT.glyphs[char]
    lit = [y for y, row in enumerate(rows) if "#" in row]
    base = unicodedata.normalize("NFD", char)[0]
    base_rows = FONT_TEXT.glyphs[base]
    base_lit = [y for y, row in enumerate(base_rows) if "#" in row]
    assert max(lit) == max(base_lit) == FONT_TEXT.height - 1  # the same baseline
    assert len(base_lit) == 7
    # the letter: the rows from the baseline up to the first blank row or the mark's
    letter = [y for y in lit if y >= 2]
    assert len(letter) >= 6 and letter == list(range(2, FONT_TEXT.height)), (char, rows)
    assert any("#" in rows[y] for y in (0, 1))  # the mark


def test_the_gallery_renders_with_the_font() -> None:
    """Every kind of screen paints (no glyph missing while drawing), and a screen that
    says a word with an accent shows its mark on the line's top row."""
    seen = 0
    for shot in shots():
        content = screen_content(shot.screen)
        image = render_content(content)
        assert image.size == (128, 64)
        seen += any(ch in text for text in content.texts for ch in SPANISH_CAPITALS)
    assert seen > 5


def test_the_font_file_is_read_whole() -> None:
    """The PCF file read by Pillow gives the printable ASCII capitals, digits and the
    Latin-1 capitals; each glyph is 8 rows of 5 columns."""
    from controller.render.pixelfont import find_panel_font

    glyphs = load_pcf_glyphs(find_panel_font())
    for char in "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:.,?!/()+-=" + SPANISH_CAPITALS + "·":
        assert char in glyphs, char
        assert len(glyphs[char]) == 8 and all(len(row) == 5 for row in glyphs[char])
