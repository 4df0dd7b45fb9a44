"""The thin hardware layer: the only module that touches ``machine``.

``start()`` is what /main.py on the Pico calls at power-up.  It wires the pins
from ``seatnode.config`` to ``seatnode.node.NodeApp`` and runs the poll loop:
USB serial in, buttons, reader, heartbeat, LED.  Ctrl-C is switched off while
the loop runs, so no byte from the Pi can break into the REPL; to get back to
the REPL (for ``mpremote``) send the REPL command or hold ``mazo`` while
plugging the node in.

The node does not stay dead: the loop feeds a hardware watchdog
(``machine.WDT``), so a node stuck anywhere resets itself; an unexpected
exception is written to ``crash.txt`` and the node resets; the RESET and REPL
commands reset it too (REPL leaves a flag file, so the next boot stays in the
REPL, without the watchdog, which cannot be stopped once started).
"""

import gc
import os
import sys

import machine
import micropython

from seatnode import FIRMWARE_VERSION, config
from seatnode.compat import print_exception, sleep_ms, ticks_add, ticks_diff, ticks_ms
from seatnode.mfrc522 import MFRC522
from seatnode.node import NodeApp
from seatnode.panel import Panel
from seatnode.tags import CONFIRM_READS


def serial_number():
    """The node's USB serial number as the Pi sees it (lower-case hex)."""
    out = []
    for byte in machine.unique_id():
        out.append("0123456789abcdef"[byte >> 4])
        out.append("0123456789abcdef"[byte & 15])
    return "".join(out)


class Hardware:
    """The seat's pins: reader on SPI0, eight buttons, status LEDs, the panel on SPI1
    (the 2.42" module) or I2C0 (the 4-pin ones)."""

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
        self._states = [False] * len(self.buttons)  # pressed()'s answer, reused
        self.leds = [pin(config.LED_ONBOARD, pin.OUT), pin(config.PIN_LED_PANEL, pin.OUT)]
        self.reader = MFRC522(self.spi, self.cs, self.rst)
        self._panel_buses = {}
        kind, address = config.load_panel()
        self.panel = Panel(self.panel_bus(kind), kind, address)

    def panel_bus(self, kind):
        """The bus a panel of this type hangs on (``config.PANEL_BUSES``: the 2.42"
        SSD1309 module on SPI1, the 4-pin modules on I2C0), set up the first time."""
        name = config.PANEL_BUSES.get(kind, "i2c")
        bus = self._panel_buses.get(name)
        if bus is not None:
            return bus
        pin = machine.Pin
        if name == "spi":
            bus = SpiPanelBus(
                machine.SPI(
                    config.PANEL_SPI_ID,
                    baudrate=config.PANEL_SPI_BAUDRATE,
                    sck=pin(config.PIN_PANEL_SCK),
                    mosi=pin(config.PIN_PANEL_MOSI),
                ),
                pin(config.PIN_PANEL_DC, pin.OUT, value=0),
                pin(config.PIN_PANEL_CS, pin.OUT, value=1),
                pin(config.PIN_PANEL_RES, pin.OUT, value=1),
            )
        else:
            bus = machine.I2C(
                config.I2C_ID,
                sda=pin(config.PIN_SDA),
                scl=pin(config.PIN_SCL),
                freq=config.I2C_FREQ,
            )
        self._panel_buses[name] = bus
        return bus

    def configure_panel(self, kind, address):
        """The Pi names the seat's panel: keep it in flash, drive that one from now on."""
        try:
            config.save_panel(kind, address)
        except OSError:
            pass  # a full flash: it still works until the next power-up
        self.panel = Panel(self.panel_bus(kind), kind, address)
        return self.panel

    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def pressed(self):
        """Raw button states, True = pressed (the contact pulls the pin to GND): one list,
        filled afresh each call (nothing allocated a pass)."""
        states, buttons = self._states, self.buttons
        for i in range(len(buttons)):
            states[i] = buttons[i].value() == 0
        return states

    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def set_led(self, on):
        for led in self.leds:
            led.value(1 if on else 0)


