"""The node's main loop, pass by pass, on the heap: what each pass allocates.

``micropython loop_alloc.py PASSES`` runs the real ``seatnode.main.run`` with the real
``UsbSerial`` (stdin: a pipe the test keeps open, stdout: the frames), the real
``MFRC522`` driver, ``Panel`` and ``NodeApp``, on a board whose parts allocate nothing
themselves (so whatever the heap gains is the firmware's):

* an MFRC522 at register level: the driver's FIFO writes, Transceive, its timer's "no
  answer", and one NTAG (7-byte UID: WUPA/REQA, two cascade levels of ANTICOLLISION and
  SELECT, HLTA) that lies on the reader for part of the run;
* eight button pins, one pressed and let go during the run; an I2C panel that takes
  every transfer (the liveness refresh writes it every 1.5 s);
* the clock: ``ticks_ms`` and ``sleep_ms`` of the firmware's modules run on a counter
  (each pass at least 1 ms), so the run covers reader polls every 15 ms, heartbeats,
  the refresh and the card's grace period in a second of real time.

The garbage collector is off while it runs; the watchdog the loop feeds first thing every
pass reads ``gc.mem_alloc()``.  Printed (key=value): ``passes``, ``allocating_passes``
(passes that allocated and sent no frame), ``worst_bytes`` and ``worst_pass`` of those,
``collections`` (passes in which the loop collected its garbage, every 10 s with nothing
from the Pi: the heap shrank, so such a pass cannot be weighed),
``frame_passes`` (passes that sent frames: a frame is new bytes), ``frame_bytes``
(what those allocated), ``frames``, ``polls``, ``card_reads``, ``refreshes`` and
``fake_ms`` (the counter's span).
"""

import gc
import sys

import micropython  # noqa: F401  (the firmware's own import, made before the count)
from seatnode import config, main, mfrc522
from seatnode.mfrc522 import crc_a
from seatnode.panel import Panel

PASSES = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
UID = bytes.fromhex("04A224B2C55E80")
CARD_FROM_MS, CARD_UNTIL_MS = 1000, 4000  # the card lies on the reader
PRESS_FROM_MS, PRESS_UNTIL_MS = 5000, 5100  # truco held down for 100 ms

_now = 0


def fake_ticks_ms():
    return _now


def fake_sleep_ms(ms):
    global _now
    _now += ms if ms > 0 else 0


def _tick():
    global _now
    _now += 1


main.ticks_ms = fake_ticks_ms
main.sleep_ms = fake_sleep_ms
mfrc522.ticks_ms = fake_ticks_ms
mfrc522.sleep_ms = fake_sleep_ms


class Chip:
    """An MFRC522 seen through its SPI registers, allocating nothing per transfer."""

    def __init__(self):
        self.regs = bytearray(64)
        self.regs[mfrc522.VERSION] = 0x92
        self.fifo_in = bytearray(16)
        self.fifo_in_count = 0
        self.out = b""  # the answer waiting in the FIFO
        self.halted = False
        self.polls = 0
        self.reads = 0
        cl1 = bytes((0x88,)) + UID[:3]
        cl2 = UID[3:]
        self.atqa = b"\x44\x00"
        self.cl1 = cl1 + bytes((cl1[0] ^ cl1[1] ^ cl1[2] ^ cl1[3],))
        self.cl2 = cl2 + bytes((cl2[0] ^ cl2[1] ^ cl2[2] ^ cl2[3],))
        self.sak1 = b"\x04" + crc_a(b"\x04")
        self.sak2 = b"\x00" + crc_a(b"\x00")

    def card(self):
        return CARD_FROM_MS <= _now < CARD_UNTIL_MS

    def _exchange(self):
        regs, frame, n = self.regs, self.fifo_in, self.fifo_in_count
        self.out = b""
        regs[mfrc522.ERROR] = 0
        if self.card():
            first = frame[0]
            if n == 1 and (first == mfrc522.WUPA or (first == mfrc522.REQA and not self.halted)):
                self.halted = False
                self.out = self.atqa
                if first == mfrc522.WUPA:
                    self.polls += 1
            elif n == 2 and frame[1] == 0x20:
                self.out = self.cl1 if first == mfrc522.SEL_CL1 else self.cl2
            elif n == 9:
                self.out = self.sak1 if first == mfrc522.SEL_CL1 else self.sak2
                if first == mfrc522.SEL_CL2:
                    self.reads += 1
            elif n == 4 and first == mfrc522.HLTA:
                self.halted = True
        elif n == 1 and frame[0] == mfrc522.WUPA:
            self.polls += 1
        regs[mfrc522.COM_IRQ] = mfrc522.IRQ_RX if self.out else mfrc522.IRQ_TIMER
        regs[mfrc522.FIFO_LEVEL] = len(self.out)

    def write(self, buf):
        reg = buf[0] >> 1
        if reg == mfrc522.FIFO_DATA:
            count = len(buf) - 1
            for i in range(count):
                self.fifo_in[i] = buf[1 + i]
            self.fifo_in_count = count
            return
        value = buf[1]
        command = self.regs[mfrc522.COMMAND]
        if reg == mfrc522.BIT_FRAMING and value & 0x80 and command == mfrc522.CMD_TRANSCEIVE:
            self._exchange()
        if reg == mfrc522.COMMAND:
            value &= 0x0F  # never in power-down
        self.regs[reg] = value

    def write_readinto(self, wbuf, rbuf):
        reg = (wbuf[0] >> 1) & 0x3F
        if reg == mfrc522.FIFO_DATA:
            out = self.out
            for i in range(len(rbuf) - 1):
                rbuf[1 + i] = out[i] if i < len(out) else 0
            return
        rbuf[1] = self.regs[reg]


