"""The desk's exports and its locks: a record handled on the broker's thread exports
while it holds the desk's lock; the desk's housekeeping exports on its own thread. Each
must let the other finish (a suite run under a load of 8 found them waiting for each
other for ever: the desk and its page froze on the organiser's night)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from controller.tournament.desk import DeskState
from controller.tournament.desk import state as desk_state
from controller.tournament.desk.organiser import Organiser
from controller.tournament.table.outbox import atomic_write
from controller.tournament.wire.seal import TournamentKey
from tests.helpers import PATIENCE, wait_until

KEY = TournamentKey(b"k" * 32, "copa-test")
TABLES = ("mesa01", "mesa02")


def _held_by_another(lock: threading.RLock) -> bool:
    if lock.acquire(blocking=False):
        lock.release()
        return False
    return True


def test_the_brokers_export_and_the_housekeepings_never_wait_for_each_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = DeskState("copa", out_dir=tmp_path / "exports", key=KEY, tables=TABLES)
    organiser = Organiser(tmp_path / "journal", "copa", key=KEY, tables=TABLES, fsync=False,
                          lock=state.lock)  # fmt: skip
    state.competition = organiser
    writing, go_on = threading.Event(), threading.Event()

    def held_write(path: Path, data: bytes, fsync: bool = True) -> None:
        """The housekeeping's first file is held until the broker's thread waits."""
        if threading.current_thread().name == "housekeeping" and not writing.is_set():
            writing.set()
            assert go_on.wait(PATIENCE)
        atomic_write(path, data, fsync=fsync)

    monkeypatch.setattr(desk_state, "atomic_write", held_write)

    def broker() -> None:  # a record judged: exported under the desk's lock
        with state.lock:
            state.export()

    housekeeping = threading.Thread(target=state.export, name="housekeeping", daemon=True)
    housekeeping.start()
    assert writing.wait(PATIENCE)
    on_broker = threading.Thread(target=broker, name="broker", daemon=True)
    on_broker.start()
    assert wait_until(lambda: _held_by_another(state.lock))  # the broker's thread in
    go_on.set()
    housekeeping.join(PATIENCE)
    on_broker.join(PATIENCE)
    assert not housekeeping.is_alive() and not on_broker.is_alive(), "the desk froze"
    assert (tmp_path / "exports" / "results.csv").exists()
    assert (tmp_path / "exports" / "standings.csv").exists()
    organiser.close()
