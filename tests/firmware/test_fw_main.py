"""seatnode.main, the thin hardware layer, with ``machine`` and ``micropython`` faked."""

from __future__ import annotations

import base64
import importlib
import itertools
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_mfrc522 import SimMFRC522, SimTag
from fake_oled import SSD1306Model, model_for
from rp2_stdin import NodeClock, Rp2Select, Rp2Stdin, Rp2Stdout
from seatnode import FIRMWARE_VERSION, config, protocol

UID = bytes.fromhex("04A224B2C55E80")


class Pin:
    OUT = 1
    IN = 0
    PULL_UP = 1

    def __init__(
        self,
        ident: object = None,
        mode: int | None = None,
        pull: int | None = None,
        value: int | None = None,
    ) -> None:
        self.ident = ident
        self.mode = mode
        self.pull = pull
        self._value = 1 if pull == Pin.PULL_UP else (value or 0)

    def value(self, v: int | None = None) -> int:
        if v is not None:
            self._value = 1 if v else 0
        return self._value

    def __call__(self, v: int | None = None) -> int:  # pin(1) is pin.value(1)
        return self.value(v)


class FakeMachine(types.ModuleType):
    def __init__(self, chip: SimMFRC522) -> None:
        super().__init__("machine")
        self.chip = chip
        self.pins: dict[object, Pin] = {}
        self.resets = 0
        self.watchdog: Watchdog | None = None
        outer = self

        class MachinePin(Pin):
            # machine.Pin(ident) hands back the pin already made for ident, which may be a
            # stand-in that is no MachinePin (the chip's CS); mypy wants __new__ to return
            # the class's own type.
            def __new__(  # type: ignore[misc]
                cls, ident: object = None, *args: Any, **kwargs: Any
            ) -> Pin:
                if ident in outer.pins:
                    return outer.pins[ident]
                return super().__new__(cls)

            def __init__(self, ident: object = None, *args: Any, **kwargs: Any) -> None:
                if ident in outer.pins:
                    return
                super().__init__(ident, *args, **kwargs)
                outer.pins[ident] = self

        self.Pin = MachinePin
        self.spi_args: dict[str, Any] = {}
        self.i2c_args: dict[str, Any] = {}
        self.panel = SSD1306Model()

    def SPI(self, ident: int, **kwargs: Any) -> Any:  # machine.SPI's name
        if ident == config.PANEL_SPI_ID:
            self.panel_spi_args = dict(kwargs, id=ident)
            self.panel_spi = PanelSpi(self)
            return self.panel_spi
        self.spi_args = dict(kwargs, id=ident)
        return self.chip

    def I2C(self, ident: int, **kwargs: Any) -> SSD1306Model:  # machine.I2C's name
        self.i2c_args = dict(kwargs, id=ident)
        return self.panel

    def unique_id(self) -> bytes:
        return bytes.fromhex("e6614103e7ab1234")

    def reset(self) -> None:
        self.resets += 1

    def WDT(self, timeout: int = 5000) -> Watchdog:  # machine.WDT's name
        self.watchdog = Watchdog(timeout)
        return self.watchdog


class PanelSpi:
    """The panel on SPI1: each write goes to the panel model as the control byte the D/C
    pin says (0x40 data, 0x00 commands) and the bytes, while CS is low."""

    def __init__(self, machine: FakeMachine) -> None:
        self.machine = machine
        self.writes = 0

    def write(self, buf: bytes | memoryview) -> None:
        pins = self.machine.pins
        assert pins[config.PIN_PANEL_CS].value() == 0  # framed by CS
        control = b"\x40" if pins[config.PIN_PANEL_DC].value() else b"\x00"
        self.machine.panel.writeto(0x3C, control + bytes(buf))
        self.writes += 1


class Watchdog:
    """machine.WDT: started once, fed by the loop (it cannot be stopped)."""

    def __init__(self, timeout: int) -> None:
        self.timeout = timeout
        self.feeds = 0

    def feed(self) -> None:
        self.feeds += 1


class Link:
    """Stands in for the USB serial channel."""

    def __init__(self, incoming: bytes = b"") -> None:
        self.incoming = incoming
        self.frames: list[bytes] = []

    def read(self) -> bytes:
        data, self.incoming = self.incoming, b""
        return data

    def write(self, frame: bytes) -> None:
        self.frames.append(frame)

    def kinds(self) -> list[tuple[str, list[str]]]:
        return [protocol.parse(f.rstrip(b"\n"))[1:] for f in self.frames]


