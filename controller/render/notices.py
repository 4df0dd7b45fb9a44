"""The words of every notice a seat is shown (``controller.notices``), in Rioplatense Spanish.

``notice_text(notice, seat)`` is the only place a notice becomes text: the seat matters
for the ones that say "nosotros" or "ellos", or speak to the dealer. The screen writes the
text in capitals without accents (``controller.render.screen.plain``).
"""

from __future__ import annotations

from ..engine import Action, Kind
from ..engine.results import Reason
from ..notices import (
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

__all__ = ["alert_text", "card_name", "notice_text"]

_FIXED: dict[Notice, str] = {
    LinkNotice.UNPLUGGED: "Lector desconectado: reconectando...",
    LinkNotice.SILENT: "El lector no responde: reconectando...",
    LinkNotice.CONNECTED: "Lector conectado",
    LinkNotice.READER_MISSING: "No hay lector: revisá el cable",
    LinkNotice.ONE_CARD: "Una carta por vez",
    TableNotice.HAND_FULL: "Ya tenés tres cartas",
    TableNotice.INTERNAL_ERROR: "Error interno: repetí",
    TableNotice.CANCELLED: "Cancelado",
    TableNotice.NOTHING_TO_UNDO: "Nada que deshacer",
    TableNotice.OTHER_DECK: "Esa carta es de otro mazo",
    TableNotice.SECOND_RUN: "Otra mesa quiso arrancar: avisá al encargado",
    TableAlert.NO_DISK: "Sin disco: partido en memoria",
    SeatFault.READER_MISSING: "Sin lector: avisá al encargado",
    SeatFault.PAD_STUCK: "Botón trabado: avisá al encargado",
    SeatFault.WRONG_SEAT: "Nodo de otro asiento: avisá al encargado",
    SeatFault.OTHER_DECK: "Carta de otro mazo: avisá al encargado",
}

#: a seat's fault in one short line (the strip's place, while the deal is read)
_FAULT_SHORT = {
    SeatFault.READER_MISSING: "Sin lector: avisá",
    SeatFault.PAD_STUCK: "Botón trabado: avisá",
    SeatFault.WRONG_SEAT: "Nodo cambiado: avisá",
    SeatFault.OTHER_DECK: "Otro mazo: avisá",
}

#: the buttons as their labels say them (the seat test)
_BUTTON_NAMES = {
    "truco": "truco",
    "envido": "envido",
    "real_envido": "real envido",
    "falta_envido": "falta envido",
    "flor": "flor",
    "quiero": "quiero",
    "no_quiero": "no quiero",
    "mazo": "mazo",
}

#: the suits as a player names a card (``7 de espada``)
_SUIT_NAMES = {"E": "espada", "B": "basto", "O": "oro", "C": "copa"}

_REASON = {
    Reason.ENVIDO: "envido",
    Reason.FLOR: "flor",
    Reason.TRUCO: "la mano",
    Reason.MAZO: "al mazo",
    Reason.MAZO_ENVIDO: "mazo sin envido",
    Reason.PENALTY: "penalidad",
}

_ASK = {"undo": "Deshacer? Q del rival", "new-game": "Partido nuevo? Q del rival"}


def alert_text(notice: Notice) -> str:
    """A lasting alert in one short line (the strip's place, when the lines are taken)."""
    match notice:
        case TableAlert.NO_DISK:
            return "Sin disco"
        case RecordDamaged():
            return "Registro dañado"
        case SeatFault():
            return _FAULT_SHORT[notice]
        case PanelMissingAt(seat):
            return f"Asiento {seat} sin pantalla"
    return notice_text(notice, 0)


def card_name(text: str) -> str:
    """A card as a player names it: ``7E`` -> ``7 de espada``."""
    return f"{text[:-1]} de {_SUIT_NAMES.get(text[-1], text[-1])}"


#: an action taken back, in the past (the seat's own: vos; another's: the third person)
_DONE: dict[Kind, tuple[str, str]] = {
    Kind.PLAY: ("jugaste", "jugó"),
    Kind.TRUCO: ("cantaste truco", "cantó truco"),
    Kind.RETRUCO: ("cantaste retruco", "cantó retruco"),
    Kind.VALE_CUATRO: ("cantaste vale cuatro", "cantó vale cuatro"),
    Kind.ENVIDO: ("cantaste envido", "cantó envido"),
    Kind.REAL_ENVIDO: ("cantaste real envido", "cantó real envido"),
    Kind.FALTA_ENVIDO: ("cantaste falta envido", "cantó falta envido"),
    Kind.FLOR: ("cantaste flor", "cantó flor"),
    Kind.CONTRAFLOR: ("cantaste contraflor", "cantó contraflor"),
    Kind.CONTRAFLOR_AL_RESTO: ("cantaste contraflor al resto", "cantó contraflor al resto"),
    Kind.CON_FLOR_ME_ACHICO: ("te achicaste", "se achicó"),
    Kind.QUIERO: ("dijiste quiero", "dijo quiero"),
    Kind.NO_QUIERO: ("dijiste no quiero", "dijo no quiero"),
    Kind.MAZO: ("te fuiste al mazo", "se fue al mazo"),
    Kind.DECLARE: ("dijiste", "dijo"),
    Kind.SON_BUENAS: ("dijiste son buenas", "dijo son buenas"),
    Kind.SHOW: ("mostraste", "mostró"),
}


def _undone(text: str, seat: int) -> str:
    """A record's action line (``1 play 12E``) as a player says it: ``el 1 jugó 12E``,
    ``jugaste 12E`` on the seat's own display; a deal undone: ``el reparto``."""
    try:
        action = Action.from_str(text)
    except ValueError:
        return "el reparto" if text in ("", "None") else "la última jugada"
    own, other = _DONE[action.kind]
    words = own if action.seat == seat else f"el {action.seat} {other}"
    return words + action.objects


def notice_text(notice: Notice, seat: int) -> str:
    """What ``seat``'s display says for ``notice``."""
    fixed = _FIXED.get(notice)
    if fixed is not None:
        return fixed
    match notice:
        case Refusal(code):
            return code.message
        case DealStarted(dealer, dealer_reads):
            if not dealer_reads:
                return "Repartiendo: tocá tus cartas"
            if dealer == seat:
                return "Repartís vos: tocá cada carta"
            return f"Reparte el asiento {dealer}: toca cada carta"
        case NotTheDealer(dealer):
            return f"Reparte el asiento {dealer}"
        case CardAlreadyRead(card):
            return f"{card} ya fue leída"
        case CardInAnotherHand(card):
            return f"{card} ya está en otra mano"
        case Scored(points, team, reason, best, note):
            who = "nosotros" if seat % 2 == team else "ellos"
            detail = ""
            if best is not None:
                detail = f" ({best[1]} del asiento {best[0]})"
            elif note is not None:
                detail = f" ({note})"
            return f"+{points} {who}: {_REASON[reason]}{detail}"
        case GameWon(team, score):
            ours, theirs = score[seat % 2], score[1 - seat % 2]
            if seat % 2 == team:
                return f"Ganamos nosotros: {ours} a {theirs}"
            return f"Ganaron ellos: {theirs} a {ours}"
        case AskConfirm(command):
            return _ASK.get(command, f"{command}? Q del rival")
        case ActionUndone(action):
            return f"Deshecho: {_undone(action, seat)}"
        case RefereeCalled(caller):
            if caller == seat:
                return "Llamaste al árbitro: esperalo"
            return f"El asiento {caller} llamó al árbitro"
        case RecordDamaged(kept):
            return f"Registro dañado: sigue desde la línea {kept}"
        case PanelMissingAt(other):
            return f"Asiento {other} sin pantalla: avisá al encargado"
        case SeatTest(button, card):
            if card is not None:
                return card_name(str(card))
            return f"Botón: {_BUTTON_NAMES.get(button or '', button)}"
    raise ValueError(f"no words for the notice {notice!r}")  # a kind added without words
