"""What the screens keep (the engine's views per state, the game's part of the screens
per state, the renderer's contents and pages) never shows a stale screen: at every
redraw of whole seeded six-seat games on the mock table (both ways of reading a deal,
a pica-pica hand among them), the screens, their contents and their frames are the same
as those made with every cache emptied first, and every view is the engine's view read
field by field (``seat_view``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from controller.engine import HouseRules
from controller.render import screen as render_module
from controller.render.screen import render_pages, screen_content
from controller.table import screens as screens_module
from controller.table.run_mock import MockRun
from controller.table.screens import screens_for
from controller.table.service import TableService
from controller.table.table import DealReading, Table

from ..engine.view_oracle import seat_view


def _fresh(table: Table, seats: int) -> tuple[list[Any], list[Any], list[bytes]]:
    screens_module.clear_caches()
    render_module.clear_caches()
    screens = screens_for(table, seats)
    contents = [screen_content(s) for s in screens]
    return screens, contents, [render_pages(c) for c in contents]


def _checked(mismatches: list[str], checked: list[int]) -> Callable[..., None]:
    real = TableService.redraw

    def redraw(self: TableService, force: bool = False) -> None:
        table = self.table
        seats = table.rules.players
        clock = table.clock
        now = clock()
        table.clock = lambda: now  # no message expires between the two looks
        try:
            kept = screens_for(table, seats)
            contents = [screen_content(s) for s in kept]
            pages = [render_pages(c) for c in contents]
            for seat, screen in enumerate(kept):
                if screen.view != seat_view(table.game, seat):
                    mismatches.append(f"seat {seat}: a stale view {screen.view}")
            fresh = _fresh(table, seats)
            for name, mine, theirs in zip(("screens", "contents", "pages"),
                                          (kept, contents, pages), fresh, strict=True):  # fmt: skip
                if mine != theirs:
                    mismatches.append(f"{name} differ at {table.game.hand_actions}")
            # and the cached path once more (the caches made again): what the seats saw
            kept = screens_for(table, seats)
            if kept != fresh[0] or [screen_content(s) for s in kept] != fresh[1]:
                mismatches.append(f"screens made again differ at {table.game.hand_actions}")
            checked[0] += 1
        finally:
            table.clock = clock
        real(self, force)

    return redraw


@pytest.mark.parametrize(
    ("rules", "reading", "seed"),
    [
        (HouseRules(players=6), DealReading.SEATS, 1),
        (HouseRules(players=6), DealReading.DEALER, 2),
        (HouseRules(players=6, pica_pica=True), DealReading.SEATS, 3),
    ],
)
def test_cached_screens_are_the_screens_made_afresh(
    monkeypatch: pytest.MonkeyPatch, rules: HouseRules, reading: DealReading, seed: int
) -> None:
    mismatches: list[str] = []
    checked = [0]
    monkeypatch.setattr(TableService, "redraw", _checked(mismatches, checked))
    score = (5, 0) if rules.pica_pica else (0, 0)
    run = MockRun(rules, seed=seed, human=None, deal_reading=reading, score=score)
    try:
        run.play_out()
        assert run.game.winner is not None
    finally:
        run.close()
    assert checked[0] > 100
    assert mismatches == []
