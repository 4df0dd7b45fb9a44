"""What the screens keep (the engine's views per state, the game's part of the screens
per state, the renderer's contents and pages) never shows a stale screen: at every
redraw of whole seeded six-seat games on the mock table (both ways of reading a deal,
a pica-pica hand among them), the screens, their contents and their frames are the same
as those made with every cache emptied first, and every view is the engine's view read
field by field (``seat_view``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import pairwise
from typing import Any

import pytest

from controller.engine import HouseRules
from controller.render import screen as render_module
from controller.render.screen import render_pages, screen_content
from controller.table import screens as screens_module
from controller.table.run_mock import MockRun
from controller.table.screens import screens_for
from controller.table.service import TableService
from controller.table.table import DealReading, Phase, Table

from ..engine.view_oracle import seat_view


def _fresh(table: Table, seats: int) -> tuple[list[Any], list[Any], list[bytes]]:
    screens_module.clear_caches()
    render_module.clear_caches()
    screens = screens_for(table, seats)
    contents = [screen_content(s) for s in screens]
    return screens, contents, [render_pages(c) for c in contents]


@contextmanager
def _clock_held(table: Table) -> Iterator[None]:
    """The table's clock stopped meanwhile: no message expires between two looks."""
    clock = table.clock
    now = clock()
    table.clock = lambda: now
    try:
        yield
    finally:
        table.clock = clock


def _checked(mismatches: list[str], checked: list[int]) -> Callable[..., None]:
    real = TableService.redraw

    def redraw(self: TableService, force: bool = False) -> None:
        table = self.table
        seats = table.rules.players
        with _clock_held(table):
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


#: per redraw while a deal is read: the screens, what they say, the screens then kept
_Seen = list[tuple[list[Any], list[tuple[str, ...]], list[Any]]]


def _deal_watch(seen: _Seen) -> Callable[..., None]:
    """A redraw that notes, while a deal is read, every seat's screen and what it says,
    checks that both are those made with every cache emptied, and notes the screens the
    caches then hold (the next redraw's are compared with those)."""
    real = TableService.redraw

    def redraw(self: TableService, force: bool = False) -> None:
        table = self.table
        if table.phase is Phase.DEALING:
            seats = table.rules.players
            with _clock_held(table):
                screens = screens_for(table, seats)
                texts = [screen_content(s).texts for s in screens]
                fresh = _fresh(table, seats)
                assert screens == fresh[0]
                assert texts == [c.texts for c in fresh[1]]
                seen.append((screens, texts, screens_for(table, seats)))
        real(self, force)

    return redraw


@pytest.mark.parametrize("reading", [DealReading.SEATS, DealReading.DEALER])
def test_a_card_read_makes_new_screens_only_for_the_seats_that_show_it(
    monkeypatch: pytest.MonkeyPatch, reading: DealReading
) -> None:
    """While a deal is read, a card read changes the count one or two seats show (the
    seat's own ``TOCÁ TUS CARTAS 2/3``, or the dealer's ``TOCÁ CADA CARTA 7/18``): the
    other seats keep the very screen they had, so the redraw does not look at them again;
    and every screen says what the one made with every cache emptied says."""
    seen: _Seen = []
    monkeypatch.setattr(TableService, "redraw", _deal_watch(seen))
    run = MockRun(HouseRules(players=6), seed=5, human=None, deal_reading=reading)
    try:
        for _ in range(3):  # three hands' deals
            run.deal()
            while run.game.hand_in_progress:
                assert run.bot_step() is not None
    finally:
        run.close()
    kept = remade = 0
    for (_, said_before, held), (after, said_after, _) in pairwise(seen):
        if held[0].view is not after[0].view:
            continue  # another state of the game (another deal): every screen is new
        for seat, (old, new) in enumerate(zip(held, after, strict=True)):
            if said_before[seat] == said_after[seat]:
                assert new is old, f"seat {seat}: a new screen that says {said_after[seat]}"
                kept += 1
            else:
                assert new is not old
                remade += 1
    # a card read is one seat's (and the dealer's, who taps it): most screens are kept
    assert remade >= 3 * 15 and kept >= 2 * remade
