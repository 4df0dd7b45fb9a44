"""NodeApp: what the node sends and how it obeys the Pi, without hardware.

(Its hello, commands, bad lines, tags and buttons are checked in mpy/fw_checks.py,
on MicroPython and CPython.)"""

from __future__ import annotations

import pytest
from fw_checks import Wire
from seatnode import FIRMWARE_VERSION, protocol
from seatnode.node import NodeApp


def make(now: int = 0) -> tuple[NodeApp, Wire]:
    wire = Wire()
    app = NodeApp(wire, seat=2, serial="e6614103e7ab1234", now=now)
    return app, wire


def test_boots_with_hello_and_sequence_numbers_count_up() -> None:
    app, wire = make()
    app.tick(0)
    app.tick(1000)
    seqs = [protocol.parse(f.rstrip())[0] for f in wire.frames]
    assert seqs == [0, 1, 2]
    assert wire.take() == [
        ("HELLO", ["5", FIRMWARE_VERSION, "2", "e6614103e7ab1234", "00", "-"]),
        ("HB", ["0", "0", "NONE", "-"]),  # protocol 5's, as its HELLO says: none written
        ("HB", ["1", "0", "NONE", "-"]),
    ]


def test_heartbeat_every_second_with_uptime_and_reader_state() -> None:
    app, wire = make()
    wire.take()
    app.reader_ok = True
    for t in range(0, 3500, 10):
        app.tick(t)
    assert wire.take() == [("HB", [str(s), "0", "OK", "-"]) for s in range(4)]


@pytest.mark.parametrize(("version", "written"), [(5, ["-"]), (4, ["-"]), (3, []), (2, [])])
def test_heartbeat_has_written_only_in_a_session_of_protocol_4_or_5(
    version: int, written: list[str]
) -> None:
    app, wire = make()
    wire.take()  # its power-up HELLO
    app.receive(protocol.encode(0, "HELLO", [str(version), "5"]), 0)
    assert wire.take()[0] == (
        "HELLO",
        [str(version), FIRMWARE_VERSION, "2", "e6614103e7ab1234", "00", "5"],
    )
    for t in range(0, 2500, 10):
        app.tick(t)
    assert wire.take() == [("HB", [str(s), "0", "NONE", *written]) for s in range(3)]


def test_the_node_answers_hello_5_4_3_and_2_and_refuses_others() -> None:
    app, wire = make()
    wire.take()
    for session, version in enumerate(["5", "4", "3", "2", "5"]):
        app.receive(protocol.encode(session, "HELLO", [version, str(session)]), 0)
        assert wire.take() == [
            ("HELLO", [version, FIRMWARE_VERSION, "2", "e6614103e7ab1234", "00", str(session)])
        ]
        assert app.version == int(version)
    for version in ("1", "6", "40"):
        app.receive(protocol.encode(9, "HELLO", [version, "9"]), 0)
    assert wire.take() == [] and app.rx_errors == 3 and app.version == 5


def test_the_firmware_is_0_7_0_and_speaks_protocols_2_to_5() -> None:
    assert FIRMWARE_VERSION == "0.7.0"
    assert protocol.PROTOCOL_VERSION == 5 and protocol.VERSIONS == (2, 3, 4, 5)


def test_host_alive_times_out_without_frames() -> None:
    app, _wire = make()
    app.receive(protocol.encode(0, "HB"), 100)
    assert app.host_alive(3000)
    assert not app.host_alive(3700)
