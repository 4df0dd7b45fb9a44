"""The desk's web page: the scoreboard, its JSON, the results and records, on the loopback.

``serve_http(state, port)`` serves ``/`` (the page, refreshed every second from
``/api/state``), ``/results.csv``, ``/results.json``, ``/records/<file>``, the
matchstick pictures ``/sticks/<points>-<target>.png`` and ``POST /api/ack`` (a referee
saw an item of the *atención* list: a referee call, an exceptional refusal), in a
daemon thread, on 127.0.0.1 only.

When the desk runs a tournament (``state.competition``: its ``tournament`` and
``audit_ok``), ``/`` is the organiser's page (:mod:`.pages.desk`) and the tables' page
moves to ``/mesas``; also ``/api/tournament`` (its JSON), ``/proyector``,
``/imprimir/emparejamientos``, ``/imprimir/posiciones``, ``/imprimir/llave``,
``/imprimir/planillas`` (these two of another round with ``?ronda=N``) and
``/export/<standings|matches|games>.<csv|json>``
(:mod:`.exports`). The views are built in :mod:`.pages`; this module only routes, with
the same Host check for every route.

The organiser's page (``/``) and every write to the competition (``POST
/api/organiser``, ``/api/organiser/import``) are the organiser's only
(:mod:`.sessions`): a session from ``POST /api/entrar`` with the organiser's key plus
the page's CSRF token, or the key as a bearer token (the command line); the Origin and
``Sec-Fetch-Site`` checks stay. Without a session, ``/`` is the login form. The other
views stay read-only and open (screens, the projector, printouts). ``POST /api/ack``
(the referee list's *visto*) is a write of the organiser's then too (their page sends
its CSRF token), and ``/mesas`` shows no *visto*; a desk without a tournament has no
organiser, and its page's *visto* needs only the Host and Origin checks.
"""

from __future__ import annotations

import base64
import hmac
import ipaddress
import json
import logging
import re
import secrets
import threading
import time
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final
from urllib.parse import parse_qs, unquote, urlsplit

from ...render.broadcast_pages import FONTS, broadcast_page, font_bytes
from ..competition.model import Tournament
from ..wire.topics import encode
from .exports import export_text, write_exports
from .pages import (
    bracket_page,
    desk_page,
    pairings_page,
    projector_page,
    sheets_page,
    standings_page,
    tournament_api,
)
from .pages.common import current_round
from .pages.controls import login_page
from .picture import sticks_png
from .sessions import COOKIE, OrganiserAccess, Session
from .state import DeskState
from .tv import table_names
from .wording import count_of

__all__ = ["serve_http"]

log = logging.getLogger(__name__)