class Pin:
    def __init__(self, gp=None, value=1):
        self.gp = gp
        self._value = value

    def value(self, v=None):
        if v is None:
            if self.gp == 2:  # truco
                _tick()  # a pass costs the clock at least a millisecond
                return 0 if PRESS_FROM_MS <= _now < PRESS_UNTIL_MS else 1
            return 1
        self._value = v
        return v

    def __call__(self, v=None):
        return self.value(v)


class Bus:
    def __init__(self):
        self.transfers = 0

    def writevto(self, address, vector):
        self.transfers += 1


class Board(main.Hardware):
    def __init__(self):
        self.chip = Chip()
        self.spi = self.chip
        self.cs = Pin()
        self.rst = Pin()
        self.buttons = [Pin(number) for _name, number in config.BUTTON_PINS]
        self._states = [False] * len(self.buttons)
        self.leds = [Pin(), Pin()]
        self.reader = mfrc522.MFRC522(self.chip, self.cs, self.rst)
        self.i2c = Bus()
        self.panel = Panel(self.i2c, "ssd1309", 0x3C)


class Counting(main.UsbSerial):
    def __init__(self):
        main.UsbSerial.__init__(self)
        self.frames = 0

    def write(self, frame):
        self.frames += 1
        self._out.write(frame)


class Probe:
    """The watchdog: fed first thing every pass, it weighs the pass before."""

    def __init__(self, link):
        self.link = link
        self.passes = 0
        self.last_alloc = 0
        self.last_frames = 0
        self.allocating = 0
        self.worst = 0
        self.worst_pass = -1
        self.frame_passes = 0
        self.frame_bytes = 0
        self.collections = 0

    def feed(self):
        used = gc.mem_alloc()
        frames = self.link.frames
        if self.passes:
            grew = used - self.last_alloc
            if frames != self.last_frames:
                self.frame_passes += 1
                self.frame_bytes += grew
            elif grew < 0:  # the loop collected its garbage (every 10 s here): not weighed
                self.collections += 1
            elif grew:
                self.allocating += 1
                if grew > self.worst:
                    self.worst = grew
                    self.worst_pass = self.passes
        self.passes += 1
        self.last_frames = frames
        self.last_alloc = gc.mem_alloc()


def probe():
    board = Board()
    link = Counting()
    watchdog = Probe(link)
    gc.collect()
    gc.disable()
    main.run(
        board, link, seat=0, serial="e6614103e7ab1234", max_loops=PASSES + 1, watchdog=watchdog
    )
    gc.enable()
    out = sys.stderr
    for key, value in (
        ("passes", watchdog.passes - 1),
        ("allocating_passes", watchdog.allocating),
        ("worst_bytes", watchdog.worst),
        ("worst_pass", watchdog.worst_pass),
        ("collections", watchdog.collections),
        ("frame_passes", watchdog.frame_passes),
        ("frame_bytes", watchdog.frame_bytes),
        ("frames", link.frames),
        ("polls", board.chip.polls),
        ("card_reads", board.chip.reads),
        ("refreshes", board.panel.refreshes),
        ("fake_ms", _now),
    ):
        out.write(key + "=" + str(value) + "\n")


probe()
