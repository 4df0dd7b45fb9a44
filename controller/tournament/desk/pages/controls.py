"""The organiser's controls on the desk page, and the login form before them.

Everything the organiser does in an evening, from the page: name the tournament (its
display name on every view), register a team, import a
spreadsheet (a preview that lists every bad line before anything is registered), seed,
start, pair a round (by the system or by hand), assign a table, a walkover, a
withdrawal, a result set by hand (the winner chosen from the two names, the chicos won
by each; the points the tables recorded stay unless others are typed), close a round;
and the teams registered (seed, id, players, withdrawn or not), before the start and
during the tournament. Every action is confirmed in the page first (what it will do,
in words), and the ones the audit journal keeps a reason for ask for it.

The controls send the competition's actions (:mod:`~...competition.codec`'s JSON) to
``POST /api/organiser`` (the import to ``/api/organiser/import``) with the session's
CSRF token (:mod:`..sessions`); the desk answers with the competition's reason when it
refuses one, and the page shows it. Names are shown, ids sent.
"""

from __future__ import annotations

from typing import Final

from .common import document, h

__all__ = ["CONTROLS_BODY", "CONTROLS_CSS", "CONTROLS_SCRIPT", "CONTROLS_TOGGLE", "login_page"]

CONTROLS_CSS: Final = """
body{grid-template-areas:"head head" "broker broker" "org org" "main side"}
#org{grid-area:org;border-bottom:2px solid #2b5a3e;margin-bottom:6px;padding-bottom:6px}
#org.closed{display:none}#toggle-org{background:#ffe082;color:#10281b;border:0;
 border-radius:3px;font-weight:700;padding:2px 8px;cursor:pointer}
#org h2{display:inline-block;margin-right:10px}
#org .box{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:8px}
#org fieldset{border:1px solid #2b5a3e;border-radius:4px;padding:4px 8px;margin:0;min-width:0}
#org legend{font-weight:700;color:#ffe082}
#org label{display:block;font-size:12px;margin:2px 0}
#org input,#org select,#org textarea,#org button{font:inherit;font-size:13px}
#org input[type=text],#org select,#org textarea{width:100%;background:#0b1f14;color:#f3efe4;
 border:1px solid #3f7a56;border-radius:3px;padding:2px 4px}
#org input.num{width:4em}
#org button{background:#ffe082;color:#10281b;border:0;border-radius:3px;padding:3px 10px;
 margin-top:4px;font-weight:700;cursor:pointer}#org button:disabled{opacity:.4}
#org .two{display:grid;grid-template-columns:1fr 1fr;gap:4px}
#msg{padding:3px 8px;border-radius:3px;margin:3px 0}#msg:empty{display:none}
#msg.ok{background:#1b5e20}#msg.error{background:#b71c1c;color:#fff;font-weight:700}
#confirm{position:fixed;inset:0;background:rgba(0,0,0,.6);display:none;place-items:center}
#confirm.open,#relogin.open{display:grid}
#relogin{position:fixed;inset:0;background:rgba(0,0,0,.6);display:none;place-items:center}
#relogin div{background:#1d3d2b;border:2px solid #ff8a80;padding:14px;max-width:560px;
 border-radius:6px}#relogin p{margin:0 0 10px}
#confirm div{background:#1d3d2b;border:2px solid #ffe082;padding:14px;max-width:560px;
 border-radius:6px}#confirm p{margin:0 0 10px;white-space:pre-line}
#f-teams{grid-column:1/-1}#f-teams .teams{max-height:40vh;overflow:auto}
#f-teams table{width:100%;font-size:12px;table-layout:auto}
#f-teams td,#f-teams th{white-space:normal}#f-teams .out{color:#ff8a80;font-weight:700}
#preview table{width:100%;font-size:12px}#preview .bad{color:#ff8a80;font-weight:700}
#preview ul{margin:2px 0;padding-left:18px}
"""

