"""A record's check, as the organiser reads it: the desk's English in Spanish on the
pages, the board and the organiser's notes; what the wording does not know stays."""

from __future__ import annotations

import pytest

from controller.tournament.desk.wording import detail_text


@pytest.mark.parametrize(
    "english, spanish",
    [
        ("line 1: no line verifies with this key: sealed with another key",
         "línea 1: ninguna línea verifica con la clave de la mesa: sellado con otra clave"),
        ("sealed for match r1-m01, sent as r1-m02",
         "sellado para el partido r1-m01, enviado como r1-m02"),
        ("171 lines; the table reported 15-3",
         "171 líneas; la mesa informó 15-3"),
        ("at rest: mesa01-g001.truco changed on disk after it was collected",
         "guardado: mesa01-g001.truco cambió en el disco después de recibido"),
        ("something new", "something new"),
    ],
)  # fmt: skip
def test_a_records_detail_reads_in_spanish(english: str, spanish: str) -> None:
    assert detail_text(english) == spanish


def test_the_checks_against_the_tables_events_read_in_spanish() -> None:
    from controller.tournament.desk.wording import detail_text

    assert detail_text("the table never announced this game on its events") == (
        "la mesa nunca anunció esta partida en sus eventos"
    )
    assert (
        detail_text(
            "the record's statement 12 (0 play 7e) is not what the table's events said (0 mazo)"
        )
        == "la jugada 12 del registro (0 play 7e) no es la que dijeron los eventos de la mesa"
        " (0 mazo)"
    )
    assert detail_text("the table's events ended 15-3, won by team 0") == (
        "los eventos de la mesa terminaron 15-3, ganó el equipo 0"
    )
