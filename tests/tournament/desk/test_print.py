"""The printable views in headless Chromium, and printed by it to PDF: A4 (the bracket
landscape), one score sheet a page, the pairings by table, the standings with their
tie-break columns, every name as text. Screenshots (the sheet as the screen shows it
before printing) to docs/screenshots/ with TRUCO_REGEN_SCREENSHOTS=1."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .browser import SCREENSHOTS, dom, pdf, pdf_pages, screenshot
from .scenes import heard_desk, knockout_16, swiss_round
from .test_desk_page import served

A4 = (595, 842)  # points, portrait
SHEET = (794, 1123)  # A4 at 96 px an inch


def a4(size: tuple[float, float], *, landscape: bool = False) -> bool:
    want = A4[::-1] if landscape else A4
    return abs(size[0] - want[0]) < 2 and abs(size[1] - want[1]) < 2


@pytest.fixture
def knockout(tmp_path: Path):  # type: ignore[no-untyped-def]
    with served(heard_desk(tmp_path / "desk", knockout_16())) as base:
        yield base


def test_the_pairings(knockout: str, tmp_path: Path) -> None:
    page = dom(knockout + "/imprimir/emparejamientos", tmp_path, size=SHEET)
    rows = re.findall(r'<tr data-match="(r2-m0\d)"><td class="t">(mesa0\d)</td>', page)
    assert rows == [("r2-m01", "mesa01"), ("r2-m02", "mesa02"), ("r2-m03", "mesa03"),
                    ("r2-m04", "mesa04")]  # fmt: skip
    assert "Emparejamientos · Cuartos de final" in page and "mejor de 3" in page
    assert "Ana Pérez (1002) y Ana Gómez (1003)" in page  # players, member ids
    assert "&lt;img src=x onerror=" in page and "<img" not in page
    pages = pdf_pages(pdf(knockout + "/imprimir/emparejamientos", tmp_path / "p.pdf", tmp_path))
    assert len(pages) == 1 and a4(pages[0])
    screenshot(knockout + "/imprimir/emparejamientos", SCREENSHOTS / "print-pairings.png",
               tmp_path, size=SHEET)  # fmt: skip


def test_a_score_sheet_per_match_one_a_page(knockout: str, tmp_path: Path) -> None:
    page = dom(knockout + "/imprimir/planillas", tmp_path, size=SHEET)
    sheets = page.split('<section class="sheet"')[1:]
    assert [re.search(r'data-match="([^"]+)"', s)[1] for s in sheets] == [  # type: ignore[index]
        "r2-m01", "r2-m02", "r2-m03", "r2-m04"]  # fmt: skip
    for s in sheets:  # three chico rows, both captains and the referee sign
        assert len(re.findall(r'<td class="k">\d</td>', s)) == 3
        assert s.count("Firma y aclaración") == 3 and "Árbitro" in s
    assert "Resultado: <strong>2 chicos a 1</strong>" in sheets[0]  # decided: filled in
    assert "Resultado: ______ chicos a ______" in sheets[1]
    assert "(socio 1002)" in sheets[0]
    assert "&lt;img src=x onerror=" in sheets[1] and "<img" not in page
    assert 'Club "Social" &amp; &lt;b&gt;Deportivo&lt;/b&gt;' in sheets[1]  # text, not bold
    pages = pdf_pages(pdf(knockout + "/imprimir/planillas", tmp_path / "s.pdf", tmp_path))
    assert len(pages) == 4 and all(a4(p) for p in pages)  # one sheet, one page
    screenshot(knockout + "/imprimir/planillas", SCREENSHOTS / "print-sheets.png", tmp_path,
               size=SHEET)  # fmt: skip


def test_the_bracket_on_one_landscape_sheet(knockout: str, tmp_path: Path) -> None:
    page = dom(knockout + "/imprimir/llave", tmp_path, size=SHEET[::-1])
    heads = re.findall(r"<h3>([^<]+)</h3>", page)
    assert heads == ["Octavos de final", "Cuartos de final", "Semifinal", "Final", "Tercer puesto"]
    assert len(re.findall(r'data-match="r[12]-m0\d"', page)) == 12
    pages = pdf_pages(pdf(knockout + "/imprimir/llave", tmp_path / "b.pdf", tmp_path))
    assert len(pages) == 1 and a4(pages[0], landscape=True)
    screenshot(knockout + "/imprimir/llave", SCREENSHOTS / "print-bracket.png", tmp_path,
               size=SHEET[::-1])  # fmt: skip


def test_the_standings_with_their_tie_breaks(tmp_path: Path) -> None:
    t = swiss_round(24, round_no=4, tables=8)
    with served(heard_desk(tmp_path / "desk", t, tables=8)) as base:
        page = dom(base + "/imprimir/posiciones", tmp_path, size=SHEET)
        pages = pdf_pages(pdf(base + "/imprimir/posiciones", tmp_path / "s.pdf", tmp_path))
        screenshot(base + "/imprimir/posiciones", SCREENSHOTS / "print-standings.png", tmp_path,
                   size=SHEET)  # fmt: skip
    head = re.findall(r"<th[^>]*>([^<]*)</th>", page.split("<thead>")[1].split("</thead>")[0])
    assert head == ["Pos.", "Equipo", "PJ", "PG", "PP", "CG", "CP", "TF", "TC", "Dif.", "Buchholz"]
    ranks = re.findall(r'<tr data-entrant="e\d\d"><td class="n">(\d+)</td>', page)
    assert ranks == [str(i) for i in range(1, 25)]
    assert "&lt;img src=x onerror=" in page and "<img" not in page
    assert len(pages) == 1 and a4(pages[0])
