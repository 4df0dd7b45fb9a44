"""A desk that runs a tournament: its state, its competition, its MQTT client and web
page on one folder, wired together (``truco-table desk --competition``, the demo, the
tests).

:class:`DeskRun` builds the :class:`~.state.DeskState` (which reads back
``events.jsonl`` and the records), the :class:`~.organiser.Organiser` (which replays
its journal), counts any collected game the journal does not have yet (a power cut
between a record and its journal line), then connects: every finished game goes to
the competition, every change rewrites the exports, every (re)connection tells every
table its assignment again. ``power_cut()`` drops it the hard way; a new ``DeskRun``
on the same folder resumes (from its snapshot and what the journals say after it:
:mod:`.snapshot`, written every ``SNAPSHOT_S`` and at ``stop()``). The page's organiser
logs in with ``organiser_key`` (or the one the desk keeps in ``organiser.key`` in its
folder: :mod:`.sessions`, kept across restarts).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from ...engine import HouseRules
from ..venue.access import BrokerAccess
from ..wire.messages import Assignment, signed_assignment
from ..wire.seal import TournamentKey
from ..wire.topics import tournament_prefix
from .client import Desk
from .organiser import Organiser
from .records import GameResult
from .sessions import OrganiserAccess, load_or_create_key
from .snapshot import SNAPSHOT_S, dump, events_digest, snapshot_key, write_snapshot
from .state import REVERIFY_S, DeskState, Quota
from .web import serve_http

__all__ = ["DeskRun", "NotConnected", "save_snapshot"]

log = logging.getLogger(__name__)

SNAPSHOT_FIRST_S: Final = 2.0  # the first snapshot, this long after the desk started


def save_snapshot(
    state: DeskState, organiser: Organiser, key: bytes, last: tuple[int, int] | None = None
) -> tuple[int, int] | None:
    """Write the desk's snapshot (:mod:`.snapshot`) unless it is still where ``last``
    was: where it got to in its two journals (None: not written)."""
    with state.lock:  # the organiser's lock too: one consistent moment
        snap = state.fold()
        if snap is None:  # its files are closed: nothing to say where it got to
            return None
        snap.journal_lines = organiser.journal.lines
        snap.journal_digest = organiser.journal.last_digest
        where = (snap.events_offset, snap.journal_lines)
        if where == last:
            return None
        snap.competition = organiser.fold()
        body = dump(snap)
    folder = Path(state.out_dir or ".")
    digest = events_digest(folder, where[0])  # the file only grows: no lock needed
    if digest is None:
        return None
    write_snapshot(folder, key, body, digest)
    return where


class NotConnected(RuntimeError):
    """An assignment the desk cannot send now: it is sent when the broker is back."""


class DeskRun:
    """See the module docstring. ``http_port`` None: no page (0: any free port)."""

    def __init__(
        self,
        folder: Path,
        tournament: str,
        *,
        key: TournamentKey,
        tables: Sequence[str],
        rules: HouseRules | None,
        host: str,
        port: int,
        access: BrokerAccess | None = None,
        name: str | None = None,
        profile: str = "tournament",
        http_port: int | None = 0,
        reverify_s: float = REVERIFY_S,
        organiser_key: str | None = None,
        quota: Quota | None = None,
    ) -> None:
        self.folder = Path(folder)
        self.key = key
        self.prefix = tournament_prefix(tournament)
        self.state = DeskState(tournament, out_dir=folder, key=key, profile=profile,
                               tables=tables, rules=rules, quota=quota)  # fmt: skip
        self.organiser = Organiser(folder, tournament, key=key, tables=tables,
                                   publish=self._publish, lock=self.state.lock,
                                   resume=self.state.resumed)  # fmt: skip
        self.state.competition = self.organiser
        self.organiser.on_change.append(self._export)
        self.organiser.taken = self._taken
        self.organiser.record_seq = self._record_seq
        for result in sorted(self.state.results_list(), key=lambda r: r.finished_at):
            self.organiser.count(result)
        self.state.on_finished.append(self._count)
        self.state.on_assigned.append(self.organiser.check_assigned)
        self.state.on_conflict.append(self.organiser.key_conflict)
        self.client = Desk(self.state, host, port, access=access, name=name,
                           reverify_s=reverify_s)  # fmt: skip
        self.client.on_connected.append(self.organiser.retell)
        #: The organiser's key (their password, or ``organiser.key`` in the folder).
        self.organiser_key = load_or_create_key(folder, organiser_key)
        self.http = (
            serve_http(self.state, http_port,
                       access=OrganiserAccess(self.organiser_key, store=folder))
            if http_port is not None
            else None
        )
        self.client.start()
        self._snapshot_key = snapshot_key(key.key, tournament)
        self._snapshotted: tuple[int, int] | None = None
        self._stopping = threading.Event()
        self._snapshots = threading.Thread(target=self._keep_snapshots, name="desk-snapshot",
                                           daemon=True)  # fmt: skip
        self._snapshots.start()

    def save_snapshot(self) -> bool:
        """Write the desk's snapshot (:mod:`.snapshot`) if anything changed since the
        last one; whether it wrote one."""
        where = save_snapshot(self.state, self.organiser, self._snapshot_key, self._snapshotted)
        if where is None:
            return False
        self._snapshotted = where
        return True

    def _keep_snapshots(self) -> None:
        wait = SNAPSHOT_FIRST_S  # soon after a start: the next start is quick too
        if self.state.resumed is not None:  # the records at rest, checked once it is up
            try:
                self.state.reverify()
            except Exception:
                log.exception("desk: the records at rest could not be checked")
        while not self._stopping.wait(wait):
            wait = SNAPSHOT_S
            try:
                self.save_snapshot()
            except Exception:  # the journals stay the truth: a start replays them
                log.exception("desk: the snapshot could not be written")

    def _taken(self, table: str) -> int:
        t = self.state.tables.get(table)
        return t.assigned_n if t is not None else 0

    def _record_seq(self, game: str) -> int | None:
        result = self.state.results.get(game)
        return result.seq if result is not None else None

    def _export(self) -> None:
        self.state.export_soon()

    def _count(self, result: GameResult) -> None:
        self.organiser.count(result)

    def _publish(self, a: Assignment) -> None:
        if not self.client.connected.is_set():
            # told on (re)connection, with what is current then (Organiser.retell): a
            # message queued before the connection could reach the broker after a newer
            # one and stay retained
            raise NotConnected(f"{a.table}: the desk is not connected to the broker")
        own = self.state.key_for(a.table)
        if own is None:
            raise RuntimeError(f"no key for {a.table}")
        topic, payload = signed_assignment(own, self.prefix, a)
        self.client.publish_retained(topic, payload)

    @property
    def page(self) -> str | None:
        return f"http://127.0.0.1:{self.http.server_address[1]}/" if self.http else None

    def power_cut(self) -> None:
        """As the laptop losing its power: files stay as the disk has them."""
        self._stopping.set()
        self.client.power_cut()
        if self.http is not None:
            self.http.shutdown()
            self.http.server_close()

    def stop(self) -> None:
        self._stopping.set()
        try:  # before the client closes the state's files (what comes after is replayed)
            self.save_snapshot()
        except Exception:
            log.exception("desk: the snapshot could not be written")
        self.client.stop()
        self.organiser.close()
        if self.http is not None:
            self.http.shutdown()
            self.http.server_close()
