"""The organiser's desk page: every match of the round at a glance, and what needs
attention first.

:func:`desk_view` is the page's content as plain values (texts in Spanish, from the
tournament and the desk's snapshot of the tables): the page (:func:`desk_page`)
fetches it from ``/api/tournament`` every two seconds and puts it on screen, escaping
every text. What needs attention comes first, in this order: a key conflict or an
assignment the desk did not send (someone else holds a table's key), the referee calls, the
other items of the referee's list (``controller.tournament.desk.referee``: a card from
outside the deck, repeated refusals, an undo...), the tables offline with a match, the
audit log and the flagged records (the desk's, and the games the competition would not
count: :attr:`~..organiser.Organiser.attention`; tables under other house rules), the matches
waiting for a table, and the undecided matches when the rest of the round is done (or
the round to close). One line per match keeps 20 and
more tables on one 1366x768 laptop screen; the page measures itself and packs its rows
tighter (``dense``) when they would not fit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ...competition.model import Match, MatchStatus, Tournament
from ...competition.tournament import final_ranking
from .common import (
    FINISHED,
    FORMAT_NAMES,
    STATUS_TEXT,
    current_round,
    detail_text,
    document,
    entrant_name,
    h,
    round_label,
    score_text,
)
from .controls import CONTROLS_BODY, CONTROLS_CSS, CONTROLS_SCRIPT, CONTROLS_TOGGLE

__all__ = ["ATTENTION_ORDER", "desk_page", "desk_view"]

#: The kinds of what needs attention, most urgent first (the box lists them so).
ATTENTION_ORDER: Final = (
    "conflict", "call", "referee", "offline", "audit", "flagged", "rules", "waiting", "undecided",
)  # fmt: skip

#: The competition's items that go before everything (``conflict``): two senders with a
#: table's key, an assignment the desk did not send.
FIRST: Final = frozenset({"key-conflict", "assignment-differs"})

#: The share of a round's matches finished from which the ones still undecided are
#: holding the round up (and are listed for the organiser).
STRAGGLERS_FROM: Final = 0.75

_VERDICT_TEXT: Final = {
    "intact": "íntegro",
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


def _started_at_table(t: Mapping[str, Any] | None, m: Match) -> bool:
    """The table is dealing the match's first chico already (a game going on at it that
    is not one of its finished ones), though no game of the match has counted yet."""
    if t is None or m.result.status is not MatchStatus.ASSIGNED:
        return False
    game = t.get("game")
    return bool(game) and game not in (t.get("games") or ())


def _match_status(m: Match, live: Mapping[str, Any] | None = None) -> str:
    """The match's state (its winner is in bold on the row); the organiser's reason."""
    if _started_at_table(live, m):
        return STATUS_TEXT[MatchStatus.PLAYING]
    text = STATUS_TEXT[m.result.status]
    if m.result.reason:
        text += f" ({m.result.reason})"
    return text


class _Round:
    """The round being played as the desk sees it now: its matches and the tables."""

    def __init__(self, t: Tournament, snapshot: Mapping[str, Any]) -> None:
        self.t = t
        self.snapshot = snapshot
        self.tables: dict[str, Mapping[str, Any]] = {
            x["table"]: x for x in snapshot.get("tables", [])
        }
        self.broker_down = snapshot.get("broker", {}).get("connected") is False
        self.number = current_round(t)
        self.matches = t.round_matches(self.number)
        #: The match each table has to play (undecided ones only).
        self.at_table = {
            m.table: m
            for m in self.matches
            if m.table is not None and m.result.status not in FINISHED
        }
        self.free = [
            name
            for name, x in self.tables.items()
            if name not in self.at_table and not self.offline(x) and x.get("online")
        ]
        self.undecided = [m for m in self.matches if m.result.status not in FINISHED]

    def offline(self, table: Mapping[str, Any] | None) -> bool:
        return _is_offline(table, self.broker_down)

    def where(self, table: str) -> str:
        m = self.at_table.get(table)
        return table + (f" ({m.id}, {m.label})" if m is not None else "")

    def versus(self, m: Match) -> str:
        return f"{entrant_name(self.t, m.pairing.home)} vs {entrant_name(self.t, m.pairing.away)}"

    # ------------------------------------------------------------------ attention

    def attention(self, audit_ok: bool, notes: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
        """What needs a person, most urgent first (``ATTENTION_ORDER``)."""
        out: list[dict[str, str]] = []

        def need(kind: str, text: str, table: str | None = None, seq: int | None = None,
                 note: str | None = None, rekey: bool = False) -> None:  # fmt: skip
            """One item; ``seq``: the referee's item (the event) that *visto* acknowledges;
            ``note``: the competition's item that *visto* takes off the list; ``rekey``: a
            key conflict, whose table the organiser gives a new key."""
            item = {"kind": kind, "text": text, "table": table or ""}
            item |= {"seq": str(seq)} if seq is not None else {}
            item |= {"note": note} if note else {}
            out.append(item | ({"rekey": table or ""} if rekey else {}))

        for name, x in self.tables.items():
            for a in x.get("attention", []):  # the referee's list, not yet acknowledged
                seat = a.get("seat")
                who = f", asiento {seat}" if seat is not None else ""
                seq = a.get("seq")
                if a.get("concern") == "called":
                    need("call", f"Llaman al árbitro en {self.where(name)}{who}", name, seq)
                else:
                    need("referee", f"{a.get('words')} en {self.where(name)}{who}: "
                         f"{a.get('text', '')}", name, seq)  # fmt: skip
        for table, m in self.at_table.items():
            seen = self.tables.get(table)
            if self.offline(seen):
                state, _ = _table_line(seen, self.broker_down)
                need("offline", f"{table} {state} con el partido {m.id}: {self.versus(m)}", table)
        if not audit_ok:
            need("audit", "El registro de auditoría del torneo NO verifica: revisalo antes de "
                 "seguir (alguien lo cambió o está dañado)")  # fmt: skip
        flagged = [r for r in self.snapshot.get("results", []) if not r.get("ok", True)]
        for r in flagged:
            verdict = _VERDICT_TEXT.get(r.get("verdict", ""), r.get("verdict", ""))
            match = r.get("match") or "-"
            about = f" del partido {match}" if match != "-" else ""
            need("flagged", f"Registro {r.get('game')}{about} ({r.get('table')}): "
                 f"{verdict}. {detail_text(str(r.get('detail', '')))}".rstrip(),
                 r.get("table"))  # fmt: skip
        said = {r.get("game") for r in flagged}
        for n in notes:
            if n.get("what") in FIRST:  # someone else holds a table's key or writes to it
                rekey = n.get("what") == "key-conflict" and bool(n.get("table"))
                need("conflict", str(n.get("text", "")), n.get("table"),
                     note=None if rekey else n.get("key"), rekey=rekey)  # fmt: skip
            elif n.get("game") is None or n.get("game") not in said:
                need("flagged", str(n.get("text", "")), n.get("table"), note=n.get("key"))
        for name, x in self.tables.items():
            if x.get("rules_problems"):
                problems = "; ".join(x["rules_problems"])
                need("rules", f"{name} juega con otras reglas: {problems}", name)
        spare = iter(self.free)
        for m in self.matches:
            if m.result.status is MatchStatus.WAITING:
                offer = next(spare, None)
                hint = f" (libre: {offer})" if offer else " (no hay mesa libre)"
                need("waiting", f"{m.id} espera mesa: {self.versus(m)}{hint}")
        t, done = self.t, len(self.matches) - len(self.undecided)
        if self.matches and not self.undecided and self.number not in t.closed and not t.finished:
            need("undecided", f"{round_label(t, self.number)}: todos los partidos terminaron; "
                 "cerrá la ronda para emparejar la siguiente.")  # fmt: skip
        elif self.undecided and done >= STRAGGLERS_FROM * len(self.matches):
            for m in self.undecided:
                at = f" en {m.table}" if m.table else ""
                need("undecided", f"{m.id}{at} sin definir ({score_text(m)}, chico {m.chico} "
                     f"de {m.best_of}): el resto de la ronda terminó")  # fmt: skip
        out.sort(key=lambda a: ATTENTION_ORDER.index(a["kind"]))
        return out

    # ------------------------------------------------------------------ the lines

    def row(self, m: Match, flag: str) -> dict[str, Any]:
        """One match's line (``flag``: the most urgent attention at its table)."""
        live = self.tables.get(m.table) if m.table else None
        table_text, table_class = _table_line(live, self.broker_down) if m.table else ("", "")
        finished = m.result.status in FINISHED
        winner = m.result.winner
        return {
            "match": m.id,
            "group": m.group or "",
            "table": m.table or "",
            "table_state": "" if finished else table_text.lower(),
            "table_class": "" if finished else table_class,
            "home": entrant_name(self.t, m.pairing.home),
            "away": entrant_name(self.t, m.pairing.away),
            "winner": None if winner is None else 0 if winner == m.pairing.home else 1,
            "chico": "" if finished else f"{m.chico} de {m.best_of}",
            "games": score_text(m),
            "live": _live(live, m),
            "status": _match_status(m, live),
            "flag": flag,
            "status_code": "playing" if _started_at_table(live, m) else m.result.status.value,
        }

    def offline_lines(self) -> list[str]:
        out = []
        for name, x in self.tables.items():
            if self.offline(x):
                state, _ = _table_line(x, self.broker_down)
                held = self.at_table.get(name)
                out.append(f"{name}: {state}" + (f" ({held.id})" if held else ""))
        return out


