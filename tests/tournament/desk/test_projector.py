"""The projector view in headless Chromium: a knockout's bracket (the rounds to come
drawn with the winners already known), a Swiss tournament's standings cut into pages
that turn by themselves, no controls, names as text. Screenshots to docs/screenshots/
with TRUCO_REGEN_SCREENSHOTS=1."""

from __future__ import annotations

import re
from pathlib import Path

from .browser import SCREENSHOTS, dom, screenshot
from .scenes import groups_16, heard_desk, knockout_16, knockout_finished, swiss_round
from .test_desk_page import served

PROJECTOR = (1280, 720)


def test_the_projector_shows_the_bracket(tmp_path: Path) -> None:
    desk = heard_desk(tmp_path / "desk", knockout_16())
    with served(desk) as base:
        page = dom(base + "/proyector", tmp_path, size=PROJECTOR)
        screenshot(base + "/proyector", SCREENSHOTS / "projector.png", tmp_path, size=PROJECTOR)
    heads = re.findall(r"<h3>([^<]+)</h3>", page)
    assert heads == ["Octavos de final", "Cuartos de final", "Semifinal", "Final", "Tercer puesto"]
    assert len(re.findall(r'data-match="r1-m0\d"', page)) == 8
    assert len(re.findall(r'data-match="r2-m0\d"', page)) == 4
    # r2-m01 is decided: its winner already stands in the first semifinal
    semis = page[page.index("<h3>Semifinal</h3>") : page.index("<h3>Final</h3>")]
    assert 'class="side tbd"><span class="name">Los del Fondo<' in semis
    assert "&lt;img src=x onerror=" in page and "<img" not in page
    assert "<button" not in page and "<a " not in page and "<input" not in page  # no controls
    assert 'data-slides="1"' in page and 'data-fits="true"' in page  # it fits: one page


def test_swiss_standings_page_by_themselves(tmp_path: Path) -> None:
    t = swiss_round(24, round_no=4, tables=8)
    desk = heard_desk(tmp_path / "desk", t, tables=8)
    with served(desk) as base:
        first = dom(base + "/proyector", tmp_path, size=PROJECTOR, budget_ms=2000)
        later = dom(base + "/proyector", tmp_path, size=PROJECTOR, budget_ms=11_000)
        again = dom(base + "/proyector", tmp_path, size=PROJECTOR, budget_ms=31_000)
        screenshot(base + "/proyector", SCREENSHOTS / "projector-standings.png", tmp_path,
                   size=PROJECTOR)  # fmt: skip
    # 24 standings at 12 a page, then where the 12 matches of round 4 are played
    assert 'data-slides="3"' in first and 'data-slide="1"' in first
    assert 'data-scale="100" data-fits="true"' in first  # 12 lines fit at full size
    assert 'data-slide="2"' in later  # turned after ten seconds
    # after the last page, the first again, from the page fetched anew
    assert 'data-slide="1"' in again and again.count('<section class="slide') == 3
    assert 'data-refreshed="1"' in again and "data-refreshed" not in later
    slides = first.split('<section class="slide')[1:]
    assert len(slides) == 3
    assert [len(re.findall(r"data-entrant=", s)) for s in slides[:2]] == [12, 12]
    assert len(re.findall(r'data-match="r4-m\d\d"', slides[2])) == 12
    assert "Buchholz" in slides[0] and slides[0].startswith(' on"')  # the first is shown
    assert "&lt;img src=x onerror=" in first and "<img" not in first


def test_groups_then_the_knockout(tmp_path: Path) -> None:
    desk = heard_desk(tmp_path / "desk", groups_16(), tables=8)
    with served(desk) as base:
        page = dom(base + "/proyector", tmp_path, size=PROJECTOR)
    slides = page.split('<section class="slide')[1:]
    titles = [re.search(r"<h1><span>([^<]+)</span>", s)[1] for s in slides]  # type: ignore[index]
    assert titles == ["Grupos: A, B", "Grupos: C, D", "Llave · Cuartos de final"]
    for s in slides[:2]:  # two whole groups of four a page
        assert len(re.findall(r'<h2 class="group">Grupo [A-D]</h2>', s)) == 2
        assert len(re.findall(r"data-entrant=", s)) == 8
    heads = re.findall(r"<h3>([^<]+)</h3>", slides[2])
    assert heads == ["Cuartos de final", "Semifinal", "Final", "Tercer puesto"]
    assert "&lt;img src=x onerror=" in page and "<img" not in page


def test_a_finished_tournament_opens_with_its_podium(tmp_path: Path) -> None:
    t = knockout_finished(8)
    final, third = t.match("final"), t.match("third")
    assert final.result.winner is not None and third.result.winner is not None
    desk = heard_desk(tmp_path / "desk", t, tables=4)
    with served(desk) as base:
        page = dom(base + "/proyector", tmp_path, size=PROJECTOR)
        screenshot(base + "/proyector", SCREENSHOTS / "projector-final.png", tmp_path,
                   size=PROJECTOR)  # fmt: skip
    first = page.split('<section class="slide')[1]
    assert "Posiciones finales" in first
    places = re.findall(r'<div class="place p(\d)" data-entrant="(e\d\d)">', first)
    runner_up = (
        final.pairing.away if final.result.winner == final.pairing.home else final.pairing.home
    )
    assert places[:3] == [("1", final.result.winner), ("2", runner_up), ("3", third.result.winner)]
    assert 'data-slides="2"' in page  # the podium, then the bracket


def test_a_page_too_tall_is_shrunk_to_fit(tmp_path: Path) -> None:
    """On a short screen the bracket's eight first matches do not fit at full size:
    the page shrinks its type until they do."""
    desk = heard_desk(tmp_path / "desk", knockout_16())
    with served(desk) as base:
        page = dom(base + "/proyector", tmp_path, size=(1280, 400))
    scale = re.search(r'data-scale="(\d+)"', page)
    assert scale is not None and int(scale[1]) < 100, page[:300]
    assert 'data-fits="true"' in page


def test_a_round_waiting_to_start_shows_where_each_pair_plays_first(tmp_path: Path) -> None:
    from controller.tournament.competition.model import (
        Format,
        FormatSpec,
        OverrideResult,
        PairRound,
        Register,
        Start,
    )
    from controller.tournament.competition.tournament import apply, replay
    from controller.tournament.desk.pages import projector_page

    from .scenes import entrants

    start = Start(FormatSpec(Format.SWISS, best_of=1, rounds=4))
    t = replay("Copa", [*(Register(e) for e in entrants(24)), start, PairRound(1)])
    page = projector_page(t)
    slides = page.split('<section class="slide')[1:]
    # nobody played yet: no page of zeros, only where the 12 matches are played
    assert len(slides) == 1 and "Buchholz" not in page
    assert len(re.findall(r'data-match="r1-m\d\d"', slides[0])) == 12
    # a round played, the next paired and not started: where they play, then the table
    for m in t.round_matches(1):
        t = apply(t, OverrideResult(m.id, m.pairing.home, (1, 0), (15, 3), "planilla"))
    t = apply(t, PairRound(2))
    slides = projector_page(t).split('<section class="slide')[1:]
    assert "data-match=" in slides[0] and "Buchholz" not in slides[0]
    assert any("Buchholz" in s for s in slides[1:])