#: The button that shows and hides the controls (in the page's header).
CONTROLS_TOGGLE: Final = '<button type="button" id="toggle-org">organizar</button>'

CONTROLS_BODY: Final = """<section id="org" class="closed"><h2>Organizador</h2>
<button type="button" id="logout">salir</button>
<div id="msg" role="status"></div>
<div class="box">
<fieldset id="f-title"><legend>El torneo</legend>
<label>Nombre del torneo (el de las pantallas y los impresos)
<input type="text" id="t-title" maxlength="80"></label>
<button type="button" id="do-title">Guardar el nombre</button></fieldset>
<fieldset id="f-register"><legend>Inscribir un equipo</legend>
<label>Nombre del equipo <input type="text" id="r-name" maxlength="64"></label>
<div class="two"><label>Jugador 1 <input type="text" id="r-p1"></label>
<label>Jugador 2 <input type="text" id="r-p2"></label></div>
<div class="two"><label>Jugador 3 (tríos) <input type="text" id="r-p3"></label>
<label>Club <input type="text" id="r-club"></label></div>
<button type="button" id="do-register">Inscribir</button></fieldset>
<fieldset id="f-import"><legend>Importar una planilla (CSV)</legend>
<label>Archivo <input type="file" id="i-file" accept=".csv,text/csv"></label>
<label>Jugadores por equipo <select id="i-size"><option>1</option><option selected>2</option>
<option>3</option></select></label>
<button type="button" id="do-preview">Revisar la planilla</button>
<div id="preview"></div>
<button type="button" id="do-import" disabled>Inscribir a todos</button></fieldset>
<fieldset id="f-start"><legend>Cabezas de serie y comienzo</legend>
<label>Cabezas de serie, la mejor primero (un nombre por línea)
<textarea id="s-seeds" rows="3"></textarea></label>
<button type="button" id="do-seed">Guardar las cabezas de serie</button>
<div class="two"><label>Formato <select id="s-format">
<option value="swiss">sistema suizo</option><option value="knockout">eliminación directa</option>
<option value="round-robin">todos contra todos</option>
<option value="groups">grupos y eliminación directa</option></select></label>
<label>Chicos por partido <select id="s-best-of"><option value="1">al mejor de 1</option>
<option value="3" selected>al mejor de 3</option><option value="5">al mejor de 5</option>
</select></label></div>
<div class="two"><label>Rondas (suizo; vacío: las de siempre)
<input type="text" id="s-rounds" inputmode="numeric"></label>
<label>Grupos (vacío: los de siempre) <input type="text" id="s-groups" inputmode="numeric">
</label></div>
<div class="two"><label>Ruedas (todos contra todos) <select id="s-legs"><option>1</option>
<option>2</option></select></label>
<label><input type="checkbox" id="s-third" checked> partido por el tercer puesto</label></div>
<button type="button" id="do-start">Empezar el torneo</button></fieldset>
<fieldset id="f-match"><legend>Un partido de la ronda</legend>
<label>Partido <select id="m-match"></select></label>
<div class="two"><label>Mesa <select id="m-table"></select></label>
<div><button type="button" id="do-assign">Mandar a esa mesa</button></div></div>
<label>Ganador <select id="m-winner"></select></label>
<div class="two"><label id="m-home-label">Chicos del local
<input type="text" class="num" id="m-games-home" inputmode="numeric"></label>
<label id="m-away-label">Chicos del visitante
<input type="text" class="num" id="m-games-away" inputmode="numeric"></label></div>
<div class="two"><label>Tantos del local (vacío: los registrados)
<input type="text" class="num" id="m-points-home" inputmode="numeric"></label>
<label>Tantos del visitante (vacío: los registrados)
<input type="text" class="num" id="m-points-away" inputmode="numeric"></label></div>
<label>Motivo (queda en el registro de auditoría) <input type="text" id="m-reason"></label>
<button type="button" id="do-walkover">Dar por walkover</button>
<button type="button" id="do-override">Cargar el resultado</button></fieldset>
<fieldset id="f-round"><legend>La ronda y los equipos</legend>
<label>Equipo que se retira <select id="w-entrant"></select></label>
<label>Motivo del retiro <input type="text" id="w-reason"></label>
<button type="button" id="do-withdraw">Retirar al equipo</button>
<label>Motivo para cerrar la ronda (opcional) <input type="text" id="c-reason"></label>
<button type="button" id="do-close">Cerrar la ronda</button>
<label>Cruces a mano (uno por línea: «Local / Visitante»; un nombre solo queda libre; vacío:
los del sistema) <textarea id="p-lines" rows="3"></textarea></label>
<button type="button" id="do-pair">Emparejar la ronda siguiente</button>
<button type="button" id="do-repair">Rehacer los cruces de esta ronda</button></fieldset>
<fieldset id="f-teams"><legend>Equipos inscriptos (<span id="teams-count">0</span>)</legend>
<div class="teams"><table><thead><tr><th>Cabeza de serie</th><th>Id</th><th>Equipo</th>
<th>Jugadores</th><th>Club</th><th>Estado</th></tr></thead><tbody id="teams-rows"></tbody>
</table></div></fieldset>
</div></section>
<div id="confirm" role="dialog" aria-modal="true"><div><p id="confirm-text"></p>
<button type="button" id="confirm-yes">Confirmar</button>
<button type="button" id="confirm-no">Cancelar</button></div></div>
<div id="relogin" role="dialog" aria-modal="true"><div><p id="relogin-why"></p>
<form id="relogin-form"><label>Clave del organizador
<input type="password" id="relogin-key" autocomplete="current-password"></label>
<button id="relogin-yes">Entrar</button></form></div></div>"""

