"""The views' logic without a browser: what the desk asks for when a round should
close, the order of what needs attention, the bracket of a big knockout cut into
pages, and every text from an entrant escaped in every view."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from controller.tournament.competition.model import (
    AssignTable,
    Entrant,
    Format,
    FormatSpec,
    Player,
    Register,
    Start,
    Tournament,
)
from controller.tournament.competition.tournament import apply
from controller.tournament.desk.pages import (
    bracket_page,
    desk_view,
    pairings_page,
    projector_page,
    sheets_page,
    standings_page,
)
from controller.tournament.desk.pages.bracket import bracket_columns, bracket_slides
from controller.tournament.desk.pages.desk import ATTENTION_ORDER

from .scenes import HOSTILE, Run, entrants, heard_desk, knockout_16, swiss_round


def online(tables: list[str]) -> dict[str, object]:
    return {
        "broker": {"connected": True},
        "tables": [{"table": x, "online": True, "refusals": []} for x in tables],
        "results": [],
    }


def kinds(view: dict[str, object]) -> list[str]:
    return [a["kind"] for a in view["attention"]]  # type: ignore[attr-defined]


def test_a_round_all_decided_asks_to_be_closed_when_it_is_not() -> None:
    run = Run("Copa", FormatSpec(Format.SWISS, best_of=3, rounds=3), entrants(8))
    for k, m in enumerate(run.pair()):
        run.play(m.id, f"mesa{k + 1:02d}", "00")
    assert run.t.round in run.t.closed  # the fold closed it with its last result
    assert "undecided" not in kinds(desk_view(run.t, online(["mesa01"])))
    reopened = replace(run.t, closed=frozenset())  # a round left open
    view = desk_view(reopened, online(["mesa01"]))
    assert [a["text"] for a in view["attention"]] == [
        "Ronda 1: todos los partidos terminaron; cerrá la ronda para emparejar la siguiente."
    ]


def test_the_stragglers_of_a_round_are_listed() -> None:
    run = Run("Copa", FormatSpec(Format.SWISS, best_of=3, rounds=3), entrants(8))
    matches = run.pair()
    for k, m in enumerate(matches[:2]):
        run.play(m.id, f"mesa{k + 1:02d}", "00")
    run.play(matches[2].id, "mesa03", "01")
    view = desk_view(run.t, online(["mesa01", "mesa02", "mesa03", "mesa04"]))
    assert "undecided" not in kinds(view)  # half the round still playing: nothing to say
    run.play(matches[3].id, "mesa04", "11")  # three of four decided: the fourth holds it up
    view = desk_view(run.t, online(["mesa01", "mesa02", "mesa03", "mesa04"]))
    assert [a["text"] for a in view["attention"]] == [
        "r1-m03 en mesa03 sin definir (1-1, chico 3 de 3): el resto de la ronda terminó"
    ]


def test_attention_is_sorted_most_urgent_first(tmp_path: Path) -> None:
    t = swiss_round(44, 3, 20)
    desk = heard_desk(tmp_path / "d", t, offline=("mesa09", "mesa04"), calls={"mesa12": "x"},
                      tampered=("mesa05",))  # fmt: skip
    snap = desk.snapshot()
    snap["tables"][0]["rules_problems"] = ["target=15, not 30"]  # mesa01
    view = desk_view(t, snap, audit_ok=False)
    got = kinds(view)
    assert got == sorted(got, key=ATTENTION_ORDER.index)
    assert got == ["call", "offline", "audit", "flagged", "rules", "waiting", "waiting"]
    # mesa09's match is decided: the table is offline, but no match waits on it
    assert "mesa09" not in " ".join(a["text"] for a in view["attention"])
    assert "mesa09: FUERA DE LÍNEA" in view["offline"]
    lost = desk_view(t, snap | {"broker": {"connected": False}})
    assert lost["broker_lost"].startswith("SIN CONEXIÓN CON EL BROKER")
    assert "offline" not in kinds(lost)  # nothing is known of the tables without the broker


def test_a_key_conflict_comes_before_every_referee_call(tmp_path: Path) -> None:
    """Ten referee calls, then two senders with one table's key: the conflict is first
    on the list (issue 43: it came eleventh)."""
    t = swiss_round(44, 3, 20)
    calls = {f"mesa{n:02d}": "x" for n in range(1, 11)}
    desk = heard_desk(tmp_path / "d", t, calls=calls)
    notes = [{"what": "key-conflict", "text": "mesa03: alguien más tiene la clave",
              "table": "mesa03", "game": None},
             {"what": "assignment-differs", "text": "mesa04 tomó otra asignación",
              "table": "mesa04", "game": None}]  # fmt: skip
    view = desk_view(t, desk.snapshot(), notes=notes)
    got = kinds(view)
    assert got[:2] == ["conflict", "conflict"] and got.count("call") == 10
    assert view["attention"][0]["text"] == "mesa03: alguien más tiene la clave"
    assert view["attention"][0]["rekey"] == "mesa03"  # its «cambiar la clave» button
    assert "rekey" not in view["attention"][1]  # someone writes to mesa04: not its key
    assert got == sorted(got, key=ATTENTION_ORDER.index)


def test_a_bracket_of_64_is_cut_into_pages() -> None:
    t = Tournament("Copa grande")
    for e in entrants(64):
        t = apply(t, Register(e))
    t = apply(t, Start(FormatSpec(Format.KNOCKOUT, best_of=1)))
    columns, third = bracket_columns(t)  # nothing paired yet: the bracket's empty shape
    assert [len(c.matches) for c in columns] == [32, 16, 8, 4, 2, 1] and third is None
    assert [c.label for c in columns][-3:] == ["Cuartos de final", "Semifinal", "Final"]
    pages = bracket_slides(columns, 8)
    assert [[len(c.matches) for c in p] for p in pages] == [[8, 4, 2, 1]] * 4 + [[4, 2, 1]]
    run = Run("Copa", FormatSpec(Format.KNOCKOUT, best_of=1), entrants(64))
    run.pair()
    page = projector_page(run.t)
    assert page.count('<section class="slide">') == 5
    assert len(re.findall(r'data-match="r1-m\d\d"', page)) == 32  # each first-round match once
    print_pages = bracket_page(run.t).count('<section class="slide">')
    assert print_pages == 3  # 16 a sheet: two halves, then where they meet


def test_byes_go_through() -> None:
    run = Run("Copa", FormatSpec(Format.KNOCKOUT, best_of=3), entrants(6))
    first = run.pair()
    assert sum(m.pairing.away is None for m in first) == 2
    columns, _ = bracket_columns(run.t)
    # the two top seeds' byes already stand in the semifinals
    assert [f for pair in columns[1].feeds for f in pair if f is not None] == ["e01", "e02"]
    assert "pasa libre" in pairings_page(run.t)
    assert sheets_page(run.t).count('<section class="sheet"') == 2  # no sheet for a bye


@pytest.mark.parametrize(
    "build", [knockout_16, lambda: swiss_round(24, 4, 8)], ids=["knockout", "swiss"]
)
def test_every_view_escapes_what_entrants_wrote(build: object) -> None:
    t: Tournament = build()  # type: ignore[operator]
    evil = Entrant("e99", "</title><script>alert(1)</script>", (Player('"><b>x</b>'),),
                   club="<style>*{display:none}</style>")  # fmt: skip
    t = replace(t, name="<i>Copa</i>", entrants=(*t.entrants, evil))
    for page in (projector_page(t), pairings_page(t), standings_page(t), bracket_page(t),
                 sheets_page(t)):  # fmt: skip
        assert "<script>alert" not in page and "<b>x</b>" not in page and "<i>Copa" not in page
        assert "<img" not in page and HOSTILE not in page
        assert "&lt;i&gt;Copa&lt;/i&gt;" in page


def test_what_the_competition_would_not_count_is_listed_once(tmp_path: Path) -> None:
    t = knockout_16()
    desk = heard_desk(tmp_path / "d", t, tampered=("mesa05",))
    notes = [
        {"what": "wrong-table", "text": "mesa07-g001: mesa07 jugó r2-m04, que está asignado "
         "a mesa04", "match": "r2-m04", "table": "mesa07", "game": "mesa07-g001"},
        {"what": "record-not-counted", "text": "mesa05-g009 (r2-m04): no se cuenta",
         "match": "r2-m04", "table": "mesa05", "game": "mesa05-g009"},  # the desk says it
    ]  # fmt: skip
    view = desk_view(t, desk.snapshot(), notes=notes)
    flagged = [a["text"] for a in view["attention"] if a["kind"] == "flagged"]
    assert len(flagged) == 2
    assert flagged[0].startswith("Registro mesa05-g009 (mesa05): ADULTERADO")
    assert flagged[1] == notes[0]["text"]


def test_before_the_start_every_view_says_so() -> None:
    t = Tournament("copa")
    for e in entrants(5):
        t = apply(t, Register(e))
    view = desk_view(t, online(["mesa01"]))
    assert view["matches"] == [] and view["round"] == "Sin emparejar"
    assert "El torneo todavía no empezó." in projector_page(t)
    assert "El torneo todavía no empezó." in bracket_page(t)
    assert "Todavía no hay posiciones" in standings_page(t)
    assert "La ronda todavía no está emparejada." in pairings_page(t)
    assert "No hay partidos emparejados." in sheets_page(t)
    swiss = apply(t, Start(FormatSpec(Format.SWISS)))
    assert "no tiene llave" in bracket_page(swiss)


def test_a_group_stage_prints_one_table_per_group() -> None:
    from .scenes import groups_16

    t = groups_16()
    page = standings_page(t)
    assert re.findall(r"<section><h2>(Grupo [A-D])</h2>", page) == [
        "Grupo A", "Grupo B", "Grupo C", "Grupo D"]  # fmt: skip
    assert len(re.findall(r'<tr data-entrant="e\d\d">', page)) == 16
    assert "Buchholz" not in page  # only a Swiss tournament has it


def test_the_desk_names_the_champion_at_the_end() -> None:
    from .scenes import knockout_finished

    t = knockout_finished(8)
    champion = t.entrant(t.match("final").result.winner or "")
    view = desk_view(t, online(["mesa01"]))
    assert view["summary"].endswith(f"· torneo terminado, campeón: {champion.name}")
    assert view["round"] == "Final" and "undecided" not in kinds(view)


def test_the_row_follows_the_tables_first_deal() -> None:
    """A match at its table says "jugando" as soon as the table deals its first chico
    (the table's live game, not one of its finished ones), not "por empezar"."""
    run = Run("Copa", FormatSpec(Format.SWISS, best_of=3, rounds=2), entrants(4))
    m = run.pair()[0]
    t = run.do(AssignTable(m.id, "mesa01"))
    snapshot = online(["mesa01"])
    table = snapshot["tables"][0]  # type: ignore[index]
    row = next(r for r in desk_view(t, snapshot)["matches"] if r["match"] == m.id)
    assert (row["status"], row["status_code"]) == ("por empezar", "assigned")
    table |= {"game": "mesa01-g007", "hand": 3, "score": [4, 2], "games": ["mesa01-g006"]}
    snapshot["tables"] = [table]
    row = next(r for r in desk_view(t, snapshot)["matches"] if r["match"] == m.id)
    assert (row["status"], row["status_code"]) == ("jugando", "playing")
    assert row["live"] == "4-2 · mano 3"
    table["games"] = ["mesa01-g006", "mesa01-g007"]  # that game is over, the next not dealt
    row = next(r for r in desk_view(t, snapshot)["matches"] if r["match"] == m.id)
    assert row["status"] == "por empezar"


def test_every_view_shows_the_display_name() -> None:
    from controller.tournament.competition.model import SetTitle

    t = apply(knockout_16(), SetTitle("Abierto de Boedo"))
    for page in (projector_page(t), standings_page(t), pairings_page(t, 1), bracket_page(t),
                 sheets_page(t, 1)):  # fmt: skip
        assert "Abierto de Boedo" in page
    assert desk_view(t, online(["mesa01"]))["title"] == "Abierto de Boedo"
