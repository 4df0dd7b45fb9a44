"""The league desk's pages: the league's standings, each venue's fixture, the exports.

``serve_league(source, port)`` serves, read-only, on 127.0.0.1 only, in a daemon thread:

``/``
    The league's standings (the tournament's standings table, :mod:`..desk.pages.
    positions`), the venues with a link to each one's fixture, the records that did not
    count (flagged, with the reason), the messages rejected before any check, the holes
    in a table's messages being asked for again or given up (:mod:`.gaps`); a banner
    while the central broker is not connected.
``/sede/<club>``
    That venue's fixture by matchday, each match with its result (chicos, tantos, state),
    and its own entrants' lines of the league's table.
``/temporadas/<archivo>``
    A league desk running a season (``league desk --season``) serves the seasons' public
    pages it writes (:mod:`.season_web`, its ``pages_dir``: ``liga/paginas/``), as
    files, nothing outside that folder; ``/`` links them.
``/export/<standings|matches|games>.<csv|excel.csv|json>``
    The league's exports (:mod:`.exports`: the tournament's standings and matches, and
    the games: every chico counted with its venue, every record not counted with why;
    ``,`` UTF-8 for programs; ``;`` with a BOM and CRLF as a Spanish spreadsheet opens
    it; formulas neutralised). The league desk also writes them into its folder.

``/organizador`` and ``POST /api/liga``
    Without a season: the key conflicts, each with its button to give that table a new
    key (``{"action": "clave", "venue", "table"}``: :meth:`.desk.LeagueDesk.rekey`, the
    answer has the one-time code), the organiser's only. A league desk running a season
    (its ``office``: :mod:`.season_desk`): the organiser's page (:mod:`.season_pages`)
    to name pairs, ask for and confirm changes and assign tables (the key conflicts
    first, with their re-key), the organiser's only, as the tournament desk's page is
    (:mod:`..desk.sessions`: ``POST /api/entrar`` with the key, a session cookie, the
    CSRF token in every write; the Origin and ``Sec-Fetch-Site`` checks); a refusal is a
    409 with the reason in Spanish. With a season, ``/`` shows the standings per division and group.

Only verified, counted records reach these views: they are folds of the league desk's
count (:class:`.collect.Collected`). Every request is checked for its Host as the
tournament desk's pages are (a page loaded from another name, DNS rebinding, gets 421);
nothing else is written here (any other ``POST`` gets 405). The builders are pure
functions of the league and its count.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import secrets
import threading
from collections.abc import Sequence
from http import HTTPStatus
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Final, Protocol
from urllib.parse import quote, unquote, urlsplit

from ..competition.model import Match
from ..desk.exports import standings_of
from ..desk.pages.common import STATUS_TEXT, document, entrant_name, h, score_text
from ..desk.pages.positions import LEGEND, standings_table
from ..desk.sessions import OrganiserAccess
from ..desk.web import _Handler
from ..wire.topics import encode
from .collect import Collected
from .errors import LeagueError
from .exports import EXPORT_NAMES, league_export_text
from .fixture import fixture
from .gaps import Hole
from .inbox import RejectedCentral
from .model import League
from .season_desk import SeasonOffice
from .season_pages import keys_page, login_page, organiser_page, season_standings
from .standings import season

__all__ = [
    "EXPORT_NAMES",
    "LeagueSource",
    "league_exports",
    "serve_league",
    "standings_page",
    "venue_page",
]


class LeagueSource(Protocol):
    """What the pages read: the league and its count (a :class:`.desk.LeagueDesk`)."""

    league: League

    def snapshot(self) -> Collected: ...

    def rejections(self) -> tuple[RejectedCentral, ...]: ...

    def connected(self) -> bool | None: ...

    def holes(self) -> tuple[list[Hole], list[Hole]]: ...


log = logging.getLogger(__name__)

_CSS: Final = """
body{padding:1em 1.5em;background:#0f3d24;color:#f4f1e8}
a{color:#ffe082}h1{margin:.2em 0}h2{margin:1.2em 0 .4em}
table{width:100%;margin:.4em 0}td,th{padding:.3em .5em;border-bottom:1px solid #2d6b46;
text-align:left}th{font-weight:600}.club{color:#a5c8b3;font-size:.85em}
.lost{background:#b71c1c;color:#fff;padding:.6em 1em;border-radius:4px;font-weight:700}
.exports a{margin-right:.8em}.flag td{color:#ffcdd2}.legend{font-size:.85em}
"""

_REFRESH: Final = "setTimeout(() => location.reload(), 15000);"

_EXPORT_TEXT: Final = {
    "standings": "posiciones",
    "matches": "partidos",
    "games": "chicos",
}


def _exports_links() -> str:
    links = []
    for name in EXPORT_NAMES:
        stem, _, kind = name.partition(".")
        what = {"csv": "CSV", "excel.csv": "CSV para Excel", "json": "JSON"}[kind]
        links.append(f'<a href="/export/{h(name)}">{h(_EXPORT_TEXT[stem])} ({h(what)})</a>')
    return f'<p class="exports">Exportar: {" ".join(links)}</p>'


_LINK: Final = {
    False: "SIN CONEXIÓN CON EL BROKER CENTRAL: la tabla es la de lo que llegó hasta el corte "
    "(lo que las sedes manden mientras tanto llega cuando vuelva)",
    None: "Todavía sin conexión con el broker central",
}


def _conflicts(count: Collected) -> str:
    """Someone else holds a venue table's key: first on the page, with the games to
    review."""
    if not count.conflicts:
        return ""
    items = "".join(f"<li>{h(k.text)}</li>" for k in count.conflicts)
    return (
        '<section id="conflicts" role="alert" class="lost"><h2>Choque de claves</h2>'
        f'<ul>{items}</ul><p>Cambiale la clave a esa mesa desde <a href="/organizador">la '
        "página del organizador</a> y revisá esas partidas antes de seguir.</p></section>"
    )


def standings_page(
    league: League,
    count: Collected,
    rejected: Sequence[RejectedCentral] = (),
    connected: bool | None = True,
    holes: tuple[Sequence[Hole], Sequence[Hole]] = ((), ()),
    *,
    seasons: bool = False,
    season_tables: str | None = None,
) -> str:
    """``/``: the league's table, its venues, what did not count, the venues' messages
    being asked for again or given up (``holes``: open, given up), and a banner while the
    central broker is not connected; ``seasons``: a link to the seasons' public pages
    (``/temporadas/``: groups, final phase, players); ``season_tables``: a season's
    standings by division and group (:func:`.season_pages.season_standings`) instead of
    the league's one table."""
    t = season(league, count, club_names=True)
    lines = standings_of(t)
    decided = sum(1 for m in t.matches if m.result.winner is not None)
    parts = [
        f'<p id="link" role="alert" class="lost">{h(_LINK[connected])}</p>'
        if connected is not True
        else "",
        f"<h1>Liga {h(league.name)}</h1>",
        '<p id="seasons"><a href="/temporadas/index.html">Fixture, llave y jugadores (las '
        'páginas públicas de las temporadas)</a> · <a href="/organizador">Parejas, cambios '
        "y mesas (organizador)</a></p>"
        if seasons
        else "",
        _conflicts(count),
        f'<p class="muted" id="summary">{decided} de {len(t.matches)} partidos terminados · '
        f"{len(count.counted)} registros contados · {len(count.flags)} sin contar · "
        f"{count.repeats} repetidos</p>",
        "<h2>Posiciones</h2>",
        standings_table(t, lines) if season_tables is None else season_tables,
        f'<p class="legend">{h(LEGEND)}. Solo cuentan los registros verificados.</p>',
        _exports_links(),
        '<h2>Sedes</h2><ul id="venues">',
    ]
    for c in league.clubs:
        hosted = [m for m in fixture(league) if m.venue == c.id]
        ids = {x.id for x in hosted}
        done = sum(1 for m in t.matches if m.id in ids and m.result.winner is not None)
        parts.append(
            f'<li><a href="/sede/{quote(c.id)}">{h(c.name)}</a> '
            f'<span class="club">{done} de {len(hosted)} partidos jugados</span></li>'
        )
    parts.append("</ul><h2>Registros que no cuentan</h2>")
    if count.flags:
        rows = "".join(
            f'<tr class="flag"><td>{h(f.check.venue)}</td><td>{h(f.check.table)}</td>'
            f"<td>{h(f.check.game)}</td><td>{h(f.check.match or '')}</td>"
            f"<td>{h(f.reason)}</td></tr>"
            for f in count.flags
        )
        parts.append(
            '<table id="flags"><thead><tr><th>Sede</th><th>Mesa</th><th>Partida</th>'
            f"<th>Partido</th><th>Motivo</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    else:
        parts.append('<p id="flags">Ninguno: todo lo que llegó está verificado.</p>')
    if rejected:
        rows = "".join(
            f"<tr><td>{h(r.venue or '?')}</td><td>{h(r.topic)}</td><td>{h(r.reason)}</td></tr>"
            for r in rejected
        )
        parts.append(
            '<h2>Mensajes rechazados</h2><p class="muted">Nunca se cuentan: sin firma '
            "válida o de una sede que no es de la liga.</p>"
            '<table id="rejected"><thead><tr><th>Sede</th><th>Tópico</th><th>Motivo</th>'
            f"</tr></thead><tbody>{rows}</tbody></table>"
        )
    asking, lost = holes
    if asking or lost:
        rows = "".join(
            f"<tr><td>{h(x.venue)}</td><td>{h(x.table)}</td><td>{x.first} a {x.last}</td>"
            f"<td>{state}</td></tr>"
            for x, state in [(x, "pedidos de nuevo a la mesa") for x in asking]
            + [(x, "perdidos: la mesa no los dio") for x in lost]
        )
        parts.append(
            '<h2>Mensajes que faltan</h2><p class="muted">Huecos en los mensajes de una mesa '
            "(lo que el broker de su sede perdió): se le piden de nuevo por el puente.</p>"
            '<table id="holes"><thead><tr><th>Sede</th><th>Mesa</th><th>Mensajes</th>'
            f"<th>Estado</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    return document(f"Liga {league.name}: posiciones", "".join(parts), css=_CSS, script=_REFRESH)


def _points(m: Match) -> str:
    return f"{m.result.points[0]}-{m.result.points[1]}" if m.games else ""


def venue_page(league: League, count: Collected, club_id: str) -> str:
    """``/sede/<club>``: the venue's matches by matchday, with their results.

    Raises :class:`~.errors.UnknownClub` for a club not in the league."""
    club = league.club(club_id)
    t = season(league, count, club_names=True)
    by_id = {m.id: m for m in t.matches}
    hosted = [m for m in fixture(league) if m.venue == club.id]
    parts = [
        '<p><a href="/">Posiciones de la liga</a></p>',
        f"<h1>{h(club.name)}</h1>",
        f'<p class="muted">Fixture de la sede en la liga {h(league.name)}: '
        f"{len(hosted)} partidos, al mejor de {league.rules.best_of} chicos.</p>",
    ]
    day = 0
    rows: list[str] = []

    def close_day() -> None:
        if rows:
            parts.append(
                '<table class="fixture"><thead><tr><th>Partido</th><th>Local</th>'
                '<th>Visitante</th><th class="n">Chicos</th><th class="n">Tantos</th>'
                f"<th>Estado</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
            )
            rows.clear()

    for lm in hosted:
        if lm.matchday != day:
            close_day()
            day = lm.matchday
            parts.append(f"<h2>{h(lm.label)}, {h(lm.date.strftime('%d/%m/%Y'))}</h2>")
        m = by_id[lm.id]
        winner = m.result.winner
        home = h(entrant_name(t, lm.home))
        away = h(entrant_name(t, lm.away))
        home = f"<b>{home}</b>" if winner == lm.home else home
        away = f"<b>{away}</b>" if winner == lm.away else away
        rows.append(
            f'<tr data-match="{h(lm.id)}"><td>{h(lm.id)}</td><td>{home}</td><td>{away}</td>'
            f'<td class="n">{h(score_text(m) if m.games else "")}</td>'
            f'<td class="n">{h(_points(m))}</td>'
            f"<td>{h(STATUS_TEXT[m.result.status])}</td></tr>"
        )
    close_day()
    if not hosted:
        parts.append("<p>Esta sede no recibe partidos en el fixture.</p>")
    home_lines = [s for s in standings_of(t) if league.entrant(s.entrant).club == club.id]
    if home_lines:
        parts.append("<h2>Sus equipos en la liga</h2>")
        parts.append(standings_table(t, home_lines))
    return document(f"{club.name}: fixture", "".join(parts), css=_CSS, script=_REFRESH)


def league_exports(league: League, count: Collected, name: str) -> str:
    """The export called ``name`` (one of :data:`EXPORT_NAMES`); :class:`KeyError` else."""
    return league_export_text(name, league, count)


_KINDS: Final = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
}


class _LeagueHandler(_Handler):
    server_version = "truco-league-desk"
    source: LeagueSource  # set on the subclass made by serve_league

    def do_GET(self) -> None:
        if not self._own_host():
            self._refuse(HTTPStatus.MISDIRECTED_REQUEST, "this page answers only its own host")
            return
        path = unquote(urlsplit(self.path).path)
        league = self.source.league
        count = self.source.snapshot()
        office = getattr(self.source, "office", None)
        if path in ("/", "/index.html", "/posiciones"):
            tables = None
            if office is not None:
                try:
                    tables = season_standings(league, office.season(), count)
                except LeagueError as e:  # the season's file no longer reads: said on the page
                    tables = f'<p class="lost">{h(str(e))}</p>'
            page = standings_page(
                league, count, self.source.rejections(), self.source.connected(),
                self.source.holes(),
                seasons=getattr(self.source, "pages_dir", None) is not None,
                season_tables=tables,
            )  # fmt: skip
            self._send(200, page.encode("utf-8"), "text/html; charset=utf-8")
        elif path == "/organizador":
            self._organiser_page(office, count)
        elif path.startswith("/temporadas/"):
            self._season_file(path[len("/temporadas/") :])
        elif m := re.fullmatch(r"/sede/([^/]{1,64})", path):
            if m[1] not in {c.id for c in league.clubs}:
                self._refuse(404, f"la sede {m[1]!r} no es de la liga")
                return
            page = venue_page(league, count, m[1])
            self._send(200, page.encode("utf-8"), "text/html; charset=utf-8")
        elif path.startswith("/export/") and path[len("/export/") :] in EXPORT_NAMES:
            name = path[len("/export/") :]
            body = league_exports(league, count, name).encode("utf-8")
            kind = _KINDS["json" if name.endswith(".json") else "csv"]
            disposition = f'attachment; filename="{league.name}-{name}"'
            self._send(200, body, kind, (("Content-Disposition", disposition),))
        else:
            self._refuse(404, "no existe esa página")

    def _season_file(self, rest: str) -> None:
        """A file of the season's public pages (the desk's ``pages_dir``), read-only;
        nothing outside that folder."""
        base = getattr(self.source, "pages_dir", None)
        kinds = {".html": "text/html; charset=utf-8", ".csv": _KINDS["csv"],
                 ".json": _KINDS["json"]}  # fmt: skip
        if base is None:
            self._refuse(404, "esta mesa de la liga no escribe páginas de temporada")
            return
        root = Path(base).resolve()
        target = (root / (rest or "index.html")).resolve()
        if not target.is_relative_to(root) or target.suffix not in kinds or not target.is_file():
            self._refuse(404, "no existe esa página")
            return
        self._send(200, target.read_bytes(), kinds[target.suffix])

    def _organiser_page(self, office: SeasonOffice | None, count: Collected) -> None:
        html = "text/html; charset=utf-8"
        session = self.access.session(self._cookie())
        if session is None:
            self._send(200, login_page(self.source.league.name).encode("utf-8"), html)
            return
        if office is None:  # no season: the key conflicts and their re-key only
            page = keys_page(self.source.league.name, count.conflicts, session.csrf)
            self._send(200, page.encode("utf-8"), html)
            return
        try:
            season = office.season()
        except LeagueError as e:
            self._refuse(500, str(e))
            return
        tables = {c.id: office.venue_tables(c.id) for c in season.clubs}
        where = {m: w for w, m in office.tables.items()}
        page = organiser_page(season, count.played, tables, where, session.csrf,
                              count.conflicts)  # fmt: skip
        self._send(200, page.encode("utf-8"), html)

    def do_POST(self) -> None:
        if not self._own_host():
            self._refuse(HTTPStatus.MISDIRECTED_REQUEST, "this page answers only its own host")
            return
        office = getattr(self.source, "office", None)
        path = urlsplit(self.path).path
        if path not in ("/api/entrar", "/api/salir", "/api/liga"):
            self._refuse(HTTPStatus.METHOD_NOT_ALLOWED,
                         "las páginas de la liga son de solo lectura")  # fmt: skip
            return
        if not self._same_origin():
            self._refuse(HTTPStatus.FORBIDDEN, "cross-origin writes are refused")
            return
        if not self.headers.get("Content-Type", "").startswith("application/json"):
            self._refuse(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "se espera JSON")
            return
        if path != "/api/liga":
            self._log_in() if path == "/api/entrar" else self._log_out()
            return
        kind = "application/json"
        if not self._organiser_may_write():
            self._send(HTTPStatus.UNAUTHORIZED, encode({"error": "Solo el organizador: "
                       "entrá con la clave del organizador"}), kind)  # fmt: skip
            return
        try:
            body = self._json_body(100_000)
            if not isinstance(body, dict):
                raise ValueError
        except ValueError:
            self._send(HTTPStatus.BAD_REQUEST, encode({"error": "se espera un objeto JSON"}),
                       kind)  # fmt: skip
            return
        extra: dict[str, str] = {}
        try:
            if body.get("action") == "clave":
                extra = self._league_rekey(body)
                done = extra.pop("ok")
            elif office is None:
                raise LeagueError("Esta mesa de la liga no lleva una temporada (--season): "
                                  "acá solo se cambia la clave de una mesa")  # fmt: skip
            else:
                done = office.act(body)
        except LeagueError as e:
            self._send(HTTPStatus.CONFLICT, encode({"error": str(e)}), kind)
            return
        log.info("league desk: the organiser's page: %s", done)
        self._send(200, encode({"ok": done, **extra}), kind)

    def _league_rekey(self, body: dict[str, object]) -> dict[str, str]:
        """``{"action": "clave", "venue": ..., "table": ...}``: a new key for that table
        after a key conflict (:meth:`.desk.LeagueDesk.rekey`); the answer (shown once on
        the page) has the one-time code to type at the real table."""
        rekey = getattr(self.source, "rekey", None)
        venue, table = body.get("venue"), body.get("table")
        if rekey is None or not isinstance(venue, str) or not isinstance(table, str):
            raise LeagueError("Falta la sede o la mesa a la que cambiarle la clave")
        code: str = rekey(venue, table)
        ok = (f"Código de {table} (sede {venue}): {code}. En la mesa {table}, escribí "
              f"truco-table rekey --config /etc/truco-table/table.toml {code} y "
              "reiniciala. Anotalo: no se muestra de nuevo.")  # fmt: skip
        return {"ok": ok, "code": code, "venue": venue, "table": table}

    do_PUT = do_DELETE = do_PATCH = do_POST


def serve_league(
    source: LeagueSource,
    port: int = 8090,
    host: str = "127.0.0.1",
    *,
    access: OrganiserAccess | None = None,
) -> ThreadingHTTPServer:
    """Serve the league's pages on ``host:port`` (loopback only) in a daemon thread;
    ``server.server_address`` has the port (``port=0``: any free one). ``access``: the
    organiser's key and sessions for ``/organizador`` (without it, a random key nobody
    is told: nobody can write)."""
    if not ipaddress.ip_address(host).is_loopback:
        raise ValueError(f"the league desk's pages are served on the loopback only, not {host}")
    if access is None:
        access = OrganiserAccess(secrets.token_urlsafe(24))
    handler = type("LeagueHandler", (_LeagueHandler,), {"source": source, "access": access})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="league-http", daemon=True).start()
    return server
