"""From the table's state to what each seat's display shows."""

from __future__ import annotations

from ..engine import Kind
from ..render.screen import SeatScreen
from .controls import MenuItem, Mode
from .table import Phase, Table

__all__ = ["pad_prompt", "screen_for"]

_NAMES = {
    Kind.TRUCO: "truco",
    Kind.RETRUCO: "retruco",
    Kind.VALE_CUATRO: "vale cuatro",
    Kind.ENVIDO: "envido",
    Kind.REAL_ENVIDO: "real envido",
    Kind.FALTA_ENVIDO: "falta envido",
    Kind.FLOR: "flor",
    Kind.CONTRAFLOR: "contraflor",
    Kind.CONTRAFLOR_AL_RESTO: "al resto",
    Kind.CON_FLOR_ME_ACHICO: "me achico",
    Kind.QUIERO: "quiero",
    Kind.NO_QUIERO: "no quiero",
    Kind.SON_BUENAS: "son buenas",
    Kind.MAZO: "mazo",
}


def pad_prompt(table: Table, seat: int) -> str | None:
    """What the seat's pad is in the middle of: a menu, a number, cards to show."""
    inp = table.inputs[seat]
    if inp.mode is Mode.MENU:
        entry = inp.entry
        name = (
            entry.value if isinstance(entry, MenuItem) else _NAMES.get(entry, "?") if entry else "?"
        )
        return f"elegir: {name}?"
    if inp.mode is Mode.NUMBER:
        return f"declarar {inp.number}?"
    if inp.mode is Mode.SHOW:
        return "mostrar: " + (" ".join(str(c) for c in inp.shown) or "toque")
    telling = table.game.telling
    if telling is not None and telling.next_seat == seat:
        return f"tengo {inp.number}? Q si"
    return None


def screen_for(table: Table, seat: int) -> SeatScreen:
    message = table.message(seat)
    alert = None if message else table.alert(seat)
    return SeatScreen(
        view=table.game.view(seat),
        message=message.text if message else alert,
        refusal=bool(message and message.refusal) or alert is not None,
        prompt=pad_prompt(table, seat),
        dealing=table.phase is Phase.DEALING,
    )
