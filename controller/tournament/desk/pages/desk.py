"""The organiser's desk page: every match of the round at a glance, and what needs
attention first.

:func:`desk_view` is the page's content as plain values (texts in Spanish, from the
tournament and the desk's snapshot of the tables): the page (:func:`desk_page`)
fetches it from ``/api/tournament`` every two seconds and puts it on screen, escaping
every text. What needs attention comes first, in this order: the referee calls, the
other items of the referee's list (``controller.tournament.referee``: a card from
outside the deck, repeated refusals, an undo...), the tables offline with a match, the
audit log and the flagged records (and tables under other house rules), the matches
waiting for a table, and the undecided matches when the rest of the round is done (or
the round to close). One line per match keeps 20 and
more tables on one 1366x768 laptop screen; the page measures itself and packs its rows
tighter (``dense``) when they would not fit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ...competition.model import Match, MatchStatus, Tournament
from .common import (
    FINISHED,
    FORMAT_NAMES,
    STATUS_TEXT,
    current_round,
    document,
    entrant_name,
    round_label,
    score_text,
)

__all__ = ["ATTENTION_ORDER", "desk_page", "desk_view"]

#: The kinds of what needs attention, most urgent first (the box lists them so).
ATTENTION_ORDER: Final = (
    "call", "referee", "offline", "audit", "flagged", "rules", "waiting", "undecided",
)  # fmt: skip

#: The share of a round's matches finished from which the ones still undecided are
#: holding the round up (and are listed for the organiser).
STRAGGLERS_FROM: Final = 0.75

_VERDICT_TEXT: Final = {
    "tampered": "ADULTERADO",
    "unsealed": "sin sello",
    "unreadable": "ilegible",
    "unchecked": "sin verificar",
}


def _table_line(t: Mapping[str, Any] | None, broker_down: bool) -> tuple[str, str]:
    """What the desk knows of a table now: ``(text, css class)``."""
    if t is None:
        return "sin noticias", "off"
    if broker_down:
        return "¿? sin broker", "off"
    if t.get("held_back"):
        return f"retenida (espera la #{t.get('waiting_for')})", "held"
    online = t.get("online")
    if online is None:
        return "sin noticias", "off"
    if not online:
        return (
            ("apagada", "off")
            if t.get("offline_reason") == "stopped"
            else ("FUERA DE LÍNEA", "off")
        )
    return "en línea", "on"


def _live(t: Mapping[str, Any] | None, m: Match) -> str:
    """The table's live score while the match is at it: ``17-12 · mano 5``."""
    if t is None or m.result.status not in (MatchStatus.ASSIGNED, MatchStatus.PLAYING):
        return ""
    if not t.get("game"):
        return ""
    score = t.get("score") or [0, 0]
    hand = t.get("hand") or 0
    return f"{score[0]}-{score[1]}" + (f" · mano {hand}" if hand else "")


def _is_offline(t: Mapping[str, Any] | None, broker_down: bool) -> bool:
    return not broker_down and (t is None or t.get("online") is not True)


def _match_status(m: Match) -> str:
    """The match's state (its winner is in bold on the row); the organiser's reason."""
    text = STATUS_TEXT[m.result.status]
    if m.result.reason:
        text += f" ({m.result.reason})"
    return text


