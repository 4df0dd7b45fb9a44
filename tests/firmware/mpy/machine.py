"""A stand-in for MicroPython's ``machine`` module, for the node run by the unix port.

The real firmware (``firmware/main.py`` -> ``seatnode.main``) runs unchanged in a
real MicroPython process; only the board is simulated, here, inside that process:

* ``SPI`` is the simulated MFRC522 of ``fake_mfrc522`` (registers, FIFO, Transceive,
  collisions, ISO 14443-3A tags, after the data sheet), selected by the CS ``Pin``
  the firmware drives (GP17);
* the button pins read 0 while the test holds them (pull-up, contact to GND);
* ``WDT`` and ``reset`` are told to the test (the supervisor in
  tests/firmware/mpnode.py), which plays the RP2040: it restarts the board when the
  watchdog starves or ``reset()`` is called, as the chip would.

Commands come from the test on the FIFO named by ``SEATNODE_CONTROL``, one a line,
read whenever the firmware samples its buttons or talks to the reader:
``tags [UID[:strength] ...]`` (what lies on the reader now), ``press NAME`` / ``release NAME``,
``dead`` / ``alive`` (the reader's cable), ``crash`` (the next SPI transfer raises an
exception nobody expects), ``hang`` (the next SPI transfer never returns).
"""

import os
import select
import time

from fake_mfrc522 import SimMFRC522, SimTag
from fake_oled import model_for
from seatnode import config

_control = None
_status = None
_poll = None
_buffer = b""
_pressed = set()  # GP numbers of the buttons held down
_trouble = None  # "crash" or "hang": what the next SPI transfer does
_last_feed_report = 0
_pins = {}  # the pins made, by GPIO number

chip = SimMFRC522([], version=int(os.getenv("SEATNODE_READER_VERSION") or "92", 16))
_BUTTONS = {}
for _name, _number in config.BUTTON_PINS:
    _BUTTONS[_name] = _number


def _open_channels():
    global _control, _status, _poll
    control = os.getenv("SEATNODE_CONTROL")
    if control:
        _control = open(control, "rb")  # noqa: SIM115 (open while the board runs)
        _poll = select.poll()
        _poll.register(_control, select.POLLIN)
    status = os.getenv("SEATNODE_STATUS")
    if status:
        _status = open(status, "wb")  # noqa: SIM115 (open while the board runs)


def tell(text):
    """A line to the supervisor (the simulated board's pins to the outside)."""
    if _status is not None:
        _status.write((text + "\n").encode())


def _command(line):
    global _trouble
    words = line.split()
    if not words:
        return
    what = words[0]
    if what == "tags":  # UID or UID:strength (a faint card: its answer weaker)
        tags = []
        for word in words[1:]:
            uid, _, strength = word.partition(":")
            tags.append(SimTag(bytes.fromhex(uid), strength=float(strength or "1")))
        chip.tags = tags
    elif what == "press":
        _pressed.add(_BUTTONS[words[1]])
    elif what == "release":
        _pressed.discard(_BUTTONS[words[1]])
    elif what == "dead":
        chip.dead = True
    elif what == "alive":
        chip.dead = False
    elif what in ("crash", "hang"):
        _trouble = what
    elif what == "glass":  # what the panel shows, as hex
        tell("glass " + "".join(f"{byte:02x}" for byte in panel.glass()))
        return
    tell("did " + line)


def service():
    """Take the test's pending commands (called as the firmware samples the board)."""
    global _buffer
    if _poll is None:
        return
    while _poll.poll(0):
        byte = _control.read(1)
        if not byte:
            return
        if byte == b"\n":
            line, _buffer = _buffer.decode(), b""
            _command(line)
        else:
            _buffer += byte


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1

    def __init__(self, ident, mode=None, pull=None, value=None):
        self.ident = ident
        self._value = 1 if value is None else value
        if ident == config.PIN_CS:
            chip.cs = self  # the simulated chip listens to the firmware's chip select
        _pins[ident] = self

    def __call__(self, v=None):
        return self.value(v)

    def value(self, v=None):
        if v is not None:
            self._value = 1 if v else 0
            return self._value
        if self.ident in _BUTTONS.values():
            service()
            return 0 if self.ident in _pressed else 1
        return self._value


class SPI:
    def __init__(self, ident, **settings):
        self.ident = ident
        self.settings = settings
        if ident == config.PANEL_SPI_ID:  # the 2.42" module's 4-wire SPI: the panel model
            self.write = self._panel_write

    def _panel_write(self, buf):
        # the control byte the D/C pin says (0x40 data, 0x00 commands), then the bytes
        dc = _pins.get(config.PIN_PANEL_DC)
        control = b"\x40" if dc is not None and dc._value else b"\x00"
        panel.writeto(panel.address, control + bytes(buf))

    def _check(self):
        global _trouble
        service()
        trouble, _trouble = _trouble, None
        if trouble == "crash":
            raise RuntimeError("simulated firmware bug in an SPI transfer")
        if trouble == "hang":
            tell("hanging")
            while True:  # a stuck bus: only the watchdog gets the node out
                time.sleep_ms(100)

    def write(self, buf):
        self._check()
        chip.write(buf)

    def write_readinto(self, wbuf, rbuf):
        self._check()
        chip.write_readinto(wbuf, rbuf)


# The seat's display on the node's I2C (firmware/seatnode/panel.py drives it).
panel = model_for(os.getenv("SEATNODE_PANEL") or "ssd1306")


class I2C:
    def __init__(self, ident, sda=None, scl=None, freq=400000):
        self.ident = ident
        self.freq = freq

    def writeto(self, address, buf):
        panel.writeto(address, buf)

    def writevto(self, address, vector):
        panel.writevto(address, vector)


class WDT:
    def __init__(self, id=0, timeout=5000):
        self.timeout = timeout
        tell("wdt " + str(timeout))

    def feed(self):
        global _last_feed_report
        now = time.ticks_ms()
        if time.ticks_diff(now, _last_feed_report) >= 100:
            _last_feed_report = now
            tell("feed")


def unique_id():
    return bytes.fromhex(os.getenv("SEATNODE_UNIQUE_ID") or "e6614103e7ab1234")


def reset():
    """The RP2040 resets: the supervisor restarts the board (USB drops, as it does)."""
    tell("reset")
    while True:
        time.sleep_ms(100)


_open_channels()