class SpiPanelBus:
    """A panel on 4-wire SPI behind the I2C calls ``Panel`` makes (``writevto(address,
    [control, bytes])``, ``writeto(address, control + bytes)``): the control byte (0x00
    commands, 0x40 data) sets D/C, CS frames each transfer, the address is not used.
    SPI has no acknowledge, so a panel missing on this bus is never reported MISSING.
    RES is pulsed once, at power-up."""

    slice_bytes = 512  # half a screen a pass: 0.5 ms on the wire at 8 MHz (bench/pico.py)

    def __init__(self, spi, dc, cs, res):
        self.spi, self.dc, self.cs = spi, dc, cs
        res(0)
        sleep_ms(1)
        res(1)

    def writevto(self, address, vector):
        """``vector`` is [control, payload] (``Panel`` reuses the list): nothing allocated."""
        self.dc(1 if vector[0][0] == 0x40 else 0)
        self.cs(0)
        try:
            self.spi.write(vector[1])
        finally:
            self.cs(1)

    def writeto(self, address, buf):
        self.dc(1 if buf[0] == 0x40 else 0)
        self.cs(0)
        try:
            self.spi.write(memoryview(buf)[1:])
        finally:
            self.cs(1)


class UsbSerial:
    """The USB CDC data channel (MicroPython's stdin/stdout), never blocking.

    MicroPython's rp2 port reads its stdin a character at a time and a read of n
    bytes returns only when n have arrived (``stdio_read``); ``select.poll`` says
    "readable" (at least one byte waits), never how many.  So the node takes a byte
    only when ``poll(0)`` promised it, into a preallocated buffer (``ipoll`` and
    ``readinto`` of a 1-byte buffer: nothing allocated per byte), and at most a
    budget a pass: what is left waits in the USB buffer (the host is held off by
    USB's own flow control) for the next pass, after the buttons and the reader.
    A block cut on the wire therefore never stops the loop: the bytes that came are
    taken, the rest never is, and the node gives the block up 250 ms after its DU."""

    def __init__(self, budget=None, block_budget=None):
        import select

        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer
        self._poll = select.poll()
        self._poll.register(sys.stdin, select.POLLIN)
        self.budget = budget or config.USB_READ_BUDGET
        self.block_budget = block_budget or config.BLOCK_READ_BUDGET
        self._buf = bytearray(self.budget)
        self._view = memoryview(self._buf)
        self._one = bytearray(1)
        # bound once: a bound method made per call is an allocation per pass
        self._ipoll = self._poll.ipoll
        self._readinto = self._in.readinto
        self._until = None  # ticks_ms by which a read stops (the reader's next poll)

    def until(self, deadline):
        """Reads stop early at ``deadline`` (ticks_ms; None: only the budget stops them):
        the loop gives the reader's poll, so a card waits for no block being read."""
        self._until = deadline

    @micropython.native  # machine code: 7 ms less of a whole screen on an emulated Pico
    def _take(self, space, limit):
        """Up to ``limit`` bytes into ``space``, each one only once ``poll(0)`` said it is
        there; the count taken (0: nothing waiting, or the end of a closed stream)."""
        one, ipoll, readinto = self._one, self._ipoll, self._readinto
        until = self._until  # (four names in one assignment would build a tuple a call)
        count = 0
        while count < limit:
            # every 8 bytes (a quarter of a millisecond), whether the reader's poll is due
            if until is not None and count & 7 == 7 and ticks_diff(until, ticks_ms()) <= 0:
                break
            for _ in ipoll(0):
                break
            else:
                break  # nothing more has arrived: never wait for it
            if not readinto(one):  # end of the stream (a closed pty): nothing came
                break
            space[count] = one[0]
            count += 1
        return count

    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def read(self, limit=None):
        """Frames' bytes: at most ``limit`` (the pass's budget), only those already there."""
        limit = self.budget if limit is None or limit > self.budget else limit
        count = self._take(self._buf, limit)
        return bytes(self._view[:count]) if count else b""

    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def readinto(self, space):
        """Protocol 3 and 4: a display update's counted block (whose size its DU
        announced) straight into its buffer, at most ``block_budget`` bytes a pass and
        only those already there; 0 when nothing is waiting."""
        limit = len(space)
        if limit > self.block_budget:
            limit = self.block_budget
        return self._take(space, limit)

    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def pending(self):
        """More bytes are waiting (the budget left some in the USB buffer)."""
        for _ in self._ipoll(0):  # ipoll: no list of results allocated
            return True
        return False

    def write(self, frame):
        self._out.write(frame)