def desk_view(t: Tournament, snapshot: Mapping[str, Any], audit_ok: bool = True) -> dict[str, Any]:
    """The desk page's content (see the module docstring): plain values, for JSON."""
    tables: dict[str, Mapping[str, Any]] = {x["table"]: x for x in snapshot.get("tables", [])}
    broker_down = snapshot.get("broker", {}).get("connected") is False
    round_no = current_round(t)
    matches = t.round_matches(round_no)
    at_table = {
        m.table: m for m in matches if m.table is not None and m.result.status not in FINISHED
    }
    attention: list[dict[str, str]] = []

    def need(kind: str, text: str, table: str | None = None, seq: int | None = None) -> None:
        """One item; ``seq``: the referee's item (the event) that *visto* acknowledges."""
        item = {"kind": kind, "text": text, "table": table or ""}
        attention.append(item | ({"seq": str(seq)} if seq is not None else {}))

    def where(table: str) -> str:
        m = at_table.get(table)
        return table + (f" ({m.id}, {m.label})" if m is not None else "")

    for name, x in tables.items():
        for a in x.get("attention", []):  # the referee's list, not yet acknowledged
            seat = a.get("seat")
            who = f", asiento {seat}" if seat is not None else ""
            seq = a.get("seq")
            if a.get("concern") == "called":
                need("call", f"Llaman al árbitro en {where(name)}{who}", name, seq)
            else:
                need("referee", f"{a.get('words')} en {where(name)}{who}: {a.get('text', '')}",
                     name, seq)  # fmt: skip
    for m in matches:
        if m.table is not None and m.result.status not in FINISHED:
            seen = tables.get(m.table)
            if _is_offline(seen, broker_down):
                state, _ = _table_line(seen, broker_down)
                need("offline", f"{m.table} {state} con el partido {m.id}: "
                     f"{entrant_name(t, m.pairing.home)} vs {entrant_name(t, m.pairing.away)}",
                     m.table)  # fmt: skip
    if not audit_ok:
        need("audit", "El registro de auditoría del torneo NO verifica: revisalo antes de "
             "seguir (alguien lo cambió o está dañado)")  # fmt: skip
    for r in snapshot.get("results", []):
        if not r.get("ok", True):
            verdict = _VERDICT_TEXT.get(r.get("verdict", ""), r.get("verdict", ""))
            match = r.get("match") or "-"
            about = f" del partido {match}" if match != "-" else ""
            need("flagged", f"Registro {r.get('game')}{about} ({r.get('table')}): "
                 f"{verdict}. {r.get('detail', '')}".rstrip(), r.get("table"))  # fmt: skip
    for name, x in tables.items():
        if x.get("rules_problems"):
            need("rules", f"{name} juega con otras reglas: {'; '.join(x['rules_problems'])}", name)
    busy = {m.table for m in at_table.values()}
    free = [
        name
        for name, x in tables.items()
        if name not in busy and not _is_offline(x, broker_down) and x.get("online")
    ]
    spare = iter(free)
    for m in matches:
        if m.result.status is MatchStatus.WAITING:
            home, away = entrant_name(t, m.pairing.home), entrant_name(t, m.pairing.away)
            offer = next(spare, None)
            hint = f" (libre: {offer})" if offer else " (no hay mesa libre)"
            need("waiting", f"{m.id} espera mesa: {home} vs {away}{hint}")
    undecided = [m for m in matches if m.result.status not in FINISHED]
    done = len(matches) - len(undecided)
    if matches and not undecided and round_no not in t.closed and not t.finished:
        need("undecided", f"{round_label(t, round_no)}: todos los partidos terminaron; "
             "cerrá la ronda para emparejar la siguiente.")  # fmt: skip
    elif undecided and done >= STRAGGLERS_FROM * len(matches):
        for m in undecided:
            at = f" en {m.table}" if m.table else ""
            need("undecided", f"{m.id}{at} sin definir ({score_text(m)}, chico {m.chico} de "
                 f"{m.best_of}): el resto de la ronda terminó")  # fmt: skip
    attention.sort(key=lambda a: ATTENTION_ORDER.index(a["kind"]))

    flags: dict[str, str] = {}
    for a in reversed(attention):  # the most urgent last, so it wins
        if a["table"] and a["kind"] in ("call", "offline", "flagged"):
            flags[a["table"]] = a["kind"]
    rows = []
    for m in matches:
        live = tables.get(m.table) if m.table else None
        table_text, table_class = _table_line(live, broker_down) if m.table else ("", "")
        finished = m.result.status in FINISHED
        rows.append(
            {
                "match": m.id,
                "group": m.group or "",
                "table": m.table or "",
                "table_state": "" if finished else table_text.lower(),
                "table_class": "" if finished else table_class,
                "home": entrant_name(t, m.pairing.home),
                "away": entrant_name(t, m.pairing.away),
                "winner": 0
                if m.result.winner is not None and m.result.winner == m.pairing.home
                else 1
                if m.result.winner is not None
                else None,
                "chico": "" if finished else f"{m.chico} de {m.best_of}",
                "games": score_text(m),
                "live": _live(live, m),
                "status": _match_status(m),
                "flag": flags.get(m.table or "", ""),
                "status_code": m.result.status.value,
            }
        )
    offline = []
    for name, x in tables.items():
        if _is_offline(x, broker_down):
            state, _ = _table_line(x, broker_down)
            held = at_table.get(name)
            offline.append(f"{name}: {state}" + (f" ({held.id})" if held else ""))
    spec = t.spec
    subtitle = (
        f"{FORMAT_NAMES[spec.format]} · al mejor de {spec.best_of}" if spec is not None else ""
    )
    broker = snapshot.get("broker", {})
    return {
        "title": t.name,
        "subtitle": subtitle,
        "round": round_label(t, round_no),
        "broker_lost": "SIN CONEXIÓN CON EL BROKER: estados y tanteadores como se oyeron "
        "por última vez"
        if broker.get("connected") is False
        else "",
        "summary": f"{len(tables)} mesas, {sum(1 for x in tables.values() if x.get('online'))}"
        f" en línea · {done} de {len(matches)} partidos terminados"
        + (" · torneo terminado" if t.finished else ""),
        "attention": attention,
        "matches": rows,
        "offline": offline,
        "free": free,
    }