@pytest.fixture
def fake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[types.ModuleType, FakeMachine, list[int]]]:
    # start() writes crash.txt and the REPL flag into the working folder (the Pico's
    # flash root): every test of it runs in its own temporary folder, never the checkout.
    monkeypatch.chdir(tmp_path)
    chip = SimMFRC522([SimTag(UID)])
    machine = FakeMachine(chip)
    machine.pins[config.PIN_CS] = chip.cs  # type: ignore[assignment]
    kbd: list[int] = []
    micropython = types.ModuleType("micropython")
    micropython.kbd_intr = kbd.append  # type: ignore[attr-defined]
    # the native emitter: MicroPython compiles the function to machine code, same behaviour
    micropython.native = lambda function: function  # type: ignore[attr-defined]
    saved = {name: sys.modules.get(name) for name in ("machine", "micropython", "seatnode.main")}
    sys.modules["machine"] = machine
    sys.modules["micropython"] = micropython
    sys.modules.pop("seatnode.main", None)
    main = importlib.import_module("seatnode.main")
    try:
        yield main, machine, kbd
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def test_hardware_uses_the_documented_pins(fake: Any) -> None:
    main, machine, _kbd = fake
    hw = main.Hardware()
    assert machine.spi_args["id"] == config.SPI_ID
    assert machine.spi_args["sck"].ident == 18 and machine.spi_args["mosi"].ident == 19
    assert machine.spi_args["miso"].ident == 16
    assert [b.ident for b in hw.buttons] == [2, 3, 4, 5, 6, 7, 8, 9]
    assert all(b.pull == Pin.PULL_UP for b in hw.buttons)
    assert [led.ident for led in hw.leds] == ["LED", 15]
    assert main.serial_number() == "e6614103e7ab1234"
    assert machine.i2c_args["id"] == 0 and machine.i2c_args["freq"] == 400_000
    assert machine.i2c_args["sda"].ident == 0 and machine.i2c_args["scl"].ident == 1


@pytest.mark.parametrize("version", [5, 4, 3, 2])
def test_run_reports_tag_and_buttons_with_ctrl_c_disabled(fake: Any, version: int) -> None:
    main, machine, kbd = fake
    hw = main.Hardware()
    machine.pins[4].value(0)  # real_envido held down (pulled to GND)
    link = Link(protocol.encode(0, "HELLO", [str(version), "41"]))
    app = main.run(hw, link, seat=1, max_loops=30)
    assert kbd == [-1, 3]  # Ctrl-C off while running, back on afterwards
    messages = link.kinds()
    hello = [FIRMWARE_VERSION, "1", "e6614103e7ab1234", "92"]
    # the card on the reader at power-up is read and confirmed in the first pass (its
    # confirming read at once), before the Pi's HELLO is taken (and that waits while the
    # held button settles: seatnode.main's short passes)
    assert messages[2] == ("TAGON", ["04A224B2C55E80"])
    hellos = [i for i, m in enumerate(messages) if m[0] == "HELLO"]
    # at power-up the newest it speaks, then the version the Pi offered
    assert [messages[i] for i in hellos] == [
        ("HELLO", ["5", *hello, "-"]),
        ("HELLO", [str(version), *hello, "41"]),
    ]
    for i in hellos:  # each HELLO followed by PANEL
        assert messages[i + 1] == ("PANEL", ["ssd1306", "3C", "OK"])
    # protocol 4's and 5's heartbeat says the last update written (none: "-"), older ones
    # do not (the node speaks 5 until the Pi's HELLO is taken: a heartbeat before it is 5's)
    beats = [(i, args) for i, (kind, args) in enumerate(messages) if kind == "HB"]
    assert len(beats) == 1
    spoken = version if beats[0][0] > hellos[1] else 5
    assert beats[0][1] == (["0", "0", "OK", "-"] if spoken >= 4 else ["0", "0", "OK"])
    assert app.reader_ok and app.host_alive(app._last_tick)
    machine.pins[4].value(1)


def test_repl_command_stops_the_loop(fake: Any) -> None:
    main, _machine, kbd = fake
    link = Link(b"\r\x03\x03\r\n" + protocol.encode(0, "REPL"))
    app = main.run(main.Hardware(), link, seat=0, max_loops=1000)
    assert app.repl_requested
    assert app.rx_errors == 1  # the Ctrl-C bytes were only a bad line
    assert kbd == [-1, 3]


