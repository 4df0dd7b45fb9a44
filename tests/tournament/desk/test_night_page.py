"""The organiser's night as the organiser has it (issue 42), in headless Chromium: two
commands typed in all (``venue-broker``, then ``venue-night``, which starts the venue's
real Mosquitto and the desk and prints the login link); everything else in the page.
Four pairs, a knockout of three chicos a match; mesa01 plays (the real table service,
bots at the seats) until a chico of its match is counted. Then:

- the result of that match entered by hand without points: the points the table
  recorded stay, and the dialog says so;
- the desk killed (``kill -9``) while the organiser's walkover is on its way: the page
  says the desk does not answer, sends it again once the night's launcher has the desk
  back, and it is done once (the session survived the restart: no key asked);
- the desk killed right after another action is confirmed: done once too;
- the organiser's session ended behind the page's back: the next action asks for the
  key in a dialog, what was typed stays, and the action is done after it;
- the registered teams listed, with their seed, id and state.

Stopping the night (SIGTERM) stops the desk and the broker."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from controller.engine import HouseRules
from controller.tournament.sim.demo import SimTable
from controller.tournament.sim.mosquitto import find_mosquitto, free_port
from controller.tournament.table.link import load_tournament_settings
from controller.tournament.wire.seal import load_key

from .browser import SCREENSHOTS
from .cdp import Page
from .test_organiser_evening import confirm, done

pytestmark = pytest.mark.skipif(
    find_mosquitto() is None or shutil.which("openssl") is None,
    reason="needs mosquitto and openssl (Debian: apt-get install mosquitto openssl)",
)

ROOT = Path(__file__).resolve().parents[3]
TEAMS = [
    ("Los del Fondo", "Ana Núñez", "Beto Díaz"),
    ("La Barra del Ancho", "Carla Peña", "Dante Sosa"),
    ("Atlético Güemes", "Begoña Ruiz", "Iñaki López"),
    ("Ñandú Truquero", "Martín Acuña", "Paula Ibáñez"),
]


def typed(argv: list[str], *, cwd: Path, wait: bool = True) -> Any:
    """One command the organiser types (``truco-table ...``), run as they run it."""
    command = [sys.executable, "-m", "controller.cli", *argv]
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    if wait:
        return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=300, check=True)  # fmt: skip
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)  # fmt: skip


def api(base: str) -> dict[str, Any]:
    with urllib.request.urlopen(base + "api/tournament", timeout=60) as r:
        data: dict[str, Any] = json.loads(r.read())
    return data


def journal_actions(folder: Path, kind: str) -> list[dict[str, Any]]:
    lines = (folder / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    actions = [json.loads(line)["body"]["action"] for line in lines]
    return [a for a in actions if a["type"] == kind]


def test_a_night_with_a_desk_killed_under_the_organisers_hands(tmp_path: Path) -> None:
    commands: list[list[str]] = []
    port, local, http = free_port(), free_port(), free_port()
    commands.append(["venue-broker", "--tournament", "noche", "--tables", "2", "--desks",
                     "desk", "--host", "127.0.0.1", "--port", str(port), "--local-port",
                     str(local), "--rules", "players=4 target=15", "--out", "salon"])  # fmt: skip
    typed(commands[-1], cwd=tmp_path)
    commands.append(["venue-night", "--venue", "salon", "--out", "torneo",
                     "--http-port", str(http)])  # fmt: skip
    night = typed(commands[-1], cwd=tmp_path, wait=False)
    folder = tmp_path / "torneo"
    said: list[str] = []
    sims: list[SimTable] = []
    try:
        assert night.stdout is not None
        link = ""
        while line := night.stdout.readline():  # the organiser reads the link off the screen
            said.append(line)
            if "#clave=" in line:
                link = line.strip()
                break
        assert link.startswith(f"http://127.0.0.1:{http}/#clave="), said
        # what the organisers' guide quotes, as the command says it (its port and key)
        guide = (ROOT / "docs" / "organizadores" / "index.md").read_text(encoding="utf-8")
        quoted = guide.split("truco-table venue-night --venue salon --out torneo", 1)[1]
        quoted = textwrap.dedent(quoted.split("```text\n", 1)[1].split("```", 1)[0])
        key = link.split("#clave=", 1)[1]
        for line in quoted.splitlines()[:2]:
            line = line.replace(":8080/", f":{http}/").replace("LA_CLAVE", key)
            assert line in "".join(said), (line, said)
        assert len(commands) <= 2  # the whole night
        base = link.split("#", 1)[0]

        with Page(tmp_path / "chromium", size=(1366, 900)) as page:
            page.goto(link)
            page.wait("document.getElementById('org') && document.getElementById('m-match')"
                      " && !document.getElementById('org').classList.contains('closed')")
            for name, p1, p2 in TEAMS:
                page.fill("r-name", name)
                page.fill("r-p1", p1)
                page.fill("r-p2", p2)
                page.click("do-register")
                confirm(page, f"¿Inscribir a {name}")
                done(page, f"{name} inscripto", 120)
            # the teams registered, before the start
            page.wait("document.getElementById('teams-count').innerText === '4'")
            rows = page.js("[...document.querySelectorAll('#teams-rows tr')]"
                           ".map(tr => tr.innerText)")  # fmt: skip
            assert [r.split("\t")[1:3] for r in rows] == [
                ["e01", "Los del Fondo"], ["e02", "La Barra del Ancho"],
                ["e03", "Atlético Güemes"], ["e04", "Ñandú Truquero"],
            ], rows  # fmt: skip
            assert all("en el torneo" in r for r in rows), rows
            page.fill("s-seeds", "Los del Fondo\nÑandú Truquero")
            page.click("do-seed")
            confirm(page, "1. Los del Fondo")
            done(page, "cabezas de serie")
            page.choose("s-format", "eliminación directa")
            page.choose("s-best-of", "al mejor de 3")
            page.click("do-start")
            confirm(page, "con 4 equipos")
            done(page, "el torneo empezó")
            page.wait("document.querySelectorAll('#matches tr').length === 2")
            matches = {m["match"]: m for m in api(base)["matches"]}
            assert {k: m["table"] for k, m in matches.items()} == {
                "r1-m01": "mesa01", "r1-m02": "mesa02"}  # fmt: skip
            seeded = page.js("[...document.querySelectorAll('#teams-rows tr')]"
                             ".map(tr => tr.innerText.split('\\t')[0])")  # fmt: skip
            assert seeded == ["1", "", "", "2"], seeded

            # a dialog breaks its lines only where its text does (not mid-sentence)
            page.choose_value("w-entrant", "e03")
            page.fill("w-reason", "se lastimó un jugador")
            page.click("do-withdraw")
            page.wait("document.getElementById('confirm').classList.contains('open')")
            lines = page.text("confirm-text").split("\n")
            assert lines[0].startswith("¿Retirar a Atlético Güemes del torneo?"), lines
            assert lines[0].endswith("y no se empareja más.") and len(lines) == 2, lines
            page.click("confirm-no")
            page.fill("w-reason", "")

            # mesa01 plays until a chico of its match is counted, then stops (at a pace the
            # venue's desk takes for people's: faster, a game is held as not seen played)
            salon = tmp_path / "salon"
            settings = load_tournament_settings(salon / "tables" / "mesa01" / "tournament.toml")
            assert settings is not None
            sims.append(SimTable(
                "mesa01", state_dir=tmp_path / "mesa01", rules=HouseRules(players=4, target=15),
                broker=("127.0.0.1", port), tournament="noche",
                key=load_key(salon / "secret.key", kind="key-file"), seed=5, pace=0.6,
                access=settings.access, assigned=True, fsync=False,
            ).start())  # fmt: skip
            deadline = time.monotonic() + 300
            while not api(base)["matches"][0]["games_counted"]:
                assert time.monotonic() < deadline, "no chico counted in 5 minutes"
                time.sleep(0.2)
            sims[0].stop()
            played = api(base)["matches"][0]
            assert played["status"] == "playing", played  # the result by hand ends it
            recorded = (played["points_home"], played["points_away"])
            assert recorded != (0, 0)
            winner = played["home_name"]
            page.choose_value("m-match", "r1-m01")
            page.choose("m-winner", winner)
            page.fill("m-games-home", "2")
            page.fill("m-games-away", "0")
            page.fill("m-reason", "se cortó la luz de la mesa; planilla firmada")
            page.click("do-override")
            confirm(page, f"Tantos: {recorded[0]}-{recorded[1]} (los que registraron")
            # killed right after the organiser confirmed: done once all the same
            pid = int((folder / "desk.pid").read_text())
            os.kill(pid, signal.SIGKILL)
            done(page, "resultado de r1-m01 cargado", 120)
            after = api(base)["matches"][0]
            assert (after["points_home"], after["points_away"]) == recorded
            assert after["status"] == "overridden"
            assert len(journal_actions(folder, "override-result")) == 1
            assert journal_actions(folder, "override-result")[0]["points"] is None

            # the desk killed while the walkover is on its way
            m2 = matches["r1-m02"]
            page.choose_value("m-match", "r1-m02")
            page.choose("m-winner", m2["away_name"])
            page.fill("m-reason", f"{m2['home_name']} no se presentó")
            page.click("do-walkover")
            page.wait("document.getElementById('confirm').classList.contains('open')")
            pid = int((folder / "desk.pid").read_text())
            os.kill(pid, signal.SIGKILL)
            page.click("confirm-yes")
            page.wait("document.getElementById('msg').dataset.waiting === '1'"
                      " || document.getElementById('msg').className === 'ok'", 120)  # fmt: skip
            done(page, "por walkover", 120)
            assert not page.js("document.getElementById('relogin').classList.contains('open')")
            assert int((folder / "desk.pid").read_text()) != pid  # a new desk
            assert len(journal_actions(folder, "walkover")) == 1
            assert api(base)["matches"][1]["status"] == "walkover"

            # the session ended behind the page's back: the key again, the text kept
            page.js("fetch('/api/salir', {method: 'POST', headers: {'Content-Type': "
                    "'application/json'}, body: '{}'}).then(r => r.status)")  # fmt: skip
            page.fill("t-title", "Noche de Truco en Boedo")
            page.click("do-title")
            confirm(page, "«Noche de Truco en Boedo»")
            page.wait("document.getElementById('relogin').classList.contains('open')")
            assert page.js("document.getElementById('t-title').value") == (
                "Noche de Truco en Boedo")  # fmt: skip
            page.fill("relogin-key", link.split("#clave=", 1)[1])
            page.click("relogin-yes")
            done(page, "nombre del torneo guardado")
            page.wait("document.getElementById('title').innerText === 'Noche de Truco en Boedo'")
            assert len(journal_actions(folder, "set-title")) == 1
            page.wait("document.getElementById('round').innerText.includes('Final')", 120)
            page.screenshot(SCREENSHOTS / "organiser-night.png", full=True)
    finally:
        for sim in sims:
            sim.stop()
        night.send_signal(signal.SIGTERM)
        night.wait(120)
        assert night.stdout is not None
        rest = night.stdout.read()  # what readline had read ahead too
    assert night.returncode == 0, "".join(said) + rest
    assert "la mesa de control se cortó (la señal SIGKILL): arranca de nuevo" in rest
    assert "La noche terminó" in rest
    assert quoted.splitlines()[2] in "".join(said) + rest  # Ctrl-C termina la noche
    for p in (port, local, http):  # the broker and the desk are gone
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", p)) != 0, p