_CSS: Final = """
html{background:#10281b;color:#f3efe4;font-size:14px}
body{padding:6px 10px;display:grid;grid-template-columns:minmax(0,1fr) 340px;gap:4px 14px;
 grid-template-areas:"head head" "broker broker" "main side";align-items:start}
header{grid-area:head;display:flex;gap:14px;align-items:baseline;flex-wrap:wrap}
main{grid-area:main;min-width:0}aside{grid-area:side;min-width:0}
h1{font-size:20px;margin:0}h2{font-size:14px;margin:2px 0 3px}aside h2{margin-top:8px}
aside h2:first-child{margin-top:0}
#round{font-size:18px;font-weight:700;color:#ffe082}
#broker{grid-area:broker;background:#b71c1c;color:#fff;padding:4px 8px;font-weight:700;
 border-radius:3px}#broker:empty{display:none}
nav{margin-left:auto}
table{width:100%;table-layout:fixed}
th,td{padding:2px 5px;border-bottom:1px solid #2b5a3e;white-space:nowrap;overflow:hidden;
 text-overflow:ellipsis;line-height:18px;text-align:left}
th{font-weight:600;color:#b5d3c0;font-size:12px}
td.w{font-weight:700;color:#b9f6ca}td.vs{text-align:center;color:#9bb8a6;padding:2px 0}
.off{color:#ff8a80;font-weight:700}.on{color:#b9f6ca}.held{color:#ffe082;font-weight:700}
td .off{font-size:12px}tr.playing td.st{color:#ffe082}
tr.waiting td.st{color:#ff8a80;font-weight:700}
tr.done td{color:#c9d6cd}tr.call td{background:#5c1a1a}tr.offline td{background:#43201c}
#attention{list-style:none;margin:0;padding:0}
#attention li{padding:3px 6px;margin-bottom:3px;border-left:5px solid #888;background:#1d3d2b;
 line-height:17px;overflow-wrap:anywhere}
#attention li.call{border-color:#ff5252;background:#5c1a1a;font-weight:700}
#attention li.referee{border-color:#ff5252}
#attention li.offline{border-color:#ff8a80}#attention li.audit,#attention li.flagged,
#attention li.rules{border-color:#ffb74d}#attention li.waiting{border-color:#ffe082}
#attention li.undecided{border-color:#90caf9}
#attention:empty::after{content:"Nada pendiente.";color:#b9f6ca}
#offline{margin:0;padding-left:16px}
a{color:#ffe082}nav{font-size:12px}aside{overflow:hidden}
html.dense{font-size:12px}html.dense th,html.dense td{line-height:15px;padding:1px 4px}
html.dense #attention li{line-height:15px;padding:2px 5px}
"""

