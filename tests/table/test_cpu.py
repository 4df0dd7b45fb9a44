"""The CPU the table's loop keeps to (``controller.table.cpu``): the thread that asks is
kept there, and only it; what cannot be done is logged and the table runs all the same."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

import pytest

from controller.table.cpu import keep_loop_on

ALLOWED = sorted(os.sched_getaffinity(0))
several = pytest.mark.skipif(
    len(ALLOWED) < 2, reason="this process may run on one CPU only: nothing to choose"
)


def on_a_thread(what: Callable[[], object]) -> tuple[object, set[int]]:
    """``what`` run on a thread of its own (the test's own thread keeps its CPUs), and
    the CPUs that thread may run on after it."""
    got: list[tuple[object, set[int]]] = []

    def run() -> None:
        result = what()
        got.append((result, os.sched_getaffinity(0)))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return got[0]


@several
def test_last_keeps_the_loop_on_the_last_cpu_it_may_use() -> None:
    cpu, cpus = on_a_thread(lambda: keep_loop_on("last"))
    assert cpu == ALLOWED[-1] and cpus == {ALLOWED[-1]}
    assert os.sched_getaffinity(0) == set(ALLOWED)  # this thread: untouched


@several
def test_a_number_keeps_the_loop_on_that_cpu() -> None:
    cpu, cpus = on_a_thread(lambda: keep_loop_on(ALLOWED[0]))
    assert cpu == ALLOWED[0] and cpus == {ALLOWED[0]}


def test_none_leaves_the_loop_where_the_system_puts_it() -> None:
    cpu, cpus = on_a_thread(lambda: keep_loop_on("none"))
    assert cpu is None and cpus == set(ALLOWED)


def test_a_cpu_the_table_may_not_use_is_said_and_left_alone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    missing = max(ALLOWED) + 1
    with caplog.at_level(logging.WARNING, logger="controller.table.cpu"):
        cpu, cpus = on_a_thread(lambda: keep_loop_on(missing))
    assert cpu is None and cpus == set(ALLOWED)
    assert f"loop_cpu = {missing}: la mesa no puede usar esa CPU" in caplog.text


def test_a_refusal_of_the_system_is_said_and_the_table_runs(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(pid: int, cpus: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_setaffinity", refuse)
    with caplog.at_level(logging.WARNING, logger="controller.table.cpu"):
        cpu = keep_loop_on(ALLOWED[0])
    assert cpu is None
    assert "no pude dejar el bucle de la mesa en la CPU" in caplog.text