CONTROLS_SCRIPT: Final = r"""
let CSRF = document.querySelector('meta[name="csrf"]').content;
let T = null;  // the last /api/tournament
let pending = null;  // the confirmed action's function
let sheetData = null;
const val = id => $(id).value.trim();
const cuantos = (n, one, many) => `${n} ${n === 1 ? one : many}`;
const nameOf = id => { const e = T.tournament.entrants.find(x => x.id === id);
  return e ? e.name : (id || "(libre)"); };
const byName = name => { const k = name.trim().replace(/\s+/g, " ").toLowerCase();
  return T.tournament.entrants.find(e => e.name.toLowerCase() === k || e.id === name.trim()); };
function say(text, ok) { const m = $("msg"); m.textContent = text;
  m.className = ok ? "ok" : "error"; }
// a line break only where the text asks for one (not where the source wraps a sentence)
function ask(text, run) { $("confirm-text").textContent = text.replace(/\n +/g, " ");
  pending = run;
  $("confirm").classList.add("open"); $("confirm-yes").focus(); }
$("confirm-no").onclick = () => { pending = null; $("confirm").classList.remove("open"); };
$("confirm-yes").onclick = async () => { const run = pending; pending = null;
  $("confirm").classList.remove("open"); if (run) await run(); };
const requestId = () => Array.from(crypto.getRandomValues(new Uint8Array(16)),
  b => b.toString(16).padStart(2, "0")).join("");
const pause = ms => new Promise(done => setTimeout(done, ms));
// The session is gone (it expired, or the organiser left): the key again, in a dialog
// over the page, which stays as it is (what was typed is kept); resolves once back in.
let relogging = null;
function relogin(why) {
  if (relogging) return relogging;
  $("relogin-why").textContent = why || "";
  $("relogin").classList.add("open"); $("relogin-key").value = ""; $("relogin-key").focus();
  relogging = new Promise(done => {
    $("relogin-form").onsubmit = async ev => {
      ev.preventDefault();
      let r = null;
      try { r = await fetch("/api/entrar", {method: "POST", headers: {"Content-Type":
        "application/json"}, body: JSON.stringify({clave: $("relogin-key").value})});
      } catch (e) { $("relogin-why").textContent =
        "La mesa de control no responde: probá de nuevo en unos segundos."; return; }
      if (!r.ok) { $("relogin-why").textContent = r.status === 403
        ? "Esa no es la clave del organizador." : `No se pudo entrar (error ${r.status}).`;
        return; }
      CSRF = (await r.json()).csrf || CSRF;
      $("relogin").classList.remove("open"); relogging = null; done();
    };
  });
  return relogging;
}
window.relogin = relogin;
// A write, sent until the desk answers: a desk that does not answer (it restarted, say)
// gets it again, with the same request id, so it is done once; a lost session asks for
// the key again first.
async function post(path, body) {
  for (let tries = 0; ; tries++) {
    let r = null;
    try {
      r = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json",
        "X-CSRF-Token": CSRF}, body: JSON.stringify(body)});
    } catch (e) { r = null; }
    if (r === null || r.status === 502 || r.status === 503 || r.status === 504) {
      if (tries >= 600) return [false, {error: "la mesa de control no responde"}];
      say("La mesa de control no responde: lo que confirmaste se manda de nuevo solo " +
        "cuando vuelva (no se hace dos veces). No cierres la página.", false);
      $("msg").dataset.waiting = "1";
      await pause(1000);
      continue;
    }
    delete $("msg").dataset.waiting;
    if (r.status === 401) {
      await relogin("La sesión del organizador se terminó: escribí la clave de nuevo. " +
        "Lo que escribiste queda, y lo que confirmaste se manda después.");
      continue;
    }
    let answer = {};
    try { answer = await r.json(); } catch (e) { answer = {error: `error ${r.status}`}; }
    return [r.ok, answer];
  }
}
async function act(action, done) {
  const [ok, answer] = await post("/api/organiser", {action, request: requestId()});
  const why = String(answer.error || "");
  if (ok) say("Hecho: " + done + (answer.already ? " (ya estaba hecho: no se repitió)" : ""),
    true);
  else say(why.startsWith("No ") ? why : "No se pudo: " + why, false);
  await refresh();
  return ok;
}
function need(text, what) { if (!text) { say(`Falta ${what}`, false); return false; }
  return true; }
function number(id, what, optional) {
  const t = val(id);
  if (!t && optional) return 0;
  if (!/^\d{1,3}$/.test(t)) { say(`${what}: un número (0, 1, 2, ...)`, false); return null; }
  return Number(t);
}
function options(id, items) {  // [value, text]; keeps the choice when it is still there
  const el = $(id), was = el.value, sig = JSON.stringify(items);
  if (el.dataset.sig === sig) return;
  el.dataset.sig = sig;
  el.innerHTML = items.map(([v, t]) => `<option value="${esc(v)}">${esc(t)}</option>`).join("");
  if (items.some(([v]) => v === was)) el.value = was;
}
function roundMatches() {
  return T.matches.filter(m => m.round === T.tournament.round && m.away);
}
function selected() { return T.matches.find(m => m.match === $("m-match").value); }
let opened = false;
$("toggle-org").onclick = () => { $("org").classList.toggle("closed"); fit(); };
function controls(s) {
  T = s;
  const t = s.tournament, started = !!t.format;
  if (!opened) { opened = true; if (!started) $("org").classList.remove("closed");
    $("t-title").value = t.display_name && t.display_name !== t.name ? t.display_name : ""; }
  $("f-start").disabled = started;
  $("f-register").disabled = t.finished || (started && t.format !== "swiss");
  $("f-import").disabled = $("f-register").disabled;
  $("f-match").disabled = !started || t.finished;
  $("f-round").disabled = !started || t.finished;
  const ms = roundMatches();
  options("m-match", ms.map(m => [m.match, `${m.match}${m.table ? " (" + m.table + ")" : ""}: ` +
    `${m.home_name} vs ${m.away_name} · ${m.status === "decided" || m.status === "walkover" ||
    m.status === "overridden" ? "definido" : "sin definir"}`]));
  options("m-table", (s.tables || []).map(x => [x, x]));
  const m = selected();
  options("m-winner", m ? [[m.home, m.home_name], [m.away, m.away_name]] : []);
  $("m-home-label").firstChild.textContent = m ? `Chicos de ${m.home_name} ` : "Chicos del local ";
  $("m-away-label").firstChild.textContent = m ? `Chicos de ${m.away_name} ` :
    "Chicos del visitante ";
  options("w-entrant", t.entrants.filter(e => !e.withdrawn).map(e => [e.id, e.name]));
  $("teams-count").textContent = t.entrants.length;
  const rows = t.entrants.map(e => `<tr data-entrant="${esc(e.id)}"><td>${e.seed ?? ""}</td>
    <td>${esc(e.id)}</td><td>${esc(e.name)}</td>
    <td>${esc(e.players.map(p => p.name).join(" / "))}</td><td>${esc(e.club)}</td>
    <td class="${e.withdrawn ? "out" : ""}">${e.withdrawn ? "retirado: " + esc(e.withdrawn)
    : "en el torneo"}</td></tr>`).join("");
  if ($("teams-rows").dataset.sig !== rows) { $("teams-rows").dataset.sig = rows;
    $("teams-rows").innerHTML = rows || '<tr><td colspan="6">Todavía no hay ninguno.</td></tr>'; }
}
$("m-match").onchange = () => controls(T);
$("logout").onclick = async () => { await post("/api/salir", {}); location.reload(); };
$("do-register").onclick = () => {
  const name = val("r-name"), players = ["r-p1", "r-p2", "r-p3"].map(val).filter(x => x);
  // what was typed for this team: emptied once it is registered, unless the organiser
  // has typed the next team there meanwhile (the answer comes after the desk's refresh)
  const typed = ["r-name", "r-p1", "r-p2", "r-p3", "r-club"].map(i => [i, $(i).value]);
  if (!need(name, "el nombre del equipo") || !need(players.length, "un jugador")) return;
  ask(`¿Inscribir a ${name} (${players.join(" y ")})?`, async () => {
    await refresh();  // the id after the last one registered, as the desk has them now
    const ids = T.tournament.entrants.map(e => e.id);
    const top = Math.max(0, ...ids.map(i => /^e(\d+)$/.test(i) ? Number(i.slice(1)) : 0));
    const id = "e" + String(top + 1).padStart(2, "0");
    const ok = await act({v: 1, type: "register", entrant: {id, name, club: val("r-club") || null,
      seed: null, players: players.map(p => ({name: p, member_id: null}))}},
      `${name} inscripto`);
    if (ok) typed.forEach(([i, text]) => { if ($(i).value === text) $(i).value = ""; });
  });
};
function base64(buffer) {
  let text = ""; const bytes = new Uint8Array(buffer);
  for (let i = 0; i < bytes.length; i += 0x8000)
    text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(text);
}
function showSheet(a) {
  const rows = a.entrants.map(e => `<tr><td>${esc(e.id)}</td><td>${esc(e.name)}</td>
    <td>${esc(e.players.join(" / "))}</td><td>${esc(e.club)}</td></tr>`).join("");
  $("preview").innerHTML = `<div>Leída como ${esc(a.encoding)}, separada por
    «${esc(a.delimiter)}»: ${cuantos(a.entrants.length, "equipo", "equipos")} bien,
    ${cuantos(a.problems.length, "línea", "líneas")} con problemas.</div>` +
    (a.problems.length ? `<ul class="bad" id="problems">${a.problems.map(p =>
      `<li>${esc(p)}</li>`).join("")}</ul><div class="bad">Corregí la planilla y revisala de
      nuevo: no se anota a nadie mientras haya una línea mala.</div>` : "") +
    `<table><tbody id="sheet-rows">${rows}</tbody></table>`;
  $("do-import").disabled = a.problems.length > 0 || a.entrants.length === 0;
  $("do-import").textContent = a.entrants.length === 1
    ? "Inscribir al equipo" : `Inscribir a los ${a.entrants.length} equipos`;
}
$("i-file").onchange = () => { sheetData = null; $("do-import").disabled = true;
  $("preview").innerHTML = ""; };
$("do-preview").onclick = async () => {
  const file = $("i-file").files[0];
  if (!need(file, "elegir el archivo de la planilla")) return;
  sheetData = base64(await file.arrayBuffer());
  const [ok, a] = await post("/api/organiser/import",
    {data: sheetData, team_size: Number($("i-size").value), commit: false});
  if (!ok) { $("preview").innerHTML = `<ul class="bad" id="problems"><li>${esc(a.error)}</li>
    </ul>`; $("do-import").disabled = true; return; }
  showSheet(a);
  say(a.problems.length
    ? `La planilla tiene ${cuantos(a.problems.length, "línea", "líneas")} con problemas`
    : "La planilla está bien: " +
    `${cuantos(a.entrants.length, "equipo", "equipos")} para inscribir`, !a.problems.length);
};
$("do-import").onclick = () => {
  if (!sheetData) return;
  const count = $("sheet-rows").children.length;
  ask(count === 1 ? "¿Inscribir al equipo de la planilla?"
    : `¿Inscribir a los ${count} equipos de la planilla?`, async () => {
    const [ok, a] = await post("/api/organiser/import", {data: sheetData,
      team_size: Number($("i-size").value), commit: true, request: requestId()});
    if (ok) { say("Hecho: " +
      cuantos(a.registered, "equipo inscripto", "equipos inscriptos"), true);
      $("preview").innerHTML = ""; $("do-import").disabled = true; sheetData = null;
      $("do-import").textContent = "Inscribir a todos"; $("i-file").value = ""; }
    else { say("No se pudo: " + a.error, false); if (a.problems) showSheet(a); }
    await refresh();
  });
};
$("do-title").onclick = () => {
  const title = val("t-title");
  ask(title ? `¿Llamar al torneo «${title}» en las pantallas y los impresos?`
    : "¿Volver a mostrar el nombre corto del torneo?",
    () => act({v: 1, type: "set-title", title}, "nombre del torneo guardado"));
};
$("do-seed").onclick = () => {
  const lines = $("s-seeds").value.split("\n").map(x => x.trim()).filter(x => x);
  const found = lines.map(byName);
  const bad = lines.filter((l, i) => !found[i]);
  if (bad.length) { say(`No hay un equipo que se llame: ${bad.join(", ")}`, false); return; }
  ask(`¿Cabezas de serie, en este orden?\n${found.map((e, i) => `${i + 1}. ${e.name}`)
    .join("\n")}`, () => act({v: 1, type: "seed", order: found.map(e => e.id)},
    "cabezas de serie guardadas"));
};
$("do-start").onclick = () => {
  const opt = id => { const v = val(id); return v ? Number(v) : null; };
  const spec = {format: $("s-format").value, best_of: Number($("s-best-of").value),
    team_size: Number($("i-size").value), legs: Number($("s-legs").value),
    rounds: opt("s-rounds"), groups: opt("s-groups"), advance: 2,
    third_place: $("s-third").checked};
  const n = T.tournament.entrants.filter(e => !e.withdrawn).length;
  ask(`¿Empezar el torneo con
    ${cuantos(n, "equipo", "equipos")}, ${$("s-format").selectedOptions[0].text},
    ${$("s-best-of").selectedOptions[0].text}? Después no se cambian el formato ni las
    cabezas de serie.`, () => act({v: 1, type: "start", spec}, "el torneo empezó"));
};
$("do-assign").onclick = () => {
  const m = selected(), table = $("m-table").value;
  if (!need(m, "elegir el partido") || !need(table, "elegir la mesa")) return;
  ask(`¿Mandar ${m.match} (${m.home_name} vs ${m.away_name}) a ${table}?`,
    () => act({v: 1, type: "assign-table", match: m.match, table}, `${m.match} a ${table}`));
};
$("do-walkover").onclick = () => {
  const m = selected(), winner = $("m-winner").value, reason = val("m-reason");
  if (!need(m, "elegir el partido") || !need(reason, "el motivo del walkover")) return;
  ask(`¿Dar ${m.match} por walkover a ${nameOf(winner)}?\nMotivo: ${reason}`,
    () => act({v: 1, type: "walkover", match: m.match, winner, reason},
      `${m.match} para ${nameOf(winner)} por walkover`));
};
$("do-override").onclick = async () => {
  await refresh();  // the points the tables recorded, as they are now
  const m = selected(), winner = $("m-winner").value, reason = val("m-reason");
  if (!need(m, "elegir el partido") || !need(reason, "el motivo del resultado")) return;
  const gh = number("m-games-home", `Chicos de ${m.home_name}`);
  const ga = number("m-games-away", `Chicos de ${m.away_name}`);
  if (gh === null || ga === null) return;
  // no points typed: the ones the tables recorded stay (and the dialog says which)
  const typed = val("m-points-home") || val("m-points-away");
  const ph = typed ? number("m-points-home", "Tantos") : 0;
  const pa = typed ? number("m-points-away", "Tantos") : 0;
  if (ph === null || pa === null) return;
  const points = typed ? [ph, pa] : null;
  const tantos = typed ? `Tantos: ${ph}-${pa} (los que escribiste).`
    : `Tantos: ${m.points_home}-${m.points_away} (los que registraron las mesas; quedan).`;
  ask(`¿Cargar el resultado de ${m.match} a mano?\nGana ${nameOf(winner)}: ` +
    `${m.home_name} ${cuantos(gh, "chico", "chicos")}, ` +
    `${m.away_name} ${cuantos(ga, "chico", "chicos")}.\n${tantos}\nMotivo: ${reason}`,
    () => act({v: 1, type: "override-result", match: m.match, winner, games: [gh, ga],
      points, reason}, `resultado de ${m.match} cargado (${tantos.slice(0, -1)})`));
};
$("do-withdraw").onclick = () => {
  const who = $("w-entrant").value, reason = val("w-reason");
  if (!need(who, "elegir el equipo") || !need(reason, "el motivo del retiro")) return;
  ask(`¿Retirar a ${nameOf(who)} del torneo? Sus partidos sin terminar quedan para el rival
    por walkover (uno que se está jugando, con los chicos ya jugados como se jugaron: el
    rival suma los que le faltaban) y no se empareja más.\nMotivo: ${reason}`,
    () => act({v: 1, type: "withdraw", entrant: who, reason}, `${nameOf(who)} se retiró`));
};
$("do-close").onclick = () => {
  const r = T.tournament.round;
  ask(`¿Cerrar la ronda ${r}? Los partidos sin terminar van para quien ganó más chicos
    (y si están iguales, no se puede).`,
    () => act({v: 1, type: "close-round", round: r, reason: val("c-reason")},
      `ronda ${r} cerrada`));
};
function handPairings() {  // the textarea's cruces as ids; undefined: a name unknown
  const lines = $("p-lines").value.split("\n").map(x => x.trim()).filter(x => x);
  if (!lines.length) return null;
  const pairings = [];
  for (const line of lines) {
    const [a, b] = line.split("/").map(x => x.trim());
    const home = byName(a), away = b ? byName(b) : null;
    if (!home || (b && !away)) { say(`No conozco a los equipos de «${line}»`, false);
      return undefined; }
    pairings.push({home: home.id, away: away ? away.id : null});
  }
  return pairings;
}
const listed = ps => ps.map(p => `${nameOf(p.home)} vs ${p.away ? nameOf(p.away) : "(libre)"}`)
  .join("\n");
$("do-pair").onclick = () => {
  const next = T.tournament.round + 1, pairings = handPairings();
  if (pairings === undefined) return;
  ask(pairings ? `¿Emparejar la ronda ${next} con estos cruces?\n${listed(pairings)}`
    : `¿Emparejar la ronda ${next} por el sistema?`,
    () => act({v: 1, type: "pair-round", round: next, pairings}, `ronda ${next} emparejada`));
};
$("do-repair").onclick = () => {
  const r = T.tournament.round, pairings = handPairings();
  if (pairings === undefined) return;
  if (!pairings) { say("Escribí los cruces nuevos, uno por línea", false); return; }
  ask(`¿Rehacer los cruces de la ronda ${r}? Los partidos de la ronda se reemplazan por
    estos (solo si ninguno se jugó todavía):\n${listed(pairings)}`,
    () => act({v: 1, type: "pair-round", round: r, pairings}, `ronda ${r} emparejada de nuevo`));
};
"""

