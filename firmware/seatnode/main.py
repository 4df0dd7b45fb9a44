"""The thin hardware layer: the only module that touches ``machine``.

``start()`` is what /main.py on the Pico calls at power-up.  It wires the pins
from ``seatnode.config`` to ``seatnode.node.NodeApp`` and runs the poll loop:
USB serial in, buttons, reader, heartbeat, LED.  Ctrl-C is switched off while
the loop runs, so no byte from the Pi can break into the REPL; to get back to
the REPL (for ``mpremote``) send the REPL command or hold ``mazo`` while
plugging the node in.
"""

import sys

import machine
import micropython

from seatnode import config
from seatnode.compat import sleep_ms, ticks_add, ticks_diff, ticks_ms
from seatnode.mfrc522 import MFRC522
from seatnode.node import NodeApp
from seatnode.panel import Panel


def serial_number():
    """The node's USB serial number as the Pi sees it (lower-case hex)."""
    out = []
    for byte in machine.unique_id():
        out.append("0123456789abcdef"[byte >> 4])
        out.append("0123456789abcdef"[byte & 15])
    return "".join(out)


class Hardware:
    """The seat's pins: reader on SPI0, eight buttons, status LEDs."""

    def __init__(self):
        pin = machine.Pin
        self.spi = machine.SPI(
            config.SPI_ID,
            baudrate=config.SPI_BAUDRATE,
            polarity=0,
            phase=0,
            sck=pin(config.PIN_SCK),
            mosi=pin(config.PIN_MOSI),
            miso=pin(config.PIN_MISO),
        )
        self.cs = pin(config.PIN_CS, pin.OUT, value=1)
        self.rst = pin(config.PIN_RST, pin.OUT, value=1)
        self.buttons = [pin(number, pin.IN, pin.PULL_UP) for _name, number in config.BUTTON_PINS]
        self.leds = [pin(config.LED_ONBOARD, pin.OUT), pin(config.PIN_LED_PANEL, pin.OUT)]
        self.reader = MFRC522(self.spi, self.cs, self.rst)
        self.i2c = machine.I2C(
            config.I2C_ID, sda=pin(config.PIN_SDA), scl=pin(config.PIN_SCL), freq=config.I2C_FREQ
        )
        kind, address = config.load_panel()
        self.panel = Panel(self.i2c, kind, address)

    def configure_panel(self, kind, address):
        """The Pi names the seat's panel: keep it in flash, drive that one from now on."""
        try:  # noqa: SIM105 (MicroPython has no contextlib)
            config.save_panel(kind, address)
        except OSError:
            pass  # a full flash: it still works until the next power-up
        self.panel = Panel(self.i2c, kind, address)
        return self.panel

    def pressed(self):
        """Raw button states, True = pressed (the contact pulls the pin to GND)."""
        return [button.value() == 0 for button in self.buttons]

    def set_led(self, on):
        for led in self.leds:
            led.value(1 if on else 0)


class UsbSerial:
    """The USB CDC data channel (MicroPython's stdin/stdout), without blocking."""

    def __init__(self):
        import select

        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer
        self._poll = select.poll()
        self._poll.register(sys.stdin, select.POLLIN)

    def read(self, limit=512):
        data = bytearray()
        while len(data) < limit and self._poll.poll(0):
            chunk = self._in.read(1)
            if not chunk:
                break
            data.extend(chunk)
        return bytes(data)

    def write(self, frame):
        self._out.write(frame)


def maintenance_requested(hw):
    """True when the maintenance button is held at power-up."""
    names = [name for name, _pin in config.BUTTON_PINS]
    return hw.pressed()[names.index(config.MAINTENANCE_BUTTON)]


def run(hw, link, seat=None, serial=None, max_loops=None):
    """Run the node until the Pi sends RESET or REPL (or ``max_loops`` for tests).

    Returns the NodeApp, so callers (and tests) can see why it stopped.
    """
    now = ticks_ms()
    app = NodeApp(link.write, seat, serial or serial_number(), now)
    app.attach_panel(hw.panel, hw.configure_panel, now)
    app.reader_ok = hw.reader.init()
    next_poll = now
    next_init = ticks_add(now, config.REINIT_READER_MS)
    loops = 0
    micropython.kbd_intr(-1)  # Ctrl-C (0x03) from the Pi is data, not an interrupt
    try:
        while not app.exit_requested:
            now = ticks_ms()
            data = link.read()
            if data:
                app.receive(data, now)
            app.buttons(hw.pressed(), now)
            if ticks_diff(now, next_poll) >= 0:
                next_poll = ticks_add(now, config.POLL_READER_MS)
                if not app.reader_ok and ticks_diff(now, next_init) >= 0:
                    next_init = ticks_add(now, config.REINIT_READER_MS)
                    app.reader_ok = hw.reader.init()
                uid = hw.reader.read_uid() if app.reader_ok else None
                if uid is None and app.reader_ok and not hw.reader.alive():
                    app.reader_ok = False
                app.tag(uid, now)
            app.tick(now)
            hw.set_led(app.led_on(now))
            loops += 1
            if max_loops is not None and loops >= max_loops:
                break
            sleep_ms(0 if app.display.pending else config.LOOP_SLEEP_MS)
    finally:
        micropython.kbd_intr(3)
    return app


def start():
    """Power-up entry point (called by /main.py)."""
    hw = Hardware()
    if maintenance_requested(hw):
        hw.set_led(True)
        print("seatnode: maintenance mode, app not started")
        return
    app = run(hw, UsbSerial(), seat=config.load_seat())
    hw.set_led(False)
    if app.reset_requested:
        sleep_ms(50)  # let the last frames leave
        machine.reset()
    # REPL requested: return to the MicroPython prompt with Ctrl-C enabled.
