"""The desk's audit journal: every organiser's decision and every counted game, in
order, on disk, tamper-evident.

``journal.jsonl`` in the desk's folder, one JSON object a line::

    {"n": 7, "t": 1764590000.5, "who": "organizador", "body": {...},
     "prev": "<sha256 of line 6>", "mac": "<hmac of this line>"}

- ``n`` counts from 1; ``prev`` is the SHA-256 of the previous line's bytes (line 1: of
  the journal's genesis, which names the tournament), so removing, reordering or
  inserting a line breaks the chain at that place;
- ``mac`` is HMAC-SHA256 over the line's other fields (canonical JSON) with the
  desk's journal key, derived from the tournament's secret
  (:func:`journal_key`): whoever edits a line and recomputes the chain still cannot
  make a valid ``mac`` without the secret. A desk without the secret writes a plain
  SHA-256 there (changes by mistake are found; a forger is not stopped), and says so.

Every line is written, flushed and ``fsync``-ed before the action takes effect, so
what the organiser saw happen is on the disk. A power cut in the middle of a write
leaves a torn last line (no newline, or not JSON): that line never took effect, and
:meth:`AuditJournal.open` cuts it off (logged). Anything else wrong (a line changed,
missing, moved; a bad ``mac``) is :class:`JournalTampered` with the line's number:
the desk does not start on a journal it cannot trust (``truco-table desk-audit`` says
where it breaks).
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ...table.store import fsync_dir
from ...textfile import os_reason
from ..wire.keys import hkdf_sha256
from ..wire.topics import check_name

__all__ = [
    "AuditJournal",
    "AuditVerdict",
    "JournalEntry",
    "JournalError",
    "JournalTampered",
    "audit",
    "journal_key",
    "signed_with_a_key",
]

log = logging.getLogger(__name__)

NAME: Final = "journal.jsonl"
_SALT: Final = b"truco-table v1"
_GENESIS: Final = b"truco-desk-journal v1\0"


class JournalError(Exception):
    """The journal cannot be read or written (the text says why)."""


class JournalTampered(JournalError):
    """A line of the journal is not what the desk wrote (``line``: 1-based)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"línea {line} del diario: {reason}")
        self.line = line
        self.reason = reason


def journal_key(secret: bytes, tournament: str) -> bytes:
    """The desk's journal key: HKDF-SHA256 of the tournament's secret, for this
    tournament (no table key can be it: another ``info``)."""
    info = b"desk-journal\0" + check_name("tournament", tournament).encode()
    return hkdf_sha256(secret, salt=_SALT, info=info)


@dataclass(frozen=True)
class JournalEntry:
    n: int
    t: float
    who: str
    body: dict[str, Any]


@dataclass(frozen=True)
class AuditVerdict:
    ok: bool
    lines: int  # lines that check (all of them when ok)
    first_bad_line: int | None
    reason: str
    keyed: bool  # the MACs were checked with the secret
    torn_tail: bool = False  # a last line cut by a power cut (it never took effect)


