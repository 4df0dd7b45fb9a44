"""A tournament end to end against a real Mosquitto: 20 mock tables (mock hardware, bots,
refused taps, referee undos and referee calls) publish through the broker; the network
of six of them is cut and restored twice, one of those loses power in the middle of its
game and restarts from its state directory. The desk's results and collected sealed records
must equal every table's own archived records; a forged record is caught."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from controller.engine import HouseRules
from controller.tournament.desk import Desk, DeskState, all_finished
from controller.tournament.sim.demo import (
    SimTable,
    compare_calls,
    compare_with_tables,
    verify_folder,
)
from controller.tournament.sim.mosquitto import LocalBroker
from controller.tournament.sim.netsim import CuttableLink
from controller.tournament.wire.keys import table_key
from controller.tournament.wire.seal import TournamentKey, verify
from controller.tournament.wire.topics import encode
from tests.helpers import wait_until

TABLES = 20
FLAKY = 6  # mesa01..mesa06 reach the broker through a link that is cut
PACE = 0.015  # seconds per action: 200x human speed


def _mid_game(table: SimTable) -> bool:
    """The table's publisher has journaled a hand of the game under way."""
    publisher = table.publisher
    return publisher is not None and publisher.dirty and publisher.hand > 0


def test_twenty_tables_with_network_cuts(
    tmp_path: Path, broker: LocalBroker, key: TournamentKey
) -> None:
    started = time.monotonic()
    state = DeskState("copa", out_dir=tmp_path / "desk", key=key, profile="tournament")
    desk = Desk(state, broker.host, broker.port).start()
    assert desk.connected.wait(120)
    links = [CuttableLink(broker.host, broker.port) for _ in range(FLAKY)]
    tables: list[SimTable] = []
    try:
        for i in range(TABLES):
            table_id = f"mesa{i + 1:02d}"
            target = ("127.0.0.1", links[i].port) if i < FLAKY else (broker.host, broker.port)
            tables.append(
                SimTable(
                    table_id,
                    state_dir=tmp_path / "tables" / table_id,
                    rules=HouseRules(players=4 if i >= 18 else 2, target=15),
                    broker=target,
                    tournament="copa",
                    key=key,
                    seed=i,
                    pace=PACE,
                    games=2 if i < 3 else 1,
                    refusal_rate=0.03,
                    undo_rate=0.01,
                    call_rate=0.01,
                ).start()
            )
        flaky = [f"mesa{i + 1:02d}" for i in range(FLAKY)]
        assert desk.wait(lambda s: all(s.tables.get(t) and s.tables[t].applied for t in flaky), 10)

        # first cut: the six show offline (their last will), play on; one loses power
        for link in links:
            link.cut()
        assert desk.wait(lambda s: not any(s.tables[t].online for t in flaky), 5)
        time.sleep(0.5)
        # mid-game: a hand of a game under way (on a loaded machine the cut could fall
        # between its two games, and the restart would be a game's start)
        assert wait_until(lambda: _mid_game(tables[2]))
        tables[2].power_cut()
        time.sleep(0.5)
        for link in links:
            link.restore()
        tables[2].start()
        assert desk.wait(lambda s: all(s.tables[t].online for t in flaky), 10)

        # second cut, shorter
        time.sleep(0.5)
        for link in links:
            link.cut()
        time.sleep(0.7)
        for link in links:
            link.restore()

        for table in tables:
            assert table.join(timeout=max(1.0, 45 - (time.monotonic() - started))), table.table_id
            assert table.error is None, (table.table_id, table.error)
        names = [t.table_id for t in tables]
        assert desk.wait(all_finished(names, 1), 15)
        assert desk.wait(all_finished(names[:3], 2), 15)

        # every message of every table applied once, in order
        def caught_up(s: DeskState) -> bool:
            return all(
                t.publisher is not None
                and s.tables[t.table_id].next_seq - 1 == t.publisher.outbox.last_seq
                for t in tables
            )

        assert desk.wait(caught_up, 15)
        assert all(not state.tables[n].buffered for n in names)
        assert sum(t.refusals for t in tables) > 0 and sum(t.undos for t in tables) > 0
        # every referee call made on a pad is on the desk's list, once
        assert sum(t.calls for t in tables) > 0 and compare_calls(state, tables, 0) == []
        assert tables[2].restarts == 1
        assert tables[2].publisher is not None
        restarts = [
            p
            for p in (json.loads(e.payload) for e in tables[2].publisher.outbox)
            if p["kind"] == "state"
        ]
        assert len(restarts) == 2 and restarts[1]["hand"] > 0  # it lost power mid-game
        assert state.max_latency > 0.5  # what a cut held back came later

        # the desk's results are the tables' own records
        assert compare_with_tables(state, tables) == []
        results = state.results_list()
        assert len(results) == TABLES + 3 and all(r.ok for r in results)
        assert sum(len(t.archived()) for t in tables) == TABLES + 3
        intact, problems = verify_folder(tmp_path / "desk" / "records", key, "copa")
        assert (intact, problems) == (TABLES + 3, [])
        state.export()
        rows = list(csv.DictReader(io.StringIO((tmp_path / "desk" / "results.csv").read_text())))
        assert [(r["game"], int(r["score_0"]), int(r["score_1"])) for r in rows] == [
            (r.game, *r.score) for r in results
        ]
        assert (
            len(json.loads((tmp_path / "desk" / "results.json").read_text())["games"]) == TABLES + 3
        )
        recorded = (tmp_path / "desk" / "records" / "mesa01-g001.truco").read_text()
        assert "# rechazado:" in "".join(
            (tmp_path / "desk" / "records" / r.record).read_text() for r in results
        )

        # a clean stop says offline
        for table in tables:
            table.stop()
        assert desk.wait(lambda s: not any(s.tables[n].online for n in names), 10)
        assert all(state.tables[n].offline_reason == "stopped" for n in names)

        # a forged record of a finished game (no mac) is rejected and changes nothing
        forged = recorded.replace("\n0 ", "\n1 ", 1)
        rejected = state.rejected
        rogue = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="rogue")
        rogue.connect(broker.host, broker.port)
        rogue.loop_start()
        payload = {"table": "mesa01", "seq": 1, "kind": "record", "game": "mesa01-g001"}
        rogue.publish(
            "truco/copa/tables/mesa01/records/mesa01-g001",
            encode(payload | {"record": forged}),
            qos=1,
        ).wait_for_publish(5)
        rogue.disconnect()
        rogue.loop_stop()
        assert desk.wait(lambda s: s.rejected == rejected + 1, 5)
        assert "carries no mac" in state.rejections[-1].reason
        assert state.results["mesa01-g001"].ok and state.results["mesa01-g001"].copies == 1
        assert not (tmp_path / "desk" / "records" / "mesa01-g001.copy-2.truco").exists()
        assert verify(recorded, table_key(key, "copa", "mesa01").key).ok
    finally:
        for table in tables:
            table.stop(timeout=1)
        desk.stop()
        for link in links:
            link.close()
    assert time.monotonic() - started < 60


