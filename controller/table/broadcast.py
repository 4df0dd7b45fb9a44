"""The table's own broadcast on a bar night without a desk: the ``[broadcast]`` section.

```toml
[broadcast]
port = 8081                      # the pages, on every address of the table's network
key_file = "broadcast.key"       # the broadcast key (or key = "..."): 16 characters or more
delay_s = 120                    # the broadcast shows the game as it was this long ago
teaching = false                 # a teaching table: the cards at once, delay 0 allowed
table_name = "Mesa 1"
team_names = ["Los de la ventana", "Los de la barra"]
```

``TableBroadcast`` listens to the service (``service.listeners``) and keeps the game in
a :class:`~controller.render.broadcast.BroadcastLog` by this process's monotonic clock
(a table restarted in the middle of a game starts it from its record, dated when the
record was last written);
``serve`` answers (standard library, a daemon thread):

- ``/transmision?clave=KEY`` (``&fondo=transparente`` for a stream's browser source): the
  broadcast page, 1920x1080; ``/api/transmision?clave=KEY``: what it draws, delayed by
  ``delay_s`` here, in the server, with the cards of a hand in play kept back until that
  hand has ended (``BroadcastLog.view``). Without the key: 401 and nothing of the game.
- ``/tv``: the bar's TV page (this table; never a card); ``/api/tv``: what it draws.
- ``/qr/tv.svg?mesa=NAME``: the QR code of that table's TV page, for phones.
- ``/fuentes/<file>``: the fonts the pages use (shipped with the project).

The key is compared in constant time; the delay and the teaching flag are checked when
the configuration is read (``check_delay``), so a table that is not a teaching table
cannot be set to show the cards at once.
"""

from __future__ import annotations

import hmac
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, urlencode, urlsplit

from ..render.broadcast import BroadcastLog, check_delay
from ..render.broadcast_pages import (
    FONTS,
    broadcast_page,
    font_bytes,
    qr_svg,
    tv_page,
    tv_table,
)
from ..transcript import write
from .service import Accepted, Finished, NewGame, TableService, Undone

__all__ = ["BroadcastSettings", "TableBroadcast"]

log = logging.getLogger(__name__)

#: The least a broadcast key may have (a key anyone could guess is no key).
MIN_KEY: Final = 16


@dataclass(frozen=True, slots=True)
class BroadcastSettings:
    """The ``[broadcast]`` section, checked (``controller.table.config``)."""

    key: str
    delay_s: float = 120.0
    teaching: bool = False
    port: int = 8081
    host: str = "0.0.0.0"
    table_name: str = "Mesa"
    team_names: tuple[str, str] = ("Nosotros", "Ellos")

    def __post_init__(self) -> None:
        if len(self.key) < MIN_KEY:
            raise ValueError(
                f"la clave de la transmisión tiene que tener {MIN_KEY} caracteres o más"
            )
        check_delay(self.delay_s, teaching=self.teaching)


class TableBroadcast:
    """The game told to the broadcast as it happens (see the module's docstring)."""

    def __init__(
        self, settings: BroadcastSettings, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.lock = threading.Lock()
        self.log = BroadcastLog(settings.table_name, settings.team_names)
        self.service: TableService | None = None

    def attach(self, service: TableService) -> None:
        """Follow ``service`` from the game it holds now (call before ``service.run``)."""
        self.service = service
        game = service.table.game
        with self.lock:
            at = self.clock() - _record_age(service)
            self.log.add(at, write(game))
            ended = game.hand_number - (1 if game.hand_in_progress else 0)
            for hand in range(1, ended + 1):
                self.log.hand_ended(hand, at)
        service.listeners.append(self.on_event)

    def on_event(self, event: object) -> None:
        """The service's listener (on the table's loop)."""
        now = self.clock()
        with self.lock:
            if isinstance(event, NewGame):
                self.log.add(now, event.rules)
            elif isinstance(event, Accepted):
                self.log.add(now, event.text)
                game = self.service.table.game if self.service is not None else None
                if game is not None and not game.hand_in_progress and game.hand_number:
                    self.log.hand_ended(game.hand_number, now)
            elif isinstance(event, Undone):
                self.log.undo()
            elif isinstance(event, Finished):
                self.log.hand_ended(self.log.hands, now)

    def view(self) -> dict[str, Any]:
        s = self.settings
        with self.lock:
            return self.log.view(self.clock(), s.delay_s, teaching=s.teaching)

    def tv(self) -> dict[str, Any]:
        """The TV's view of this table: no delay, never a card."""
        with self.lock:
            return {"tables": [tv_table(self.log, self.clock())]}

    def key_ok(self, given: str) -> bool:
        return bool(given) and hmac.compare_digest(
            given.encode("utf-8"), self.settings.key.encode("utf-8")
        )

    def serve(self, port: int | None = None, host: str | None = None) -> ThreadingHTTPServer:
        """Serve the pages in a daemon thread (``port=0``: any free one)."""
        s = self.settings
        handler = type("BroadcastHandler", (_Handler,), {"broadcast": self})
        server = ThreadingHTTPServer((s.host if host is None else host,
                                      s.port if port is None else port), handler)  # fmt: skip
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, name="broadcast-http", daemon=True).start()
        return server


class _Handler(BaseHTTPRequestHandler):
    server_version = "truco-table"
    broadcast: TableBroadcast

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("broadcast http: " + format, *args)

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")  # the key stays in its address
        self.send_header(
            "Content-Security-Policy",
            "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            "img-src 'self' data:; font-src 'self'",
        )
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        path = url.path
        b = self.broadcast
        html = "text/html; charset=utf-8"
        if path in ("/transmision", "/api/transmision"):
            if not b.key_ok((query.get("clave") or [""])[0]):
                self._send(401, "Falta la clave de la transmisión (o no es esa).\n".encode(),
                           "text/plain; charset=utf-8")  # fmt: skip
                return
            if path == "/transmision":
                transparent = (query.get("fondo") or [""])[0] == "transparente"
                self._send(200, broadcast_page(transparent=transparent).encode(), html)
            else:
                self._send(200, _json(b.view()), "application/json")
        elif path in ("/", "/tv"):
            self._send(200, tv_page().encode(), html)
        elif path == "/api/tv":
            self._send(200, _json(b.tv()), "application/json")
        elif path == "/qr/tv.svg":
            mesa = (query.get("mesa") or [""])[0][:100]
            address = f"http://{self.headers.get('Host', '')}/tv?" + urlencode({"mesa": mesa})
            self._send(200, qr_svg(address).encode(), "image/svg+xml")
        elif path.startswith("/fuentes/") and path[len("/fuentes/") :] in FONTS:
            self._send(200, font_bytes(path[len("/fuentes/") :]), "font/ttf")
        else:
            self._send(404, "No existe esa página.\n".encode(), "text/plain; charset=utf-8")


def _record_age(service: TableService) -> float:
    """How long ago the table's record was last written (0 without one): a table
    restarted in the middle of a game dates what its record kept then, so its broadcast
    shows that game once the delay has passed since, not a delay after the restart (and
    never sooner than the delay after the table wrote it)."""
    store = service.store
    if store is None or not service.table.game.move_stack:
        return 0.0
    try:
        return max(0.0, time.time() - store.path.stat().st_mtime)
    except OSError:
        return 0.0


def _json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def read_key(path: Path) -> str:
    """A key file's first line (``OSError`` when it cannot be read)."""
    return path.read_text(encoding="utf-8").strip()
