"""Entrants: validation, ids, the seeding order, and the organiser's spreadsheet (CSV as
Spanish Excel saves it: ``;``, a BOM, CRLF) with its refusals naming the line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.tournament.competition.entrants import (
    is_topic_safe,
    new_entrant_id,
    parse_entrants_csv,
    seed_order,
    validate_entrant,
)
from controller.tournament.competition.errors import EntrantsCsvError, InvalidEntrant
from controller.tournament.competition.model import CompetitionError, Entrant, Player

EXCEL = (
    "nombre;jugador1;jugador2;club;socio1;socio2;cabeza\r\n"
    "Los del Fondo;Ana Pérez;Beto Ruiz;Sportivo Peñarol;1021;;2\r\n"
    '"Las Pardas; de Boedo";Caro;Dani;;;;\r\n'
    "\r\n"
    "El Ñandú;Eugenio;Fermín;Club Atlético;7;8;1\r\n"
)


def test_excel_in_spanish_with_a_bom() -> None:
    text = ("\ufeff" + EXCEL).encode("utf-8").decode("utf-8")
    got = parse_entrants_csv(text, team_size=2)
    assert [(e.id, e.name, e.club, e.seed) for e in got] == [
        ("e01", "Los del Fondo", "Sportivo Peñarol", 2),
        ("e02", "Las Pardas; de Boedo", None, None),
        ("e03", "El Ñandú", "Club Atlético", 1),
    ]
    assert got[0].players == (Player("Ana Pérez", "1021"), Player("Beto Ruiz", None))
    assert [e.id for e in seed_order(got)] == ["e03", "e01", "e02"]


def test_english_headers_commas_no_bom_and_numbering_after_existing() -> None:
    text = "Name,Player 1,Member1,Seed\nSolo Uno,Ana,55,\nSolo Dos,Beto,,3\n"
    got = parse_entrants_csv(text, team_size=1, existing_ids=["e01", "e07"])
    assert [(e.id, e.name, e.players, e.seed) for e in got] == [
        ("e08", "Solo Uno", (Player("Ana", "55"),), None),
        ("e09", "Solo Dos", (Player("Beto"),), 3),
    ]


def test_accents_and_case_in_the_header() -> None:
    got = parse_entrants_csv("NOMBRE;Jugador1;Jugador2;Jugador3;Cabeza de serie\nT;a;b;c;1", 3)
    assert [p.name for p in got[0].players] == ["a", "b", "c"]


H = "nombre;jugador1;jugador2\n"
S = "nombre;jugador1;jugador2;cabeza\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "El archivo está vacío"),
        (H + "A;x;y\nB;x;y\n;z;w\n", "línea 4: falta el nombre del equipo"),
        (H + "A;x;y\n a ;z;w\n", "línea 3: el equipo 'a' ya está en la línea 2"),
        (H + "A;x\n", "línea 2: A: tiene 1 jugador y en este torneo cada equipo tiene 2"),
        (S + "A;x;y;uno\n", "línea 2: la cabeza de serie es un número"),
        (S + "A;x;y;1\nB;z;w;1\n", "línea 3: la cabeza de serie 1 ya está en la línea 2"),
        ("nombre;jugadores\nA;x\n", "línea 1: no conozco la columna 'jugadores'"),
        ("jugador1;jugador2\nx;y\n", "línea 1: falta la columna nombre"),
        ("nombre;nombre;jugador1\n", "línea 1: la columna 'nombre' está dos veces"),
        (H + "A;x;y;z\n", "línea 2: tiene más columnas que el encabezado"),
        ("nombre;jugador1;socio2\nA;x;9\n", "línea 2: A tiene el socio 2 pero no el jugador 2"),
    ],
)
def test_bad_lines_say_which_and_why(text: str, message: str) -> None:
    with pytest.raises(EntrantsCsvError) as raised:
        parse_entrants_csv(text, team_size=2)
    assert str(raised.value).startswith(message)
    assert isinstance(raised.value, CompetitionError)
    assert "\n" not in str(raised.value)


def test_validation() -> None:
    ok = Entrant("e01", "Los del Fondo", (Player("Ana"), Player("Beto")))
    assert validate_entrant(ok) is ok
    with pytest.raises(InvalidEntrant, match="jugador 2"):
        validate_entrant(Entrant("e01", "X", (Player("Ana"), Player(" "))))
    with pytest.raises(InvalidEntrant, match="cabeza de serie"):
        validate_entrant(Entrant("e01", "X", (Player("Ana"),), seed=0))
    with pytest.raises(InvalidEntrant, match="4"):
        validate_entrant(Entrant("e01", "X", tuple(Player(str(i)) for i in range(4))))


@settings(max_examples=200)
@given(st.text(max_size=70))
def test_topic_safe_ids(text: str) -> None:
    safe = is_topic_safe(text)
    assert safe == (
        0 < len(text) <= 64
        and text[0].isascii()
        and text[0].isalnum()
        and all(c.isascii() and (c.isalnum() or c in "_.-") for c in text)
    )


def test_new_ids() -> None:
    assert new_entrant_id([]) == "e01"
    assert new_entrant_id(["e01", "e02"]) == "e03"
    assert new_entrant_id(["e99"]) == "e100"
    assert is_topic_safe(new_entrant_id(["e99"]))