def maintenance_requested(hw):
    """True when the maintenance button is held at power-up."""
    names = [name for name, _pin in config.BUTTON_PINS]
    return hw.pressed()[names.index(config.MAINTENANCE_BUTTON)]


def run(hw, link, seat=None, serial=None, max_loops=None, watchdog=None):
    """Run the node until the Pi sends RESET or REPL (or ``max_loops`` for tests).

    Returns the NodeApp, so callers (and tests) can see why it stopped.
    ``watchdog`` (a ``machine.WDT``) is fed on every pass of the loop.
    """
    reader_ok = hw.reader.init()
    now = ticks_ms()
    app = NodeApp(
        link.write, seat, serial or serial_number(), now, reader_version=hw.reader.version
    )
    app.attach_panel(hw.panel, hw.configure_panel, now)
    app.reader_ok = reader_ok
    next_poll = now
    next_init = ticks_add(now, config.REINIT_READER_MS)
    loops = 0
    # What the link offers, looked up once (not a hasattr a pass): ``readinto`` for
    # protocol 3's and 4's counted blocks, ``pending`` to say more bytes wait.
    readinto = getattr(link, "readinto", None)
    pending = getattr(link, "pending", None)
    until = getattr(link, "until", None)  # reads stop when the reader's poll falls due
    # The garbage is collected a little at a time, right after a reader poll, once the
    # Pi's bytes (what makes garbage: a display update leaves about 7 bytes of it for
    # each of its own) or the time since the last collection say so (config.GARBAGE_*).
    collect = gc.collect
    taken = 0  # the Pi's bytes taken since the last collection
    collected = now
    pad = app.pad
    settle_since = None  # when a button began settling (None: none is)
    micropython.kbd_intr(-1)  # Ctrl-C (0x03) from the Pi is data, not an interrupt
    try:
        while not app.exit_requested:
            if watchdog is not None:
                watchdog.feed()
            now = ticks_ms()
            # The player's inputs first (buttons, then the reader when its poll is
            # due), then at most one budget of the Pi's bytes: a display update
            # arriving never delays a PRESS or a TAGON by more than one budget.
            app.buttons(hw.pressed(), now)
            # A button's contact changed less than the debounce time ago: until its PRESS
            # (HOLD, FREED) is due, a pass does nothing long (no bytes of the Pi taken, no
            # block checked, no panel written, no collection), so the sample that ends
            # its debounce comes on time; for SETTLE_HOLD_MS at most (a contact that
            # chatters on does not stop the display)
            short = False
            if pad.settling:
                if settle_since is None:
                    settle_since = now
                short = ticks_diff(now, settle_since) < config.SETTLE_HOLD_MS
            else:
                settle_since = None
            polled = False
            if ticks_diff(now, next_poll) >= 0:
                polled = True
                next_poll = ticks_add(now, config.POLL_READER_MS)
                if not app.reader_ok and ticks_diff(now, next_init) >= 0:
                    next_init = ticks_add(now, config.REINIT_READER_MS)
                    app.reader_ok = hw.reader.init()
                    app.reader_version = hw.reader.version
                reads = CONFIRM_READS  # a new card read once: its confirming read at once
                while reads:
                    reads -= 1
                    uid = hw.reader.read_uid() if app.reader_ok else None
                    if uid is None and app.reader_ok and not hw.reader.alive():
                        app.reader_ok = False
                    app.tag(uid, now)
                    if not app.tags.confirming:
                        break
                    now = ticks_ms()
                    app.buttons(hw.pressed(), now)  # the buttons between the two reads
                if app.tags.confirming:  # read differently again: the next pass reads it
                    next_poll = now
                elif (
                    not short
                    and (
                        taken >= config.GARBAGE_AFTER_BYTES
                        or ticks_diff(now, collected) >= config.GARBAGE_AFTER_MS
                    )
                    and not (
                        app.display.parse_waiting
                        or 0 < app.block_wanted <= config.GARBAGE_BLOCK_NEAR
                    )
                ):
                    # the next poll is a period away: the garbage goes now, while it is
                    # little (a collection takes 4 to 6 ms on an RP2040 whatever the
                    # garbage), unless a block's check (up to 10 ms) may come before that
                    # poll too: both would make it late
                    collect()
                    taken, collected = 0, now
            if until is not None:
                until(next_poll)
            if short:
                pass  # the Pi's bytes wait in the USB buffer for a pass or two
            elif app.block_wanted and readinto is not None:
                # a display update's counted block: straight into its buffer, only the
                # bytes already there (a cut block is given up by app.tick, 250 ms on)
                if pending is None or pending():
                    count = readinto(app.block_space())
                    taken += count
                    app.block_read(count, now)
            else:
                data = link.read()
                if data:
                    taken += len(data)
                    app.receive(data, now)
            display = not short
            if display and not polled and app.display.check_next:
                # A block's check (the longest pass: up to 13 ms for a whole screen)
                # comes right after a reader poll, so no poll ever waits behind it: the
                # poll first, in the next pass, then the check.
                next_poll = now
                display = False
            app.tick(now, display)
            hw.set_led(app.led_on(now))
            loops += 1
            if max_loops is not None and loops >= max_loops:
                break
            wait = ticks_diff(next_poll, ticks_ms())
            if app.display.pending or (pending is not None and pending()):
                wait = 0  # display pieces or the Pi's bytes wait: the next pass at once
            elif app.block_wanted and wait > 1:
                wait = 1  # the rest of a block comes in USB's next 1 ms frame, or never
            sleep_ms(min(config.LOOP_SLEEP_MS, wait) if wait > 0 else 0)
    finally:
        micropython.kbd_intr(3)
    return app