_LOGIN_CSS: Final = """
html{background:#10281b;color:#f3efe4;font-size:16px}
main{max-width:420px;margin:12vh auto;padding:18px;background:#1d3d2b;border-radius:6px}
h1{font-size:22px;margin:0 0 10px}input,button{font:inherit;padding:4px 8px}
input{width:100%;margin:6px 0;background:#0b1f14;color:#f3efe4;border:1px solid #3f7a56}
button{background:#ffe082;color:#10281b;border:0;border-radius:3px;font-weight:700}
#why{color:#ff8a80;font-weight:700;min-height:1.2em}a{color:#ffe082}
"""

_LOGIN_SCRIPT: Final = """
async function enter(key) {
  const r = await fetch("/api/entrar", {method: "POST",
    headers: {"Content-Type": "application/json"}, body: JSON.stringify({clave: key})});
  if (r.ok) { location.replace("/"); return; }
  document.getElementById("why").textContent = r.status === 403
    ? "Esa no es la clave del organizador." : `No se pudo entrar (error ${r.status}).`;
}
document.getElementById("login").addEventListener("submit", ev => {
  ev.preventDefault(); enter(document.getElementById("clave").value);
});
// the link the desk prints, /#clave=KEY: the key stays in the browser (a fragment is
// never sent to a server), and leaves the address bar at once
function fromLink() {
  const given = new URLSearchParams(location.hash.slice(1)).get("clave");
  if (given) { history.replaceState(null, "", "/"); enter(given); }
}
fromLink(); addEventListener("hashchange", fromLink);
"""


def login_page(tournament_name: str) -> str:
    """What ``/`` shows without the organiser's session: the key, and the open views."""
    body = f"""<main><h1>Mesa de control: {h(tournament_name)}</h1>
<p>Esta página es del organizador. Escribí la clave del organizador (la que se dio al
arrancar la mesa de control, o la del archivo <code>organiser.key</code> de su carpeta; el
enlace que muestra la mesa de control al arrancar ya la trae).</p>
<form id="login"><input type="password" id="clave" autocomplete="current-password"
autofocus aria-label="clave del organizador"><button id="enter">Entrar</button></form>
<p id="why" role="alert"></p>
<p>Sin clave: <a href="/proyector">proyector</a> · <a href="/imprimir/posiciones">posiciones</a>
· <a href="/imprimir/emparejamientos">emparejamientos</a></p></main>"""
    return document(
        f"Mesa de control: {tournament_name}", body, css=_LOGIN_CSS, script=_LOGIN_SCRIPT
    )
