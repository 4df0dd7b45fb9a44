"""How the desk's English (a record's check, the seal's verdict) reads in Spanish for the
organiser: the pages, the terminal board and the organiser's notes say it this way;
the logs and the exports keep the English the checks give."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["count_of", "detail_text"]


def count_of(n: int, one: str, many: str) -> str:
    """``n`` and its noun in the number it takes: "1 línea", "3 líneas", "0 líneas"."""
    return f"{n} {one if n == 1 else many}"


#: What the desk and the seal say of a record (English in the logs and the exports), as
#: the organiser reads it on the pages: ``(pattern, Spanish)``, tried in order.
_DETAILS: Final = (
    (r"line (\d+): ", r"línea \1: "),
    (r"no line verifies with this key: sealed with another key",
     "ninguna línea verifica con la clave de la mesa: sellado con otra clave"),
    (r"seal tag does not match: the line was changed, or lines before it removed or moved",
     "el sello no coincide: la línea se cambió, o se sacaron o movieron líneas anteriores"),
    (r"seal tag changed \(the line's text is as sealed\)",
     "se cambió el sello de la línea (el texto está como se selló)"),
    (r"no seal tag: a line added here, or its tag removed",
     "línea sin sello: agregada, o le sacaron el sello"),
    (r"line moved: it was sealed as line (\d+)", r"línea movida: se selló como la línea \1"),
    (r"seal line changed", "se cambió la línea del sello"),
    (r"line changed", "línea cambiada"),
    (r"malformed seal (line|tag)", "sello mal formado"),
    (r"text after the seal line", "hay texto después del sello"),
    (r"the record carries no seal", "el registro no tiene sello"),
    (r"an old v1 seal: it does not name the tournament and table",
     "un sello viejo (v1): no nombra el torneo ni la mesa"),
    (r"sealed for match (\S+), sent as (\S+)", r"sellado para el partido \1, enviado como \2"),
    (r"sealed for tournament (\S+), sent as (\S+)", r"sellado para el torneo \1, enviado como \2"),
    (r"sealed for table (\S+), sent as (\S+)", r"sellado para la mesa \1, enviada como \2"),
    (r"sealed for game (\S+), sent as (\S+)", r"sellado para la partida \1, enviada como \2"),
    (r"(\S+) is not a table of this tournament", r"\1 no es una mesa del torneo"),
    (r"the record does not replay", "el registro no se puede reproducir"),
    (r"the record ends before the game was won", "el registro termina antes de ganarse el partido"),
    (r"the table reported (\d+)-(\d+)", r"la mesa informó \1-\2"),
    (r"(\S+) is gone from the records folder", r"\1 ya no está en la carpeta de registros"),
    (r"(\S+) changed on disk after it was collected",
     r"\1 cambió en el disco después de recibido"),
    (r"a different record of this game came as (\S+)",
     r"llegó otro registro distinto de esta partida: \1"),
    (r"the table never announced this game on its events",
     "la mesa nunca anunció esta partida en sus eventos"),
    (r"the table had sent a record of this game already",
     "la mesa ya había mandado un registro de esta partida"),
    (r"the table's events never said this game was won",
     "los eventos de la mesa nunca dijeron que se ganó esta partida"),
    (r"the record's statement (\d+) \((.*?)\) is not what the table's events said \((.*?)\)",
     r"la jugada \1 del registro (\2) no es la que dijeron los eventos de la mesa (\3)"),
    (r"the table's events said (.*?), which the record does not have",
     r"los eventos de la mesa dijeron \1, que el registro no tiene"),
    (r"the record's deals are not the ones the table's events said",
     "los repartos del registro no son los que dijeron los eventos de la mesa"),
    (r"the table's events ended (\d+)-(\d+), won by team (\S+)",
     r"los eventos de la mesa terminaron \1-\2, ganó el equipo \3"),
    (r"held: its events reached the desk up to (\d+) s after they were played, more than a "
     r"resend explains \((\d+) s\)",
     r"retenida: sus eventos llegaron a la mesa de control hasta \1 s después de jugarse, más "
     r"de lo que explica un reenvío (\2 s)"),
    (r"held: its (\d+) hands reached the desk in (\S+) s, faster than a table plays them "
     r"\((\d+) s a hand\)",
     r"retenida: sus \1 manos llegaron a la mesa de control en \2 s, más rápido de lo que se "
     r"juegan (\3 s por mano)"),
    (r"other house rules: ", "otras reglas: "),
    (r"at rest: ", "guardado: "),
    (r"(\d+) lines\b", r"\1 líneas"),
)  # fmt: skip


def detail_text(text: str) -> str:
    """A record's detail (the desk's English) in Spanish for the pages; what it does not
    know stays as it is."""
    for pattern, spanish in _DETAILS:
        text = re.sub(pattern, spanish, text)
    return text
