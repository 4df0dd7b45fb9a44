"""``truco-table league add-venue``: the venue's folder, its keys derived from the
league's secret, the central broker's accounts and ACL; bad input refused in Spanish."""

from __future__ import annotations

import shutil
import stat
import tomllib
from pathlib import Path

import pytest

from controller.cli import main
from controller.tournament.league.bridge import bridge_section, central_acl
from controller.tournament.league.keys import derive_venue_secret, venue_table_key
from controller.tournament.venue.broker import AUTOSAVE_S
from controller.tournament.venue.front import load_front
from controller.tournament.wire.keys import derive_table_key

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")


def _hex(path: Path) -> bytes:
    return bytes.fromhex(next(s for s in path.read_text().split("\n") if s and s[0] != "#"))


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _add(root: Path, venue: str, *extra: str) -> int:
    return main(["league", "add-venue", "--dir", str(root), "--venue", venue, *extra])


def test_add_venue_writes_the_venue_folder_and_the_central_accounts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "liga"
    first = ("--league", "liga-bares", "--central", "127.0.0.1:18884", "--tables", "2")
    assert _add(root, "bar-lopez", *first, "--rules", "players=4 target=30") == 0
    out = capsys.readouterr().out
    assert "sede bar-lopez de la liga liga-bares: 2 mesas" in out
    assert tomllib.loads((root / "league.toml").read_text())["league"] == {
        "name": "liga-bares",
        "central": "127.0.0.1:18884",
    }
    secret = _hex(root / "secret.key")
    venue = root / "venues" / "bar-lopez"
    # the venue holds its own secret, not the league's; each table its own key
    assert _hex(venue / "secret.key") == derive_venue_secret(secret, "liga-bares", "bar-lopez")
    assert _hex(venue / "secret.key") != secret
    assert _hex(venue / "desks" / "desk" / "secret.key") == _hex(venue / "secret.key")
    key = _hex(venue / "tables" / "mesa01" / "table.key")
    assert key == venue_table_key(secret, "liga-bares", "bar-lopez", "mesa01")
    assert key == derive_table_key(_hex(venue / "secret.key"), "liga-bares", "mesa01")
    for private in (
        root / "secret.key",
        venue / "secret.key",
        venue / "bridge.pass",
        venue / "broker" / "mosquitto.conf",  # holds the bridge's password
        venue / "tables" / "mesa01" / "table.key",
        root / "central" / "passwd",
        root / "central" / "server.key",
        root / "desk" / "broker.pass",
    ):
        assert _mode(private) == 0o600, private
    conf = (venue / "broker" / "mosquitto.conf").read_text()
    password = (venue / "bridge.pass").read_text().strip()
    assert "connection league-bar-lopez\naddress 127.0.0.1:18884\n" in conf
    assert f"remote_username venue-bar-lopez\nremote_password {password}\n" in conf
    assert f"bridge_cafile {(venue / 'broker' / 'central-ca.crt').resolve()}" in conf
    assert conf.endswith(
        "topic tables/# out 1 truco/liga-bares/ league/bar-lopez/\n"
        "# and the league desk's resend requests and assignments come back to the tables\n"
        "topic desks/league-desk/resend/+ in 1 truco/liga-bares/ league/bar-lopez/\n"
        "topic tables/+/assign in 1 truco/liga-bares/ league/bar-lopez/\n"
    )
    assert "cleansession false\n" in conf and "persistence true\n" in conf
    # the queue is saved every AUTOSAVE_S seconds, as docs/TOURNAMENT.md says: set once
    saves = [line for line in conf.splitlines() if line.startswith("autosave_interval")]
    assert saves == [f"autosave_interval {AUTOSAVE_S}"] and AUTOSAVE_S == 10
    assert (venue / "broker" / "central-ca.crt").read_bytes() == (
        root / "ca" / "ca.crt"
    ).read_bytes()
    assert 'rules = "players=4 target=30"' in (venue / "desks" / "desk" / "desk.toml").read_text()
    passwd = (root / "central" / "passwd").read_text().splitlines()
    assert [line.split(":")[0] for line in passwd] == ["league-desk", "venue-bar-lopez"]

    # a second venue, later: the league's name and central come from league.toml; the
    # first venue's passwords and keys stay as they were
    assert _add(root, "club-sur", "--tables", "mesa01,mesa07", "--host", "10.0.0.2") == 0
    assert (venue / "bridge.pass").read_text().strip() == password
    assert _hex(venue / "tables" / "mesa01" / "table.key") == key
    other = root / "venues" / "club-sur"
    assert _hex(other / "tables" / "mesa01" / "table.key") != key  # same table name, other key
    passwd = (root / "central" / "passwd").read_text().splitlines()
    assert [line.split(":")[0] for line in passwd] == [
        "league-desk",
        "venue-bar-lopez",
        "venue-club-sur",
    ]
    acl = (root / "central" / "acl").read_text()
    for v in ("club-sur", "bar-lopez"):
        assert (
            f"user venue-{v}\ntopic write league/{v}/tables/+/status\n"
            f"topic write league/{v}/tables/+/events\n"
            f"topic write league/{v}/tables/+/records/+\n"
            f"topic write league/{v}/bridge/state\n"
            f"topic read league/{v}/desks/league-desk/resend/+\n"
            f"topic read league/{v}/tables/+/assign\n"
        ) in acl

    # the same venue again: nothing changes but what is new
    assert _add(root, "bar-lopez", "--tables", "3") == 0
    assert (venue / "bridge.pass").read_text().strip() == password
    assert (venue / "tables" / "mesa03" / "table.key").exists()
    assert conf.count("connection ") == 1
    assert (venue / "broker" / "mosquitto.conf").read_text().count("connection ") == 1


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--tables", "2"], "la primera vez hay que dar --league NOMBRE y --central"),
        (["--tables", "2", "--league", "liga de bares", "--central", "h:1"], "nombre de la liga"),
        (["--tables", "2", "--league", "liga", "--central", "h:99999"], "broker central"),
        (["--tables", "mesa 1", "--league", "liga", "--central", "h:1"], "id de la mesa"),
        (["--tables", "a,a", "--league", "liga", "--central", "h:1"], "todos distintos"),
        (["--tables", "2", "--league", "liga", "--central", "h", "--rules", "x=1"], "Reglas"),
    ],
)
def test_bad_input_is_refused_in_one_spanish_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], words: str
) -> None:
    root = tmp_path / "liga"
    assert _add(root, "bar", *args) == 2
    err = capsys.readouterr().err
    assert err.startswith("truco-table league add-venue: ") and words in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not root.exists()