def _finished_text(t: Tournament) -> str:
    """`` · torneo terminado, campeón: X`` once it is over."""
    if not t.finished:
        return ""
    ranking = final_ranking(t)
    return " · torneo terminado" + (f", campeón: {entrant_name(t, ranking[0])}" if ranking else "")


def _broker_text(snapshot: Mapping[str, Any]) -> str:
    connected = snapshot.get("broker", {}).get("connected")
    if connected is False:
        return "SIN CONEXIÓN CON EL BROKER: estados y tanteadores como se oyeron por última vez"
    if connected is None:
        return "Todavía sin conexión con el broker: no se sabe nada de las mesas"
    return ""


def desk_view(
    t: Tournament,
    snapshot: Mapping[str, Any],
    audit_ok: bool = True,
    notes: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The desk page's content (see the module docstring): plain values, for JSON.

    ``notes``: what the competition itself flagged (the organiser's ``attention``:
    ``{"what", "text", "game", "table", ...}``: a record of no match, of the wrong
    table, a game too many), listed with the flagged records; one about a record
    the desk already flags is not said twice."""
    r = _Round(t, snapshot)
    attention = r.attention(audit_ok, notes)
    flags: dict[str, str] = {}
    for a in reversed(attention):  # the most urgent last, so it wins
        if a["table"] and a["kind"] in ("call", "offline", "flagged"):
            flags[a["table"]] = a["kind"]
    spec = t.spec
    online = sum(1 for x in r.tables.values() if x.get("online"))
    done = len(r.matches) - len(r.undecided)
    return {
        "title": t.display_name,
        "subtitle": f"{FORMAT_NAMES[spec.format]} · al mejor de {spec.best_of}" if spec else "",
        "round": round_label(t, r.number),
        "broker_lost": _broker_text(snapshot),
        "summary": f"{len(r.tables)} mesas, {online} en línea · {done} de {len(r.matches)} "
        "partidos terminados" + _finished_text(t),
        "attention": attention,
        "matches": [r.row(m, flags.get(m.table or "", "")) for m in r.matches],
        "offline": r.offline_lines(),
        "free": r.free,
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
td .off{font-size:12px}
td.mesa{white-space:normal;overflow-wrap:anywhere}tr.playing td.st{color:#ffe082}
tr.waiting td.st{color:#ff8a80;font-weight:700}
tr.done td{color:#c9d6cd}tr.call td{background:#5c1a1a}tr.offline td{background:#43201c}
#attention{list-style:none;margin:0;padding:0}
#attention li{padding:3px 6px;margin-bottom:3px;border-left:5px solid #888;background:#1d3d2b;
 line-height:17px;overflow-wrap:anywhere}
#attention li.conflict{border-color:#ff1744;background:#6a1b1b;font-weight:700}
#rekey:empty{display:none}#rekey{background:#5c1a1a;padding:4px 6px;font-weight:700;margin:0 0 4px}
#attention li.call{border-color:#ff5252;background:#5c1a1a;font-weight:700}
#attention li.referee{border-color:#ff5252}
#attention li.offline{border-color:#ff8a80}#attention li.audit,#attention li.flagged,
#attention li.rules{border-color:#ffb74d}#attention li.waiting{border-color:#ffe082}
#attention li.undecided{border-color:#90caf9}
#attention:empty::after{content:"Nada pendiente.";color:#b9f6ca}
#offline{margin:0;padding-left:16px}
a{color:#ffe082}nav{font-size:12px}aside{overflow:hidden}
html.dense{font-size:12px}html.dense th,html.dense td{line-height:14px;padding:0 4px}
html.dense #attention li{line-height:15px;padding:2px 5px}
"""

_SCRIPT: Final = """
const ESC = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
const esc = s => String(s ?? "").replace(/[&<>"']/g, c => ESC[c]);
const $ = id => document.getElementById(id);
const cls = {waiting: "waiting", assigned: "", playing: "playing", decided: "done",
  bye: "done", walkover: "done", overridden: "done"};
const tall = () => Math.ceil(document.body.getBoundingClientRect().bottom + scrollY);
function fit() {
  const root = document.documentElement;
  root.classList.remove("dense");
  if (tall() > innerHeight) root.classList.add("dense");
  root.dataset.height = tall();  // the content's height (the tests read it)
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
    data-table="${esc(a.table)}" data-seq="${esc(a.seq)}">visto</button>` : a.note ? ` <button
    data-note="${esc(a.note)}">visto</button>` : ""}${a.rekey ? `
    <button data-rekey="${esc(a.rekey)}">cambiar la clave</button>` : ""}</li>`).join("");
  $("matches").innerHTML = d.matches.map(m => `<tr
    class="${cls[m.status_code] || ""} ${esc(m.flag)}" data-match="${esc(m.match)}">
    <td>${esc(m.match)}</td><td class="mesa">${esc(m.table)}
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
document.addEventListener("click", async ev => {  // a key conflict: a new key for the table
  const b = ev.target.closest("button[data-rekey]");
  if (!b) return;
  const table = b.dataset.rekey;
  if (!confirm(`¿Darle una clave nueva a ${table}? Hasta que alguien escriba el código en ` +
               "la mesa, no se le acepta nada.")) return;
  const csrf = document.querySelector('meta[name="csrf"]');  // or a new one after the key
  const token = typeof CSRF === "string" ? CSRF : csrf ? csrf.content : "";
  const r = await fetch("/api/organiser/rekey", {method: "POST", headers: {"Content-Type":
    "application/json", "X-CSRF-Token": token},
    body: JSON.stringify({table})});
  const d = await r.json().catch(() => ({}));
  $("rekey").textContent = r.ok ? `Código de ${d.table}: ${d.code}. Escribilo en la mesa: ` +
    `truco-table rekey --config /etc/truco-table/table.toml ${d.code}, y reiniciala.`
    : (d.error || "No se pudo cambiar la clave");
  refresh();
});
document.addEventListener("click", async ev => {  // the referee saw it: POST /api/ack
  const b = ev.target.closest("button[data-seq], button[data-note]");
  if (!b) return;
  const csrf = document.querySelector('meta[name="csrf"]');  // the organiser's session
  const token = typeof CSRF === "string" ? CSRF : csrf ? csrf.content : "";
  const r = await fetch("/api/ack", {method: "POST", headers: {"Content-Type":
    "application/json", "X-CSRF-Token": token},
    body: JSON.stringify(b.dataset.note ? {note: b.dataset.note}
      : {table: b.dataset.table, seq: Number(b.dataset.seq)})});
  if (r.status === 401) {  // the session ended: the key again (the page stays as it is)
    if (window.relogin) await window.relogin("La sesión del organizador se terminó: " +
      "escribí la clave de nuevo.");
    else location.reload();
    return;
  }
  refresh();
});
refresh(); setInterval(refresh, 2000); addEventListener("resize", fit);
"""

_BODY: Final = """<header><h1 id="title"></h1><span id="round"></span>
<span id="subtitle" class="muted"></span><span id="summary" class="muted"></span>
<nav><a href="/proyector">proyector</a> · <a href="/imprimir/emparejamientos">emparejamientos</a>
· <a href="/imprimir/posiciones">posiciones</a> · <a href="/imprimir/llave">llave</a>
· <a href="/imprimir/planillas">planillas</a> · <a href="/mesas">mesas</a>
· exportar: <a href="/export/standings.csv">posiciones</a>
<a href="/export/matches.csv">partidos</a> <a href="/export/games.csv">chicos</a>
(<a href="/export/standings.json">json</a>) · para Excel:
<a href="/export/standings.excel.csv">posiciones</a>
<a href="/export/matches.excel.csv">partidos</a></nav></header>
<div id="broker" role="alert"></div>
<main><table><colgroup><col style="width:84px"><col style="width:176px"><col><col
style="width:24px"><col><col style="width:60px"><col style="width:54px"><col
style="width:126px"><col style="width:132px"></colgroup>
<thead><tr><th>Partido</th><th>Mesa</th><th>Local</th><th></th><th>Visitante</th><th>Chico</th>
<th class="n">Chicos</th><th class="n">Tanteador</th><th>Estado</th></tr></thead>
<tbody id="matches"></tbody></table></main>
<aside><h2>Atención</h2><p id="rekey" role="alert"></p><ul id="attention"></ul>
<h2>Mesas fuera de línea</h2><ul id="offline"></ul>
<h2>Mesas libres</h2><div id="free"></div></aside>"""


def desk_page(tournament_name: str, csrf: str | None = None) -> str:
    """The page itself (it fills itself from ``/api/tournament``); with the organiser's
    session's ``csrf`` token, with the organiser's controls (:mod:`.controls`)."""
    if csrf is None:
        return document(f"Mesa de control: {tournament_name}", _BODY, css=_CSS, script=_SCRIPT)
    body = f'<meta name="csrf" content="{h(csrf)}">' + _BODY + CONTROLS_BODY
    body = body.replace("<nav>", "<nav>" + CONTROLS_TOGGLE + " · ", 1)
    script = (
        _SCRIPT.replace("    show(s.desk);", "    show(s.desk); controls(s);") + CONTROLS_SCRIPT
    )
    return document(
        f"Mesa de control: {tournament_name}", body, css=_CSS + CONTROLS_CSS, script=script
    )