def test_missing_reader_is_retried_and_reported(fake: Any) -> None:
    main, machine, _kbd = fake
    machine.chip.dead = True
    link = Link()
    app = main.run(main.Hardware(), link, seat=0, max_loops=5)
    assert not app.reader_ok
    assert ("HB", ["0", "0", "NONE", "-"]) in link.kinds()  # protocol 5's, from power-up


def test_start_resets_the_board_on_reset(fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    main, machine, _kbd = fake
    monkeypatch.setattr(main, "UsbSerial", lambda: Link(protocol.encode(0, "RESET")))
    monkeypatch.setattr(config, "load_seat", lambda: 3)
    main.start()
    assert machine.resets == 1
    assert machine.watchdog.timeout == config.WDT_TIMEOUT_MS
    assert machine.watchdog.feeds >= 1  # the loop fed it before the RESET stopped it


def test_an_unexpected_exception_is_logged_and_the_board_reset(
    fake: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    main, machine, kbd = fake
    monkeypatch.chdir(tmp_path)
    polls = 0

    def read_uid_then_break() -> object:
        nonlocal polls
        polls += 1
        if polls == 3:
            raise RuntimeError("a bug nobody foresaw")
        return None

    hw = main.Hardware()
    monkeypatch.setattr(hw.reader, "read_uid", read_uid_then_break)
    monkeypatch.setattr(main, "Hardware", lambda: hw)
    monkeypatch.setattr(main, "UsbSerial", Link)
    main.start()
    assert machine.resets == 1
    assert kbd == [-1, 3]
    log = (tmp_path / config.CRASH_FILE).read_text()
    assert log.startswith(f"seatnode {FIRMWARE_VERSION} crashed:")
    assert "RuntimeError: a bug nobody foresaw" in log


def test_repl_command_resets_into_the_repl_without_watchdog(
    fake: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main, machine, _kbd = fake
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(main, "UsbSerial", lambda: Link(protocol.encode(0, "REPL")))
    main.start()
    assert machine.resets == 1  # a started watchdog cannot be stopped: reset first
    assert (tmp_path / config.REPL_FLAG_FILE).exists()
    machine.watchdog = None
    main.start()  # the next boot finds the flag: REPL, no watchdog, no reset
    assert machine.resets == 1 and machine.watchdog is None
    assert not (tmp_path / config.REPL_FLAG_FILE).exists()
    assert "REPL requested" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("version", "ok"),
    [(0x91, True), (0x92, True), (0x88, True), (0x89, True), (0x90, True), (0xB2, True),
     (0x12, True), (0x00, False), (0xFF, False)],
)  # fmt: skip
def test_clone_readers_are_accepted_and_their_version_is_in_hello(
    fake: Any, version: int, ok: bool
) -> None:
    main, machine, _kbd = fake
    machine.chip.version = version  # VersionReg after the driver's soft reset
    machine.chip.dead = version in (0x00, 0xFF)  # nothing on the bus: MISO idles there
    machine.chip.bus_idle = version
    link = Link()
    app = main.run(main.Hardware(), link, seat=0, max_loops=3)
    assert app.reader_ok is ok
    hello = link.kinds()[0]
    assert hello[0] == "HELLO" and hello[1][4] == f"{version:02X}"


def test_start_in_maintenance_mode_does_not_run(
    fake: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    main, machine, kbd = fake
    main.Hardware()
    machine.pins[9].value(0)  # mazo held at power-up

    def no_serial() -> None:
        raise AssertionError("the app must not start")

    monkeypatch.setattr(main, "UsbSerial", no_serial)
    main.start()
    assert "maintenance" in capsys.readouterr().out
    assert kbd == []


def test_seat_file(tmp_path: Any) -> None:
    path = str(tmp_path / "seat.txt")
    assert config.load_seat(path) is None
    config.save_seat(4, path)
    assert config.load_seat(path) == 4
    with open(path, "w") as f:
        f.write("9\n")
    assert config.load_seat(path) is None


def test_run_drives_the_seats_panel_in_protocol_4(fake: Any) -> None:
    """The loop takes protocol 4's counted blocks as protocol 3's: one DU without ACK,
    one with, a protocol 3 DU; DACK only for the last two, and the heartbeat after them
    names the last one."""
    main, machine, _kbd = fake
    hw = main.Hardware()
    machine.panel.power_cycle()

    def update(seq: int, number: int, window: str, data: bytes, *ack: str) -> bytes:
        body = f"{seq + 1} DR {window} {base64.b64encode(data).decode()}".encode()
        block = b"$" + body + b"*" + b"%04X" % protocol.crc16(body) + b"\n"
        du: bytes = protocol.encode(seq, "DU", [str(number), "1", str(len(block)), "FULL", *ack])
        return b"\n" + du + block

    link = Link(
        protocol.encode(0, "HELLO", ["4", "9"])
        + update(1, 0, "3 3 10 13", b"\x01\x02\x03\x04", "-")
        + update(3, 1, "4 4 10 13", b"\x05\x06\x07\x08", "ACK")
        + update(5, 2, "5 5 10 13", b"\x09\x0a\x0b\x0c")
    )
    app = main.run(hw, link, seat=1, max_loops=60)
    messages = link.kinds()
    assert [m for m in messages if m[0] in ("DACK", "DLOST")] == [("DACK", ["1"]), ("DACK", ["2"])]
    glass = machine.panel.glass()
    assert glass[3 * 128 + 10 : 3 * 128 + 14] == b"\x01\x02\x03\x04"
    assert glass[4 * 128 + 10 : 4 * 128 + 14] == b"\x05\x06\x07\x08"
    assert glass[5 * 128 + 10 : 5 * 128 + 14] == b"\x09\x0a\x0b\x0c"
    assert app.display.written == 2 and app.rx_errors == 0
    app.send_heartbeat()
    assert link.kinds()[-1] == ("HB", ["0", "0", "OK", "2"])


def test_run_drives_the_seats_panel(fake: Any) -> None:
    main, machine, _kbd = fake
    hw = main.Hardware()
    machine.panel.power_cycle()
    pieces = [
        protocol.encode(0, "DU", ["0", "1", "FULL"]),
        protocol.encode(1, "DW", ["0", "3", "3", "10", "13", "0", "AQIDBA=="]),
    ]
    link = Link(b"".join(pieces))
    main.run(hw, link, seat=1, max_loops=5)
    messages = link.kinds()
    assert ("PANEL", ["ssd1306", "3C", "OK"]) in messages
    assert ("DACK", ["0"]) in messages
    glass = machine.panel.glass()
    assert glass[3 * 128 + 10 : 3 * 128 + 14] == b"\x01\x02\x03\x04"


def test_the_panel_setting_is_kept_in_flash(tmp_path: Any) -> None:
    path = str(tmp_path / "panel.txt")
    assert config.load_panel(path) == ("ssd1306", 0x3C)
    config.save_panel("sh1106", 0x3D, path)
    assert config.load_panel(path) == ("sh1106", 0x3D)
    (tmp_path / "panel.txt").write_text("st7735 3C\n")
    assert config.load_panel(path) == ("ssd1306", 0x3C)


def _cut_block_run(
    main: Any, machine: FakeMachine, trailing: bytes, monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, Rp2Stdin, list[tuple[float, tuple[str, list[str]]]]]:
    """The node's loop on the rp2 port's stdin: HELLO 4, then a whole screen's DU whose
    block is cut after 100 of its 1,391 bytes (the Pi gone mid-write, or bytes lost on the
    wire); ``trailing`` 1.3 s later. On the node's clock, which moves with its passes and
    sleeps, not with this machine's speed."""
    clock = NodeClock()
    monkeypatch.setattr(main, "ticks_ms", clock.ticks_ms)
    monkeypatch.setattr(main, "sleep_ms", clock.sleep_ms)
    hw = main.Hardware()
    machine.pins[3].value(0)  # envido held down from the start: its HOLD comes in the cut
    samples: list[float] = []
    pressed = hw.pressed

    def sampled() -> list[bool]:
        samples.append(clock.now())
        states: list[bool] = pressed()
        return states

    hw.pressed = sampled
    du = protocol.encode(1, "DU", ["0", "1", "1391", "FULL", "ACK"])
    stdin = Rp2Stdin(
        [
            (0.0, protocol.encode(0, "HELLO", ["4", "9"])),
            (0.05, b"\n" + du + b"$2 DR 0 7 0" + b"A" * 89),
            (1.3, trailing),
        ],
        clock,
    )
    out = Rp2Stdout(clock)
    monkeypatch.setitem(sys.modules, "select", Rp2Select(stdin))
    monkeypatch.setattr(main, "sys", types.SimpleNamespace(stdin=stdin, stdout=out))
    usb = main.UsbSerial()
    watchdog = machine.WDT(config.WDT_TIMEOUT_MS)
    feeds: list[float] = []
    feed = watchdog.feed

    def fed() -> None:  # once a pass
        feeds.append(clock.now())
        clock.passed()
        feed()

    watchdog.feed = fed  # type: ignore[method-assign]
    app = main.run(hw, usb, seat=1, watchdog=watchdog, max_loops=200_000)
    frames = [(at, protocol.parse(frame.rstrip(b"\n"))[1:]) for at, frame in out.frames]
    # fed and sampled all along (a pass is milliseconds)
    gaps = [b - a for a, b in itertools.pairwise(feeds)]
    assert max(gaps) < 1.0 and max(b - a for a, b in itertools.pairwise(samples)) < 1.0
    assert len(feeds) > 100 and feeds[-1] - feeds[0] > 1.2
    return app, stdin, frames


def test_a_block_cut_on_the_wire_never_stops_the_loop(
    fake: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MicroPython's rp2 stdin returns a read of n bytes only once n have come: the node
    takes only the bytes poll promised, so while the rest of a cut block never comes the
    buttons, the reader, the heartbeat and the watchdog keep running; 250 ms after its DU
    the block is given up and said lost (DLOST), and the Pi's next frames are taken."""
    main, machine, _kbd = fake
    app, stdin, frames = _cut_block_run(
        main, machine, b"\n" + protocol.encode(3, "RESET"), monkeypatch
    )
    machine.pins[3].value(1)
    assert app.reset_requested  # the frame after the cut block was read: the loop went on
    lost = [at for at, (kind, args) in frames if (kind, args) == ("DLOST", ["0"])]
    assert lost and 0.05 + 0.25 <= lost[0] < 0.6  # given up 250 ms after the DU, said so
    held = [at for at, (kind, args) in frames if (kind, args) == ("HOLD", ["envido"])]
    assert held and 0.8 <= held[0] < 1.3
    beats = [at for at, (kind, _args) in frames if kind == "HB"]
    assert len(beats) >= 2 and beats[-1] >= 1.0  # power-up's, and one a second on
    assert not [f for f in frames if f[1][0] == "DACK"]
    assert app.rx_errors == 1 and stdin.left == 0 and stdin.waited_s < 0.05


def test_the_panel_on_spi_gets_what_i2c_would(fake: Any) -> None:
    """The Pi names the 2.42" SSD1309 module (PANEL ssd1309 3C): the node drives it on its
    4-wire SPI on SPI1 (config.PANEL_BUSES; D/C and CS pins, RES pulsed), the same bytes as
    on I2C, the same screen on the glass; the 4-pin modules stay on I2C0."""
    main, machine, _kbd = fake
    machine.panel = model_for("ssd1309")
    hw = main.Hardware()
    assert hw.panel.kind == "ssd1306" and machine.i2c_args["id"] == 0  # as it starts
    assert not hasattr(machine, "panel_spi_args")
    body = b"1 DR 3 3 10 13 " + base64.b64encode(b"\x01\x02\x03\x04")
    block = b"$" + body + b"*" + b"%04X" % protocol.crc16(body) + b"\n"
    du = protocol.encode(1, "DU", ["0", "1", str(len(block)), "FULL", "ACK"])
    hello = protocol.encode(0, "HELLO", ["4", "9"])
    name = protocol.encode(2, "PANEL", ["ssd1309", "3C"])
    link = Link(hello + name)
    main.run(hw, link, seat=1, max_loops=30)
    assert ("PANEL", ["ssd1309", "3C", "OK"]) in link.kinds() and hw.panel.kind == "ssd1309"
    assert machine.panel_spi_args["id"] == 1 and machine.panel_spi_args["baudrate"] >= 8_000_000
    assert machine.panel_spi_args["sck"].ident == 10 and machine.panel_spi_args["mosi"].ident == 11
    assert machine.pins[config.PIN_PANEL_RES].value() == 1  # pulsed, then left high
    assert Path("panel.txt").read_text() == "ssd1309 3C\n"  # kept for the next power-up
    machine.panel.power_cycle()
    hw.panel.init()
    before = machine.panel_spi.writes
    link = Link(hello + b"\n" + du + block)
    main.run(hw, link, seat=1, max_loops=60)
    assert ("DACK", ["0"]) in link.kinds()
    assert machine.panel_spi.writes > before  # on SPI, not I2C
    assert machine.panel.glass()[3 * 128 + 10 : 3 * 128 + 14] == b"\x01\x02\x03\x04"
    assert main.Hardware().panel.kind == "ssd1309"  # the next power-up drives it on SPI
