"""The score tile a seat's frame is joined from is the union of the two teams' halves,
each drawn once (``warm_score_tiles`` draws them all at start-up): for every score of a
15-point game and a third of a 30-point game's (every score on each side), and past the
target, it is exactly the whole scoreboard drawn at once."""

from __future__ import annotations

import pytest

from controller.hal.pages import image_to_pages
from controller.render import screen


@pytest.mark.parametrize("target", [15, 30])
def test_the_halves_make_the_whole_scoreboard(target: int) -> None:
    screen.clear_caches()
    for ours in range(target + 3):
        for theirs in range(ours % 3 if target == 30 else 0, target + 3, 3 if target == 30 else 1):
            whole = image_to_pages(screen._score_tile(ours, theirs, target))
            assert screen._score_pages(ours, theirs, target) == whole, (ours, theirs)


def test_warmed_tiles_leave_nothing_to_draw_in_play() -> None:
    screen.clear_caches()
    screen.warm_score_tiles(30)
    drawn = screen._score_side_pages.cache_info().misses
    for ours in range(31):
        for theirs in range(31):
            screen._score_pages(ours, theirs, 30)
    assert screen._score_side_pages.cache_info().misses == drawn == 62
