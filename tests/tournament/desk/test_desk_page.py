"""The organiser's desk page in a real browser (headless Chromium), served by
``serve_http`` over a desk that heard its tables: what needs attention comes first and
in order, every match of the round is a row, hostile names stay text, and 22 matches on
20 tables fit one 1366x768 laptop screen. Screenshots go to docs/screenshots/ with
TRUCO_REGEN_SCREENSHOTS=1."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from controller.tournament.desk import DeskState, serve_http
from controller.tournament.desk.sessions import OrganiserAccess
from tests.helpers import http_answer, serving

from .browser import SCREENSHOTS, dom, screenshot
from .scenes import HOSTILE, heard_desk, knockout_16, swiss_round

CALL = "# llamado al árbitro: asiento 2"
FOREIGN = "<script>document.title='pwned'</script> apoyó una carta de otro mazo"


#: The organiser's key of the desks served here, and the page logged in with it (the
#: login page reads the key from the fragment, POSTs it, and loads the organiser's page).
ORGANISER_KEY = "clave-de-prueba"
ORGANISER = "/#clave=" + ORGANISER_KEY


@contextmanager
def served(desk: DeskState) -> Iterator[str]:
    server = serve_http(desk, 0, access=OrganiserAccess(ORGANISER_KEY, delay=lambda s: None))
    with serving(server) as port:
        yield f"http://127.0.0.1:{port}"


def attention_kinds(page: str) -> list[str]:
    box = page[page.index('id="attention"') : page.index("</ul>", page.index('id="attention"'))]
    return re.findall(r'data-kind="([a-z]+)"', box)


def test_the_desk_puts_what_needs_attention_first(tmp_path: Path) -> None:
    t = knockout_16()
    desk = heard_desk(
        tmp_path / "desk", t, offline=("mesa02", "mesa15"), silent=("mesa20",),
        calls={"mesa03": CALL}, foreign={"mesa04": FOREIGN}, tampered=("mesa05",),
    )  # fmt: skip
    with served(desk) as base:
        page = dom(base + ORGANISER, tmp_path)
    # the referee call, the card from outside the deck, then the table offline with a
    # match, then the flagged record
    assert attention_kinds(page) == ["call", "referee", "offline", "flagged"]
    assert "Llaman al árbitro en mesa03 (r2-m03, Cuartos de final), asiento 2 <button" in page
    assert "Carta que no es del mazo de la mano en mesa04 (r2-m04, Cuartos de final), " in page
    # each of the referee's items has its visto (POST /api/ack), the others none
    assert re.findall(r'data-table="(mesa0\d)" data-seq="(\d+)">visto', page) == [
        ("mesa03", "2"), ("mesa04", "2"),
    ]  # fmt: skip
    assert "mesa02 FUERA DE LÍNEA con el partido r2-m02" in page
    assert "Registro mesa05-g009 (mesa05): ADULTERADO" in page
    # every match of the round, with its table, chico and live score
    assert re.findall(r'data-match="(r2-m0\d)"', page) == ["r2-m01", "r2-m02", "r2-m03", "r2-m04"]
    row = page[page.index('data-match="r2-m03"') :].split("</tr>")[0]
    assert "mesa03" in row and "3 de 3" in row and "1-1" in row and "jugando" in row
    assert re.search(r"\d+-\d+ · mano \d", row)  # the table's live score
    assert 'class="playing call"' in page  # the row of the call is marked
    # names and the texts from the network are text, never markup
    assert "&lt;img src=x onerror=" in page and "<img src" not in page
    assert "&lt;script&gt;document.title" in page
    assert "<title>Mesa de control: Copa del Club 2026</title>" in page  # not 'pwned'
    # the tables offline, with and without a match, and the one never heard
    offline = page[page.index('id="offline"') :].split("</ul>")[0]
    assert "mesa02: FUERA DE LÍNEA (r2-m02)" in offline
    assert "mesa15: FUERA DE LÍNEA" in offline and "mesa20: sin noticias" in offline
    assert HOSTILE not in page


def test_twenty_two_matches_on_twenty_tables_fit_one_laptop_screen(tmp_path: Path) -> None:
    t = swiss_round(44, round_no=3, tables=20, hostile=None)  # the manual's picture
    desk = heard_desk(
        tmp_path / "desk", t, offline=("mesa15",), silent=("mesa20",),
        calls={"mesa03": CALL}, tampered=("mesa05",),
    )  # fmt: skip
    with served(desk) as base:
        page = dom(base + ORGANISER, tmp_path, size=(1366, 768))
        screenshot(base + ORGANISER, SCREENSHOTS / "desk.png", tmp_path, size=(1366, 768))
    assert len(re.findall(r'data-match="r3-m\d\d"', page)) == 22
    root = re.search(r"<html[^>]*>", page)
    assert root is not None
    height = re.search(r'data-height="(\d+)"', root[0])
    viewport = re.search(r'data-viewport="(\d+)x(\d+)"', root[0])
    assert height is not None and viewport is not None, root[0]
    assert viewport.groups() == ("768", "1366")  # measured in the laptop's window
    assert 400 < int(height[1]) <= 768, f"the page is {height[1]} px tall"  # its content
    assert "dense" not in root[0]  # fits at its normal size, not only packed tighter
    assert attention_kinds(page) == ["call", "offline", "offline", "flagged", "waiting", "waiting"]
    assert "r3-m21 espera mesa" in page and "(libre: mesa" in page


def test_the_round_to_close_and_the_audit(tmp_path: Path) -> None:
    """A broken audit log comes after the tables and before the flagged records; a
    round whose matches are all decided asks to be closed."""
    t = swiss_round(8, round_no=2, tables=4)
    desk = heard_desk(tmp_path / "desk", t, tables=4, offline=("mesa04",), audit_ok=False)
    with served(desk) as base:
        page = dom(base + ORGANISER, tmp_path)
    kinds = attention_kinds(page)
    assert kinds[:2] == ["offline", "audit"], kinds
    assert "El registro de auditoría del torneo NO verifica" in page


def test_the_tables_page_and_the_host_check_stay(tmp_path: Path) -> None:
    desk = heard_desk(tmp_path / "desk", knockout_16())
    bare = DeskState("t", tables=["mesa01"])  # a desk without a tournament
    with served(desk) as base, served(bare) as bare_base:

        def get(url: str, host: str | None = None) -> tuple[int, bytes]:
            request = urllib.request.Request(url, headers={"Host": host} if host else {})
            status, _headers, body = http_answer(request)
            return status, body

        assert "Atención del árbitro".encode() in get(base + "/mesas")[1]  # the tables
        # the organiser's page asks for the organiser's key first; no controls without it
        login = get(base + "/")[1].decode()
        assert "clave del organizador" in login and 'id="org"' not in login
        status, body = get(base + "/api/tournament")
        data = json.loads(body)
        assert status == 200 and data["tournament"]["name"] == "Copa del Club 2026"
        assert {s["entrant"] for s in data["standings"]} == {f"e{i:02d}" for i in range(1, 17)}
        for path in ("/", "/api/tournament", "/proyector", "/imprimir/emparejamientos",
                     "/imprimir/posiciones", "/imprimir/llave", "/imprimir/planillas",
                     "/export/standings.csv"):  # fmt: skip
            assert get(base + path)[0] == 200, path
            assert get(base + path, "evil.example")[0] == 421, path  # DNS rebinding
        assert get(base + "/export/passwd")[0] == 404
        # another round's pairings and sheets; a round that does not exist: one line
        status, body = get(base + "/imprimir/emparejamientos?ronda=1")
        assert status == 200 and body.count(b'<tr data-match="r1-m') == 8
        assert get(base + "/imprimir/planillas?ronda=1")[1].count(b'<section class="sheet"') == 8
        assert get(base + "/imprimir/planillas")[1].count(b'<section class="sheet"') == 4
        assert get(base + "/imprimir/planillas?ronda=9") == (400, b"no hay una ronda '9'\n")
        assert get(base + "/imprimir/emparejamientos?ronda=x")[0] == 400
        # without a tournament: the tables' page at /, nothing of a tournament
        assert "Atención del árbitro".encode() in get(bare_base + "/")[1]
        assert get(bare_base + "/api/tournament")[0] == 404
        assert get(bare_base + "/proyector")[0] == 404


def test_the_desk_page_over_the_real_organiser(tmp_path: Path) -> None:
    """The views over the desk's own competition (the journal-backed Organiser): it
    paired round 1 and gave out the tables; a game it would not count is on the list."""
    from controller.tournament.competition.model import Format, FormatSpec, Register, Start
    from controller.tournament.desk.organiser import Organiser
    from controller.tournament.desk.records import GameResult

    from ..conftest import KEY
    from .scenes import entrants, table_ids
    from .test_desk import status

    desk = DeskState("t", out_dir=tmp_path / "desk", key=KEY, tables=table_ids(8))
    o = Organiser(tmp_path / "journal", "copa-casa", key=KEY, tables=table_ids(8),
                  fsync=False, lock=desk.lock)  # fmt: skip
    desk.competition = o
    desk.broker_up()
    for table in table_ids(8):
        desk.handle(*status(table, "online"))
    for e in entrants(16, hostile=2):
        o.do(Register(e))
    o.do(Start(FormatSpec(Format.KNOCKOUT, best_of=3)))
    first = o.tournament.round_matches(1)[0]
    o.count(
        GameResult(
            "t",
            "mesa08",
            "mesa08-g001",
            0,
            (30, 12),
            20,
            "intact",
            "",
            "k",
            "",
            "mesa08-g001.truco",
            1000.0,
            match=first.id,
            sha256="ab" * 32,
        )
    )  # fmt: skip  (played at the wrong table)
    with served(desk) as base:
        page = dom(base + ORGANISER, tmp_path)
        with urllib.request.urlopen(base + "/api/tournament", timeout=60) as r:
            data = json.loads(r.read())
    rows = re.findall(r'data-match="(r1-m0\d)">\s*<td>r1-m0\d</td><td[^>]*>(mesa0\d)', page)
    assert rows == [(f"r1-m0{i}", f"mesa0{i}") for i in range(1, 9)]  # the desk's own tables
    assert attention_kinds(page) == ["flagged"]
    assert f"mesa08 jugó {first.id}, que está asignado a mesa01" in page
    assert data["tournament"]["round_label"] == "Octavos de final"
    assert [m["table"] for m in data["matches"]] == table_ids(8)
    assert "&lt;img src=x onerror=" in page and "<img" not in page


def test_forty_tables_fit_packed_tighter(tmp_path: Path) -> None:
    t = swiss_round(80, round_no=2, tables=40)
    desk = heard_desk(tmp_path / "desk", t, tables=40, offline=("mesa33",), calls={"mesa07": CALL})
    with served(desk) as base:
        page = dom(base + ORGANISER, tmp_path, size=(1366, 768))
        screenshot(base + ORGANISER, tmp_path / "dense.png", tmp_path, size=(1366, 768))
    assert len(re.findall(r'data-match="r2-m\d\d"', page)) == 40
    root = re.search(r"<html[^>]*>", page)
    assert root is not None and 'class="dense"' in root[0]
    height = re.search(r'data-height="(\d+)"', root[0])
    assert height is not None and int(height[1]) <= 768, root[0]


def test_visto_is_the_organisers_and_works_from_their_page(tmp_path: Path) -> None:
    """``POST /api/ack`` of a tournament's desk: refused without the organiser's session
    and its CSRF token (and from ``/mesas``, which shows no visto), accepted from the
    organiser's page (its visto clicked in a real browser) and with the key as bearer."""
    from .cdp import Page

    desk = heard_desk(tmp_path / "desk", knockout_16(), tables=4,
                      calls={"mesa03": CALL}, foreign={"mesa04": FOREIGN})  # fmt: skip

    def pending() -> dict[str, list[int]]:
        with desk.lock:
            return {t: [a.seq for a in desk.tables[t].pending()] for t in ("mesa03", "mesa04")}

    with served(desk) as base:

        def ack(table: str, headers: dict[str, str]) -> int:
            body = json.dumps({"table": table, "seq": 2}).encode()
            request = urllib.request.Request(
                base + "/api/ack", data=body, method="POST",
                headers={"Content-Type": "application/json"} | headers,
            )  # fmt: skip
            return http_answer(request)[0]

        # a screen, a patron's phone: no key, a session without its token, a wrong key
        assert ack("mesa03", {}) == 401
        login = urllib.request.Request(
            base + "/api/entrar", data=json.dumps({"clave": ORGANISER_KEY}).encode(),
            headers={"Content-Type": "application/json"}, method="POST",
        )  # fmt: skip
        with urllib.request.urlopen(login, timeout=60) as r:
            cookie = r.headers["Set-Cookie"].split(";")[0]
        assert ack("mesa03", {"Cookie": cookie}) == 401
        assert ack("mesa03", {"Cookie": cookie, "X-CSRF-Token": "x"}) == 401
        assert ack("mesa03", {"Authorization": "Bearer otra-clave-cualquiera"}) == 401
        assert pending() == {"mesa03": [2], "mesa04": [2]}
        screen = dom(base + "/mesas", tmp_path)  # a screen: the list, without its visto
        rows = screen[screen.index('<tbody id="tables">') :].split("</tbody>")[0]
        assert "mesa03" in rows and "<b>" in rows and "<button" not in rows, rows

        # the organiser's page: its visto takes the referee call off the list
        with Page(tmp_path / "chromium", size=(1366, 768)) as page:
            page.goto(base + ORGANISER)
            page.wait("document.querySelector('#attention button[data-table=\"mesa03\"]')")
            page.js("document.querySelector('#attention button[data-table=\"mesa03\"]').click()")
            page.wait("!document.querySelector('#attention button[data-table=\"mesa03\"]')", 5)
            assert "Llaman al árbitro en mesa03" not in page.text("attention")
            assert "Carta que no es del mazo" in page.text("attention")  # the other stays
        assert pending() == {"mesa03": [], "mesa04": [2]}
        # the command line's bearer key too
        assert ack("mesa04", {"Authorization": "Bearer " + ORGANISER_KEY}) == 200
        assert pending() == {"mesa03": [], "mesa04": []}


