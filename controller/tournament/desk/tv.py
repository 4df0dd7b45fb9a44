"""The bar's TV, served by the desk: every table of the venue on one screen.

``serve_tv(state, port, host)`` answers, on its own listener (the desk's own pages stay
on the loopback), only what the room may see: ``/`` and ``/tv`` (the TV page,
``?mesa=NAME`` for one table, what a phone opens), ``/api/tv`` (what it draws:
:meth:`.DeskState.tv`: each table's score, who is mano, a hand's end, a flor or a falta
envido called; never a card: the desk hears no card read at a deal while a hand is
played), ``/qr/tv.svg?mesa=NAME`` (the QR code of that table's view) and the font.
Nothing else: no organiser's page, no record, no write.

With a tournament (``competition``), the teams' names are those of the match each
table plays.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from ...render.answer import answer
from ...render.broadcast_pages import FONTS, font_bytes, qr_svg, tv_page
from .state import DeskState

__all__ = ["serve_tv", "table_names"]

log = logging.getLogger(__name__)

#: How old the TV's JSON may be when served (the page asks once a second).
TV_FRESH_S = 0.25


def table_names(competition: Any) -> Any:
    """``names(table)`` for :meth:`.DeskState.tv`: the home and away teams of the match a
    table plays in the tournament's round (``None`` when it plays none)."""

    def names(table: str) -> tuple[str, str] | None:
        t = competition.tournament
        for m in t.round_matches(t.round):
            if m.table == table and m.pairing.away is not None:
                home, away = t.entrant(m.pairing.home), t.entrant(m.pairing.away)
                return (home.name, away.name)
        return None

    return names


class _Handler(BaseHTTPRequestHandler):
    server_version = "truco-desk"
    state: DeskState

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("tv http: " + format, *args)

    def _send(self, status: int, body: bytes, kind: str) -> None:
        answer(
            self,
            status,
            body,
            kind,
            policy="default-src 'self'; script-src 'unsafe-inline'; "
            "style-src 'unsafe-inline'; img-src 'self'; font-src 'self'",
        )

    def _tv_json(self) -> bytes:
        """What the TV draws, made at most every ``TV_FRESH_S`` for every client asking
        (a room of phones polling once a second costs one JSON, not one each)."""
        server: Any = self.server
        with server.tv_lock:
            made, body = server.tv_cache
            now = time.monotonic()
            if now - made >= TV_FRESH_S or not body:
                competition = getattr(self.state, "competition", None)
                names = table_names(competition) if competition is not None else None
                body = json.dumps(self.state.tv(names), ensure_ascii=False).encode("utf-8")
                server.tv_cache = (now, body)
            return bytes(body)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        path = url.path
        if path in ("/", "/tv"):
            self._send(200, tv_page().encode("utf-8"), "text/html; charset=utf-8")
        elif path == "/api/tv":
            self._send(200, self._tv_json(), "application/json")
        elif path == "/qr/tv.svg":
            mesa = (parse_qs(url.query).get("mesa") or [""])[0][:100]
            address = f"http://{self.headers.get('Host', '')}/tv?" + urlencode({"mesa": mesa})
            self._send(200, qr_svg(address).encode("utf-8"), "image/svg+xml")
        elif path.startswith("/fuentes/") and path[len("/fuentes/") :] in FONTS:
            self._send(200, font_bytes(path[len("/fuentes/") :]), "font/ttf")
        else:
            self._send(404, "No existe esa página.\n".encode(), "text/plain; charset=utf-8")


class _Server(ThreadingHTTPServer):
    #: the listen backlog: the standard library's 5 drops the connections of a room of
    #: phones polling at once (their SYNs retried after 1, 3, 7 s: bench/live_pages.py
    #: measured a 16 s p99 with 400 clients)
    request_queue_size = 1024
    daemon_threads = True
    tv_lock = threading.Lock()
    tv_cache: tuple[float, bytes] = (0.0, b"")


def serve_tv(state: DeskState, port: int, host: str = "0.0.0.0") -> ThreadingHTTPServer:
    """Serve the TV on ``host:port`` (every address by default: the bar's TV and the
    phones are on the venue's network) in a daemon thread."""
    handler = type("TvHandler", (_Handler,), {"state": state})
    server = _Server((host, port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="desk-tv", daemon=True).start()
    return server
