"""The printed standings never leave the first sheet blank but for its header, at any
size (a section too tall for one page used to be pushed whole to the second): page 1 of
Chromium's PDF holds the first lines of the table, read back as text from the PDF."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.tournament.competition.standings import standings

from .browser import pdf, pdf_texts
from .scenes import heard_desk, swiss_round
from .test_desk_page import served


@pytest.mark.parametrize("entrants", [8, 46, 64])
def test_the_first_page_has_the_first_teams(entrants: int, tmp_path: Path) -> None:
    t = swiss_round(entrants, round_no=3, tables=4)
    first = [t.entrant(s.entrant).name for s in standings(t)[:3]]
    with served(heard_desk(tmp_path / "desk", t, tables=4)) as base:
        texts = pdf_texts(pdf(base + "/imprimir/posiciones", tmp_path / "s.pdf", tmp_path))
    assert "Posiciones" in texts[0]
    for name in first:
        if "<" not in name:  # the hostile names print as their own text too
            assert name in texts[0], (name, texts[0][:400])
    last = t.entrant(standings(t)[-1].entrant).name
    assert any(last in page for page in texts)
    assert all(page.strip() for page in texts), "a blank page"
