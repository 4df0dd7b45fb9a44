"""``truco-table tournament-demo`` with no arguments (issue 42: it ended as an internal
error, exit 70, ``min(args.flaky, args.tables)`` with the tables unset): the default
night, 20 tables, 4 of them with a flaky network; the demo itself is run by
tests/tournament/sim (here it is only handed its options)."""

from __future__ import annotations

from typing import Any, TextIO

import pytest

from controller.cli import main
from controller.tournament.sim import demo


def test_no_arguments_run_the_default_night(monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[Any] = []

    def run_demo(opts: demo.DemoOptions, out: TextIO) -> int:
        given.append(opts)
        return 0

    monkeypatch.setattr(demo, "run_demo", run_demo)
    assert main(["tournament-demo"]) == 0
    (opts,) = given
    assert (opts.tables, opts.flaky, opts.games) == (20, 4, 1)
    assert main(["tournament-demo", "--tables", "2"]) == 0
    assert (given[-1].tables, given[-1].flaky) == (2, 2)  # never more flaky than tables
