"""Who may change the tournament from the desk's page: the organiser, and only them.

The desk starts with the organiser's key (a password the organiser chose, or a random
one the desk writes to ``organiser.key`` in its folder, 0600). With it:

- the browser logs in (``POST /api/entrar`` with the key) and gets a session: a cookie
  (``HttpOnly``, ``SameSite=Strict``, random, 32 bytes) and a CSRF token written into
  the organiser's page, which every write must send back in ``X-CSRF-Token``; sessions
  end at ``/api/salir``, after :data:`SESSION_S` without use, or when the desk stops;
- ``truco-table organiser`` sends it as ``Authorization: Bearer KEY`` (no cookie, so
  no cross-site request can carry it).

Every write needs it, the referee list's *visto* (``POST /api/ack``) too. The screens
(``/proyector``, ``/imprimir/...``, ``/api/tournament``, the exports, ``/mesas``) stay
read-only and need nothing. Every comparison is constant-time; a wrong key costs the
caller :data:`WRONG_KEY_DELAY_S`.
"""

from __future__ import annotations

import hmac
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

COOKIE: Final = "truco_organizador"
KEY_FILE: Final = "organiser.key"
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
    """The organiser's key and their sessions (thread-safe)."""

    def __init__(
        self,
        key: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        delay: Callable[[float], None] = time.sleep,
    ) -> None:
        self._key = key.encode("utf-8")
        self._clock = clock
        self._delay = delay
        self._lock = threading.Lock()
        self._sessions: dict[str, tuple[str, float]] = {}  # cookie: (csrf, last used)

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
            self._sessions[session.cookie] = (session.csrf, self._clock())
        return session

    def session(self, cookie: str | None) -> Session | None:
        """The live session of that cookie (its use noted), or None."""
        if not cookie:
            return None
        with self._lock:
            self._expire()
            for known, (csrf, _) in self._sessions.items():
                if hmac.compare_digest(known.encode(), cookie.encode()):
                    self._sessions[known] = (csrf, self._clock())
                    return Session(known, csrf)
        return None

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
            if cookie:
                self._sessions.pop(cookie, None)

    def _expire(self) -> None:
        now = self._clock()
        for cookie in [c for c, (_, used) in self._sessions.items() if now - used > SESSION_S]:
            del self._sessions[cookie]