def log_crash(error, path=config.CRASH_FILE):
    """Write an unexpected exception to flash (the last one only, so it stays small)."""
    try:
        with open(path, "w") as f:
            f.write("seatnode " + FIRMWARE_VERSION + " crashed:\n")
            print_exception(error, f)
    except Exception:  # a full or broken flash must not stop the reset
        pass
    try:
        print_exception(error)  # whoever has a terminal open sees it too
    except Exception:  # no terminal: nothing to tell
        pass


def _take_flag(path):
    """True (and the file removed) when the flag file exists."""
    try:
        os.remove(path)
    except OSError:
        return False
    return True


def _leave_flag(path):
    try:
        with open(path, "w") as f:
            f.write("repl\n")
    except OSError:
        pass


def start():
    """Power-up entry point (called by /main.py).  Returns only into the REPL."""
    try:
        hw = Hardware()
        if _take_flag(config.REPL_FLAG_FILE):
            hw.set_led(True)
            print("seatnode: REPL requested, app not started (reset to run it)")
            return
        if maintenance_requested(hw):
            hw.set_led(True)
            print("seatnode: maintenance mode, app not started")
            return
        watchdog = machine.WDT(timeout=config.WDT_TIMEOUT_MS)
        app = run(hw, UsbSerial(), seat=config.load_seat(), watchdog=watchdog)
        hw.set_led(False)
        if app.repl_requested:
            _leave_flag(config.REPL_FLAG_FILE)
    except Exception as error:  # never expected: log it and start afresh
        log_crash(error)
    sleep_ms(50)  # let the last frames leave
    machine.reset()
