"""Who may change the tournament from the desk's page: the organiser, and only them.

The desk starts with the organiser's key (a password the organiser chose, or a random
one the desk writes to ``organiser.key`` in its folder, 0600). With it:

- the browser logs in (``POST /api/entrar`` with the key) and gets a session: a cookie
  (``HttpOnly``, ``SameSite=Strict``, random, 32 bytes) and a CSRF token written into
  the organiser's page, which every write must send back in ``X-CSRF-Token``; sessions
  end at ``/api/salir`` or after :data:`SESSION_S` without use. A desk that restarts
  (stopped, or killed) keeps them: they are kept in ``sessions.json`` in its folder
  (0600; each cookie only as its SHA-256, the whole file signed with an HMAC of the
  organiser's key, so a file written by someone else is ignored), written at every log
  in and out and when a session's last use moved by :data:`PERSIST_USE_S`;
- ``truco-table organiser`` sends it as ``Authorization: Bearer KEY`` (no cookie, so
  no cross-site request can carry it).

Every write needs it, the referee list's *visto* (``POST /api/ack``) too. The screens
(``/proyector``, ``/imprimir/...``, ``/api/tournament``, the exports, ``/mesas``) stay
read-only and need nothing. Every comparison is constant-time; a wrong key costs the
caller :data:`WRONG_KEY_DELAY_S`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = [
    "COOKIE",
    "KEY_FILE",
    "OrganiserAccess",
    "Session",
    "load_or_create_key",
]

log = logging.getLogger(__name__)

COOKIE: Final = "truco_organizador"
KEY_FILE: Final = "organiser.key"
SESSIONS_FILE: Final = "sessions.json"
PERSIST_USE_S: Final = 60.0  # a session's last use is written again after this long
SESSION_S: Final = 12 * 3600.0  # a whole evening without logging in again
WRONG_KEY_DELAY_S: Final = 0.5
MAX_SESSIONS: Final = 32


@dataclass(frozen=True)
class Session:
    cookie: str
    csrf: str


def load_or_create_key(folder: str | Path, given: str | None = None) -> str:
    """The organiser's key: ``given`` (the organiser's own password), else the one in
    ``folder/organiser.key``, else a new random one written there (0600)."""
    if given is not None:
        if len(given.strip()) < 8:
            raise ValueError("la clave del organizador tiene que tener al menos 8 caracteres")
        return given.strip()
    path = Path(folder) / KEY_FILE
    try:
        text = path.read_text(encoding="utf-8").strip()
        if text:
            return text
    except FileNotFoundError:
        pass
    key = secrets.token_urlsafe(18)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(key + "\n")
    return key


class OrganiserAccess:
    """The organiser's key and their sessions (thread-safe). ``store``: the desk's
    folder, where the sessions are kept across restarts (None: in memory only).
    ``clock`` is the wall clock (a session outlives the process)."""

    def __init__(
        self,
        key: str,
        *,
        store: str | Path | None = None,
        clock: Callable[[], float] = time.time,
        delay: Callable[[float], None] = time.sleep,
    ) -> None:
        self._key = key.encode("utf-8")
        self._sign_key = hmac.new(self._key, b"truco-desk sessions v1", hashlib.sha256).digest()
        self._clock = clock
        self._delay = delay
        self._lock = threading.Lock()
        #: sha256(cookie): (csrf, last used, last used as written)
        self._sessions: dict[str, tuple[str, float, float]] = {}
        self._path = Path(store) / SESSIONS_FILE if store is not None else None
        if self._path is not None:
            self._load()

    # ------------------------------------------------------------------ the file

    def _mac(self, body: bytes) -> str:
        return hmac.new(self._sign_key, body, hashlib.sha256).hexdigest()

    def _load(self) -> None:
        assert self._path is not None
        try:
            obj = json.loads(self._path.read_text(encoding="utf-8"))
            body = json.dumps(obj["sessions"], sort_keys=True, separators=(",", ":")).encode()
            if not isinstance(obj.get("mac"), str) or not hmac.compare_digest(
                obj["mac"], self._mac(body)
            ):
                log.warning("desk: %s is not signed with the organiser's key: ignored",
                            self._path)  # fmt: skip
                return
            for item in obj["sessions"]:
                used = float(item["used"])
                self._sessions[str(item["id"])] = (str(item["csrf"]), used, used)
        except FileNotFoundError:
            return
        except (OSError, ValueError, KeyError, TypeError) as e:
            log.warning("desk: %s cannot be read (%s): the organiser logs in again",
                        self._path, e)  # fmt: skip
            self._sessions.clear()
            return
        self._expire()

    def _save(self) -> None:
        """Write the sessions (with the lock held): whole, 0600, signed."""
        if self._path is None:
            return
        items = [{"id": i, "csrf": csrf, "used": used}
                 for i, (csrf, used, _) in sorted(self._sessions.items())]  # fmt: skip
        body = json.dumps(items, sort_keys=True, separators=(",", ":")).encode()
        data = json.dumps({"v": 1, "sessions": items, "mac": self._mac(body)}).encode()
        tmp = self._path.with_name(self._path.name + ".tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self._path)
        except OSError as e:  # the sessions still work; a restart asks for the key again
            log.warning("desk: cannot keep the sessions in %s: %s", self._path, e)
            return
        self._sessions = {i: (c, u, u) for i, (c, u, _) in self._sessions.items()}

    # ------------------------------------------------------------------ sessions

    def key_matches(self, key: str) -> bool:
        ok = hmac.compare_digest(key.strip().encode("utf-8"), self._key)
        if not ok:
            self._delay(WRONG_KEY_DELAY_S)
        return ok

    def log_in(self, key: str) -> Session | None:
        """A new session for the right key; None (after a delay) for a wrong one."""
        if not self.key_matches(key):
            return None
        session = Session(secrets.token_urlsafe(32), secrets.token_urlsafe(32))
        with self._lock:
            self._expire()
            if len(self._sessions) >= MAX_SESSIONS:  # the oldest goes
                oldest = min(self._sessions, key=lambda c: self._sessions[c][1])
                del self._sessions[oldest]
            now = self._clock()
            self._sessions[_id(session.cookie)] = (session.csrf, now, now)
            self._save()
        return session

    def session(self, cookie: str | None) -> Session | None:
        """The live session of that cookie (its use noted), or None."""
        if not cookie:
            return None
        with self._lock:
            self._expire()
            key = _id(cookie)
            found = self._sessions.get(key)
            if found is None:
                return None
            csrf, _, written = found
            now = self._clock()
            self._sessions[key] = (csrf, now, written)
            if now - written >= PERSIST_USE_S:
                self._save()
            return Session(cookie, csrf)

    def may_write(self, cookie: str | None, csrf: str | None, bearer: str | None) -> bool:
        """A write is the organiser's: the key as a bearer token, or a live session
        whose CSRF token came with it."""
        if bearer is not None:
            return self.key_matches(bearer)
        found = self.session(cookie)
        return (
            found is not None
            and csrf is not None
            and hmac.compare_digest(found.csrf.encode(), csrf.encode())
        )

    def log_out(self, cookie: str | None) -> None:
        with self._lock:
            if cookie and self._sessions.pop(_id(cookie), None) is not None:
                self._save()

    def _expire(self) -> None:
        now = self._clock()
        old = [c for c, (_, used, _w) in self._sessions.items() if now - used > SESSION_S]
        for cookie in old:
            del self._sessions[cookie]
        if old:
            self._save()


def _id(cookie: str) -> str:
    """How a session's cookie is kept: its SHA-256 (the file never holds a cookie)."""
    return hashlib.sha256(cookie.encode("utf-8")).hexdigest()
