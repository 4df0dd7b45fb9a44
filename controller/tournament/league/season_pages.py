"""The league desk's views of a season (``league desk --season``): the standings by
division and group for ``/``, and the organiser's page ``/organizador`` (the pairs, the
changes between chicos, which table plays each match).

Pure builders of HTML (every value escaped); :mod:`.web` routes them and
:mod:`.season_desk` does what the organiser's page sends (``POST /api/liga``, JSON,
with the session's CSRF token).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from ..desk.pages.common import document, h
from ..desk.pages.positions import standings_table
from .collect import Collected, KeyConflict
from .model import Chico, League, LeagueMatch
from .rosters import names
from .season import (
    FinalFormat,
    Season,
    final_matches,
    final_standings,
    group_standings,
    season_matches,
)
from .standings import match_result
from .standings import season as league_table

__all__ = ["keys_page", "login_page", "organiser_page", "rekey_section", "season_standings"]


def _tie(season: Season, m: LeagueMatch, played: Mapping[str, Sequence[Chico]]) -> str:
    r = match_result(season.rules, m, played.get(m.id, ()))
    sides = []
    for k, club in enumerate((m.home, m.away)):
        name = h(season.club(club).name)
        sides.append(f"<b>{name}</b> {r.games[k]}" if r.winner == club else f"{name} {r.games[k]}")
    return f'<li data-match="{h(m.id)}">{h(m.label)}: {" · ".join(sides)}</li>'


def season_standings(league: League, season: Season, count: Collected) -> str:
    """The standings of every division's regional groups and its final phase (a final
    group's table, or the knockout's matches), each table on its own."""
    t = league_table(league, count, club_names=True)
    played = count.played
    out = []
    for d in season.divisions:
        out.append(f'<section class="division" id="division-{h(d.id)}"><h2>{h(d.name)}</h2>')
        for g in d.groups:
            lines = group_standings(season, d, g, played)
            out.append(f'<h3 id="grupo-{h(d.id)}-{h(g.id)}">{h(g.name)}</h3>')
            out.append(standings_table(t, lines, club=False))
        finals = final_matches(season, d, played)
        out.append("<h3>Fase final</h3>")
        if not finals:
            out.append(f"<p>Juegan los mejores {d.final_size} cuando terminen los grupos.</p>")
        elif d.final is FinalFormat.GROUP:
            out.append(standings_table(t, final_standings(season, d, played), club=False))
        else:
            out.append("<ul>" + "".join(_tie(season, m, played) for m in finals) + "</ul>")
        out.append("</section>")
    return "".join(out)


_CSS: Final = """
body{padding:1em 1.5em;background:#0f3d24;color:#f4f1e8}a{color:#ffe082}
table{width:100%;margin:.4em 0}td,th{padding:.3em .5em;border-bottom:1px solid #2d6b46;
text-align:left;vertical-align:top}th{font-weight:600}.muted{color:#a5c8b3;font-size:.85em}
#why{background:#b71c1c;color:#fff;padding:.5em 1em;border-radius:4px;font-weight:700}
#why:empty,#done:empty{display:none}#done{background:#1b5e20;padding:.5em 1em;border-radius:4px}
form{display:inline-flex;gap:.3em;flex-wrap:wrap;align-items:center;margin:.1em 0}
select,input,button{font-size:.9em}
.lost{background:#b71c1c;color:#fff;padding:.6em 1em;border-radius:4px}.lost form{margin-left:.5em}
#done{font-weight:700;font-size:1.1em}
"""

_SCRIPT: Final = """
const CSRF = document.body.dataset.csrf;
async function send(order) {
  document.getElementById("why").textContent = "";
  let r;
  try {
    r = await fetch("/api/liga", {method: "POST", headers: {"Content-Type":
      "application/json", "X-CSRF-Token": CSRF}, body: JSON.stringify(order)});
  } catch (e) {
    document.getElementById("why").textContent = "Sin conexión con la mesa de la liga.";
    return;
  }
  const answer = await r.json().catch(() => ({}));
  if (r.ok) {
    sessionStorage.setItem("done", answer.ok || "Hecho");
    location.reload();
  } else {
    document.getElementById("why").textContent = answer.error || `Error ${r.status}`;
    window.scrollTo(0, 0);
  }
}
document.addEventListener("submit", ev => {
  const f = ev.target.closest("form[data-action]");
  if (!f) return;
  ev.preventDefault();
  const order = {action: f.dataset.action};
  for (const [k, v] of Object.entries(f.dataset)) if (k !== "action") order[k] = v;
  for (const el of f.elements) if (el.name) {
    if (el.name === "players") (order.players ||= []).push(el.value);
    else order[el.name] = el.value;
  }
  send(order);
});
document.getElementById("done").textContent = sessionStorage.getItem("done") || "";
sessionStorage.removeItem("done");
"""


def rekey_section(conflicts: Sequence[KeyConflict]) -> str:
    """The key conflicts, first on the organiser's page, each with its button to give
    that table a new key (:meth:`.desk.LeagueDesk.rekey`): the answer shows the one-time
    code to type at the real table, once."""
    if not conflicts:
        return ""
    items = "".join(
        f'<li>{h(k.text)}<form data-action="clave" data-venue="{h(k.venue)}" '
        f'data-table="{h(k.table)}"><button>Cambiarle la clave a {h(k.table)}</button>'
        "</form></li>"
        for k in conflicts
    )
    return (
        '<section id="conflicts" role="alert" class="lost"><h2>Choque de claves</h2>'
        f"<ul>{items}</ul><p>Cambiale la clave a la mesa: la página te muestra un código "
        "de una sola vez; alguien en la mesa de verdad lo escribe con <code>truco-table "
        "rekey</code> y la reinicia. Lo que llegue con la clave vieja ya no cuenta. Revisá "
        "las partidas contadas desde ese número.</p></section>"
    )


def keys_page(league: str, conflicts: Sequence[KeyConflict], csrf: str) -> str:
    """``/organizador`` of a league desk without a season: the key conflicts and their
    re-key buttons."""
    body = (
        f"<h1>Liga {h(league)}: organizador</h1>"
        '<p><a href="/">Posiciones de la liga</a></p>'
        '<p id="why" role="alert"></p><p id="done" role="status"></p>'
        + (rekey_section(conflicts) or '<p id="conflicts">Ningún choque de claves.</p>')
    )
    page = document(f"Liga {league}: organizador", body, css=_CSS, script=_SCRIPT)
    return page.replace("<body>", f'<body data-csrf="{h(csrf)}">', 1)


def _select(name: str, options: Sequence[tuple[str, str]], chosen: str | None,
            label: str) -> str:  # fmt: skip
    opts = "".join(
        f'<option value="{h(v)}"{" selected" if v == chosen else ""}>{h(text)}</option>'
        for v, text in options
    )
    return f'<select name="{h(name)}" aria-label="{h(label)}">{opts}</select>'


def organiser_page(
    season: Season,
    played: Mapping[str, Sequence[Chico]],
    tables: Mapping[str, Sequence[str]],
    where: Mapping[str, tuple[str, str]],
    csrf: str,
    conflicts: Sequence[KeyConflict] = (),
) -> str:
    """``/organizador``: the key conflicts first (:func:`rekey_section`), every match
    not decided yet, by matchday, with the pair each club named (a form to name it: two
    players of its list), the table that plays it (a form to give it one of its venue's
    tables), the changes asked for with a button to confirm each, and a form to ask for
    one. ``tables``: each venue's tables; ``where``: the (venue, table) each match is on."""
    who = names(season.roster_of)
    parts = [
        f"<h1>Temporada {season.number}: parejas y mesas</h1>",
        '<p><a href="/">Posiciones de la liga</a> · <a href="/temporadas/index.html">'
        "Páginas públicas</a></p>",
        '<p id="why" role="alert"></p><p id="done" role="status"></p>',
        rekey_section(conflicts),
        '<p class="muted">Cada club nombra su pareja antes de que empiece el partido (dos '
        "de su lista de buena fe; la local se sienta en los asientos 0 y 2). La mesa que "
        "juega un partido recibe, firmado, el partido, el chico y los nombres de cada "
        "pareja. Un cambio entre chicos cuenta desde que lo confirmás.</p>",
    ]
    pending = sorted((m for m in season_matches(season, played)
                      if match_result(season.rules, m, played.get(m.id, ())).winner is None),
                     key=lambda m: (m.date, m.id))  # fmt: skip
    day = None
    rows: list[str] = []

    def close() -> None:
        if rows:
            parts.append(
                '<table class="matches"><thead><tr><th>Partido</th><th>Local</th>'
                "<th>Visitante</th><th>Mesa</th></tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table>"
            )
            rows.clear()

    for m in pending:
        if m.date != day:
            close()
            day = m.date
            parts.append(f"<h2>{h(m.date.strftime('%d/%m/%Y'))}</h2>")
        cells = []
        for club in (m.home, m.away):
            lineup = season.lineup(m.id, club)
            roster = season.roster_of.get(club)
            options = [(p.id, p.name) for p in roster.players] if roster else []
            chosen = list(lineup.players) if lineup else [p for p, _ in options]
            now = (" y ".join(h(who.get(p, p)) for p in lineup.players) if lineup
                   else "<i>sin pareja</i>")  # fmt: skip
            selects = "".join(
                _select("players", options, chosen[i] if i < len(chosen) else None,
                        f"jugador {i + 1} de {season.club(club).name}")
                for i in range(season.rules.team_size)
            )  # fmt: skip
            cells.append(
                f'<td data-club="{h(club)}"><b>{h(season.club(club).name)}</b>: '
                f'<span class="pair">{now}</span><br><form data-action="pair" '
                f'data-match="{h(m.id)}" data-club="{h(club)}">{selects}'
                "<button>Nombrar</button></form></td>"
            )
        on = where.get(m.id)
        venue_tables = [(t, t) for t in tables.get(m.venue, ())]
        table_now = (f'<span class="table">{h(on[1])}</span>' if on
                     else "<i>sin mesa</i>")  # fmt: skip
        cells.append(
            f'<td>{table_now}<br><form data-action="assign" data-match="{h(m.id)}" '
            f'data-venue="{h(m.venue)}">'
            f"{_select('table', venue_tables, on[1] if on else None, 'mesa')}"
            "<button>Asignar</button></form></td>"
        )
        chicos = played.get(m.id, ())
        r = match_result(season.rules, m, chicos)
        state = (f"chicos {r.games[0]}-{r.games[1]}, se juega el {len(chicos) + 1}" if chicos
                 else "no empezó")  # fmt: skip
        rows.append(
            f'<tr data-match="{h(m.id)}"><td>{h(m.label)}<div class="muted">{h(m.id)} · en '
            f"{h(season.club(m.venue).name)} · {h(state)}</div></td>{''.join(cells)}</tr>"
        )
    close()
    if not pending:
        parts.append("<p>No quedan partidos por jugar en esta temporada.</p>")
    parts.append("<h2>Cambios entre chicos</h2>")
    subs = season.substitutions
    if subs:
        items = []
        for s in subs:
            state = ("confirmado" if s.confirmed else
                     f'<form data-action="confirm" data-match="{h(s.match)}" '
                     f'data-club="{h(s.club)}" data-from_chico="{s.from_chico}">'
                     "<button>Confirmar</button></form>")  # fmt: skip
            items.append(
                f"<tr><td>{h(s.match)}</td><td>{h(season.club(s.club).name)}</td>"
                f'<td class="n">{s.from_chico}</td><td>{h(who.get(s.out, s.out))}</td>'
                f"<td>{h(who.get(s.into, s.into))}</td><td>{state}</td></tr>"
            )
        parts.append(
            '<table id="subs"><thead><tr><th>Partido</th><th>Club</th><th>Desde el chico</th>'
            f"<th>Sale</th><th>Entra</th><th></th></tr></thead><tbody>{''.join(items)}"
            "</tbody></table>"
        )
    else:
        parts.append('<p id="subs">Ningún cambio pedido.</p>')
    matches = [(m.id, f"{m.id} ({season.club(m.home).name} - {season.club(m.away).name})")
               for m in pending]  # fmt: skip
    clubs = [(c.id, c.name) for c in season.clubs]
    players = [(p.id, f"{p.name} ({season.club(r.club).name})")
               for r in season.rosters for p in r.players]  # fmt: skip
    parts.append(
        '<form data-action="sub" id="ask-sub">'
        f"{_select('match', matches, None, 'partido')}{_select('club', clubs, None, 'club')}"
        '<label>desde el chico <input name="from_chico" type="number" min="2" value="2" '
        'style="width:4em"></label>'
        f"sale {_select('out', players, None, 'sale')} entra "
        f"{_select('into', players, None, 'entra')}<button>Pedir el cambio</button></form>"
    )
    body = "".join(parts)
    page = document(f"Temporada {season.number}: organizador", body, css=_CSS, script=_SCRIPT)
    return page.replace("<body>", f'<body data-csrf="{h(csrf)}">', 1)


_LOGIN_SCRIPT: Final = """
document.getElementById("login").addEventListener("submit", async ev => {
  ev.preventDefault();
  const r = await fetch("/api/entrar", {method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify({clave: document.getElementById("clave").value})});
  if (r.ok) { location.reload(); return; }
  document.getElementById("why").textContent = r.status === 403
    ? "Esa no es la clave del organizador." : `No se pudo entrar (error ${r.status}).`;
});
"""


def login_page(league: str) -> str:
    """``/organizador`` without the organiser's session: the key."""
    body = (
        f"<h1>Liga {h(league)}: organizador</h1><p>Esta página es del organizador de la "
        "liga. Escribí su clave (la del archivo <code>organiser.key</code> de la carpeta "
        "de la mesa de la liga de la temporada).</p>"
        '<form id="login"><input type="password" id="clave" autocomplete="current-password" '
        'autofocus aria-label="clave del organizador"><button>Entrar</button></form>'
        '<p id="why" role="alert"></p><p><a href="/">Posiciones de la liga</a></p>'
    )
    return document(f"Liga {league}: organizador", body, css=_CSS, script=_LOGIN_SCRIPT)
