"""The organiser's spreadsheet as Excel and LibreOffice save it: UTF-8 with or without a
BOM, Windows-1252 and Latin-1 (older Excel's "CSV"), ``;`` or ``,``; every bad line in
one run; checked against the teams already registered; names with control or
bidirectional characters refused (at import and at registration)."""

from __future__ import annotations

import pytest

from controller.tournament.competition.entrants import (
    check_text,
    decode_sheet,
    parse_entrants_csv,
    read_sheet,
)
from controller.tournament.competition.errors import EntrantsCsvError, UnsafeText
from controller.tournament.competition.model import (
    CloseRound,
    Entrant,
    Format,
    FormatSpec,
    PairRound,
    Player,
    Register,
    Start,
    Walkover,
    Withdraw,
)
from controller.tournament.competition.tournament import apply, replay

ROWS = [
    ("nombre", "jugador1", "jugador2", "club"),
    ("Atlético Güemes", "Begoña", "Iñaki", "Ñandú"),
    ("Los del Fondo", "Ana", "Beto", "Sportivo"),
]


def sheet_bytes(encoding: str, sep: str, bom: bool = False, crlf: bool = True) -> bytes:
    text = ("\r\n" if crlf else "\n").join(sep.join(r) for r in ROWS) + "\r\n"
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode(encoding)


@pytest.mark.parametrize(
    ("encoding", "bom", "read_as"),
    [
        ("utf-8", False, "UTF-8"),
        ("utf-8", True, "UTF-8 con BOM"),
        ("cp1252", False, "Windows-1252"),
        ("latin-1", False, "Windows-1252"),
    ],
)
@pytest.mark.parametrize("sep", [";", ","])
def test_every_way_a_spreadsheet_saves_reads_the_same(
    encoding: str, bom: bool, read_as: str, sep: str
) -> None:
    sheet = read_sheet(sheet_bytes(encoding, sep, bom), team_size=2)
    assert sheet.problems == ()
    assert sheet.encoding == read_as
    assert sheet.delimiter == sep
    assert [
        (e.id, e.name, e.players[0].name, e.players[1].name, e.club) for e in sheet.entrants
    ] == [
        ("e01", "Atlético Güemes", "Begoña", "Iñaki", "Ñandú"),
        ("e02", "Los del Fondo", "Ana", "Beto", "Sportivo"),
    ]


def test_cp1252_letters_beyond_latin1_are_read() -> None:
    # the curly quote and the euro are cp1252's own (0x80-0x9f), Latin-1 has controls there
    data = "nombre;jugador1\r\nLos “Pibes” €;Ana\r\n".encode("cp1252")
    assert parse_entrants_csv(data, 1)[0].name == "Los “Pibes” €"


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ("nombre;jugador1\r\nA;b\r\n".encode("utf-16"), "UTF-16"),
        (b"PK\x03\x04rest of a zip", ".xlsx"),
        (b"nombre;jugador1\r\nA\x81;b\r\n", "ni en Windows-1252"),
        (b"\xef\xbb\xbfnombre;jugador1\r\nA\xe9;b\r\n", "dice ser UTF-8"),
    ],
)
def test_a_sheet_that_cannot_be_read_says_how_to_save_it(data: bytes, says: str) -> None:
    with pytest.raises(EntrantsCsvError) as raised:
        decode_sheet(data)
    text = str(raised.value)
    assert says in text
    assert "CSV UTF-8" in text
    assert "\n" not in text


def test_every_bad_line_is_listed_in_one_run() -> None:
    text = (
        "nombre;jugador1;jugador2;cabeza\n"
        "Uno;a;b;1\n"
        ";c;d;\n"  # line 3: no name
        "Dos;e;;\n"  # line 4: one player
        "Tres;f;g;uno\n"  # line 5: a bad seed
        "uno;h;i;\n"  # line 6: the name of line 2
        "Cuatro;j;k;1\n"  # line 7: the seed of line 2
        "Cinco\x1b[2J;l;m;\n"  # line 8: an escape
        "Seis\u202e;n;o;\n"  # line 9: a right-to-left override
        "Siete;p;q;\n"
    )
    sheet = read_sheet(text, 2)
    assert [p.split(":")[0] for p in sheet.problems] == [
        f"línea {n}" for n in (3, 4, 5, 6, 7, 8, 9)
    ]
    assert "carácter de control (U+001B)" in sheet.problems[5]
    assert "da vuelta el texto (U+202E)" in sheet.problems[6]
    assert "\x1b" not in " ".join(sheet.problems) and "\u202e" not in " ".join(sheet.problems)
    assert [e.name for e in sheet.entrants] == ["Uno", "Siete"]
    with pytest.raises(EntrantsCsvError) as raised:
        parse_entrants_csv(text, 2)
    assert raised.value.problems == sheet.problems
    assert str(raised.value).count(" · ") == 6


