"""The venue broker as ``truco-table venue-broker`` sets it up, run by a real Mosquitto:
accounts (Mosquitto's own password hashes), ACLs, anonymous access off, TLS with the
venue's CA; the files owner-only."""

from __future__ import annotations

import ssl
import stat
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from controller.tournament.sim.mosquitto import LocalBroker
from controller.tournament.table.link import load_tournament_settings
from controller.tournament.venue.access import BrokerAccess
from controller.tournament.venue.broker import Venue, password_line
from controller.tournament.wire.keys import derive_table_key
from controller.tournament.wire.seal import load_key

from ..conftest import MqttProbe
from .door import Door


def test_password_lines_are_mosquittos_format() -> None:
    # the reference value comes from mosquitto_passwd's algorithm: PBKDF2-SHA512, 101
    # rounds, base64 salt and hash
    line = password_line("mesa01", "secreto", salt=bytes(12))
    user, _, rest = line.partition(":")
    assert user == "mesa01"
    kind, rounds, salt, digest = rest.split("$")[1:]
    assert (kind, rounds, salt) == ("7", "101", "AAAAAAAAAAAAAAAA")
    import base64
    import hashlib

    assert base64.b64decode(digest) == hashlib.pbkdf2_hmac("sha512", b"secreto", bytes(12), 101)


def test_the_files_are_owner_only(venue: Venue) -> None:
    private = [
        venue.root / "secret.key",
        venue.root / "ca" / "ca.key",
        venue.root / "broker" / "passwd",
        venue.root / "broker" / "acl",
        venue.root / "broker" / "server.key",
    ]
    for table in venue.tables:
        folder = venue.table_dir(table)
        private += [folder / "table.key", folder / "broker.pass", folder / "tournament.toml"]
    for desk in venue.desks:
        folder = venue.desk_dir(desk)
        private += [folder / "secret.key", folder / "broker.pass", folder / "desk.toml"]
    for path in private:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == 0o600, (path, oct(mode))


def test_each_table_gets_its_own_derived_key(venue: Venue) -> None:
    secret = load_key(venue.root / "secret.key", kind="key-file").key
    keys = set()
    for table in venue.tables:
        settings = load_tournament_settings(venue.table_dir(table) / "tournament.toml")
        assert settings is not None and settings.key is not None
        assert settings.key.key == derive_table_key(secret, venue.tournament, table)
        assert settings.access is not None and settings.access.username == table
        keys.add(settings.key.key)
    assert len(keys) == len(venue.tables)


def test_a_rerun_keeps_the_secret_and_the_passwords(venue: Venue) -> None:
    from controller.tournament.venue.broker import setup_venue

    before = (venue.root / "secret.key").read_bytes(), venue.password("mesa01")
    again = setup_venue(
        venue.root, venue.tournament, [*venue.tables, "mesa09"], venue.desks, port=venue.port
    )
    assert ((again.root / "secret.key").read_bytes(), again.password("mesa01")) == before
    assert (again.table_dir("mesa09") / "table.key").exists()


def connect(
    venue: Venue, user: str | None, password: str | None, *, tls: bool = True
) -> tuple[mqtt.Client | None, str]:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"probe-{user}-{time.time_ns()}")
    if user is not None and password is not None:
        client.username_pw_set(user, password)
    if tls:
        client.tls_set(ca_certs=str(venue.ca_file), cert_reqs=ssl.CERT_REQUIRED)
    done = threading.Event()
    result: list[str] = []

    def on_connect(c: mqtt.Client, u: object, f: object, reason: object, p: object) -> None:
        result.append(str(reason))
        done.set()

    client.on_connect = on_connect
    try:
        client.connect("127.0.0.1", venue.port, 5)
    except (OSError, ssl.SSLError) as e:
        return None, f"refused: {e}"
    client.loop_start()
    done.wait(5)
    if result != ["Success"]:
        client.loop_stop()
        return None, result[0] if result else "no answer"
    return client, "Success"


def test_anonymous_and_wrong_passwords_are_refused(venue: Venue, venue_broker: LocalBroker) -> None:
    assert connect(venue, None, None)[1] == "Not authorized"
    assert connect(venue, "mesa01", "not-the-password")[1] == "Not authorized"
    assert connect(venue, "phantom", "whatever")[1] == "Not authorized"
    client, _ = connect(venue, "mesa01", venue.password("mesa01"), tls=False)
    assert client is None  # the listener speaks TLS only


def test_tls_checks_the_brokers_certificate(venue: Venue, venue_broker: LocalBroker) -> None:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="probe-wrong-ca")
    client.username_pw_set("mesa01", venue.password("mesa01"))
    client.tls_set(cert_reqs=ssl.CERT_REQUIRED)  # the system's CAs, not the venue's
    with pytest.raises(ssl.SSLCertVerificationError):
        client.connect("127.0.0.1", venue.port, 5)


