"""A real table service (`truco-table run --config`) with a [tournament] section: the
tournament profile applies and the table publishes to the broker."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from controller.tournament.sim.mosquitto import LocalBroker
from controller.tournament.wire.seal import TournamentKey
from tests.helpers import wait_until as wait_for

from ...table.test_daemon import running_table


def test_a_configured_table_publishes(
    tmp_path: Path, broker: LocalBroker, key: TournamentKey
) -> None:
    received: list[tuple[str, bytes]] = []
    lock = threading.Lock()

    def on_message(client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        with lock:
            received.append((message.topic, bytes(message.payload)))

    client = mqtt.Client(CallbackAPIVersion.VERSION2)
    client.on_message = on_message
    client.connect(broker.host, broker.port)
    client.subscribe("truco/copa/tables/mesa1/#", qos=1)
    client.loop_start()
    key_file = tmp_path / "table.key"
    key_file.write_text(key.key.hex() + "\n")
    key_file.chmod(0o600)  # the table refuses a key others can read
    extra = (
        f'[tournament]\nname = "copa"\ntable_id = "mesa1"\nbroker = "127.0.0.1:{broker.port}"\n'
        f'key_file = "{key_file}"\nkey_id = "{key.key_id}"\n'
    )
    try:
        with running_table(tmp_path, extra) as table:
            table.deal()
            table.tap(1, "2O")  # not seat 1's turn: refused, and kept in the record
            assert wait_for(lambda: "# rechazado: 1 play 2O (not_your_turn)" in table.text())
            table.press(0, "envido", "0 envido")
            table.press(1, "quiero", "1 quiero")  # claims=declared: the telling begins

            def events() -> list[dict[str, object]]:
                with lock:
                    return [json.loads(p) for t, p in received if t.endswith("/events")]

            assert wait_for(lambda: any(e.get("kind") == "refusal" for e in events()))
            assert wait_for(lambda: {"0 envido", "1 quiero"} <= {e.get("text") for e in events()})
            seqs = [int(str(e["seq"])) for e in events()]
            assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
            texts = [e.get("text") for e in events()]
            assert "0 envido" in texts and "1 quiero" in texts
            with lock:
                status = [p for t, p in received if t.endswith("/status")]
            assert status and b"online" in status[-1]
        assert (
            "claims=declared" in (tmp_path / "state" / "current.truco").read_text().splitlines()[0]
        )
    finally:
        client.loop_stop()
        client.disconnect()


def test_a_configured_table_takes_the_desks_assignment(
    tmp_path: Path, broker: LocalBroker, key: TournamentKey
) -> None:
    """`truco-table run` subscribes to its assign topic: the desk's assignment (retained,
    published before the table starts) is taken, kept in the state directory and told
    back as an `assigned` event."""
    from controller.tournament.table.match import ASSIGNMENT_FILE
    from controller.tournament.wire.messages import Assignment, signed_assignment
    from controller.tournament.wire.topics import tournament_prefix

    received: list[dict[str, object]] = []
    client = mqtt.Client(CallbackAPIVersion.VERSION2)
    client.on_message = lambda c, u, m: received.append(json.loads(m.payload))
    client.connect(broker.host, broker.port)
    client.subscribe("truco/copa/tables/mesa1/events", qos=1)
    client.loop_start()
    final = Assignment("mesa1", 5, "final", "Final", "Los del Fondo", "La Barra", 1, 3)
    topic, data = signed_assignment(key.key, tournament_prefix("copa"), final)
    client.publish(topic, data, qos=1, retain=True).wait_for_publish(5)
    key_file = tmp_path / "table.key"
    key_file.write_text(key.key.hex() + "\n")
    key_file.chmod(0o600)
    extra = (
        f'[tournament]\nname = "copa"\ntable_id = "mesa1"\nbroker = "127.0.0.1:{broker.port}"\n'
        f'key_file = "{key_file}"\nkey_id = "{key.key_id}"\nmatch = "fallback"\n'
    )
    kept = tmp_path / "state" / "outbox" / "copa" / ASSIGNMENT_FILE
    try:
        with running_table(tmp_path, extra):
            assert wait_for(lambda: kept.exists() and '"final"' in kept.read_text())
            assert wait_for(
                lambda: any(e.get("kind") == "assigned" and e.get("assigned") == 5
                            and e.get("match") == "final" for e in list(received))
            )  # fmt: skip
    finally:
        client.loop_stop()
        client.disconnect()


# two seats' nodes, so that the [table] part of these files is a good one
SEATS = "".join(f"[[nodes.seat]]\nseat = {s}\nserial = 'e6614103e7ab120{s}'\n" for s in (0, 1))


def test_a_bad_tournament_section_stops_the_table_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The link is read before the hardware starts: a bad [tournament] section is one line
    and exit status 2 (systemd does not restart on it)."""
    from controller.cli import main

    path = tmp_path / "table.toml"
    path.write_text(
        f'[table]\nplayers = 2\nstate_dir = "{tmp_path / "state"}"\n{SEATS}'
        '[tournament]\nname = "copa"\ntable_id = "mesa1"\nbroker = "127.0.0.1:1883"\n'
        'key = "00"\nkeepalive_s = 0\n'
    )
    assert main(["run", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1 and "la configuración tiene un error" in err and "keepalive_s" in err
    )


def test_the_link_applies_the_tournament_profile_only_when_asked(tmp_path: Path) -> None:
    from controller.cli.service import tournament_link
    from controller.engine import Claims, HouseRules
    from controller.table.config import load_config
    from controller.table.service import ServiceConfig
    from controller.table.table import DealReading

    key_file = tmp_path / "table.key"
    key_file.write_text("ab" * 32 + "\n")
    key_file.chmod(0o600)
    base = ServiceConfig(HouseRules(claims=Claims.AUTO), DealReading.SEATS, tmp_path / "state")
    for profile, claims in (("tournament", Claims.DECLARED), ("house", Claims.AUTO)):
        path = tmp_path / f"{profile}.toml"
        path.write_text(
            f'[table]\nplayers = 2\n{SEATS}[tournament]\nname = "copa"\ntable_id = "mesa1"\n'
            f'broker = "127.0.0.1:1883"\nkey_file = "{key_file}"\nprofile = "{profile}"\n'
        )
        link = tournament_link(path, load_config(path))
        assert link is not None
        assert link.service_config(base).rules.claims is claims
    plain = tmp_path / "plain.toml"
    plain.write_text(f"[table]\nplayers = 2\n{SEATS}")
    assert tournament_link(plain, load_config(plain)) is None