_PAGE: Final = """<!doctype html>
<html lang="es"><head><meta charset="utf-8"><title>Torneo de truco</title>
<style>
body{font-family:system-ui,sans-serif;margin:1em;background:#0f3d24;color:#f4f1e8}
table{border-collapse:collapse;width:100%}td,th{padding:.3em .5em;border-bottom:1px solid #2d6b46;
text-align:left;vertical-align:middle}th{font-weight:600}.off{color:#ff8a80;font-weight:700}
.on{color:#b9f6ca}.bad{background:#7f1d1d}.n{font-variant-numeric:tabular-nums;text-align:right}
img{image-rendering:pixelated;background:#000;border-radius:3px}button{font-size:.8em}
a{color:#ffe082}.muted{color:#a5c8b3;font-size:.85em}
#broker{padding:.6em 1em;border-radius:4px;font-weight:700;display:none}
#broker.lost{display:block;background:#b71c1c;color:#fff}.stale td{opacity:.55}
.held{color:#ffe082;font-weight:700}
</style></head><body>
<div id="broker" role="alert"></div>
<h1 id="title">Torneo</h1><p id="summary" class="muted"></p>
<table><thead><tr><th>Mesa</th><th>Estado</th><th>Visto hace</th><th>Partida</th>
<th class="n">Mano</th><th>Equipo 0</th><th class="n"></th><th>Equipo 1</th><th class="n"></th>
<th>Atención del árbitro</th><th>Últimas jugadas</th></tr></thead>
<tbody id="tables"></tbody></table>
<h2>Resultados</h2>
<p><a href="/results.csv">results.csv</a> · <a href="/results.json">results.json</a></p>
<table><thead><tr><th>Partida</th><th>Mesa</th><th>Ganador</th><th class="n">Tanteador</th>
<th class="n">Manos</th><th>Registro</th><th>Sello</th></tr></thead>
<tbody id="results"></tbody></table>
<h2>Mensajes rechazados</h2>
<p class="muted">Nunca se aplican: sin firma válida, de una mesa que no es del torneo,
repetidos o fuera de secuencia.</p>
<table><thead><tr><th>Hora</th><th>Mesa</th><th>Motivo</th></tr></thead>
<tbody id="rejections"></tbody></table>
<script>
const ACK = __ACK__;  // visto here (a desk without a tournament; else the organiser's page)
const ESC = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
const esc = s => String(s ?? "").replace(/[&<>"']/g, c => ESC[c]);
const sticks = (p, t) => `<img alt="${p}" src="/sticks/${p}-${t}.png" width="126" height="76">`;
const hhmmss = ts => ts == null ? "" : new Date(ts * 1000).toLocaleTimeString("es-AR");
const ago = s => s == null ? "nunca" : s < 120 ? `${Math.round(s)} s`
  : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`;
const online = (t, down) => t.held_back ? `RETENIDA (espera la #${t.waiting_for})`
  : down || t.online === null ? "?" : t.online ? "en línea"
  : t.offline_reason === "stopped" ? "apagada" : "FUERA DE LÍNEA";
const attention = (t, a) => `<div>${hhmmss(a.ts)} <b>${esc(a.words)}</b>${a.seat == null
  ? "" : ` (asiento ${a.seat})`}${a.concern === "called" ? "" : ": " + esc(a.text)}
${ACK ? `
  <button data-table="${esc(t.table)}" data-seq="${a.seq}">visto</button>` : ""}</div>`;
const counts = t => Object.entries(t.refusal_counts).map(([c, n]) => `${esc(c)} ${n}`)
  .join(" · ");
document.addEventListener("click", async ev => {
  const b = ev.target.closest("button[data-table]");
  if (!b) return;
  await fetch("/api/ack", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({table: b.dataset.table, seq: Number(b.dataset.seq)})});
  refresh();
});
let lastOk = null;
function lost(text) {
  const el = document.getElementById("broker");
  el.className = text ? "lost" : ""; el.textContent = text || "";
  document.getElementById("tables").classList.toggle("stale", !!text);
}
async function refresh() {
  let s;
  try { s = await (await fetch("/api/state")).json(); } catch (e) {
    lost("SIN CONEXIÓN CON LA MESA DE CONTROL" +
      (lastOk ? ` desde las ${hhmmss(lastOk)}: los datos no están al día` : ""));
    return;
  }
  lastOk = s.time;
  const down = s.broker.connected === false;
  lost(down ? `SIN CONEXIÓN CON EL BROKER desde las ${hhmmss(s.broker.since)} ` +
    `(hace ${ago(s.broker.for_s)}): estados y tanteadores como se oyeron por última vez`
    : s.broker.connected === null ? "Todavía sin conexión con el broker" : "");
  document.getElementById("title").textContent = "Torneo " + s.tournament;
  document.getElementById("summary").textContent =
    `${s.tables.length} mesas, ${s.online} en línea · ${s.results.length} partidos terminados · ` +
    `${s.attention_pending} avisos para el árbitro · ${s.refusals_total} rechazos · ` +
    `${s.flagged} registros señalados · ` +
    `${s.rejected} mensajes rechazados · demora máxima ${s.max_latency_s} s` +
    (s.house_rules ? ` · reglas: ${s.house_rules}` : "");
  document.getElementById("tables").innerHTML = s.tables.map(t => `<tr>
    <td>${esc(t.table)}</td>
    <td class="${t.held_back ? "held" : t.online && !down ? "on" : "off"}">${esc(online(t, down))}
    ${t.rules_problems.length ? `<div class="off">OTRAS REGLAS:
      ${esc(t.rules_problems.join("; "))}</div>` : ""}</td>
    <td class="n">${ago(t.silent_s)}</td>
    <td>${esc(t.game)}</td><td class="n">${t.hand}</td>
    <td>${sticks(t.score[0], t.target)}</td><td class="n">${t.score[0]}</td>
    <td>${sticks(t.score[1], t.target)}</td><td class="n">${t.score[1]}</td>
    <td>${t.attention.map(a => attention(t, a)).join("")}
    ${counts(t) ? `<div class="muted">rechazos: ${counts(t)}</div>` : ""}</td>
    <td class="muted">${t.last.map(esc).join("<br>")}</td></tr>`).join("");
  document.getElementById("results").innerHTML = s.results.map(r => `
    <tr class="${r.ok ? "" : "bad"}"><td>${esc(r.game)}</td><td>${esc(r.table)}</td>
    <td>equipo ${esc(r.winner)}</td><td class="n">${r.score_0}-${r.score_1}</td>
    <td class="n">${r.hands}</td>
    <td><a href="/records/${encodeURIComponent(r.record)}">${esc(r.record)}</a>
    ${r.copies.map(c => `<div>${esc(c.record)}: ${esc(c.verdict)}</div>`).join("")}</td>
    <td>${esc(r.verdict === "tampered" ? "ADULTERADO" : r.verdict)}${
      r.ok ? "" : ": " + esc(r.detail)}</td></tr>`).join("");
  document.getElementById("rejections").innerHTML = s.rejections.slice().reverse().map(j => `
    <tr><td>${hhmmss(j.ts)}</td><td>${esc(j.table)}</td><td>${esc(j.reason)}</td></tr>`).join("");
}
refresh(); setInterval(refresh, 1000);
</script></body></html>
"""


