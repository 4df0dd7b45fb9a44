"""A competition desk served on the loopback, as the organiser's page and the command
line reach it: its state, its organiser and its HTTP server with the organiser's key
(no delay after a wrong key, so the tests run at once)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from controller.tournament.desk import DeskState, serve_http
from controller.tournament.desk.organiser import Organiser
from controller.tournament.desk.sessions import OrganiserAccess
from controller.tournament.wire.seal import TournamentKey
from tests.helpers import serving

TABLES = ["mesa01", "mesa02"]


@contextlib.contextmanager
def served_desk(
    folder: Path, key: TournamentKey, organiser_key: str
) -> Iterator[tuple[str, Organiser]]:
    """(the desk's address, its organiser), the desk's files in ``folder``."""
    state = DeskState("copa", out_dir=folder, key=key, tables=TABLES)
    o = Organiser(folder, "copa", key=key, tables=TABLES, fsync=False, lock=state.lock)
    state.competition = o
    server = serve_http(state, 0, access=OrganiserAccess(organiser_key, delay=lambda s: None))
    with serving(server) as port:
        yield f"http://127.0.0.1:{port}", o
        o.close()
