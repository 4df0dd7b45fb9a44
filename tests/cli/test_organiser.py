"""``truco-table organiser`` against a desk's page: registration by hand and from a
spreadsheet, the seeding, the start, a walkover, an override with its reason, a
refusal with the desk's reason (exit 1), no desk (exit 2); everything in the audit
journal, which ``truco-table desk-audit`` checks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.cli import main
from controller.tournament.desk.organiser import Organiser
from controller.tournament.wire.seal import TournamentKey
from tests.test_spanish_output import english_words
from tests.tournament.desk.served import served_desk

KEY = TournamentKey(b"o" * 32, "copa-cli")
ORGANISER_KEY = "clave-del-organizador"


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[tuple[str, Organiser, Path]]:
    key_file = tmp_path / "organiser.key"
    key_file.write_text(ORGANISER_KEY + "\n", encoding="utf-8")
    with served_desk(tmp_path / "desk", KEY, ORGANISER_KEY) as (url, o):
        yield url, o, tmp_path


def organiser(url: str, *argv: str, key: Path | None = None) -> int:
    return main(["organiser", "--desk", url, "--key-file", str(key or KEY_FILE[0]), *argv])


KEY_FILE: list[Path] = []


@pytest.fixture(autouse=True)
def _key_file(tmp_path: Path) -> Iterator[None]:
    KEY_FILE[:] = [tmp_path / "organiser.key"]
    yield
    KEY_FILE.clear()


def test_a_tournament_run_from_the_command_line(
    desk: tuple[str, Organiser, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url, o, tmp = desk
    assert organiser(url, "register", "--name", "Los del Fondo", "--player", "Ana Sosa",
                     "--player", "Beto Ríos", "--member", "S1", "--club", "Boedo") == 0  # fmt: skip
    sheet = tmp / "equipos.csv"
    sheet.write_text("\ufeffnombre;jugador1;jugador2;club\nLa Barra;Carla;Dante;Almagro\n"
                     "Los Pardas;Elsa;Fito;\nVale Cuatro;Gabi;Hugo;Flores\n",
                     encoding="utf-8")  # fmt: skip
    assert organiser(url, "import", str(sheet), "--team-size", "2") == 0
    t = o.tournament
    assert [e.name for e in t.entrants] == ["Los del Fondo", "La Barra", "Los Pardas",
                                             "Vale Cuatro"]  # fmt: skip
    assert len({e.id for e in t.entrants}) == 4
    assert t.entrants[0].players[0].member_id == "S1" and t.entrants[0].club == "Boedo"
    ids = [e.id for e in t.entrants]
    assert organiser(url, "seed", ids[3], ids[0]) == 0
    assert organiser(url, "start", "--format", "knockout", "--best-of", "3") == 0
    t = o.tournament
    assert t.round == 1 and all(m.table for m in t.round_matches(1))
    first = t.round_matches(1)[0]
    capsys.readouterr()
    # a walkover to someone who is not in that match: the desk says why, nothing written
    lines = o.journal.lines
    outsider = next(e for e in ids if e not in (first.pairing.home, first.pairing.away))
    assert organiser(url, "walkover", first.id, "--winner", outsider, "--reason", "x") == 1
    assert "no lo aceptó" in capsys.readouterr().err and o.journal.lines == lines
    assert organiser(url, "walkover", first.id, "--winner", first.pairing.home,
                     "--reason", "no se presentaron") == 0  # fmt: skip
    second = o.tournament.round_matches(1)[1]
    override = ["--games", "0-2", "--points", "20-30", "--reason", "planilla firmada"]
    assert second.pairing.away is not None
    assert organiser(url, "override", second.id, "--winner", second.pairing.away, *override) == 0
    t = o.tournament
    assert t.match(first.id).result.reason == "no se presentaron"
    assert t.match(second.id).result.winner == second.pairing.away
    assert t.round == 2  # the round closed by itself and the next was paired
    assert organiser(url, "status") == 0
    assert "ronda 2" in capsys.readouterr().out
    journal = (tmp / "desk" / "journal.jsonl").read_text(encoding="utf-8")
    assert "planilla firmada" in journal and "no se presentaron" in journal
    config = tmp / "tournament.toml"
    config.write_text(f'[tournament]\nname = "copa"\nkey = "{KEY.key.hex()}"\n'
                      f'key_id = "{KEY.key_id}"\n', encoding="utf-8")  # fmt: skip
    config.chmod(0o600)
    assert main(["desk-audit", str(tmp / "desk"), "--config", str(config)]) == 0
    assert "íntegro" in capsys.readouterr().out
    # without the key: it cannot be verified (exit 2), never "alterado"
    assert main(["desk-audit", str(tmp / "desk"), "--tournament", "copa"]) == 2
    said = capsys.readouterr()
    assert "no se puede verificar sin la clave" in said.err and "alterado" not in said.out
    path = tmp / "desk" / "journal.jsonl"
    path.write_text(journal.replace("planilla firmada", "planilla perdida"), encoding="utf-8")
    assert main(["desk-audit", str(tmp / "desk"), "--config", str(config)]) == 1
    assert "alterado: línea" in capsys.readouterr().out


def test_a_bad_spreadsheet_names_its_line(
    desk: tuple[str, Organiser, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url, o, tmp = desk
    sheet = tmp / "equipos.csv"
    sheet.write_text("nombre,jugador1,jugador2\nLa Barra,Carla,Dante\n,Elsa,Fito\n",
                     encoding="utf-8")  # fmt: skip
    assert organiser(url, "import", str(sheet), "--team-size", "2") == 1
    err = capsys.readouterr().err
    assert "línea 3" in err and "Traceback" not in err
    assert o.tournament.entrants == ()  # nothing of it registered


def test_no_desk_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert organiser("http://127.0.0.1:9", "status") == 2
    err = capsys.readouterr().err
    assert "ninguna mesa de control contesta en http://127.0.0.1:9" in err
    assert english_words(err) == [], err


def test_the_desk_refuses_a_malformed_action(desk: tuple[str, Organiser, Path]) -> None:
    import urllib.error
    import urllib.request

    url, _, _ = desk
    req = urllib.request.Request(url + "/api/organiser", data=json.dumps(
        {"action": {"type": "walkover", "v": 1}}).encode(),
        headers={"Content-Type": "application/json",
                 "Authorization": f"Bearer {ORGANISER_KEY}"}, method="POST")  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=60)
    assert e.value.code == 400


def test_without_the_organisers_key_nothing_is_written(
    desk: tuple[str, Organiser, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url, o, tmp = desk
    wrong = tmp / "wrong.key"
    wrong.write_text("no-es-la-clave\n", encoding="utf-8")
    assert organiser(url, "register", "--name", "Intrusos", "--player", "X", key=wrong) == 1
    assert "Solo el organizador" in capsys.readouterr().err
    assert main(["organiser", "--desk", url, "register", "--name", "I", "--player", "X"]) == 2
    assert "falta la clave del organizador" in capsys.readouterr().err
    assert o.tournament.entrants == () and o.journal.lines == 0


def test_names_wherever_ids_and_the_chicos_of_the_winner_first(
    desk: tuple[str, Organiser, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url, o, _ = desk
    for name in ("Los del Fondo", "La Barra", "Los Pardas", "Vale Cuatro"):
        assert organiser(url, "register", "--name", name, "--player", "A", "--player", "B") == 0
    assert organiser(url, "seed", "vale cuatro", "Los  Pardas") == 0
    assert [e.seed for e in o.tournament.entrants] == [None, None, 2, 1]
    assert organiser(url, "start", "--format", "swiss", "--best-of", "3", "--rounds", "2") == 0
    capsys.readouterr()
    assert organiser(url, "status") == 0
    out = capsys.readouterr().out
    assert "e01    Los del Fondo" in out and "(local-visitante)" in out
    first, second = o.tournament.round_matches(1)
    home = o.tournament.entrant(first.pairing.home).name
    assert organiser(url, "walkover", home, "--winner", home, "--reason", "no vino") == 0
    assert o.tournament.match(first.id).result.winner == first.pairing.home
    assert second.pairing.away is not None
    away = o.tournament.entrant(second.pairing.away).name
    assert organiser(url, "override", second.id, "--winner", away, "--chicos", "2-1",
                     "--reason", "planilla") == 0  # fmt: skip
    result = o.tournament.match(second.id).result
    assert result.winner == second.pairing.away and result.games == (1, 2)
    assert organiser(url, "withdraw", "Nadie", "--reason", "x") == 2
    assert "no hay un equipo 'Nadie'" in capsys.readouterr().err


def test_a_cp1252_sheet_with_bad_lines_lists_them_all(
    desk: tuple[str, Organiser, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url, o, tmp = desk
    assert organiser(url, "register", "--name", "Ñandú", "--player", "A", "--player", "B") == 0
    sheet = tmp / "equipos.csv"
    sheet.write_bytes("nombre;jugador1;jugador2\r\nAtlético;Begoña;Iñaki\r\n;x;y\r\n"
                      "ÑANDÚ;c;d\r\n".encode("cp1252"))  # fmt: skip
    assert organiser(url, "import", str(sheet), "--team-size", "2") == 1
    err = capsys.readouterr().err
    assert "línea 3" in err and "línea 4" in err and "ya está anotado" in err
    assert [e.name for e in o.tournament.entrants] == ["Ñandú"]
    sheet.write_bytes("nombre;jugador1;jugador2\r\nAtlético;Begoña;Iñaki\r\n".encode("cp1252"))
    assert organiser(url, "import", str(sheet), "--team-size", "2") == 0
    assert [e.name for e in o.tournament.entrants] == ["Ñandú", "Atlético"]
    assert "Windows-1252" in capsys.readouterr().out