def test_the_acl_keeps_each_account_to_its_topics(venue: Venue, venue_broker: LocalBroker) -> None:
    base = f"truco/{venue.tournament}/tables"
    desk = MqttProbe(venue, "desk1", f"{base}/#")
    other = MqttProbe(venue, "mesa02", f"{base}/#")  # a table reads nothing of others
    table, _ = connect(venue, "mesa01", venue.password("mesa01"))
    assert table is not None
    try:
        for topic in (
            f"{base}/mesa01/events",  # its own: delivered
            f"{base}/mesa02/events",  # another table's: dropped by the broker
            f"{base}/mesa02/status",
            f"{base}/phantom/events",
            f"truco/{venue.tournament}/desks/desk1/resend/mesa02",
        ):
            table.publish(topic, topic.encode(), qos=1).wait_for_publish(5)
        desk_client, _ = connect(venue, "desk2", venue.password("desk2"))
        assert desk_client is not None
        desk_client.publish(f"{base}/mesa01/events", b"desk forges", qos=1).wait_for_publish(5)
        desk_client.publish(f"{base}/mesa01/status", b"desk forges", qos=1).wait_for_publish(5)
        time.sleep(0.5)
        assert [t for t, _ in desk.messages] == [f"{base}/mesa01/events"]
        assert other.messages == []
        desk_client.loop_stop()
    finally:
        table.loop_stop()
        desk.close()
        other.close()


def test_a_table_refuses_a_key_file_others_can_read(venue: Venue) -> None:
    from controller.tournament.wire.keys import InsecureKeyFileError

    folder = venue.table_dir("mesa01")
    (folder / "table.key").chmod(0o644)
    with pytest.raises(InsecureKeyFileError, match="chmod 600"):
        load_tournament_settings(folder / "tournament.toml")
    (folder / "table.key").chmod(0o600)
    (folder / "broker.pass").chmod(0o640)
    with pytest.raises(InsecureKeyFileError):
        load_tournament_settings(folder / "tournament.toml")
    (folder / "broker.pass").chmod(0o600)
    inline = folder / "inline.toml"  # a configuration holding the key itself
    inline.write_text(
        f'[tournament]\nname = "copa"\ntable_id = "mesa01"\nbroker = "h"\nkey = "{"00" * 32}"\n'
    )
    inline.chmod(0o644)
    with pytest.raises(InsecureKeyFileError):
        load_tournament_settings(inline)
    inline.chmod(0o600)
    assert load_tournament_settings(inline) is not None


def test_broker_access_leaves_the_password_out_of_repr() -> None:
    access = BrokerAccess("mesa01", "hunter2", Path("ca.crt"))
    assert "hunter2" not in repr(access)