def test_the_mesa_column_shows_a_held_table_whole(tmp_path: Path) -> None:
    """Issue 42: "retenida (espera la #N)" was cut by the column's width."""
    from .cdp import Page
    from .test_desk import event

    t = swiss_round(44, round_no=3, tables=20, hostile=None)
    desk = heard_desk(tmp_path / "desk", t)
    desk.handle(*event("mesa03", 40))  # a gap: held back, waiting for #2
    with served(desk) as base, Page(tmp_path / "chromium", size=(1366, 768)) as page:
        page.goto(base + ORGANISER)
        page.wait("document.querySelector('tr[data-match=\"r3-m03\"]') !== null")
        cell = "document.querySelector('tr[data-match=\"r3-m03\"] td.mesa')"
        assert "retenida (espera la #2)" in page.js(f"{cell}.innerText")
        # nothing of it hidden: the cell wraps instead of cutting
        assert page.js(f"{cell}.scrollWidth <= {cell}.clientWidth + 1") is True
        assert page.js(f"{cell}.querySelector('span').getBoundingClientRect().right"
                       f" <= {cell}.getBoundingClientRect().right + 1") is True  # fmt: skip


def test_every_answer_keeps_the_page_out_of_frames_and_its_type_unguessed(
    tmp_path: Path,
) -> None:
    """The desk's answers (a page, the API, a refusal) are never cached, never sniffed,
    never framed by another site, and carry the page's content policy."""
    desk = heard_desk(tmp_path / "desk", knockout_16())
    with served(desk) as base:
        for path in ("/mesas", "/api/tournament", "/no-existe"):
            _status, headers, _body = http_answer(urllib.request.Request(base + path))
            assert headers["Cache-Control"] == "no-store", path
            assert headers["X-Content-Type-Options"] == "nosniff", path
            assert headers["X-Frame-Options"] == "DENY", path
            assert "frame-ancestors 'none'" in headers["Content-Security-Policy"], path