def test_the_sheet_is_checked_against_the_teams_registered() -> None:
    registered = [
        Entrant("e01", "Los del Fondo", (Player("x"), Player("y")), seed=1),
        Entrant("e02", "Las Pardas", (Player("z"), Player("w"))),
    ]
    text = "nombre;jugador1;jugador2;cabeza\nLOS  DEL FONDO;a;b;\nNuevos;c;d;1\nOtros;e;f;\n"
    sheet = read_sheet(text, 2, registered)
    assert sheet.problems == (
        "línea 2: el equipo 'LOS DEL FONDO' ya está anotado (e01)",
        "línea 3: la cabeza de serie 1 ya es de Los del Fondo (e01)",
    )
    assert [(e.id, e.name) for e in sheet.entrants] == [("e03", "Otros")]


def test_names_are_cleaned_of_extra_spaces() -> None:
    got = parse_entrants_csv("nombre;jugador1\n  Los   del  Fondo ;  Ana  María \n", 1)
    assert (got[0].name, got[0].players[0].name) == ("Los del Fondo", "Ana María")


@pytest.mark.parametrize(
    "bad", ["\x1b[2J", "\n", "\t", "\x00", "\u202e", "\u2066", "\u200f", "\x85"]
)
def test_registration_refuses_control_and_bidi_characters(bad: str) -> None:
    t = replay("Copa", [])
    for entrant in (
        Entrant("e01", f"Los{bad}Pibes", (Player("Ana"), Player("Beto"))),
        Entrant("e01", "Los Pibes", (Player(f"A{bad}na"), Player("Beto"))),
        Entrant("e01", "Los Pibes", (Player("Ana"), Player("Beto")), club=f"C{bad}"),
    ):
        with pytest.raises(UnsafeText) as raised:
            apply(t, Register(entrant))
        assert bad not in str(raised.value)
    assert check_text("Ñandú “el de acá”", "x") == "Ñandú “el de acá”"


def test_reasons_are_checked_too() -> None:
    players = (Player("a"), Player("b"))
    t = replay(
        "Copa",
        [
            Register(Entrant("e01", "Uno", players)),
            Register(Entrant("e02", "Dos", players)),
            Register(Entrant("e03", "Tres", players)),
            Register(Entrant("e04", "Cuatro", players)),
            Start(FormatSpec(Format.SWISS, rounds=2)),
            PairRound(1),
        ],
    )
    match = t.round_matches(1)[0]
    for action in (
        Walkover(match.id, match.pairing.home, "no vino\x1b[2J"),
        Withdraw("e01", "se fue\u202e"),
        CloseRound(1, "listo\x07"),
    ):
        with pytest.raises(UnsafeText):
            apply(t, action)


def test_the_display_name_is_cleaned_and_shown_instead_of_the_id() -> None:
    from controller.tournament.competition.codec import action_from_json, action_to_json
    from controller.tournament.competition.errors import InvalidEntrant
    from controller.tournament.competition.model import SetTitle

    t = replay("copa-boedo", [SetTitle("  Abierto de Truco   de Boedo ")])
    assert (t.name, t.display_name) == ("copa-boedo", "Abierto de Truco de Boedo")
    action = SetTitle("Copa “Ñandú”")
    assert action_from_json(action_to_json(action)) == action
    assert apply(t, SetTitle("")).display_name == "copa-boedo"
    with pytest.raises(UnsafeText):
        apply(t, SetTitle("Copa\u202e"))
    with pytest.raises(InvalidEntrant):
        apply(t, SetTitle("x" * 81))


def test_a_round_is_paired_again_by_hand_until_something_is_played() -> None:
    from controller.tournament.competition.errors import PairingsFixed
    from controller.tournament.competition.model import AssignTable, Pairing

    players = (Player("a"), Player("b"))
    t = replay(
        "Copa",
        [
            *(Register(Entrant(f"e0{i}", f"Equipo {i}", players)) for i in range(1, 5)),
            Start(FormatSpec(Format.SWISS, rounds=2)),
            PairRound(1),
            AssignTable("r1-m01", "mesa01"),
        ],
    )
    by_hand = (Pairing("e01", "e02"), Pairing("e03", "e04"))
    again = apply(t, PairRound(1, by_hand))
    assert [m.pairing for m in again.round_matches(1)] == list(by_hand)
    assert again.round == 1 and all(m.table is None for m in again.round_matches(1))
    played = apply(again, Walkover("r1-m01", "e01", "no vino"))
    with pytest.raises(PairingsFixed, match="ya tiene resultados"):
        apply(played, PairRound(1, (Pairing("e01", "e03"), Pairing("e02", "e04"))))
