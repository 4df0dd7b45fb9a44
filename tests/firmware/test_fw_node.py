"""NodeApp: what the node sends and how it obeys the Pi, without hardware."""

from __future__ import annotations

from seatnode import protocol
from seatnode.node import NodeApp

UID = bytes.fromhex("04A224B2C55E80")


class Wire:
    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def __call__(self, frame: bytes) -> None:
        self.frames.append(frame)

    def messages(self) -> list[tuple[str, list[str]]]:
        out = []
        for frame in self.frames:
            _seq, kind, args = protocol.parse(frame.rstrip(b"\n"))
            out.append((kind, args))
        self.frames.clear()
        return out


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
    assert wire.messages() == [
        ("HELLO", ["1", "0.1.0", "2", "e6614103e7ab1234"]),
        ("HB", ["0", "0", "NONE"]),
        ("HB", ["1", "0", "NONE"]),
    ]


def test_unconfigured_seat_is_a_dash() -> None:
    wire = Wire()
    NodeApp(wire, seat=None, serial="ab", now=0)
    assert wire.messages() == [("HELLO", ["1", "0.1.0", "-", "ab"])]


def test_heartbeat_every_second_with_uptime_and_reader_state() -> None:
    app, wire = make()
    wire.messages()
    app.reader_ok = True
    for t in range(0, 3500, 10):
        app.tick(t)
    assert wire.messages() == [("HB", [str(s), "0", "OK"]) for s in range(4)]


def test_commands_from_the_pi() -> None:
    app, wire = make()
    wire.messages()
    assert not app.host_alive(0)
    app.receive(protocol.encode(0, "HELLO", ["1"]), 10)
    assert wire.messages() == [("HELLO", ["1", "0.1.0", "2", "e6614103e7ab1234"])]
    assert app.host_alive(10)
    app.receive(protocol.encode(1, "LED", ["SLOW"]) + protocol.encode(2, "IDENT", ["3"]), 20)
    assert app.led.mode == "SLOW"
    assert app.led.pattern(1000, True, True) == "IDENT"
    assert not app.exit_requested
    app.receive(protocol.encode(3, "RESET"), 30)
    assert app.reset_requested and app.exit_requested
    app.receive(protocol.encode(4, "REPL"), 30)
    assert app.repl_requested
    assert app.rx_errors == 0


def test_host_alive_times_out_without_frames() -> None:
    app, _wire = make()
    app.receive(protocol.encode(0, "HB"), 100)
    assert app.host_alive(3000)
    assert not app.host_alive(3700)


def test_bad_input_only_counts() -> None:
    app, wire = make()
    wire.messages()
    app.receive(b"\x03\x03garbage\r\n$0 HB*0000\n" + b"x" * 300 + b"\n$0 FOO*1234\n", 0)
    app.receive(protocol.encode(1, "LED", ["PINK"]) + protocol.encode(2, "HELLO", ["9"]), 0)
    assert app.rx_errors == 6
    assert wire.messages() == []
    assert not app.host_alive(0)
    app.tick(0)
    assert wire.messages() == [("HB", ["0", "6", "NONE"])]


def test_buttons_and_tags_become_frames() -> None:
    app, wire = make()
    wire.messages()
    states = [False] * 8
    for t in range(0, 200, 10):
        states[protocol.BUTTONS.index("real_envido")] = 20 <= t < 100
        app.buttons(states, t)
    app.tag(UID, 300)
    app.tag(None, 360)
    app.tag(None, 900)
    assert wire.messages() == [
        ("PRESS", ["real_envido"]),
        ("TAGON", ["04A224B2C55E80"]),
        ("TAGOFF", ["04A224B2C55E80"]),
    ]