#: The tournament's pages (``/export/...`` too); ``/`` is the organiser's page then.
_TOURNAMENT_ROUTES: Final = frozenset(
    {
        "/",
        "/index.html",
        "/api/tournament",
        "/proyector",
        "/imprimir/emparejamientos",
        "/imprimir/posiciones",
        "/imprimir/llave",
        "/imprimir/planillas",
    }
)


_SYNC_LOCK: Final = threading.Lock()
_SYNCED: dict[int, float] = {}  # id(state): when its exports were last checked


class _Handler(BaseHTTPRequestHandler):
    server_version = "truco-desk"
    state: DeskState  # set on the subclass made by serve_http
    access: OrganiserAccess  # the organiser's key and sessions (serve_http's)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("http: " + format, *args)

    def _send(
        self, status: int, body: bytes, kind: str, headers: tuple[tuple[str, str], ...] = ()
    ) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header(
            "Content-Security-Policy",
            "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            "img-src 'self'; frame-ancestors 'none'",
        )
        self.end_headers()
        self.wfile.write(body)

    def _own_host(self) -> bool:
        """The request names this server (``127.0.0.1:PORT``, ``localhost:PORT``,
        ``[::1]:PORT``): a page loaded from any other name (DNS rebinding) gets nothing."""
        port = getattr(self.server, "server_port", 0)
        host = self.headers.get("Host", "")
        return host.lower() in {f"{h}:{port}" for h in ("127.0.0.1", "localhost", "[::1]")}

    def _same_origin(self) -> bool:
        """A write comes from this page: its Origin (when the browser sends one) is this
        server, and the browser does not call it cross-site."""
        origin = self.headers.get("Origin")
        if origin is not None and origin != f"http://{self.headers.get('Host', '')}":
            return False
        return self.headers.get("Sec-Fetch-Site", "same-origin") in ("same-origin", "none")

    def _refuse(self, status: int, text: str) -> None:
        self._send(status, text.encode("utf-8") + b"\n", "text/plain; charset=utf-8")

    def do_GET(self) -> None:
        if not self._own_host():
            self._refuse(HTTPStatus.MISDIRECTED_REQUEST, "this page answers only its own host")
            return
        path = unquote(urlsplit(self.path).path)
        state = self.state
        competition = getattr(state, "competition", None)
        if path.startswith(("/transmision/", "/api/transmision/", "/fuentes/")):
            self._broadcast(path, competition)
            return
        if competition is not None and self._tournament_route(path, competition):
            return
        if path in ("/", "/index.html", "/mesas"):
            # with a tournament, /mesas is a screen: its visto is the organiser's page's
            page = _PAGE.replace("__ACK__", "false" if competition is not None else "true")
            self._send(200, page.encode("utf-8"), "text/html; charset=utf-8")
        elif path == "/api/state":
            body = json.dumps(state.snapshot(), ensure_ascii=False).encode("utf-8")
            self._send(200, body, "application/json")
        elif path == "/results.csv":
            self._send(200, state.results_csv().encode("utf-8"), "text/csv; charset=utf-8")
        elif path == "/results.json":
            self._send(200, state.results_json().encode("utf-8"), "application/json")
        elif path.startswith("/records/") and state.out_dir is not None:
            name = path[len("/records/") :]
            target = state.out_dir / "records" / name
            if "/" in name or not name.endswith(".truco") or not target.is_file():
                self._send(404, b"no such record\n", "text/plain")
            else:
                self._send(200, target.read_bytes(), "text/plain; charset=utf-8")
        elif m := re.fullmatch(r"/sticks/([0-9]{1,3})-(15|30)\.png", path):
            self._send(200, sticks_png(int(m[1]), int(m[2])), "image/png")
        elif path in _TOURNAMENT_ROUTES or path.startswith("/export/"):
            self._send(404, b"no hay un torneo en curso\n", "text/plain; charset=utf-8")
        else:
            self._send(404, b"not found\n", "text/plain")

    def _broadcast_key_ok(self) -> bool:
        """The organiser's session, or the organiser's key or the broadcast key as
        ``?clave=`` (a stream's browser source has no session)."""
        if self.access.session(self._cookie()) is not None:
            return True
        given = (parse_qs(urlsplit(self.path).query).get("clave") or [""])[0]
        if not given:
            return False
        own = getattr(self.state, "broadcast_key", None)
        if own and hmac.compare_digest(given.encode("utf-8"), own.encode("utf-8")):
            return True
        return self.access.key_matches(given)

    def _broadcast(self, path: str, competition: Any) -> None:
        """``/transmision/<table>`` (``?fondo=transparente``), its JSON
        ``/api/transmision/<table>`` (both with the key: the cards are in them; the
        delay is :meth:`.DeskState.broadcast`'s), and the pages' font."""
        if path.startswith("/fuentes/"):
            name = path[len("/fuentes/") :]
            if name in FONTS:
                self._send(200, font_bytes(name), "font/ttf")
            else:
                self._send(404, "No existe esa página.\n".encode(), "text/plain; charset=utf-8")
            return
        if not self._broadcast_key_ok():
            self._send(HTTPStatus.UNAUTHORIZED, "Falta la clave de la transmisión (o no es "
                       "esa).\n".encode(), "text/plain; charset=utf-8")  # fmt: skip
            return
        api = path.startswith("/api/")
        table = path.split("/")[-1]
        names = table_names(competition) if competition is not None else None
        shown = self.state.broadcast(table, names)
        if shown is None:
            self._send(
                404, f"no hay una mesa {table[:40]!r}\n".encode(), "text/plain; charset=utf-8"
            )
        elif api:
            self._send(200, json.dumps(shown, ensure_ascii=False).encode("utf-8"),
                       "application/json")  # fmt: skip
        else:
            transparent = "fondo=transparente" in urlsplit(self.path).query
            page = broadcast_page(transparent=transparent, source=f"/api/transmision/{table}")
            self._send(200, page.encode("utf-8"), "text/html; charset=utf-8")

    def _round_asked(self, t: Tournament) -> int | None:
        """``?ronda=N`` (default: the round being played); ``None`` when it names no
        round of the tournament (a 400 with a one-line reason was sent)."""
        asked = parse_qs(urlsplit(self.path).query).get("ronda")
        if not asked:
            return current_round(t)
        if not asked[0].isdigit() or not t.round_matches(int(asked[0])):
            self._send(HTTPStatus.BAD_REQUEST, f"no hay una ronda {asked[0][:20]!r}\n"
                       .encode(), "text/plain; charset=utf-8")  # fmt: skip
            return None
        return int(asked[0])

    def _tournament_route(self, path: str, competition: Any) -> bool:
        """Serve ``path`` if it is one of the tournament's views; whether it was."""
        html = "text/html; charset=utf-8"
        if path not in _TOURNAMENT_ROUTES and not path.startswith("/export/"):
            return False
        t: Tournament = competition.tournament
        state = self.state
        if path in ("/", "/index.html"):
            session = self.access.session(self._cookie())
            if session is None:
                self._send(200, login_page(t.display_name).encode("utf-8"), html)
            else:
                self._send(200, desk_page(t.display_name, csrf=session.csrf).encode("utf-8"), html)
        elif path == "/api/tournament":
            notes = [vars(a) | {"key": a.key} for a in getattr(competition, "attention", ())]
            data = tournament_api(
                t, state.snapshot(), bool(competition.audit_ok), state.results_list(), notes
            )
            body = json.dumps(data, ensure_ascii=False).encode("utf-8")
            self._sync_exports(t)
            self._send(200, body, "application/json")
        elif path == "/proyector":
            self._send(200, projector_page(t).encode("utf-8"), html)
        elif path in ("/imprimir/emparejamientos", "/imprimir/planillas"):
            round_no = self._round_asked(t)
            if round_no is None:
                return True
            if path == "/imprimir/emparejamientos":
                page = pairings_page(t, round_no)
            else:
                target = state.rules.target if state.rules is not None else None
                page = sheets_page(t, round_no, target=target)
            self._send(200, page.encode("utf-8"), html)
        elif path == "/imprimir/posiciones":
            self._send(200, standings_page(t).encode("utf-8"), html)
        elif path == "/imprimir/llave":
            self._send(200, bracket_page(t).encode("utf-8"), html)
        else:
            name = path[len("/export/") :]
            try:
                text = export_text(name, t, state.results_list())
            except KeyError:
                self._send(404, b"no such export\n", "text/plain")
                return True
            kind = "text/csv; charset=utf-8" if name.endswith(".csv") else "application/json"
            self._sync_exports(t, at_once=True)
            self._send(200, text.encode("utf-8"), kind)
        return True

    def _sync_exports(self, t: Tournament, at_once: bool = False) -> None:
        """The files on the disk made equal to what the page serves (a record judged
        again since, say): at once after an export was served, else at most once a
        second (the organiser's page asks every second)."""
        state = self.state
        folder = getattr(state, "out_dir", None)
        if folder is None:
            return
        now = time.monotonic()
        with _SYNC_LOCK:
            if not at_once and now - _SYNCED.get(id(state), -1e9) < 1.0:
                return
            _SYNCED[id(state)] = now
            try:
                write_exports(t, folder, state.results_list())
            except OSError:
                log.exception("desk: the exports could not be written")

    def do_POST(self) -> None:
        if not self._own_host():
            self._refuse(HTTPStatus.MISDIRECTED_REQUEST, "this page answers only its own host")
            return
        if not self._same_origin():
            self._refuse(HTTPStatus.FORBIDDEN, "cross-origin writes are refused")
            return
        path = urlsplit(self.path).path
        # JSON only: a cross-site form cannot send it without a CORS preflight we never answer
        json_body = self.headers.get("Content-Type", "").startswith("application/json")
        if path in ("/api/entrar", "/api/salir") and json_body:
            self._log_in() if path == "/api/entrar" else self._log_out()
            return
        if path in ("/api/organiser", "/api/organiser/import", "/api/organiser/rekey") and (
            json_body
        ):
            if not self._organiser_may_write():
                self._send(HTTPStatus.UNAUTHORIZED, encode({"error": "Solo el organizador: "
                           "entrá con la clave del organizador (la página pide la clave)"}),
                           "application/json")  # fmt: skip
                return
            if path == "/api/organiser/rekey":
                self._rekey()
            else:
                self._organiser() if path == "/api/organiser" else self._import()
            return
        if path != "/api/ack" or not json_body:
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain")
            return
        if getattr(self.state, "competition", None) is not None and not self._organiser_may_write():
            # a tournament's referee list is the organiser's (their page's visto)
            self._send(HTTPStatus.UNAUTHORIZED, encode({"error": "Solo el organizador marca "
                       "los avisos como vistos: entrá con la clave del organizador"}),
                       "application/json")  # fmt: skip
            return
        try:
            length = min(int(self.headers.get("Content-Length", "0")), 10_000)
            body = json.loads(self.rfile.read(length) or b"{}")
            competition = getattr(self.state, "competition", None)
            if "note" in body and competition is not None:  # a competition's item seen
                seen = competition.dismiss(str(body["note"])[:300])
                self._send(200, encode({"acknowledged": int(seen)}), "application/json")
                return
            table = str(body["table"])
            seq = body.get("seq")
            seq = int(seq) if seq is not None else None
        except (ValueError, KeyError, TypeError):
            self._send(HTTPStatus.BAD_REQUEST, b"expected {table, seq}\n", "text/plain")
            return
        done = self.state.ack(table, seq)
        self._send(200, encode({"acknowledged": done}), "application/json")

    def _cookie(self) -> str | None:
        raw = self.headers.get("Cookie")
        if not raw:
            return None
        try:
            jar = SimpleCookie(raw)
        except CookieError:
            return None
        morsel = jar.get(COOKIE)
        return morsel.value if morsel is not None else None

    def _organiser_may_write(self) -> bool:
        auth = self.headers.get("Authorization", "")
        bearer = auth[len("Bearer ") :] if auth.startswith("Bearer ") else None
        return self.access.may_write(self._cookie(), self.headers.get("X-CSRF-Token"), bearer)

    def _json_body(self, limit: int) -> Any:
        length = min(int(self.headers.get("Content-Length", "0")), limit)
        return json.loads(self.rfile.read(length) or b"{}")

    def _log_in(self) -> None:
        try:
            key = str(self._json_body(10_000)["clave"])
        except (ValueError, KeyError, TypeError):
            self._send(HTTPStatus.BAD_REQUEST, encode({"error": "falta la clave"}),
                       "application/json")  # fmt: skip
            return
        session: Session | None = self.access.log_in(key)
        if session is None:
            log.warning("desk: a wrong organiser's key at the page")
            self._send(HTTPStatus.FORBIDDEN, encode({"error": "Esa no es la clave del "
                       "organizador"}), "application/json")  # fmt: skip
            return
        cookie = f"{COOKIE}={session.cookie}; HttpOnly; SameSite=Strict; Path=/"
        self._send(200, encode({"ok": True, "csrf": session.csrf}), "application/json",
                   (("Set-Cookie", cookie),))  # fmt: skip

    def _log_out(self) -> None:
        self.access.log_out(self._cookie())
        gone = f"{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"
        self._send(200, encode({"ok": True}), "application/json", (("Set-Cookie", gone),))

    def _import(self) -> None:
        """``POST /api/organiser/import`` ``{"data": base64, "team_size": n, "commit":
        bool}``: the organiser's spreadsheet read whole and checked against the teams
        registered (:func:`~..competition.entrants.read_sheet`). Without ``commit``, the
        preview: ``{encoding, delimiter, entrants, problems}``; with it, every entrant
        registered (each journaled), and only if no line is bad (409 with the problems
        otherwise: nothing registered)."""
        from ..competition.entrants import read_sheet
        from ..competition.model import CompetitionError, Register

        competition = getattr(self.state, "competition", None)
        if competition is None:
            self._send(HTTPStatus.NOT_FOUND, b"this desk runs no tournament\n", "text/plain")
            return
        try:
            body = self._json_body(5_000_000)
            data = base64.b64decode(str(body["data"]), validate=True)
            commit = bool(body.get("commit", False))
            asked = body.get("team_size")
            request = _request_id(body.get("request"))
        except (ValueError, KeyError, TypeError):
            self._send(HTTPStatus.BAD_REQUEST, encode({"error": "se esperaba {data: base64}"}),
                       "application/json")  # fmt: skip
            return
        with competition.lock:
            t: Tournament = competition.tournament
            team_size = t.spec.team_size if t.spec is not None else int(asked or 2)
            # the same import sent again (the desk restarted before it answered): the
            # sheet read as it was then, and only the teams not registered yet registered
            done = {k: a for k, a in competition.requests.items()
                    if request is not None and k.startswith(request + ".")}  # fmt: skip
            done_ids = {getattr(getattr(a, "entrant", None), "id", None) for a in done.values()}
            try:
                sheet = read_sheet(data, team_size,
                                   [e for e in t.entrants if e.id not in done_ids])  # fmt: skip
            except CompetitionError as unreadable:  # cannot be read at all: one line
                why = str(unreadable)
                self._send(HTTPStatus.CONFLICT, encode({"error": why, "problems": [why]}),
                           "application/json")  # fmt: skip
                return
            answer = {
                "encoding": sheet.encoding,
                "delimiter": sheet.delimiter,
                "team_size": team_size,
                "entrants": [
                    {
                        "id": e.id,
                        "name": e.name,
                        "club": e.club,
                        "seed": e.seed,
                        "players": [p.name for p in e.players],
                    }
                    for e in sheet.entrants
                ],
                "problems": list(sheet.problems),
            }
            if not commit:
                self._send(200, encode(answer), "application/json")
                return
            if sheet.problems:
                self._send(HTTPStatus.CONFLICT, encode(answer | {"error": "La planilla tiene "
                           f"{count_of(len(sheet.problems), 'línea', 'líneas')} con "
                           "problemas: no se anotó a nadie"}),
                           "application/json")  # fmt: skip
                return
            try:
                for i, entrant in enumerate(sheet.entrants):
                    part = f"{request}.{i}" if request is not None else None
                    competition.do(Register(entrant), request=part)
            except CompetitionError as refused:  # not expected: the sheet was checked whole
                self._send(HTTPStatus.CONFLICT, encode({"error": str(refused)}),
                           "application/json")  # fmt: skip
                return
            self._send(200, encode(answer | {"registered": len(sheet.entrants),
                                             "already": bool(done)}),
                       "application/json")  # fmt: skip

    def _rekey(self) -> None:
        """``POST /api/organiser/rekey`` ``{"table": id}``: a new key for a table after a
        key conflict (:meth:`.DeskState.rekey`); answers the one-time code to type at
        the real table (``truco-table rekey``). Only this answer shows it."""
        try:
            table = str(self._json_body(10_000)["table"])
            code = self.state.rekey(table)
        except (ValueError, KeyError, TypeError) as e:
            self._send(HTTPStatus.BAD_REQUEST, encode({"error": str(e)[:300]}), "application/json")
            return
        competition = getattr(self.state, "competition", None)
        if competition is not None:
            competition.rekeyed(table)
        self._send(200, encode({"table": table, "code": code}), "application/json")

    def _organiser(self) -> None:
        """``POST /api/organiser`` ``{"action": {...}}``: one action of the organiser
        (:mod:`~controller.tournament.competition.codec`), journaled and applied; 409
        with the reason (Spanish) when the competition refuses it."""
        from ..competition.codec import action_from_json
        from ..competition.model import CompetitionError

        competition = getattr(self.state, "competition", None)
        if competition is None:
            self._send(HTTPStatus.NOT_FOUND, b"this desk runs no tournament\n", "text/plain")
            return
        try:
            length = min(int(self.headers.get("Content-Length", "0")), 1_000_000)
            body = json.loads(self.rfile.read(length) or b"{}")
            action = action_from_json(body["action"])
            request = _request_id(body.get("request"))
        except (ValueError, KeyError, TypeError) as e:
            self._send(HTTPStatus.BAD_REQUEST, encode({"error": str(e)[:500]}), "application/json")
            return
        try:
            already = competition.done_before(request)
            t = competition.do(action, request=request)
        except CompetitionError as e:
            self._send(HTTPStatus.CONFLICT, encode({"error": str(e)}), "application/json")
            return
        except Exception as e:  # the journal's disk: nothing applied
            log.exception("desk: an organiser's action failed")
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, encode({"error": str(e)[:500]}),
                       "application/json")  # fmt: skip
            return
        self._send(200, encode({"ok": True, "round": t.round, "finished": t.finished,
                                "already": already,
                                "journal_lines": competition.journal.lines}),
                   "application/json")  # fmt: skip


_REQUEST_RE: Final = re.compile(r"[A-Za-z0-9_-]{8,64}")


def _request_id(value: object) -> str | None:
    """The page's id of an action (None: none given); anything else is refused."""
    if value is None:
        return None
    if not isinstance(value, str) or not _REQUEST_RE.fullmatch(value):
        raise ValueError("request: 8 to 64 letters, digits, - or _")
    return value


def serve_http(
    state: DeskState,
    port: int = 8080,
    host: str = "127.0.0.1",
    *,
    access: OrganiserAccess | None = None,
) -> ThreadingHTTPServer:
    """Serve the scoreboard on ``host:port`` (loopback only) in a daemon thread;
    ``server.server_address`` has the port (``port=0``: any free one).

    ``access``: the organiser's key and sessions (:mod:`.sessions`); without it the
    key is a random one nobody is told, so nobody can change the tournament here."""
    if not ipaddress.ip_address(host).is_loopback:
        raise ValueError(f"the desk's page is served on the loopback only, not {host}")
    if access is None:
        access = OrganiserAccess(secrets.token_urlsafe(24))
    handler = type("DeskHandler", (_Handler,), {"state": state, "access": access})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="desk-http", daemon=True).start()
    return server