def _canonical(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode(
        "utf-8"
    )


def _seal(key: bytes | None, fields: dict[str, Any]) -> str:
    data = _canonical(fields)
    if key is None:
        return hashlib.sha256(data).hexdigest()
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def _genesis(tournament: str) -> str:
    return hashlib.sha256(_GENESIS + tournament.encode("utf-8")).hexdigest()


def _check(
    raw: bytes, tournament: str, key: bytes | None
) -> Iterator[tuple[int, JournalEntry, str]]:
    """Each line of ``raw`` checked: (line number, entry, the line's own hash). Raises
    :class:`JournalTampered` at the first that does not check. A torn last line (no
    final newline) is not yielded."""
    prev = _genesis(tournament)
    lines = raw.split(b"\n")
    complete = lines[:-1]  # the last piece has no newline: torn (or empty)
    for number, line in enumerate(complete, 1):
        try:
            obj = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise JournalTampered(number, "no es una línea del diario") from None
        if not isinstance(obj, dict) or set(obj) != {"n", "t", "who", "body", "prev", "mac"}:
            raise JournalTampered(number, "no es una línea del diario")
        if obj["n"] != number:
            raise JournalTampered(number, f"numerada {obj['n']!r}: se sacaron o movieron líneas")
        if obj["prev"] != prev:
            raise JournalTampered(number, "la cadena se corta: se cambió una línea anterior")
        fields = {k: v for k, v in obj.items() if k != "mac"}
        if not isinstance(obj["mac"], str) or not hmac.compare_digest(
            obj["mac"], _seal(key, fields)
        ):
            raise JournalTampered(number, "cambiada después de escrita (su mac no coincide)")
        if not isinstance(obj["body"], dict) or not isinstance(obj["who"], str):
            raise JournalTampered(number, "no es una línea del diario")
        if not isinstance(obj["t"], int | float):
            raise JournalTampered(number, "no es una línea del diario")
        prev = hashlib.sha256(line).hexdigest()
        yield number, JournalEntry(number, float(obj["t"]), obj["who"], obj["body"]), prev


def read_entries(
    path: str | os.PathLike[str], tournament: str, key: bytes | None
) -> list[JournalEntry]:
    """Every whole line of a journal, checked, without changing it (another process may
    be writing it: a last line still being written is not read); :class:`JournalTampered`
    at the first line that does not check."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return []
    return [entry for _n, entry, _digest in _check(raw, tournament, key)]


def signed_with_a_key(path: str | os.PathLike[str]) -> bool:
    """Whether the journal's first whole line carries a MAC made with a key (not the
    plain SHA-256 a keyless desk writes): a journal that cannot be checked without the
    tournament's secret (``desk-audit`` without ``--config`` says so, never "alterado")."""
    try:
        with open(path, "rb") as f:
            first = f.readline()
    except OSError:
        return False
    if not first.endswith(b"\n"):
        return False
    try:
        obj = json.loads(first.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False
    if not isinstance(obj, dict) or not isinstance(obj.get("mac"), str):
        return False
    fields = {k: v for k, v in obj.items() if k != "mac"}
    return not hmac.compare_digest(obj["mac"], _seal(None, fields))


def audit(path: str | os.PathLike[str], tournament: str, key: bytes | None) -> AuditVerdict:
    """Check a journal at rest (``truco-table desk-audit``); never changes it."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return AuditVerdict(True, 0, None, "todavía no hay diario", key is not None)
    except OSError as e:
        return AuditVerdict(False, 0, 1, f"no se puede leer: {os_reason(e)}", key is not None)
    count = 0
    try:
        for count, _entry, _digest in _check(raw, tournament, key):  # noqa: B007
            pass
    except JournalTampered as e:
        return AuditVerdict(False, e.line - 1, e.line, e.reason, key is not None)
    torn = not raw.endswith(b"\n") and raw != b""
    reason = "sin cambios"
    if torn:
        reason += " (una última línea cortada por un corte de luz nunca tuvo efecto)"
    return AuditVerdict(True, count, None, reason, key is not None, torn)


class AuditJournal:
    """The journal of one tournament's desk (see the module docstring).

    ``open()`` reads and checks what is there (cutting off a torn last line) and
    returns the entries; ``append()`` writes one more, durably, before returning.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        tournament: str,
        key: bytes | None,
        *,
        fsync: bool = True,
    ) -> None:
        self.path = Path(folder) / NAME
        self.tournament = check_name("tournament", tournament)
        self.key = key
        self.fsync = fsync
        self._prev = _genesis(self.tournament)
        self._n = 0
        self._file: Any = None
        #: The SHA-256 of the line ``open(mark=...)`` asked for (None: no such line).
        self.marked: str | None = None

    @property
    def last_digest(self) -> str:
        """The SHA-256 of the last line (of the genesis for none): what a snapshot keeps."""
        return self._prev

    @property
    def keyed(self) -> bool:
        return self.key is not None

    def open(self, mark: int | None = None) -> list[JournalEntry]:
        """Every entry, each checked (``mark``: the SHA-256 of that line is kept in
        :attr:`marked`, what a snapshot of the desk names the line it folded up to by)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            raw = b""
        entries: list[JournalEntry] = []
        self.marked = _genesis(self.tournament) if mark == 0 else None
        for number, entry, digest in _check(raw, self.tournament, self.key):
            entries.append(entry)
            self._prev = digest
            if number == mark:
                self.marked = digest
        self._n = len(entries)
        end = raw.rfind(b"\n") + 1
        if end != len(raw):
            log.warning(
                "desk: journal %s: cut off a torn last line (%d bytes) left by a power cut",
                self.path, len(raw) - end,
            )  # fmt: skip
            with open(self.path, "r+b") as f:
                f.truncate(end)
                if self.fsync:
                    os.fsync(f.fileno())
        self._file = open(self.path, "ab")  # noqa: SIM115
        if self.fsync:
            fsync_dir(self.path.parent)
        return entries

    def append(self, t: float, who: str, body: dict[str, Any]) -> JournalEntry:
        if self._file is None:
            raise JournalError("el diario no está abierto")
        fields = {"n": self._n + 1, "t": t, "who": who, "body": body, "prev": self._prev}
        line = _canonical(fields | {"mac": _seal(self.key, fields)})
        try:
            self._file.write(line + b"\n")
            self._file.flush()
            if self.fsync:
                os.fsync(self._file.fileno())
        except OSError as e:
            code = errno.errorcode.get(e.errno, "?") if e.errno is not None else "?"
            raise JournalError(
                f"no se puede escribir el diario (error {code}): revisá el disco y sus permisos"
            ) from e
        self._n += 1
        self._prev = hashlib.sha256(line).hexdigest()
        return JournalEntry(self._n, t, who, body)

    @property
    def lines(self) -> int:
        return self._n

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
