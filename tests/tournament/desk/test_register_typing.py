"""The organiser types the next team while the desk still answers the last one: what
they typed stays (issue 40's CI found the page emptying the form after its refresh,
once the "Hecho" was already shown, under the hands of someone typing the next team).

Headless Chromium on the desk's page, the venue's real Mosquitto; the page's refresh
after a registration is held (its ``fetch`` wrapped in the page) until the next team's
name is typed, so the order is the one a slow desk gives, on any machine."""

from __future__ import annotations

import io
import secrets
import shutil
from pathlib import Path

import pytest

from controller.engine import HouseRules
from controller.tournament.desk.running import DeskRun
from controller.tournament.sim.demo import DemoBroker
from controller.tournament.wire.seal import TournamentKey

from .cdp import Page
from .test_organiser_evening import KEY_TEXT, confirm, done

pytestmark = pytest.mark.skipif(
    shutil.which("mosquitto") is None and not Path("/usr/sbin/mosquitto").exists(),
    reason="needs the mosquitto binary (Debian: apt-get install mosquitto)",
)

#: the page's fetch, the refresh of the tournament held once a registration was posted
HOLD_REFRESH = """(() => {
  const real = window.fetch;
  window.holdRefresh = true;
  window.fetch = async (url, options) => {
    const posted = options && options.method === "POST";
    const answer = await real(url, options);
    if (posted && String(url).includes("/api/organiser")) window.registered = true;
    while (!posted && window.registered && window.holdRefresh
           && String(url).includes("/api/tournament")) {
      await new Promise(resolve => setTimeout(resolve, 20));
    }
    return answer;
  };
  return true;
})()"""


def test_the_next_team_typed_before_the_desk_answered_stays(tmp_path: Path) -> None:
    folder = tmp_path / "noche"
    folder.mkdir()
    key = TournamentKey(secrets.token_bytes(32), "copa-noche")
    venue = DemoBroker.start(folder, "copa", ["mesa01"], key, None, io.StringIO())
    desk = DeskRun(folder / "desk", "copa", key=venue.key, tables=["mesa01"],
                   rules=HouseRules(players=4, target=15), host=venue.host, port=venue.port,
                   access=venue.access("desk"), http_port=0,
                   organiser_key=KEY_TEXT)  # fmt: skip
    base = (desk.page or "").rstrip("/")
    try:
        with Page(tmp_path / "chromium", size=(1366, 900)) as page:
            page.goto(base + "/#clave=" + KEY_TEXT)
            page.wait(
                "document.getElementById('org') && document.getElementById('m-match')"
                " && !document.getElementById('org').classList.contains('closed')"
            )
            assert page.js(HOLD_REFRESH) is True
            page.fill("r-name", "Los del Fondo")
            page.fill("r-p1", "Ana Núñez")
            page.fill("r-p2", "Beto Díaz")
            page.click("do-register")
            confirm(page, "¿Inscribir a Los del Fondo")
            done(page, "Los del Fondo inscripto")  # said; the page's refresh still held
            page.fill("r-name", "La Barra del Ancho")  # the next team, at once
            page.js("window.holdRefresh = false")
            page.wait("document.getElementById('teams-count').innerText === '1'")
            page.wait("document.getElementById('r-p1').value === ''")  # the last team's
            assert page.js("document.getElementById('r-name').value") == "La Barra del Ancho"
            assert page.js("document.getElementById('r-p2').value") == ""
    finally:
        desk.stop()
        venue.stop()
