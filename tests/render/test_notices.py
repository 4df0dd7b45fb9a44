"""Every kind of notice has words, per seat where the words depend on the seat."""

from __future__ import annotations

import enum
import typing

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
)
from controller.render.notices import alert_text, notice_text
from controller.render.screen import plain

EXAMPLES: dict[type, Notice] = {
    Refusal: Refusal(RefusalCode.NOT_YOUR_TURN),
    DealStarted: DealStarted(2, dealer_reads=True),
    NotTheDealer: NotTheDealer(2),
    CardAlreadyRead: CardAlreadyRead(Card.from_str("7E")),
    CardInAnotherHand: CardInAnotherHand(Card.from_str("1B")),
    Scored: Scored(3, 1, Reason.TRUCO),
    GameWon: GameWon(0, (30, 12)),
    AskConfirm: AskConfirm("undo"),
    ActionUndone: ActionUndone("1 play 1B"),
    RecordDamaged: RecordDamaged(12),
    RefereeCalled: RefereeCalled(1),
    PanelMissingAt: PanelMissingAt(2),
    SeatTest: SeatTest(button="real_envido"),
}


def every_notice() -> list[Notice]:
    out: list[Notice] = []
    for kind in typing.get_args(Notice):
        if issubclass(kind, enum.Enum):
            out.extend(kind)
        else:
            out.append(EXAMPLES[kind])  # a new dataclass kind needs an example here
    return out


def test_every_kind_of_notice_has_words_that_fit_the_font() -> None:
    for notice in every_notice():
        for seat in range(6):
            text = notice_text(notice, seat)
            assert text and plain(text), notice


def test_words_that_depend_on_the_seat() -> None:
    scored = Scored(2, 0, Reason.ENVIDO, best=(2, 31))
    assert notice_text(scored, 0) == "+2 nosotros: envido (31 del asiento 2)"
    assert notice_text(scored, 3) == "+2 ellos: envido (31 del asiento 2)"
    deal = DealStarted(1, dealer_reads=True)
    assert notice_text(deal, 1) == "Repartís vos: tocá cada carta"
    assert notice_text(deal, 0) == "Reparte el asiento 1: toca cada carta"
    assert notice_text(DealStarted(1, dealer_reads=False), 1) == "Repartiendo: tocá tus cartas"
    assert notice_text(RefereeCalled(2), 2) == "Llamaste al árbitro: esperalo"
    assert notice_text(RefereeCalled(2), 3) == "El asiento 2 llamó al árbitro"


def test_link_notices_are_spanish() -> None:
    assert notice_text(LinkNotice.UNPLUGGED, 0) == "Lector desconectado: reconectando..."
    assert notice_text(LinkNotice.READER_MISSING, 0) == "No hay lector: revisá el cable"
    assert notice_text(Refusal(RefusalCode.UNKNOWN_CARD), 0) == RefusalCode.UNKNOWN_CARD.message


def test_a_seats_faults_say_to_call_the_owner_and_fit_the_strip() -> None:
    """Issue 49: a fault's line tells the player to call the owner; its short form (the
    strip's place, while the deal is read) fits the panel's width."""
    from controller.render.screen import fit_text

    for fault in SeatFault:
        assert notice_text(fault, 0).endswith(": avisá al encargado"), fault
        short = alert_text(fault)
        assert fit_text([short]) == plain(short), short
    assert notice_text(SeatFault.READER_MISSING, 0) == "Sin lector: avisá al encargado"
    assert notice_text(PanelMissingAt(2), 0) == "Asiento 2 sin pantalla: avisá al encargado"
    assert fit_text([alert_text(PanelMissingAt(5))]) == plain("Asiento 5 sin pantalla")


def test_the_seat_test_names_buttons_and_cards_as_players_do() -> None:
    assert notice_text(SeatTest(button="truco"), 0) == "Botón: truco"
    assert notice_text(SeatTest(button="no_quiero"), 0) == "Botón: no quiero"
    assert notice_text(SeatTest(card=Card.from_str("7E")), 0) == "7 de espada"
    assert notice_text(SeatTest(card=Card.from_str("12C")), 0) == "12 de copa"
    assert plain(notice_text(SeatTest(button="truco"), 0)) == "BOTÓN: TRUCO"
