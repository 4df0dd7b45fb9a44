"""The league's exports as files: the league desk writes standings, matches and games
into its folder (the same bytes it serves at /export/); the games read back with the csv
module and as JSON: every counted chico with its venue, every record not counted with
its verdict and why."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import ssl
from pathlib import Path

from controller.tournament.league.desk import LeagueDesk
from controller.tournament.league.exports import EXPORT_NAMES, LEAGUE_GAME_FIELDS
from controller.tournament.league.web import serve_league
from controller.transcript import parse, replay

from .helpers import bot_game, game_payloads, record_payload
from .test_web import AFTER_TWO, LEAGUE, MATCH, OTHER, SECRET, _central, _deliver, _get, fed_desk


def _sha(topic: str, data: bytes) -> str:
    """The SHA-256 of the sealed record a table's message carries."""
    return hashlib.sha256(json.loads(data)["record"].encode("utf-8")).hexdigest()


def test_the_games_export_read_from_the_desks_folder(tmp_path: Path) -> None:
    folder = tmp_path / "desk"
    desk = fed_desk(folder)  # two chicos of MATCH, a record of bar-b's match sealed at bar-a
    third = game_payloads(LEAGUE, SECRET, "bar-a", "mesa01", MATCH.id, seq=AFTER_TWO,
                          game_number=4, chico=3)  # fmt: skip
    for topic, data in third:  # MATCH was decided
        _deliver(desk, _central(LEAGUE, topic, "bar-a"), data)
    try:
        paths = desk.export()
        assert sorted(p.name for p in paths) == sorted(EXPORT_NAMES)
        with open(folder / "games.csv", encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            assert tuple(reader.fieldnames or ()) == LEAGUE_GAME_FIELDS
            rows = list(reader)
        game = replay(parse(bot_game())).game
        winner = MATCH.home if game.winner == 0 else MATCH.away
        counted = [r for r in rows if r["counted"] == "true"]
        assert [(r["game"], r["match"], r["venue"], r["table"]) for r in counted] == [
            ("mesa01-g001", MATCH.id, "bar-a", "mesa01"),
            ("mesa01-g002", MATCH.id, "bar-a", "mesa01"),
        ]
        for r in counted:
            assert (r["home"], r["away"], r["winner"]) == (MATCH.home, MATCH.away, winner)
            assert r["winner_name"] == LEAGUE.entrant(winner).name
            assert (int(r["score_home"]), int(r["score_away"])) == game.score
            assert r["verdict"] == "counted" and r["reason"] == ""
            assert r["round"] == "1" and r["label"]
        first = record_payload(LEAGUE, SECRET, "bar-a", "mesa01", MATCH.id, seq=1, chico=1)
        assert counted[0]["record_sha256"] == _sha(*first)
        flagged = [r for r in rows if r["counted"] == "false"]
        assert [(r["game"], r["venue"], r["verdict"]) for r in flagged] == [
            ("mesa02-g003", "bar-a", "wrong-venue"),  # bar-a sealing a match of bar-b
            ("mesa01-g004", "bar-a", "surplus"),  # a third chico of a decided match
        ]
        assert (
            flagged[0]["match"] == OTHER.id and "se juega en la sede bar-b" in flagged[0]["reason"]
        )
        assert "ya estaba definido" in flagged[1]["reason"]
        assert len(rows) == 4  # the repeated first record is in no row twice

        data = json.loads((folder / "games.json").read_text(encoding="utf-8"))
        assert data["tournament"] == "liga"
        assert [g["game"] for g in data["games"]] == [r["game"] for r in rows]
        assert [g["counted"] for g in data["games"]] == [True, True, False, False]
        assert data["games"][0]["score_home"] == game.score[0]  # a number, not a text

        excel = (folder / "games.excel.csv").read_bytes().decode("utf-8")
        # the spreadsheet's headers in Spanish (issue 42)
        assert excel.startswith("\ufeffchico;partido;ronda;nombre de la ronda;sede;")
        assert "\r\n" in excel
        table = list(csv.DictReader(io.StringIO(excel.removeprefix("\ufeff")), delimiter=";"))
        assert [r["contado"] for r in table] == ["sí", "sí", "no", "no"]

        server = serve_league(desk, 0)
        try:
            port = server.server_address[1]
            for name in EXPORT_NAMES:  # the files are what the page serves, byte for byte
                status, _, body = _get(port, f"/export/{name}")
                assert status == 200 and body == (folder / name).read_bytes(), name
        finally:
            server.shutdown()
            server.server_close()
        standings = list(csv.DictReader(io.StringIO((folder / "standings.csv").read_text())))
        assert sum(int(r["won"]) for r in standings) == 1  # MATCH, decided
    finally:
        desk.ledger.close()


def test_the_exports_follow_a_restarted_desks_journal(tmp_path: Path) -> None:
    folder = tmp_path / "desk"
    desk = fed_desk(folder)
    desk.export()
    desk.ledger.close()
    before = {name: (folder / name).read_bytes() for name in EXPORT_NAMES}
    for name in EXPORT_NAMES:
        (folder / name).unlink()
    ca = ssl.get_default_verify_paths().cafile
    assert ca is not None  # fed_desk skipped otherwise
    restarted = LeagueDesk(LEAGUE, SECRET, folder, host="127.0.0.1", port=1, ca_file=ca,
                           username="league-desk", password="x")  # fmt: skip
    try:
        restarted.open()  # the journal read (never connected), the exports written from it
        assert {name: (folder / name).read_bytes() for name in EXPORT_NAMES} == before
    finally:
        restarted.ledger.close()