def test_the_desk_command(tmp_path: Path, broker: LocalBroker, key: TournamentKey) -> None:
    """``truco-table desk`` collects a record published before it started (retained),
    prints the board and leaves the results and the record in ``--out``."""
    from controller.cli import build_parser
    from controller.cli import desk as desk_cli
    from controller.table.service import Finished
    from controller.tournament.table.publisher import TablePublisher

    record = (
        "table players=2 target=15 flor=off falta=to_win mazo_envido_point=on "
        "claims=declared implicit_quiero=off\nscore 14 0\nhand\ndeal 0: 1E 2E 3E\n"
        "deal 1: 4C 5C 6C\n0 truco\n1 no-quiero\n"
    )
    pub = TablePublisher(
        "mesa09",
        broker.host,
        broker.port,
        outbox_dir=tmp_path / "o",
        tournament="copa",
        key=table_key(key, "copa", "mesa09"),
    ).start()
    pub.on_event(Finished(record, 0, (15, 0)))
    assert pub.flush(5)
    (tmp_path / "key").write_text(key.key.hex() + "\n")
    (tmp_path / "key").chmod(0o600)
    config = tmp_path / "copa.toml"
    config.write_text(f'[tournament]\nname = "copa"\nbroker = "127.0.0.1:{broker.port}"\n')
    out = io.StringIO()
    args = build_parser().parse_args(
        [
            "desk",
            "--config",
            str(config),
            "--key-file",
            str(tmp_path / "key"),
            "--out",
            str(tmp_path / "desk"),
            "--http-port",
            "0",
            "--duration",
            "1.5",
        ]
    )
    assert desk_cli.run_desk(args, out=out) == 0
    assert "mesa09" in out.getvalue() and "1 partida terminada" in out.getvalue()
    rows = list(csv.DictReader(io.StringIO((tmp_path / "desk" / "results.csv").read_text())))
    assert [(r["game"], r["winner"], r["verdict"]) for r in rows] == [
        ("mesa09-g001", "0", "intact")
    ]
    saved = (tmp_path / "desk" / "records" / "mesa09-g001.truco").read_text()
    assert verify(saved, table_key(key, "copa", "mesa09").key).ok
    pub.close()


def test_the_demo_command(tmp_path: Path) -> None:
    """The command of docs/dev/tournament.md, small: three tables, one flaky, 100x human speed."""
    from controller.cli import build_parser
    from controller.cli import desk as desk_cli
    from controller.tournament.sim.mosquitto import find_mosquitto

    if find_mosquitto() is None:
        import pytest

        pytest.skip("mosquitto not installed (apt-get install mosquitto; .ci/run does)")
    out = io.StringIO()
    args = build_parser().parse_args(
        [
            "tournament-demo",
            "--tables",
            "3",
            "--speed",
            "100",
            "--flaky",
            "1",
            "--cut-every",
            "0.5",
            "--cut-for",
            "0.3",
            "--http-port",
            "0",
            "--quiet",
            "--out",
            str(tmp_path / "demo"),
        ]
    )
    assert desk_cli.run_demo_command(args, out=out) == 0, out.getvalue()
    text = out.getvalue()
    assert "tables=3 games=3 records_intact=3" in text
    assert "todos los registros se verifican y coinciden con el de su mesa" in text
    assert len(list((tmp_path / "demo" / "desk" / "records").glob("*.truco"))) == 3
    assert (tmp_path / "demo" / "tournament.toml").stat().st_mode & 0o077 == 0