def test_the_commands_end_to_end(tmp_path: Path) -> None:
    """``truco-table venue-broker`` writes the venue; Mosquitto runs its configuration
    behind the door (``venue-door``'s, in the test's own process); a table configured from
    its provisioned ``tournament.toml`` plays a game through it; ``truco-table desk
    --config desks/desk/desk.toml`` collects it intact; ``truco-table verify --table``
    checks the record with the table's own key."""
    import io
    import shutil
    import tempfile

    from controller.cli import build_parser
    from controller.cli import desk as desk_cli
    from controller.cli import venue as venue_cli
    from controller.cli import verify as verify_cli
    from controller.table.service import Finished
    from controller.tournament.sim.mosquitto import find_mosquitto, free_port
    from controller.tournament.table.publisher import TablePublisher

    if find_mosquitto() is None:
        pytest.skip("mosquitto not installed (apt-get install mosquitto; .ci/run does)")
    parent = Path(tempfile.mkdtemp(prefix="truco-venue-"))
    parent.chmod(0o711)
    root = parent / "venue"
    port, inner = free_port(), free_port()
    parse = build_parser().parse_args
    try:
        out = io.StringIO()
        args = parse(
            ["venue-broker", "--tournament", "copa", "--tables", "2", "--desks", "desk",
             "--host", "127.0.0.1", "--port", str(port), "--inner-port", str(inner),
             "--rules", "players=2 target=15", "--out", str(root)]
        )  # fmt: skip
        assert venue_cli.run_venue(args, out=out) == 0
        assert "mosquitto -c" in out.getvalue()
        record = (
            "table players=2 target=15 flor=off falta=to_win mazo_envido_point=on "
            "claims=declared implicit_quiero=off\nscore 14 0\nhand\ndeal 0: 1E 2E 3E\n"
            "deal 1: 4C 5C 6C\n0 truco\n1 no-quiero\n"
        )
        assert f"puerta: truco-table venue-door --config {root}/broker/truco-front.toml" in (
            out.getvalue()
        )
        conf = root / "broker" / "mosquitto.conf"
        # the broker behind its door, as venue-night starts both: the table goes through it
        with LocalBroker(inner, workdir=root / "run", config=conf), Door(
            root / "broker" / "truco-front.toml"
        ):
            settings = load_tournament_settings(root / "tables" / "mesa02" / "tournament.toml")
            assert settings is not None
            pub = TablePublisher(
                "mesa02", settings.broker_host, settings.broker_port,
                outbox_dir=tmp_path / "o", tournament=settings.name, key=settings.key,
                access=settings.access,
            ).start()  # fmt: skip
            from ..desk.test_forgeries import statements

            for statement in statements(record):  # the game as it is played, then won
                pub.on_event(statement)
            pub.on_event(Finished(record, 0, (15, 0)))
            assert pub.flush(10)
            board = io.StringIO()
            args = parse(
                ["desk", "--config", str(root / "desks" / "desk" / "desk.toml"),
                 "--out", str(tmp_path / "desk"), "--http-port", "0", "--duration", "2",
                 "--hand-s", "0"]  # the game was played at machine speed
            )  # fmt: skip
            assert desk_cli.run_desk(args, out=board) == 0
            pub.close()
        printed = board.getvalue()
        assert "1 partida terminada" in printed and "0 registros marcados" in printed
        saved = tmp_path / "desk" / "records" / "mesa02-g001.truco"
        secret = root / "secret.key"
        checks = io.StringIO()
        for table, code in (("mesa02", 0), ("mesa01", 1)):
            args = parse(["verify", str(saved), "--key-file", str(secret), "--table", table,
                          "--tournament", "copa"])  # fmt: skip
            assert verify_cli.run_verify(args, out=checks) == code
        assert "intact: 7 lines, game mesa02-g001, tournament copa, table mesa02" in (
            checks.getvalue()
        )
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def test_a_late_desk_gets_a_gap_filled_through_the_acls(
    venue: Venue, venue_broker: LocalBroker, tmp_path: Path
) -> None:
    """A desk's resend request passes the ACLs (its own command topic) and the table,
    which may read only its own requests, serves it."""
    from controller.table.service import Accepted
    from controller.tournament.desk import Desk, DeskState
    from controller.tournament.table.publisher import TablePublisher

    settings = load_tournament_settings(venue.table_dir("mesa03") / "tournament.toml")
    assert settings is not None
    pub = TablePublisher(
        "mesa03", "127.0.0.1", venue.port, outbox_dir=tmp_path / "o", tournament="copa",
        key=settings.key, access=settings.access,
    ).start()  # fmt: skip
    assert pub.connected.wait(120)
    for i in range(3):
        pub.on_event(Accepted(f"0 play {i}", (0, 0), 1))
    assert pub.flush(10)
    secret = load_key(venue.root / "secret.key", kind="key-file")
    access = BrokerAccess("desk2", venue.password("desk2"), venue.ca_file)
    state = DeskState("copa", key=secret, tables=venue.tables)
    desk = Desk(state, "127.0.0.1", venue.port, access=access).start()
    try:
        assert desk.connected.wait(120)
        time.sleep(0.3)
        pub.on_event(Accepted("0 play 3", (0, 0), 1))
        assert desk.wait(lambda s: "mesa03" in s.tables and s.tables["mesa03"].next_seq == 5, 15)
        assert pub.refused_resends == 0 and state.rejected == 0
    finally:
        desk.stop()
        pub.close()


def test_a_relative_out_folder_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from controller.tournament.venue.broker import setup_venue

    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed (apt-get install openssl; .ci/run does)")
    monkeypatch.chdir(tmp_path)
    venue = setup_venue("sede/venue", "copa", ["mesa01"], ["desk"], screens=["pantalla"])
    assert (
        venue.root.is_absolute()
        and (tmp_path / "sede" / "venue" / "broker" / "server.crt").is_file()
    )
    assert (tmp_path / "sede" / "venue" / "broker" / "data").is_dir()


def test_the_broker_files_reach_the_broker_user_whoever_starts_it(venue: Venue) -> None:
    """Issue 42: run as root, Mosquitto drops to its own user, and a venue under a 0700
    folder kept it out ("Unable to open pwfile"): venue-night gives it the files, or a
    copy where it can read them."""
    import os

    from controller.tournament.venue.broker import _passable, broker_account, ready_for_broker

    nobody = (65534, 65534)
    inside = venue.root / "broker"
    closed = venue.root.parent
    mode = closed.stat().st_mode & 0o777
    try:
        closed.chmod(0o700)
        assert not _passable(venue.root, nobody)  # a folder above keeps others out
        closed.chmod(0o711)
        assert _passable(venue.root, nobody)
        assert not _passable(inside, nobody)  # the broker's own folder is its user's
    finally:
        closed.chmod(mode)
    conf = ready_for_broker(inside)
    account = broker_account()
    if account is None:  # not root: Mosquitto keeps this user, the files are its own
        assert conf == inside.resolve() / "mosquitto.conf"
        return
    assert _passable(conf.parent, account)
    for name in ("passwd", "acl", "server.key"):
        st = os.stat(conf.parent / name)
        assert (st.st_uid, st.st_mode & 0o077) == (account[0], 0), name
    text = conf.read_text(encoding="utf-8")
    assert f"password_file {conf.parent / 'passwd'}" in text
    if conf.parent != inside.resolve():  # the copy: the night removes it when it ends
        import shutil

        shutil.rmtree(conf.parent)
