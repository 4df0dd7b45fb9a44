"""The league's public pages (Spanish, read-only): a static site written into a folder
that any web server (or a browser, from disk) shows, with every season kept.

For each season ``<n>/``: ``index.html`` (each division's regional groups' standings
and its final phase: the knockout's bracket or the final group's table, and the
promotion and relegation once decided), ``fixture.html`` (every match by date with its
venue, pairs and result), ``jugadores.html`` (every player's club, rating and main
figures), ``jugador-<id>.html`` (one player's statistics and chicos) and the exports
``jugadores.csv`` / ``jugadores.json`` (ratings and statistics). The site's
``index.html`` lists the seasons (the history) and links to each. Ratings carry over
from one season to the next (:mod:`.ratings`); statistics are per season.

Pure builders (:func:`season_pages`) and one writer (:func:`write_site`).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..competition.model import Standing
from ..desk.pages.common import document, h
from .model import Chico, LeagueMatch
from .ratings import Rating, rate, season_chicos
from .rosters import names
from .season import (
    FinalFormat,
    Season,
    division_order,
    final_matches,
    final_standings,
    group_standings,
    movements,
    season_matches,
)
from .standings import match_result
from .stats import PlayerStats, season_stats

__all__ = ["SeasonRecord", "season_pages", "site_pages", "write_site"]

CSS = """
table{border-collapse:collapse;margin:.4em 0 1.2em}td,th{border:1px solid #bbb;padding:.25em .6em}
th{background:#eee}td.n{text-align:right}nav a{margin-right:1em}.bracket{display:flex;gap:2em}
.round{display:flex;flex-direction:column;justify-content:space-around;gap:1em}
.tie{border:1px solid #888;padding:.3em .6em;min-width:14em}.tie .w{font-weight:bold}
.up{color:#075}.down{color:#a00}
"""


@dataclass(frozen=True)
class SeasonRecord:
    """One season as kept: its values, the chicos counted per match, and each counted
    chico's record (``(match, number)``: text) for the statistics."""

    season: Season
    played: Mapping[str, tuple[Chico, ...]]
    texts: Mapping[tuple[str, int], str]


def _nav(season: Season) -> str:
    n = season.number
    return (
        f'<nav><a href="../index.html">Temporadas</a><a href="index.html">Posiciones {n}</a>'
        '<a href="fixture.html">Fixture</a><a href="jugadores.html">Jugadores</a></nav>'
    )


def _standings_table(season: Season, rows: Sequence[Standing]) -> str:
    out = ["<table><tr><th>#</th><th>Sede</th><th>PJ</th><th>PG</th><th>PP</th>"
           "<th>Chicos</th><th>Tantos</th></tr>"]  # fmt: skip
    for s in rows:
        out.append(
            f"<tr><td class=n>{s.rank}</td><td>{h(season.club(s.entrant).name)}</td>"
            f"<td class=n>{s.played}</td><td class=n>{s.won}</td><td class=n>{s.lost}</td>"
            f"<td class=n>{s.games_won}-{s.games_lost}</td>"
            f"<td class=n>{s.points_for}-{s.points_against}</td></tr>"
        )
    out.append("</table>")
    return "".join(out)


def _result(season: Season, m: LeagueMatch, played: Mapping[str, tuple[Chico, ...]]) -> str:
    r = match_result(season.rules, m, played.get(m.id, ()))
    if not played.get(m.id):
        return "por jugar"
    return f"{r.games[0]}-{r.games[1]}" + ("" if r.winner else " (en juego)")


def standings_page(record: SeasonRecord) -> str:
    season, played = record.season, record.played
    body = [f"<h1>Liga {h(season.league)}: temporada {season.number}</h1>", _nav(season)]
    for d in season.divisions:
        body.append(f"<h2>{h(d.name)}</h2>")
        for g in d.groups:
            body.append(f"<h3>{h(g.name)}</h3>")
            body.append(_standings_table(season, group_standings(season, d, g, played)))
        body.append("<h3>Fase final</h3>")
        finals = final_matches(season, d, played)
        if not finals:
            body.append(f"<p>Juegan los mejores {d.final_size} cuando terminen los grupos.</p>")
        elif d.final is FinalFormat.GROUP:
            venue = season.club(d.final_venue or "").name
            body.append(f"<p>Grupo final en {h(venue)}.</p>")
            body.append(_standings_table(season, final_standings(season, d, played)))
        else:
            rounds: dict[str, list[LeagueMatch]] = {}
            for m in finals:
                rounds.setdefault(m.label, []).append(m)
            body.append('<div class="bracket">')
            for label, ms in rounds.items():
                body.append(f'<div class="round"><b>{h(label.split(", ", 1)[-1])}</b>')
                for m in ms:
                    r = match_result(season.rules, m, played.get(m.id, ()))
                    sides = []
                    for k, club in enumerate((m.home, m.away)):
                        cls = ' class="w"' if r.winner == club else ""
                        sides.append(f"<div{cls}>{h(season.club(club).name)} {r.games[k]}</div>")
                    body.append(f'<div class="tie">{"".join(sides)}</div>')
                body.append("</div>")
            body.append("</div>")
        order = division_order(season, d, played)
        if order:
            body.append(f"<p>Campeón: <b>{h(season.club(order[0]).name)}</b></p>")
    moved = movements(season, played)
    if moved:
        body.append("<h2>Ascensos y descensos</h2><ul>")
        for mv in moved:
            up = season.divisions.index(season.division(mv.to_division)) < season.divisions.index(
                season.division(mv.from_division))  # fmt: skip
            word = "sube" if up else "baja"
            body.append(f'<li class="{"up" if up else "down"}">{h(season.club(mv.club).name)} '
                        f"{word} de {h(season.division(mv.from_division).name)} a "
                        f"{h(season.division(mv.to_division).name)}</li>")  # fmt: skip
        body.append("</ul>")
    return document(f"Liga {season.league} {season.number}", "".join(body), css=CSS)


def fixture_page(record: SeasonRecord) -> str:
    season, played = record.season, record.played
    who = names(season.roster_of)
    body = [f"<h1>Fixture {season.number}</h1>", _nav(season),
            "<table><tr><th>Fecha</th><th>Partido</th><th>Sede</th><th>Local</th>"
            "<th>Visitante</th><th>Chicos</th></tr>"]  # fmt: skip
    for m in sorted(season_matches(season, played), key=lambda m: (m.date, m.id)):
        pairs = season.players(m, 1)
        sides = []
        for k, club in enumerate((m.home, m.away)):
            pair = ", ".join(who.get(p, p) for p in pairs[k]) if pairs else "pareja sin nombrar"
            sides.append(f"{h(season.club(club).name)}<br><small>{h(pair)}</small>")
        for sub in season.substitutions:
            if sub.match == m.id and sub.confirmed:
                k = 0 if sub.club == m.home else 1
                sides[k] += (f"<br><small>desde el chico {sub.from_chico}: "
                             f"{h(who.get(sub.into, sub.into))} por "
                             f"{h(who.get(sub.out, sub.out))}</small>")  # fmt: skip
        body.append(f"<tr><td>{m.date.strftime('%d/%m/%Y')}</td><td>{h(m.label)}</td>"
                    f"<td>{h(season.club(m.venue).name)}</td><td>{sides[0]}</td>"
                    f"<td>{sides[1]}</td><td>{h(_result(season, m, played))}</td>"
                    "</tr>")  # fmt: skip
    body.append("</table>")
    return document(f"Fixture {season.number}", "".join(body), css=CSS)


COLUMNS = [
    ("chicos", "Chicos"), ("hands", "Manos"), ("points", "Tantos"),
    ("envidos_won", "Envidos ganados"), ("envido_points_won", "Tantos de envido a favor"),
    ("envidos_lost", "Envidos perdidos"), ("envido_points_lost", "Tantos de envido en contra"),
    ("truco_calls", "Trucos cantados"), ("truco_accepted", "Trucos queridos"),
    ("truco_won", "Trucos ganados"), ("flores", "Flores"), ("mazos", "Mazos"),
]  # fmt: skip


def _club_of(season: Season) -> dict[str, str]:
    return {p.id: r.club for r in season.roster_of.values() for p in r.players}


def players_page(record: SeasonRecord, ratings: Mapping[str, Rating],
                 stats: Mapping[str, PlayerStats]) -> str:  # fmt: skip
    season = record.season
    who, club = names(season.roster_of), _club_of(season)
    body = [f"<h1>Jugadores {season.number}</h1>", _nav(season),
            "<p>Puntaje: el de OpenSkill (Plackett-Luce) con todos los chicos contados, "
            "μ − 3σ: lo que el jugador vale como mínimo; empieza en 0.</p>",
            "<table><tr><th>#</th><th>Jugador</th><th>Sede</th><th>Puntaje</th><th>Chicos</th>"
            "<th>Ganados</th><th>Tantos por mano</th></tr>"]  # fmt: skip
    ranked = sorted(who, key=lambda p: (-(ratings[p].shown if p in ratings else -99.0), p))
    for n, p in enumerate(ranked, start=1):
        r = ratings.get(p)
        s = stats.get(p)
        body.append(
            f'<tr><td class=n>{n}</td><td><a href="jugador-{h(p)}.html">{h(who[p])}</a></td>'
            f"<td>{h(season.club(club[p]).name)}</td>"
            f"<td class=n>{'—' if r is None else format(r.shown, '.2f')}</td>"
            f"<td class=n>{0 if s is None else s.chicos}</td>"
            f"<td class=n>{0 if r is None else r.won}</td>"
            f"<td class=n>{'—' if s is None else format(s.points_per_hand, '.2f')}</td></tr>"
        )
    body.append('</table><p>Exportar: <a href="jugadores.csv">CSV</a> · '
                '<a href="jugadores.json">JSON</a></p>')  # fmt: skip
    return document(f"Jugadores {season.number}", "".join(body), css=CSS)


def player_page(record: SeasonRecord, player: str, rating: Rating | None,
                stats: PlayerStats | None) -> str:  # fmt: skip
    season = record.season
    who, club = names(season.roster_of), _club_of(season)
    body = [f"<h1>{h(who[player])}</h1>", _nav(season),
            f"<p>{h(season.club(club[player]).name)}, temporada {season.number}. "]  # fmt: skip
    if rating is not None:
        body.append(f"Puntaje {rating.shown:.2f} (μ {rating.mu:.2f}, σ {rating.sigma:.2f}), "
                    f"{rating.won} chicos ganados de {rating.chicos}.</p>")  # fmt: skip
    else:
        body.append("Todavía no jugó.</p>")
    s = stats or PlayerStats(player)
    body.append("<table>")
    for key, label in COLUMNS:
        body.append(f"<tr><th>{h(label)}</th><td class=n>{getattr(s, key)}</td></tr>")
    body.append(f"<tr><th>Tantos por mano</th><td class=n>{s.points_per_hand:.2f}</td></tr>")
    body.append("</table>")
    return document(who[player], "".join(body), css=CSS)


def _exports(record: SeasonRecord, ratings: Mapping[str, Rating],
             stats: Mapping[str, PlayerStats]) -> tuple[str, str]:  # fmt: skip
    season = record.season
    who, club = names(season.roster_of), _club_of(season)
    rows = []
    for p in sorted(who):
        r, s = ratings.get(p), stats.get(p) or PlayerStats(p)
        row: dict[str, object] = {"jugador": p, "nombre": who[p], "sede": club[p],
                                  "puntaje": None if r is None else round(r.shown, 6),
                                  "mu": None if r is None else round(r.mu, 6),
                                  "sigma": None if r is None else round(r.sigma, 6)}  # fmt: skip
        for key, _ in COLUMNS:
            row[key] = getattr(s, key)
        row["tantos_por_mano"] = round(s.points_per_hand, 4)
        rows.append(row)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else ["jugador"])
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _safe(v) for k, v in row.items()})
    return buf.getvalue(), json.dumps(rows, ensure_ascii=False, indent=1) + "\n"


def _safe(v: object) -> object:
    """A cell a spreadsheet will not run as a formula."""
    if isinstance(v, str) and v[:1] in ("=", "+", "-", "@"):
        return "'" + v
    return "" if v is None else v


def season_pages(record: SeasonRecord, ratings: Mapping[str, Rating]) -> dict[str, str]:
    """One season's files, by name."""
    stats = season_stats(record.season, season_matches(record.season, record.played),
                         record.texts)  # fmt: skip
    pages = {"index.html": standings_page(record), "fixture.html": fixture_page(record),
             "jugadores.html": players_page(record, ratings, stats)}  # fmt: skip
    for p in names(record.season.roster_of):
        pages[f"jugador-{p}.html"] = player_page(record, p, ratings.get(p), stats.get(p))
    pages["jugadores.csv"], pages["jugadores.json"] = _exports(record, ratings, stats)
    return pages


def site_pages(seasons: Sequence[SeasonRecord]) -> dict[str, str]:
    """The whole site: the seasons' list, then each season's files under ``<n>/``
    (ratings carried from each season to the next)."""
    files: dict[str, str] = {}
    ratings: dict[str, Rating] = {}
    items = []
    for record in sorted(seasons, key=lambda r: r.season.number):
        ratings = rate(season_chicos(record.season, record.played), ratings)
        for name, text in season_pages(record, ratings).items():
            files[f"{record.season.number}/{name}"] = text
        divisions = ", ".join(d.name for d in record.season.divisions)
        items.append(f'<li><a href="{record.season.number}/index.html">Temporada '
                     f"{record.season.number}</a> ({h(divisions)})</li>")  # fmt: skip
    league = seasons[0].season.league if seasons else "liga"
    files["index.html"] = document(
        f"Liga {league}",
        f"<h1>Liga {h(league)}</h1><h2>Temporadas</h2><ul>{''.join(reversed(items))}</ul>",
        css=CSS,
    )
    return files


def write_site(folder: str | Path, seasons: Sequence[SeasonRecord]) -> list[Path]:
    """Write the site into ``folder`` (created); returns the files written."""
    base = Path(folder)
    out = []
    for name, text in site_pages(seasons).items():
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        out.append(path)
    return out
