"""The exports as a Spanish spreadsheet opens them (read back with Python's csv in
Excel's dialect, ``;``), formula injection escaped, the swiss bye's score as the
standings count it, and the files on the disk equal to what the page serves."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from controller.tournament.competition.model import (
    Entrant,
    Format,
    FormatSpec,
    PairRound,
    Player,
    Register,
    Start,
    Tournament,
    Walkover,
)
from controller.tournament.competition.tournament import apply, replay
from controller.tournament.desk.exports import (
    EXCEL_HEADERS,
    EXCEL_WORDS,
    EXPORT_NAMES,
    MATCH_FIELDS,
    STANDING_FIELDS,
    export_text,
    match_rows,
    write_exports,
)

from .scenes import knockout_16


class SpanishExcel(csv.excel):
    delimiter = ";"


def read_as_excel(data: bytes) -> list[list[str]]:
    assert data.startswith(b"\xef\xbb\xbf"), "a BOM, or Excel shows mojibake"
    text = data.decode("utf-8-sig")
    assert "\n" not in text.replace("\r\n", ""), "every line ends in CRLF"
    return list(csv.reader(io.StringIO(text, newline=""), dialect=SpanishExcel))


def hostile_swiss() -> Tournament:
    players = (Player("Begoña"), Player("Iñaki"))
    names = ['=HYPERLINK("http://x";"clic")', "+54 Truco", "-Los Menos", "@Arroba", "Atlético"]
    return replay(
        "Copa",
        [
            *(Register(Entrant(f"e{i:02d}", n, players)) for i, n in enumerate(names, start=1)),
            Start(FormatSpec(Format.SWISS, best_of=3, rounds=2)),
            PairRound(1),
        ],
    )


def test_every_export_opens_in_columns_with_its_accents() -> None:
    t = knockout_16()
    for stem, fields in (("standings", STANDING_FIELDS), ("matches", MATCH_FIELDS)):
        rows = read_as_excel(export_text(f"{stem}.excel.csv", t).encode("utf-8"))
        headers = tuple(EXCEL_HEADERS[f] for f in fields)
        assert tuple(rows[0]) == headers, "one column a field, not everything in column A"
        assert len(set(headers)) == len(headers)
        assert all(len(r) == len(fields) for r in rows)
        plain = list(csv.reader(io.StringIO(export_text(f"{stem}.csv", t))))
        assert len(plain) == len(rows)


def test_booleans_are_si_and_no() -> None:
    t = knockout_16()
    rows = read_as_excel(export_text("games.excel.csv", t).encode("utf-8"))
    counted = rows[0].index("contado")
    assert {r[counted] for r in rows[1:]} <= {"sí", "no"} and rows[1:]
    plain = list(csv.DictReader(io.StringIO(export_text("games.csv", t))))
    assert {r["counted"] for r in plain} <= {"true", "false"}


def test_the_spreadsheet_speaks_spanish() -> None:
    # issue 42: rank, name, champion, walkover, overridden, intact beside "sí"
    t = knockout_16()
    for stem in ("standings", "matches", "games"):
        rows = read_as_excel(export_text(f"{stem}.excel.csv", t).encode("utf-8"))
        english = set(EXCEL_WORDS["status"]) | set(EXCEL_WORDS["verdict"]) | {
            "rank", "name", "status", "match", "round", "counted", "verdict"}  # fmt: skip
        cells = {c for r in rows for c in r}
        assert not cells & (english - {"walkover"}), (stem, cells & english)
    standings_rows = read_as_excel(export_text("standings.excel.csv", t).encode("utf-8"))
    assert standings_rows[0][:3] == ["puesto", "id", "equipo"]
    status = standings_rows[0].index("estado")
    assert {r[status] for r in standings_rows[1:]} <= {
        "campeón", "eliminado", "en competencia", "retirado"}  # fmt: skip


def test_formulas_are_escaped_in_both_csvs_and_numbers_are_not() -> None:
    t = hostile_swiss()
    for name in ("standings.csv", "standings.excel.csv", "matches.csv", "matches.excel.csv"):
        text = export_text(name, t)
        if name.endswith("excel.csv"):
            rows = read_as_excel(text.encode("utf-8"))
        else:
            rows = list(csv.reader(io.StringIO(text)))
        cells = [c for r in rows[1:] for c in r]
        assert not [c for c in cells if c[:1] in ("=", "+", "@")], name
        assert '\'=HYPERLINK("http://x";"clic")' in cells
        assert "'+54 Truco" in cells and "'-Los Menos" in cells and "'@Arroba" in cells
        assert "Atlético" in cells
    read = list(csv.DictReader(io.StringIO(export_text("standings.csv", t))))
    assert {r["points_diff"] for r in read} == {"0"}


def test_the_swiss_bye_is_exported_as_the_standings_count_it() -> None:
    t = hostile_swiss()
    bye = next(r for r in match_rows(t) if r["away"] is None)
    assert (bye["status"], bye["games_home"], bye["games_away"]) == ("bye", 2, 0)
    standing = next(
        r
        for r in csv.DictReader(io.StringIO(export_text("standings.csv", t)))
        if r["entrant"] == bye["home"]
    )
    assert (standing["won"], standing["games_won"]) == ("1", "2")


def test_a_walkover_is_exported_as_counted() -> None:
    t = hostile_swiss()
    m = t.round_matches(1)[0]
    assert m.pairing.away is not None
    t = apply(t, Walkover(m.id, m.pairing.away, "no vino"))
    row = next(r for r in match_rows(t) if r["match"] == m.id)
    assert (row["status"], row["games_home"], row["games_away"]) == ("walkover", 0, 2)


def test_the_files_on_the_disk_are_the_pages_exports(tmp_path: Path) -> None:
    t = knockout_16()
    paths = write_exports(t, tmp_path)
    assert sorted(p.name for p in paths) == sorted(EXPORT_NAMES)
    for p in paths:
        assert p.read_bytes() == export_text(p.name, t).encode("utf-8")
    # a file changed or lost on the disk is written again; an equal one is left alone
    (tmp_path / "games.csv").write_text("stale", encoding="utf-8")
    (tmp_path / "matches.json").unlink()
    before = (tmp_path / "standings.csv").stat().st_mtime_ns
    write_exports(t, tmp_path)
    assert (tmp_path / "games.csv").read_bytes() == export_text("games.csv", t).encode("utf-8")
    assert (tmp_path / "matches.json").is_file()
    assert (tmp_path / "standings.csv").stat().st_mtime_ns == before