def test_a_bad_venue_id_and_a_league_folder_of_another_league(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "liga"
    assert _add(root, "bar lopez", "--tables", "1", "--league", "l", "--central", "h:1") == 2
    assert "El id de la sede 'bar lopez' no sirve" in capsys.readouterr().err
    assert _add(root, "bar", "--tables", "1", "--league", "l", "--central", "h:1") == 0
    capsys.readouterr()
    assert _add(root, "bar2", "--tables", "1", "--league", "otra") == 2
    assert "La liga de" in capsys.readouterr().err and not (root / "venues" / "bar2").exists()
    (root / "league.toml").write_text("[league]\nname = 3\n")
    assert _add(root, "bar2", "--tables", "1") == 2
    assert "no se puede leer" in capsys.readouterr().err


def test_bridge_and_acl_text() -> None:
    text = bridge_section(
        league="liga",
        venue="bar",
        central=("::1", 8884),
        cafile=Path("/x/central-ca.crt"),
        password="pw",
        restart_timeout=(2, 9),
    )
    lines = text.splitlines()
    assert "address [::1]:8884" in lines and "restart_timeout 2 9" in lines
    assert not any(line.startswith("autosave_interval") for line in lines)  # the venue's
    assert [line for line in lines if line.startswith("topic ")] == [
        "topic tables/# out 1 truco/liga/ league/bar/",
        "topic desks/league-desk/resend/+ in 1 truco/liga/ league/bar/",
        "topic tables/+/assign in 1 truco/liga/ league/bar/",
    ]
    assert central_acl(["a"]).splitlines()[-7:] == [
        "user venue-a",
        "topic write league/a/tables/+/status",
        "topic write league/a/tables/+/events",
        "topic write league/a/tables/+/records/+",
        "topic write league/a/bridge/state",
        "topic read league/a/desks/league-desk/resend/+",
        "topic read league/a/tables/+/assign",
    ]
    assert central_acl([]).splitlines()[-4:] == [
        "user league-desk",
        "topic read league/#",
        "topic write league/+/desks/league-desk/resend/+",
        "topic write league/+/tables/+/assign",
    ]


def test_the_venue_broker_is_behind_the_door_unless_no_door(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "liga"
    first = ("--league", "liga-bares", "--central", "127.0.0.1:18884", "--tables", "2")
    assert _add(root, "bar-lopez", *first, "--port", "9883") == 0
    out = capsys.readouterr().out
    broker = root / "venues" / "bar-lopez" / "broker"
    assert f"puerta: truco-table venue-door --config {broker / 'truco-front.toml'}" in out
    assert f"cortafuegos: nft -f {broker / 'truco-firewall.nft'}" in out
    conf = (broker / "mosquitto.conf").read_text()
    assert "listener 9885 127.0.0.1" in conf and "listener 9883 " not in conf
    door = load_front(broker / "truco-front.toml")
    assert door.listen == ("127.0.0.1", 9883) and door.broker == ("127.0.0.1", 9885)
    assert "tcp dport 9883 " in (broker / "truco-firewall.nft").read_text()
    # a re-run with --no-door: Mosquitto takes the tables itself, the door's file goes
    assert _add(root, "bar-lopez", "--tables", "2", "--port", "9883", "--no-door") == 0
    assert "puerta:" not in capsys.readouterr().out
    assert "listener 9883 127.0.0.1" in (broker / "mosquitto.conf").read_text()
    assert not (broker / "truco-front.toml").exists()
    assert (broker / "truco-firewall.nft").is_file()
    # an inner port another listener takes is refused in Spanish
    assert _add(root, "bar-lopez", "--tables", "2", "--port", "9883", "--inner-port", "9884") == 2
    assert "El puerto de adentro 9884 ya lo usa" in capsys.readouterr().err
