"""The organiser's page after a desk restart (issue 25), in headless Chromium: the
venue's real Mosquitto (its accounts, ACLs and TLS), four tables of the tournament's
roster (three live, one stopped cleanly), a knockout of four pairs at mesa01 and
mesa02; the desk loses its power, comes back on the same folder, stops cleanly and
comes back again. Each time the page, loaded as the organiser loads it, comes to say
what the tables are: 3 of 4 online, mesa03 free, mesa04 off ("apagada"), and no
"sin noticias" on the list of what needs attention."""

from __future__ import annotations

import json
from pathlib import Path

from controller.tournament.competition.model import Format, FormatSpec, Register, Start
from controller.tournament.desk.running import DeskRun
from controller.tournament.sim.mosquitto import LocalBroker
from controller.tournament.table.publisher import TablePublisher
from controller.tournament.venue.access import BrokerAccess
from controller.tournament.venue.broker import Venue
from controller.tournament.wire.seal import load_key

from ..conftest import venue_table
from .cdp import Page
from .scenes import entrants

ORGANISER_KEY = "clave-de-la-mesa-de-control"
ROSTER = ["mesa01", "mesa02", "mesa03", "mesa04"]
#: How long the page may take to show what the desk heard from the tables again: a bound
#: that says a desk is stuck, never that a machine is slow (how soon it shows is not a
#: test's to time).
SETTLED_S = 120.0


def test_the_page_after_a_desk_restart_shows_the_live_tables(
    venue: Venue, venue_broker: LocalBroker, tmp_path: Path
) -> None:
    secret = load_key(venue.desk_dir("desk1") / "secret.key", kind="key-file")
    access = BrokerAccess("desk1", venue.password("desk1"), venue.ca_file)

    def desk() -> DeskRun:
        return DeskRun(tmp_path / "desk", venue.tournament, key=secret, tables=ROSTER,
                       rules=None, host="127.0.0.1", port=venue.local_port or venue.port,
                       access=access, name="desk1", http_port=0,
                       organiser_key=ORGANISER_KEY)  # fmt: skip

    tables: dict[str, TablePublisher] = {}
    for name in ROSTER:
        tables[name] = venue_table(venue, name, tmp_path / name)
    runs = [desk()]
    try:
        first = runs[0]
        assert first.client.connected.wait(120)
        assert first.client.wait(lambda s: s.snapshot()["online"] == 4, 10)
        for e in entrants(4):
            first.organiser.do(Register(e))
        first.organiser.do(Start(FormatSpec(Format.KNOCKOUT, best_of=1)))
        at = {m.id: m.table for m in first.organiser.tournament.round_matches(1)}
        assert at == {"r1-m01": "mesa01", "r1-m02": "mesa02"}
        tables.pop("mesa04").close()  # shut down cleanly: "apagada"
        assert first.client.wait(lambda s: s.tables["mesa04"].online is False, 10)

        with Page(tmp_path / "chromium", size=(1366, 768)) as page:
            for how in ("power-cut", "clean-stop"):
                if how == "power-cut":
                    runs[-1].power_cut()
                else:
                    runs[-1].stop()
                runs.append(desk())
                page.goto((runs[-1].page or "") + "#clave=" + ORGANISER_KEY)
                page.wait("document.getElementById('org')", 5)  # the organiser's page
                # the whole of what it must say: the live tables and the stopped one's
                # reason may come in different messages, seconds apart on a loaded machine
                settled = (
                    "document.getElementById('summary').innerText.startsWith("
                    "'4 mesas, 3 en línea') && "
                    "document.getElementById('free').innerText === 'mesa03' && "
                    "[...document.querySelectorAll('#offline li')].map(li => li.innerText)"
                    ".join('|') === 'mesa04: apagada'"
                )
                page.wait(settled, SETTLED_S)
                shown = page.js(
                    "JSON.stringify({summary: document.getElementById('summary').innerText,"
                    " free: document.getElementById('free').innerText,"
                    " attention: [...document.querySelectorAll('#attention li')]"
                    ".map(li => li.innerText),"
                    " offline: [...document.querySelectorAll('#offline li')]"
                    ".map(li => li.innerText),"
                    " rows: [...document.querySelectorAll('#matches tr')]"
                    ".map(tr => tr.children[1].innerText)})"
                )
                seen = json.loads(shown)
                assert seen["free"] == "mesa03", (how, seen)
                assert seen["summary"].startswith("4 mesas, 3 en línea"), (how, seen)
                assert not [a for a in seen["attention"] if "sin noticias" in a], (how, seen)
                assert not [a for a in seen["attention"] if "FUERA DE LÍNEA" in a], (how, seen)
                assert seen["offline"] == ["mesa04: apagada"], (how, seen)
                assert [r.split() for r in seen["rows"]] == [
                    ["mesa01", "en", "línea"], ["mesa02", "en", "línea"],
                ], (how, seen)  # fmt: skip
                with runs[-1].state.lock:
                    assert runs[-1].state.rejected == 0, [
                        r.reason for r in runs[-1].state.rejections
                    ]
    finally:
        for pub in tables.values():
            pub.close(timeout=0.5)
        runs[-1].stop()
        if len(runs) > 1:  # the one whose power went: its files let go
            runs[0].organiser.close()
            runs[0].state.close()