_SCRIPT: Final = """
const ESC = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
const esc = s => String(s ?? "").replace(/[&<>"']/g, c => ESC[c]);
const $ = id => document.getElementById(id);
const cls = {waiting: "waiting", assigned: "", playing: "playing", decided: "done",
  bye: "done", walkover: "done", overridden: "done"};
function fit() {
  const root = document.documentElement;
  root.classList.remove("dense");
  if (root.scrollHeight > innerHeight) root.classList.add("dense");
  root.dataset.height = root.scrollHeight;
  root.dataset.viewport = innerHeight + "x" + innerWidth;
}
function show(d) {
  document.title = "Mesa de control: " + d.title;
  $("title").textContent = d.title;
  $("subtitle").textContent = d.subtitle;
  $("round").textContent = d.round;
  $("summary").textContent = d.summary;
  $("broker").textContent = d.broker_lost;
  $("attention").innerHTML = d.attention.map(a =>
    `<li class="${esc(a.kind)}" data-kind="${esc(a.kind)}">${esc(a.text)}${a.seq ? ` <button
    data-table="${esc(a.table)}" data-seq="${esc(a.seq)}">visto</button>` : ""}</li>`).join("");
  $("matches").innerHTML = d.matches.map(m => `<tr
    class="${cls[m.status_code] || ""} ${esc(m.flag)}" data-match="${esc(m.match)}">
    <td>${esc(m.match)}</td><td>${esc(m.table)}
    <span class="${esc(m.table_class)}">${esc(m.table_state)}</span></td>
    <td class="${m.winner === 0 ? "w" : ""}" title="${esc(m.home)}">${esc(m.home)}</td>
    <td class="vs">vs</td>
    <td class="${m.winner === 1 ? "w" : ""}" title="${esc(m.away)}">${esc(m.away)}</td>
    <td>${esc(m.chico)}</td><td class="n">${esc(m.games)}</td><td class="n">${esc(m.live)}</td>
    <td class="st" title="${esc(m.status)}">${esc(m.status)}</td></tr>`).join("");
  $("offline").innerHTML = d.offline.map(o => `<li>${esc(o)}</li>`).join("")
    || "<li>ninguna</li>";
  $("free").textContent = d.free.length ? d.free.join(", ") : "ninguna";
  fit();
}
async function refresh() {
  try {
    const s = await (await fetch("/api/tournament")).json();
    show(s.desk);
  } catch (e) {
    $("broker").textContent = "SIN CONEXIÓN CON LA MESA DE CONTROL: los datos no están al día";
  }
}
document.addEventListener("click", async ev => {  // the referee saw it: POST /api/ack
  const b = ev.target.closest("button[data-seq]");
  if (!b) return;
  await fetch("/api/ack", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({table: b.dataset.table, seq: Number(b.dataset.seq)})});
  refresh();
});
refresh(); setInterval(refresh, 2000); addEventListener("resize", fit);
"""

_BODY: Final = """<header><h1 id="title"></h1><span id="round"></span>
<span id="subtitle" class="muted"></span><span id="summary" class="muted"></span>
<nav><a href="/proyector">proyector</a> · <a href="/imprimir/emparejamientos">emparejamientos</a>
· <a href="/imprimir/posiciones">posiciones</a> · <a href="/imprimir/llave">llave</a>
· <a href="/imprimir/planillas">planillas</a> · <a href="/mesas">mesas</a>
· <a href="/export/standings.csv">exportar</a></nav></header>
<div id="broker" role="alert"></div>
<main><table><colgroup><col style="width:66px"><col style="width:176px"><col><col
style="width:24px"><col><col style="width:60px"><col style="width:54px"><col
style="width:126px"><col style="width:136px"></colgroup>
<thead><tr><th>Partido</th><th>Mesa</th><th>Local</th><th></th><th>Visitante</th><th>Chico</th>
<th class="n">Chicos</th><th class="n">Tanteador</th><th>Estado</th></tr></thead>
<tbody id="matches"></tbody></table></main>
<aside><h2>Atención</h2><ul id="attention"></ul>
<h2>Mesas fuera de línea</h2><ul id="offline"></ul>
<h2>Mesas libres</h2><div id="free"></div></aside>"""


def desk_page(tournament_name: str) -> str:
    """The page itself (it fills itself from ``/api/tournament``)."""
    return document(f"Mesa de control: {tournament_name}", _BODY, css=_CSS, script=_SCRIPT)
