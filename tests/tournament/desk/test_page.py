"""The desk's web page in a real browser (headless Chromium): what the referee sees when
the broker is lost, a table is held back, a record is tampered and messages were
rejected; texts from the network shown as text; DNS rebinding and cross-origin writes
refused. Also the server's own checks (Host, Origin) without a browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from controller.tournament.desk import DeskState, serve_http
from controller.tournament.wire.seal import TournamentKey
from tests.helpers import http_answer, serving

from .test_desk import event, record_message, sealed_for, status

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def scene(tmp_path: Path, key: TournamentKey) -> Iterator[tuple[DeskState, int]]:
    """A desk that has seen a bit of everything, serving its page."""
    clock = [1_000_000.0]
    desk = DeskState(
        "t", out_dir=tmp_path / "desk", key=key, tables=["mesa01", "mesa02", "mesa03"],
        clock=lambda: clock[0],
    )  # fmt: skip
    desk.broker_up()
    desk.handle(*status("mesa01", "online"))
    desk.handle(*event("mesa01", 1, "refusal", seat=1, code="card_not_in_hand",
                       text='<img src=x onerror="document.title=1">'))  # fmt: skip
    desk.handle(*status("mesa02", "online"))
    desk.handle(*event("mesa02", 1))
    desk.handle(*event("mesa02", 3))  # 2 is missing: held back
    desk.handle(*record_message("mesa01", 2, sealed_for("mesa01")))
    desk.handle(*event("mesa01", 3, "referee-call", seat=0, text="# llamado al árbitro: asiento 0"))
    desk.handle(*event("mesa01", 4, "refusal", seat=0, code="not_your_turn", text="rutina"))
    desk.handle(*event("mesa09", 1))  # not a table of the tournament
    clock[0] += 30
    assert desk.out_dir is not None
    path = desk.out_dir / "records" / "mesa01-g001.truco"
    path.write_text(path.read_text().replace("\n0 ", "\n1 ", 1))
    desk.reverify()
    desk.broker_down()
    clock[0] += 75
    with serving(serve_http(desk, 0)) as port:
        yield desk, port


def chromium(url: str, tmp_path: Path, *extra: str) -> str:
    """The page's DOM after its scripts ran (and a screenshot in tmp_path)."""
    if CHROMIUM is None:
        pytest.skip("chromium not installed (apt-get install chromium; .ci/run does)")
    done = subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=4000",
            "--window-size=1400,1000", *extra, "--dump-dom", url,
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def screenshot(url: str, path: Path, tmp_path: Path) -> None:
    if CHROMIUM is None:
        pytest.skip("chromium not installed (apt-get install chromium; .ci/run does)")
    subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            f"--user-data-dir={tmp_path / 'shot'}", "--virtual-time-budget=4000",
            "--window-size=1400,1000", "--hide-scrollbars", f"--screenshot={path}", url,
        ],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip


def test_the_page_shows_what_the_referee_must_know(
    scene: tuple[DeskState, int], tmp_path: Path
) -> None:
    desk, port = scene
    dom = chromium(f"http://127.0.0.1:{port}/", tmp_path)
    assert "SIN CONEXIÓN CON EL BROKER desde las" in dom
    assert "hace 75 s" in dom  # since when
    assert "RETENIDA (espera la #2)" in dom  # mesa02, held back for a gap
    assert "ADULTERADO" in dom and "changed on disk" in dom  # the record edited at rest
    assert "mesa09 is not a table of this tournament" in dom  # rejected, listed
    assert "nunca" in dom  # mesa03: never heard from
    assert ">en línea" not in dom and "0 en línea" in dom  # nothing claims to be live
    # the refusal's text from the network is shown as text, never run as markup
    assert "&lt;img src=x" in dom and '<img src="x"' not in dom
    assert "<title>Torneo de truco</title>" in dom
    # what needs the referee: the call and the card not dealt to that seat, each with its
    # button; the routine refusal only counted
    assert "Llaman al árbitro</b> (asiento 0)" in dom
    assert "Carta que no le repartieron a ese asiento</b> (asiento 1)" in dom
    assert re.findall(r'data-seq="(\d+)"', dom) == ["1", "3"] and "not_your_turn 1" in dom
    assert "2 avisos para el árbitro · 2 rechazos" in dom
    shot = tmp_path / "page.png"
    screenshot(f"http://127.0.0.1:{port}/", shot, tmp_path)
    assert shot.stat().st_size > 10_000  # the picture itself was looked at (docs/dev/desk-views.md)
    assert desk.broker_connected is False


def test_dns_rebinding_gets_nothing(scene: tuple[DeskState, int], tmp_path: Path) -> None:
    _, port = scene
    rebound = chromium(
        f"http://rebound.example:{port}/api/state",
        tmp_path,
        "--host-resolver-rules=MAP rebound.example 127.0.0.1",
    )
    assert "answers only its own host" in rebound and "mesa01" not in rebound


class _Attacker(BaseHTTPRequestHandler):
    """Another site the referee's browser visits: it tries to acknowledge a refusal."""

    target = ""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = f"""<!doctype html><title>x</title><script>
        const body = JSON.stringify({{table: "mesa01", seq: 1}});
        fetch("{self.target}/api/ack", {{method: "POST", mode: "no-cors",
          headers: {{"Content-Type": "text/plain"}}, body}});
        fetch("{self.target}/api/ack", {{method: "POST",
          headers: {{"Content-Type": "application/json"}}, body}}).catch(() => 0);
        document.title = "sent";
        </script>""".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_foreign_page_cannot_acknowledge(scene: tuple[DeskState, int], tmp_path: Path) -> None:
    desk, port = scene
    handler = type("Attacker", (_Attacker,), {"target": f"http://127.0.0.1:{port}"})
    attacker = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    try:
        dom = chromium(f"http://localhost:{attacker.server_address[1]}/", tmp_path)
        assert "<title>sent</title>" in dom
    finally:
        attacker.shutdown()
        attacker.server_close()
    assert [a.seq for a in desk.tables["mesa01"].pending()] == [1, 3]  # still waiting


def test_the_server_checks_host_and_origin(scene: tuple[DeskState, int]) -> None:
    desk, port = scene
    base = f"http://127.0.0.1:{port}"

    def call(path: str, headers: dict[str, str], data: bytes | None = None) -> int:
        request = urllib.request.Request(base + path, data=data, headers=headers)
        return http_answer(request)[0]

    assert call("/api/state", {}) == 200
    assert call("/api/state", {"Host": f"localhost:{port}"}) == 200
    assert call("/api/state", {"Host": "evil.example"}) == 421
    assert call("/api/state", {"Host": f"evil.example:{port}"}) == 421
    ack = json.dumps({"table": "mesa01", "seq": 1}).encode()
    as_json = {"Content-Type": "application/json"}
    assert call("/api/ack", as_json | {"Origin": "http://evil.example"}, ack) == 403
    assert call("/api/ack", as_json | {"Sec-Fetch-Site": "cross-site"}, ack) == 403
    assert [a.seq for a in desk.tables["mesa01"].pending()] == [1, 3]
    assert call("/api/ack", as_json | {"Origin": base}, ack) == 200
    assert [a.seq for a in desk.tables["mesa01"].pending()] == [3]
    call_ack = json.dumps({"table": "mesa01", "seq": 3}).encode()  # the referee call too
    assert call("/api/ack", as_json | {"Origin": base}, call_ack) == 200
    assert not desk.tables["mesa01"].pending()
