"""Only the organiser changes the tournament from the page: the key at login, the
session's cookie with its CSRF token on every write, the Origin and Host checks kept,
the command line's bearer key; the screens stay read-only. Also the import through the
page's API (a preview first, nothing registered while a line is bad) and the exports on
the disk kept equal to the page's."""

from __future__ import annotations

import base64
import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.tournament.competition.model import Entrant, Player, Register
from controller.tournament.desk.exports import EXPORT_NAMES, export_text
from controller.tournament.desk.organiser import Organiser
from controller.tournament.desk.sessions import load_or_create_key
from tests.helpers import http_answer

from ..conftest import KEY
from .served import served_desk

ORGANISER_KEY = "la-clave-del-organizador"


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[tuple[str, Organiser, Path]]:
    with served_desk(tmp_path / "desk", KEY, ORGANISER_KEY) as (url, o):
        yield url, o, tmp_path / "desk"


def call(
    url: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    data = None if body is None else json.dumps(body).encode()
    h = {"Content-Type": "application/json"} if body is not None else {}
    req = urllib.request.Request(url, data=data, headers=h | (headers or {}),
                                 method="POST" if body is not None else "GET")  # fmt: skip
    return http_answer(req)


def register(n: int) -> dict[str, Any]:
    players = [{"name": "A", "member_id": None}, {"name": "B", "member_id": None}]
    entrant = {"id": f"e{n:02d}", "name": f"Equipo {n}", "club": None, "seed": None}
    return {"action": {"v": 1, "type": "register", "entrant": entrant | {"players": players}}}


def log_in(url: str) -> tuple[str, str]:
    status, headers, _ = call(url + "/api/entrar", {"clave": ORGANISER_KEY})
    assert status == 200
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    session = cookie.split(";")[0]
    status, _, page = call(url + "/", headers={"Cookie": session})
    found = re.search(rb'<meta name="csrf" content="([^"]+)">', page)
    assert status == 200 and found is not None and b'id="org"' in page
    return session, found[1].decode()


def test_a_session_and_its_csrf_token_are_needed_to_write(
    desk: tuple[str, Organiser, Path],
) -> None:
    url, o, _ = desk
    # without a session: the login page, no controls, no token; writes refused
    status, _, page = call(url + "/")
    assert status == 200 and b"clave del organizador" in page and b"csrf" not in page
    assert call(url + "/api/organiser", register(1))[0] == 401
    # a wrong key: no session
    status, headers, _ = call(url + "/api/entrar", {"clave": "adivino"})
    assert status == 403 and "Set-Cookie" not in headers
    session, csrf = log_in(url)
    # the cookie alone (what a cross-site request would carry) is not enough
    assert call(url + "/api/organiser", register(1), {"Cookie": session})[0] == 401
    other = "y" if csrf[0] == "x" else "x"  # a token one letter off (1 in 64 began with x)
    wrong = {"Cookie": session, "X-CSRF-Token": other + csrf[1:]}
    assert call(url + "/api/organiser", register(1), wrong)[0] == 401
    assert o.journal.lines == 0
    ok = {"Cookie": session, "X-CSRF-Token": csrf}
    # another origin, or a page loaded under another name (DNS rebinding): refused
    assert (
        call(url + "/api/organiser", register(1), ok | {"Origin": "http://evil.example"})[0] == 403
    )
    assert (
        call(url + "/api/organiser", register(1), ok | {"Sec-Fetch-Site": "cross-site"})[0] == 403
    )
    assert call(url + "/api/organiser", register(1), ok | {"Host": "evil.example:80"})[0] == 421
    assert o.journal.lines == 0
    status, _, body = call(url + "/api/organiser", register(1), ok)
    assert status == 200 and json.loads(body)["ok"] is True
    assert [e.name for e in o.tournament.entrants] == ["Equipo 1"]
    # logged out: the session is gone
    assert call(url + "/api/salir", {}, {"Cookie": session})[0] == 200
    assert call(url + "/api/organiser", register(2), ok)[0] == 401
    assert b"csrf" not in call(url + "/", headers={"Cookie": session})[2]


def test_the_command_lines_bearer_key(desk: tuple[str, Organiser, Path]) -> None:
    url, o, _ = desk
    assert call(url + "/api/organiser", register(1), {"Authorization": "Bearer nope"})[0] == 401
    good = {"Authorization": f"Bearer {ORGANISER_KEY}"}
    assert call(url + "/api/organiser", register(1), good)[0] == 200
    assert len(o.tournament.entrants) == 1


def test_the_screens_read_without_a_key(desk: tuple[str, Organiser, Path]) -> None:
    url, o, _ = desk
    o.do(Register(Entrant("e01", "Uno", (Player("a"), Player("b")))))
    for path in ("/api/tournament", "/proyector", "/imprimir/posiciones", "/export/standings.csv"):
        assert call(url + path)[0] == 200, path


def sheet(text: str, encoding: str = "cp1252") -> str:
    return base64.b64encode(text.encode(encoding)).decode()


def test_the_import_previews_every_bad_line_and_registers_nothing_until_none(
    desk: tuple[str, Organiser, Path],
) -> None:
    url, o, _ = desk
    auth = {"Authorization": f"Bearer {ORGANISER_KEY}"}
    o.do(Register(Entrant("e01", "Ñandú", (Player("a"), Player("b")))))
    bad = sheet("nombre;jugador1;jugador2\r\nAtlético;Begoña;Iñaki\r\n;x;y\r\nñandú;c;d\r\n")
    status, _, body = call(url + "/api/organiser/import", {"data": bad, "team_size": 2}, auth)
    preview = json.loads(body)
    assert status == 200 and preview["encoding"] == "Windows-1252"
    assert [e["name"] for e in preview["entrants"]] == ["Atlético"]
    assert [p.split(":")[0] for p in preview["problems"]] == ["línea 3", "línea 4"]
    assert o.journal.lines == 1  # a preview writes nothing
    status, _, body = call(url + "/api/organiser/import", {"data": bad, "commit": True}, auth)
    assert status == 409 and "no se anotó a nadie" in json.loads(body)["error"]
    assert [e.name for e in o.tournament.entrants] == ["Ñandú"]
    good = sheet("nombre;jugador1;jugador2\r\nAtlético;Begoña;Iñaki\r\n")
    status, _, body = call(url + "/api/organiser/import", {"data": good, "commit": True}, auth)
    assert status == 200 and json.loads(body)["registered"] == 1
    assert [e.name for e in o.tournament.entrants] == ["Ñandú", "Atlético"]
    unreadable = base64.b64encode("nombre;jugador1\r\n".encode("utf-16")).decode()
    status, _, body = call(url + "/api/organiser/import", {"data": unreadable}, auth)
    assert status == 409 and "CSV UTF-8" in json.loads(body)["error"]
    assert call(url + "/api/organiser/import", {"data": good})[0] == 401  # no key


def test_the_files_on_the_disk_follow_what_the_page_serves(
    desk: tuple[str, Organiser, Path],
) -> None:
    url, o, folder = desk
    o.do(Register(Entrant("e01", "=HYPERLINK(1)", (Player("a"), Player("b")))))
    # a change that reached no export yet (as a record judged again would)
    for name in EXPORT_NAMES:
        (folder / name).write_text("viejo", encoding="utf-8")
    assert call(url + "/api/tournament")[0] == 200
    for name in EXPORT_NAMES:
        assert (folder / name).read_bytes() == export_text(name, o.tournament).encode()
    served = call(url + "/export/standings.excel.csv")[2]
    assert served == (folder / "standings.excel.csv").read_bytes()


def test_the_key_file_is_made_once_and_private(tmp_path: Path) -> None:
    key = load_or_create_key(tmp_path)
    path = tmp_path / "organiser.key"
    assert path.stat().st_mode & 0o777 == 0o600
    assert load_or_create_key(tmp_path) == key and len(key) >= 20
    assert load_or_create_key(tmp_path, "mi-clave-larga") == "mi-clave-larga"
    with pytest.raises(ValueError):
        load_or_create_key(tmp_path, "corta")
