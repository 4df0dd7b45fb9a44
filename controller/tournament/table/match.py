"""What the desk assigned to this table, and which match's chico each of its games was.

The table's tournament link (:class:`~controller.tournament.table.publisher.TablePublisher`)
keeps one :class:`TableMatches` in its outbox folder (``<state_dir>/outbox/<tournament>``),
in ``assignment.json``, rewritten atomically and ``fsync``-ed on every change::

    {"v": 1, "assignment": {<the desk's assignment payload, without its mac>} | null,
     "games": {"3": ["r1-m4", 2]}, "played": [["r1-m4", 1]]}

- ``assignment``: the last assignment taken (:class:`~..wire.messages.Assignment`); its ``n``
  is the counter a newer one must pass. ``null``: the desk never assigned this table,
  and its games carry the configuration's ``match`` (the fallback).
- ``games``: the game number of each game started while an assignment was current, and
  the ``[match, chico]`` it was started for (``[null, null]``: the table was free, or
  that chico was already played). A game is bound when it starts (its first deal read
  or first action), so an assignment that comes in the middle of a game is for the next
  one; an abandoned game's binding is dropped (the chico is still to play).
- ``played``: the ``(match, chico)`` pairs whose record the table has journaled: a
  second game is never bound to one of them, even after a restart. The journal's records
  carry ``match`` and ``chico`` too, so a power cut between the record and this file
  loses nothing (:meth:`TableMatches.note_played` on reading the journal back).

A disk that refuses the file never stops the table: the state is kept in memory (and
``unsaved`` says why), and written with the next change. A damaged file is kept aside
(``assignment.json.damaged``) and the table starts with no assignment: the desk's
assignment is retained on the broker and comes back at the next connection, and
``played`` comes back from the journal.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ...render.screen import MatchCard
from ...textfile import os_reason
from ..wire.messages import Assignment, RejectedMessage, StaleAssignment, assignment_from
from ..wire.topics import ID_RE
from .outbox import atomic_write

__all__ = ["ASSIGNMENT_FILE", "GameMatch", "TableMatches"]

log = logging.getLogger(__name__)

ASSIGNMENT_FILE: Final = "assignment.json"
_VERSION: Final = 1


@dataclass(frozen=True, slots=True)
class GameMatch:
    """The match (and which of its chicos) a game was played for; ``None``: none."""

    match: str | None = None
    chico: int | None = None


class TableMatches:
    """The table's assignment and its games' matches (see the module docstring).

    Thread-safe: the network thread takes assignments, the table's loop starts and
    finishes games.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        table: str,
        *,
        fallback: str | None = None,
        fsync: bool = True,
    ) -> None:
        self.folder = Path(folder)
        self.path = self.folder / ASSIGNMENT_FILE
        self.table = table
        self.fallback = fallback
        self.fsync = fsync
        self._lock = threading.Lock()
        self.assignment: Assignment | None = None
        self.games: dict[int, GameMatch] = {}
        self.played: set[tuple[str, int]] = set()
        self.damage: str | None = None  # what was wrong with the file when it was read
        self.unsaved: str | None = None  # why the last change is not on disk (None: it is)
        self._load()

    # ------------------------------------------------------------------ the file

    def _load(self) -> None:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as e:
            self.damage = f"no puedo leer {self.path}: {os_reason(e)}"
            log.error("%s: %s", self.table, self.damage)
            return
        try:
            self._take_file(json.loads(data.decode("utf-8")))
        except (UnicodeDecodeError, ValueError, TypeError, KeyError, RejectedMessage) as e:
            self.damage = (
                f"{self.path} está dañado ({e}): lo guardo aparte y espero a la mesa de control"
            )
            log.error("%s: %s", self.table, self.damage)
            self.assignment, self.games, self.played = None, {}, set()
            with contextlib.suppress(OSError):
                os.replace(self.path, self.path.with_name(self.path.name + ".damaged"))

    def _take_file(self, obj: Any) -> None:
        if not isinstance(obj, dict) or obj.get("v") != _VERSION:
            raise ValueError("not an assignment file")
        raw = obj["assignment"]
        self.assignment = None if raw is None else assignment_from(raw, self.table)
        for number, (match, chico) in dict(obj["games"]).items():
            self.games[int(number)] = GameMatch(_match_id(match), _chico(chico))
        for match, chico in obj["played"]:
            self.played.add((str(_match_id(match)), int(chico)))

    def _save(self) -> None:
        """The state, on disk before it is acted on (called with the lock held)."""
        obj = {
            "v": _VERSION,
            "assignment": None if self.assignment is None else self.assignment.payload(),
            "games": {str(k): [g.match, g.chico] for k, g in sorted(self.games.items())},
            "played": sorted([m, c] for m, c in self.played),
        }
        data = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, data + b"\n", fsync=self.fsync)
        except OSError as e:  # a failing disk never stops the table: kept in memory
            if self.unsaved is None:
                log.error("%s: cannot save %s: %s (kept in memory)", self.table, self.path, e)
            self.unsaved = str(e)
            return
        self.unsaved = None

    # ------------------------------------------------------------------ the desk's side

    @property
    def last_n(self) -> int | None:
        """The counter of the assignment taken last (``None``: none yet)."""
        assignment = self.assignment
        return None if assignment is None else assignment.n

    def take(self, assignment: Assignment) -> bool:
        """Make ``assignment`` the current one (saved before this returns). False when it
        is the very one the table has (the broker gives a retained message again at
        every connection); raises :class:`StaleAssignment` for an older one, or another
        one under the same counter."""
        with self._lock:
            current = self.assignment
            if current is not None and assignment.n <= current.n:
                if assignment == current:
                    return False
                raise StaleAssignment(
                    f"assignment n={assignment.n} is not newer than the last taken ({current.n})"
                )
            self.assignment = assignment
            self._save()
            return True

    def to_play(self) -> Assignment | None:
        """The current assignment while its chico is still to play (``None``: the table
        is free, was never assigned, or has played it)."""
        with self._lock:
            a = self.assignment
            if a is None or a.match is None or (a.match, a.chico) in self.played:
                return None
            return a

    def card(self) -> MatchCard | None:
        """What the seats show before the next game: the assigned match, unless the table
        is free or that chico was played already."""
        a = self.to_play()
        if a is None:
            return None
        with self._lock:
            follows = a.chico > 1 and (a.match, a.chico - 1) in self.played
        return MatchCard(a.label, a.home, a.away, a.chico, a.best_of, a.players, follows)

    def waits(self) -> bool:
        """No chico to play (the table is free, or played the assigned one) and the desk
        is the one to say what comes next: not a table left to its configured match."""
        with self._lock:
            a = self.assignment
        return self.to_play() is None and (a is not None or self.fallback is None)

    # ------------------------------------------------------------------ the table's side

    def start(self, game: int) -> GameMatch:
        """Game number ``game`` started: bind it to the current assignment (saved)."""
        with self._lock:
            a = self.assignment
            if a is None:
                bound = GameMatch(self.fallback)
            elif a.match is None:
                bound = GameMatch()
            elif (a.match, a.chico) in self.played:
                log.warning(
                    "%s: chico %d of %s was played already: game %d is for no match",
                    self.table, a.chico, a.match, game,
                )  # fmt: skip
                bound = GameMatch()
            else:
                bound = GameMatch(a.match, a.chico)
            if a is not None or game in self.games:
                self.games[game] = bound
                self._save()
            return bound

    def of(self, game: int) -> GameMatch:
        """The match game number ``game`` was started for (the fallback for a game
        started before any assignment)."""
        with self._lock:
            bound = self.games.get(game)
            return bound if bound is not None else GameMatch(self.fallback)

    def finish(self, game: int) -> GameMatch:
        """Game ``game``'s record is journaled: its chico is played (saved)."""
        with self._lock:
            bound = self.games.get(game, GameMatch(self.fallback))
            if bound.match is not None and bound.chico is not None:
                self.played.add((bound.match, bound.chico))
                self._save()
            return bound

    def abandon(self, game: int) -> None:
        """Game ``game`` was given up before it was won: its chico is still to play."""
        with self._lock:
            if self.games.pop(game, None) is not None:
                self._save()

    def note_played(self, match: str, chico: int) -> None:
        """A record of the journal says ``(match, chico)`` was played (on reading it back)."""
        with self._lock:
            if (match, chico) not in self.played:
                self.played.add((match, chico))
                self._save()


def _match_id(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not ID_RE.fullmatch(value):
        raise ValueError(f"not a match id: {str(value)[:64]!r}")
    return value


def _chico(value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 1000:
        raise ValueError("not a chico")
    return value
