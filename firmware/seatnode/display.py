"""Display frames on the node: the Pi's windows into the seat's own panel.

The Pi renders the seat's screen and decides which windows changed; it sends
them as one *update* (firmware/PROTOCOL.md, "Display frames"):

    DU <update> <frames> FULL|DIFF          the update that follows (protocol 2)
    DW <index> <p0> <p1> <c0> <c1> <offset> <data>   a piece of one window

    DU <update> <regions> <bytes> FULL|DIFF  (protocol 3) then exactly <bytes> bytes:
    DR <p0> <p1> <c0> <c1> <data>           one whole window a frame (up to 1,400 bytes)

    DU <update> <regions> <bytes> FULL|DIFF ACK|-   (protocol 4) as protocol 3's,
                                            DACK only when the Pi asks (ACK)
                                            (protocol 5: the same, a larger queue)

and the node answers ``DACK <update>`` once every piece is in the panel's RAM
(protocol 4: only when its DU said ``ACK``; ``written`` is the last update written
whole, which protocol 4's heartbeat carries), or ``DLOST <update>`` when a piece
went missing (a bad line, a gap in the indexes or in the update numbers), after
which it ignores display frames until a FULL update comes.  ``PANEL <type>
<address> OK|MISSING`` tells the Pi the panel's state: after every HELLO, when the
panel stops answering, and when it answers again (it was initialised afresh, its
RAM is blank: the Pi sends a FULL update).

Display work is queued and done a few pieces per pass of the node's loop
(``step``), so the buttons and the reader are sampled between pieces and a
display frame never holds up a PRESS, HOLD or TAG event.
"""

import binascii

from seatnode import protocol
from seatnode.compat import const, micropython, ticks_add, ticks_diff
from seatnode.panel import KINDS

# Pi -> node
DU = "DU"
DW = "DW"
DR = "DR"  # protocol 3: a whole window, inside the byte count its DU announced
PANEL = "PANEL"  # also node -> Pi
COMMANDS = (DU, DW, PANEL)
# node -> Pi
DACK = "DACK"
DLOST = "DLOST"

FULL = "FULL"
DIFF = "DIFF"
ACK = "ACK"  # protocol 4: DU's fifth argument, a DACK wanted ("-": none)
NO_ACK = "-"
OK = "OK"
MISSING = "MISSING"

MAX_PIECE = const(24)  # data bytes in one DW (32 base64 characters)
MAX_FRAMES = const(999)  # DW frames in one update
# Protocol 3: a DU announces its DR frames' byte count, at most MAX_BLOCK (a whole screen
# is one 1,393-byte DR frame; a DIFF update of up to MAX_REGIONS windows costs less than
# a whole screen's bytes or the Pi sends the whole screen).  Only a DR frame, inside its
# block, may be longer than the 80-byte line limit: at most MAX_REGION_FRAME bytes.
MAX_BLOCK = const(2048)
MAX_REGIONS = const(32)
MAX_REGION_FRAME = const(1400)
# Panel bytes written per pass of the loop: a page row on I2C (2.9 ms at 400 kHz); a bus
# that says it is faster (``slice_bytes``: the SPI panel's, 512 bytes in 0.5 ms at 8 MHz) more.
SLICE = const(128)
# Bytes of the DR blocks waiting to be written, at most: a whole screen and a small
# update after it.  More (a Pi that ignores the DACKs) overflows the queue like 64 frames.
MAX_QUEUED_BYTES = const(2048)
# Protocol 5: the same queue four times larger, so the Pi, whose window this is, asks
# for fewer DACKs (firmware/PROTOCOL.md, "Protocol 5").
MAX_QUEUED_BYTES_5 = const(8192)
UPDATE_MODULO = const(65536)
RETRY_MS = const(500)  # how often a panel that does not answer is tried again
LOST_REPEAT_MS = const(1000)  # DLOST again while no FULL update has come
PIECES_PER_PASS = const(2)  # DW frames written per pass of the node's loop
# Display frames waiting to be written, at most: a whole screen of 24-byte pieces (43 DW
# and its DU) and some.  A Pi sending faster than the node writes (it should wait for
# each DACK) overflows it: what was queued is dropped, the update is lost (DLOST), and
# the node takes nothing but a FULL update after that: memory stays bounded.
MAX_QUEUE = const(64)
# Protocol 5: 8 KB of small updates (a DR block is 24 bytes at least) would be 341; the
# Pi keeps at most 112 unacknowledged (controller/hal/node_display.py), so 128 entries
# hold them and a few rejected lines.  The ring is made once at this size (512 bytes of
# RAM); its entries hold at most MAX_QUEUED_BYTES_5 of blocks and 64 bytes of objects
# each on the RP2040 (the entry, its header, the block's bytes object): 18 KB at most.
MAX_QUEUE_5 = const(128)
# The liveness refresh: every REFRESH_MS the panel's settings and RAM are written again
# from the node's copy (one step a pass, only while no display frame waits), so a panel
# that reset without an I2C error is lit again within REFRESH_MS and a few passes.
REFRESH_MS = const(1500)

_ADDRESSES = (0x3C, 0x3D)


class Ring:
    """A queue of at most ``size`` items in a list made once (``list.pop(0)`` moves
    every item left, and appending grows the list: this allocates nothing)."""

    def __init__(self, size):
        self._items = [None] * size
        self._head = 0
        self._count = 0

    def __len__(self):
        return self._count

    def append(self, item):
        items = self._items
        if self._count == len(items):
            raise IndexError("queue full")
        items[(self._head + self._count) % len(items)] = item
        self._count += 1

    def popleft(self):
        if not self._count:
            raise IndexError("queue empty")
        items = self._items
        item = items[self._head]
        items[self._head] = None
        self._head = (self._head + 1) % len(items)
        self._count -= 1
        return item

    def clear(self):
        while self._count:
            self.popleft()
        self._head = 0

    def items(self):
        """The items waiting, oldest first (a new list)."""
        items = self._items
        return [items[(self._head + i) % len(items)] for i in range(self._count)]


def _number(text, high, leading_zero_ok=False):
    # bytes.isdigit is 0-9 only (str.isdigit would take other scripts' digits), in C
    if not text or len(text) > 5 or not text.encode().isdigit():
        return None
    if len(text) > 1 and text[0] == "0" and not leading_zero_ok:
        return None
    value = int(text)
    return value if value <= high else None


def _malformed(kind):
    return protocol.ProtocolError(protocol.MALFORMED, kind)


def check(kind, args):
    """Validate a display command; return its arguments converted.

    DU: protocol 3's and 4's (update, regions, bytes, full, ack), a counted block
    following (protocol 3's always acknowledged: ack True); protocol 2's (update,
    frames, full).  DW: (index, p0, p1, c0, c1, offset, data); PANEL: (type, address).
    Raises ProtocolError("unknown" | "malformed")."""
    if kind == DU:
        size = len(args)
        if size == 4 or size == 5:  # protocol 3, or 4 with ACK|- after FULL|DIFF
            if args[3] not in (FULL, DIFF):
                raise _malformed(kind)
            ack = True
            if size == 5:
                mode = args[4]
                if mode == NO_ACK:
                    ack = False
                elif mode != ACK:
                    raise _malformed(kind)
            update = _number(args[0], UPDATE_MODULO - 1)
            regions = _number(args[1], MAX_REGIONS)
            count = _number(args[2], MAX_BLOCK)
            if update is None or not regions or not count:
                raise _malformed(kind)
            return update, regions, count, args[3] == FULL, ack
        if len(args) != 3 or args[2] not in (FULL, DIFF):
            raise _malformed(kind)
        update = _number(args[0], UPDATE_MODULO - 1)
        frames = _number(args[1], MAX_FRAMES)
        if update is None or not frames:
            raise _malformed(kind)
        return update, frames, args[2] == FULL
    if kind == DW:
        if len(args) != 7:
            raise _malformed(kind)
        values = []
        for i, high in enumerate((MAX_FRAMES - 1, 7, 7, 127, 127, 1023)):
            value = _number(args[i], high)
            if value is None:
                raise _malformed(kind)
            values.append(value)
        index, p0, p1, c0, c1, offset = values
        data = _base64(args[6])
        if data is None:
            raise _malformed(kind)
        size = (p1 - p0 + 1) * (c1 - c0 + 1)
        if p1 < p0 or c1 < c0 or not data or len(data) > MAX_PIECE or offset + len(data) > size:
            raise _malformed(kind)
        return index, p0, p1, c0, c1, offset, data
    if kind == PANEL:
        if not args:  # a request: the node reports its panel (a builder's box test)
            return None
        if len(args) != 2 or args[0] not in KINDS:
            raise _malformed(kind)
        address = _hex_address(args[1])
        if address is None:
            raise _malformed(kind)
        return args[0], address
    raise protocol.ProtocolError(protocol.UNKNOWN, kind)


def _byte_number(field, high):
    # a DR frame's numbers, as bytes: 1 to 3 digits, no leading zero
    if not field or len(field) > 3 or not field.isdigit() or (len(field) > 1 and field[0] == 0x30):
        return None
    value = int(field)
    return value if value <= high else None


def _printable(line):
    return min(line) >= 0x20 and max(line) <= 0x7E


def parse_region(line):
    """One DR frame of a block (bytes, no terminator): (p0, p1, c0, c1, data).

    The checks of every frame (PROTOCOL.md: length, grammar, checksum, then the
    arguments), each a C call over the line rather than a loop over its bytes.  The
    scan for bytes outside 0x20-0x7E (a loop in C, but one object a byte) is made
    only when a later check fails, to give the same reason: a frame that passes
    them all has none (its data is canonical base64, its other fields digits).
    Raises ProtocolError."""
    if len(line) > MAX_REGION_FRAME:
        raise protocol.ProtocolError(protocol.OVERSIZED)
    if len(line) < 8 or line[0] != 0x24 or line[-5] != 0x2A:  # "$", "*"
        raise protocol.ProtocolError(protocol.GARBAGE, "not a frame")
    body = line[1:-5]
    crc_text = line[-4:]
    fields = body.split(b" ")
    if crc_text.strip(b"0123456789ABCDEF") or b"*" in body or len(fields) < 2:
        raise protocol.ProtocolError(protocol.GARBAGE, "not a frame")
    seq, kind = fields[0], fields[1]
    if (
        not seq.isdigit()
        or len(seq) > 5
        or (len(seq) > 1 and seq[0] == 0x30)
        or int(seq) >= protocol.SEQ_MODULO
        or not (0 < len(kind) <= 8 and kind.isalpha() and kind.isupper())
        or b"" in fields
    ):
        raise protocol.ProtocolError(protocol.GARBAGE, "not a frame")
    if protocol.crc16(body) != int(crc_text, 16):
        if not _printable(line):
            raise protocol.ProtocolError(protocol.GARBAGE, "non-printable byte")
        raise protocol.ProtocolError(protocol.CHECKSUM)
    if kind != b"DR":
        if not _printable(line):
            raise protocol.ProtocolError(protocol.GARBAGE, "non-printable byte")
        raise protocol.ProtocolError(protocol.UNKNOWN, "in a block")
    p0 = p1 = c0 = c1 = data = None
    if len(fields) == 7:
        p0 = _byte_number(fields[2], 7)
        p1 = _byte_number(fields[3], 7)
        c0 = _byte_number(fields[4], 127)
        c1 = _byte_number(fields[5], 127)
        data = _base64_bytes(fields[6])
    if (
        p0 is None
        or p1 is None
        or c0 is None
        or c1 is None
        or p1 < p0
        or c1 < c0
        or data is None
        or len(data) != (p1 - p0 + 1) * (c1 - c0 + 1)
    ):
        if not _printable(line):
            raise protocol.ProtocolError(protocol.GARBAGE, "non-printable byte")
        raise _malformed(DR)
    return p0, p1, c0, c1, data


def parse_block(block, regions):
    """A DU's counted block: exactly ``regions`` DR frames, each ended by LF.
    Returns [(p0, p1, c0, c1, data), ...]; raises ProtocolError."""
    if not isinstance(block, bytes):  # a copy only when it is not one already
        block = bytes(block)
    if not block or block[-1] != 0x0A:
        raise protocol.ProtocolError(protocol.GARBAGE, "a block cut short")
    lines = block.split(b"\n")  # the last one is the empty one after the final LF
    lines.pop()
    if len(lines) != regions:
        raise _malformed(DU)
    return [parse_region(line) for line in lines]


def _base64(text):
    return _base64_bytes(text.encode())


def _base64_bytes(field):
    """Strict base64 (a multiple of 4 characters of its alphabet, '=' only as the
    padding, the padding bits zero), or None: the decoded bytes must encode back to
    exactly ``field``."""
    if len(field) % 4:
        return None
    try:
        data = binascii.a2b_base64(field)
    except ValueError:
        return None
    if binascii.b2a_base64(data)[:-1] != field:  # strip() costs 5x the decoding
        return None
    return data


def _hex_address(text):
    if len(text) != 2:
        return None
    try:
        value = int(text, 16)
    except ValueError:
        return None
    return value if value in _ADDRESSES and text == text.upper() else None


def address_hex(address):
    return "0123456789ABCDEF"[address >> 4 & 15] + "0123456789ABCDEF"[address & 15]


class PanelLink:
    """The node's side of the display frames for one panel.

    ``panel`` is a ``seatnode.panel.Panel`` (None: this node drives no panel).
    ``send(kind, args)`` sends one frame to the Pi.  ``configure(kind,
    address)`` is called when the Pi names another panel (PANEL command); it
    returns the new Panel (main.py saves the choice in flash).  ``version``: the
    session's protocol, which bounds the queue (``bound``)."""

    def __init__(self, panel, send, now, configure=None, version=protocol.PROTOCOL_VERSION):
        self.panel = panel
        self.send = send
        self.configure = configure
        self.queue = Ring(MAX_QUEUE_5)  # the largest; ``max_queue`` is the session's bound
        self.max_queue = MAX_QUEUE
        self.max_queued_bytes = MAX_QUEUED_BYTES
        self.bound(version)
        self.synced = False  # the panel shows what the Pi last sent
        self.updates = 0  # updates written whole (each acknowledged when asked)
        self.lost = 0  # updates reported lost
        self._receiving = None  # [update, frames, next index, full] of the update under way
        # protocol 3 and 4: [update, regions, region index, offset, ack] of the update
        # being written (ack: DACK after its last bytes)
        self._writing = None
        self._queued_bytes = 0  # bytes of the DR blocks in the queue
        self.rejected = 0  # bad blocks found since the node last counted them
        self._last = None  # the last update written whole (``written`` while in sync)
        self._fresh = True  # none written whole since the session began (``written``)
        self._lost_at = None  # when DLOST was last sent, while out of sync
        self._lost_update = 0
        self._retry_at = now
        self.dropped = 0  # display frames dropped because the queue was full
        self._refresh_at = ticks_add(now, REFRESH_MS)
        self._refresh_step = None  # the refresh under way: its next step
        if panel is not None and not panel.init():
            self._retry_at = ticks_add(now, RETRY_MS)

    @property
    def pending(self):
        return self.queue._count > 0 or self._writing is not None

    @property
    def parse_waiting(self):
        """A display update's block waits in the queue: the pass that takes it from the
        queue checks and decodes it (the longest pass the node makes)."""
        return self._queued_bytes > 0

    @property
    def check_next(self):
        """The next ``step`` checks a display update's block (its DR frames: the
        longest pass the node makes, up to 13 ms for a whole screen on an RP2040)."""
        queue = self.queue
        if self._writing is not None or not queue._count:
            return False
        kind, value = queue._items[queue._head]
        return kind == DR and value is not None

    @property
    def written(self):
        """The last update written whole into the panel in this session (protocol 4's
        HB says it), or None: none written yet, or out of sync (a lost update, the
        panel reset or missing) until a FULL one is written."""
        return None if self._fresh or not self.synced else self._last

    def new_session(self):
        """The Pi's HELLO began a session: ``written`` names none of the last one's
        updates (its numbers are another session's) until one is written whole."""
        self._fresh = True

    def bound(self, version):
        """The queue's bounds in a session of protocol ``version`` (the node's ``version``
        sets them): protocol 5's larger queue, or protocols 2 to 4's (a Pi of those
        versions sees no change)."""
        if version >= 5:
            self.max_queue, self.max_queued_bytes = MAX_QUEUE_5, MAX_QUEUED_BYTES_5
        else:
            self.max_queue, self.max_queued_bytes = MAX_QUEUE, MAX_QUEUED_BYTES

    # -- to the Pi ---------------------------------------------------------------------
    def report(self):
        """PANEL <type> <address> OK|MISSING (nothing from a node without a panel)."""
        if self.panel is None:
            return
        state = OK if self.panel.ok else MISSING
        self.send(PANEL, (self.panel.kind, address_hex(self.panel.address), state))

    def _lose(self, update, now):
        self._receiving = None
        self.synced = False
        self.lost += 1
        self._lost_update = update
        self._lost_at = now
        self.send(DLOST, (str(update),))

    # -- from the Pi -------------------------------------------------------------------
    def receive(self, kind, value, now):
        """A valid display command; DU and DW wait in the queue for ``step``."""
        if kind == PANEL:
            if value is None:
                self.report()
            else:
                self._configure(value, now)
            return
        if len(self.queue) >= self.max_queue:
            self._overflow(now)
            return
        self.queue.append((kind, value))

    def receive_block(self, header, block, now):
        """Protocol 3 and 4: the counted block of the DU ``header`` (update, regions,
        bytes, full, ack) is in (``block``: its bytes; None: it never came whole).  It
        waits in the queue, copied, as one item; ``step`` checks its DR frames in a pass
        of its own (a whole screen's take 5 ms on an RP2040), then writes them (and says
        DACK after the last only when ``ack``)."""
        update, regions, _count, full, ack = header
        raw = None if block is None else bytes(block)
        size = 0 if raw is None else len(raw)
        if len(self.queue) >= self.max_queue or self._queued_bytes + size > self.max_queued_bytes:
            self._overflow(now, update)
            return
        self._queued_bytes += size
        self.queue.append((DR, (update, full, raw, size, regions, ack)))

    def stray_region(self, now=0):
        """A DR frame outside its DU's counted block (or another line over the limit):
        that DU was lost, like a DW piece without its DU."""
        if len(self.queue) >= self.max_queue:
            self._overflow(now)
            return
        self.queue.append((DR, None))

    def bad_line(self, now=0):
        """A line from the Pi was rejected: had an update been under way when it came
        (it is judged in turn, after what was queued before it), a piece is lost."""
        if len(self.queue) >= self.max_queue:
            self._overflow(now)
            return
        self.queue.append((None, None))

    def _overflow(self, now, update=None):
        """The Pi sent faster than the panel is written: drop what waits, lose the
        update (the Pi redraws it whole), take nothing but a FULL one from now on."""
        self.dropped += len(self.queue) + 1
        self._queued_bytes = 0
        self._writing = None
        for kind, value in self.queue.items():
            if kind in (DU, DR) and value is not None:
                update = value[0]
        if update is None:
            update = self._receiving[0] if self._receiving is not None else self._lost_update
        self.queue.clear()
        if self.panel is not None and (self.synced or self._lost_at is None):
            self._lose(update, now)
        self._receiving = None
        self.synced = False

    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def step(self, now, budget=PIECES_PER_PASS):
        """Write up to ``budget`` queued pieces to the panel (or, with none waiting,
        one step of the liveness refresh when it is due).  Protocol 3's updates are
        written a SLICE of panel bytes a pass."""
        if self._writing is not None:
            self._slice(now)
            return
        if not self.queue:
            self._refresh(now)
            return
        while self.queue and budget > 0:
            kind, value = self.queue.popleft()
            if kind is None:
                if self._receiving is not None:
                    self._lose(self._receiving[0], now)
            elif kind == DU:
                self._begin(value, now)
            elif kind == DR and value is None:  # a stray DR: its DU was lost
                if self._receiving is not None:
                    self._lose(self._receiving[0], now)
                elif self.synced:
                    self._lose((self._last + 1) % UPDATE_MODULO, now)
            elif kind == DR:
                self._queued_bytes -= value[3]
                self._begin_regions(value, now)  # its panel bytes from the next pass on
                return
            else:
                budget -= 1
                self._piece(value, now)

    def _begin_regions(self, value, now):
        update, full, raw, _size, count, ack = value
        if self._receiving is not None:  # a protocol 2 update that never finished
            self._lose(self._receiving[0], now)
        regions = None
        if raw is not None:
            try:
                regions = parse_block(raw, count)
            except protocol.ProtocolError:
                self.rejected += 1  # a bad line, for the node's rx_errors
        if regions is None:  # its block was bad, or never came whole
            if self.synced or self._lost_at is None or full:
                self._lose(update, now)
            return
        if self._takes(update, full, now):
            self._writing = [update, regions, 0, 0, ack]

    def _slice(self, now):
        """Write the next SLICE bytes of the update under way; DACK after its last,
        when its DU asked for one (protocol 3's always do, protocol 4's say ACK)."""
        writing = self._writing
        update, regions, index, offset, ack = writing
        panel = self.panel
        if panel is None or not panel.ok:
            self._writing = None
            self.synced = False
            return
        p0, p1, c0, c1, data = regions[index]
        end = min(offset + panel.slice_bytes, len(data))
        try:
            panel.window(p0, p1, c0, c1, offset, data[offset:end])
        except OSError:
            self._writing = None
            self.synced = False
            self._retry_at = ticks_add(now, RETRY_MS)
            self.report()  # MISSING
            return
        if end < len(data):
            writing[3] = end
            return
        if index + 1 < len(regions):
            writing[2], writing[3] = index + 1, 0
            return
        self._writing = None
        self._written(update, ack)

    def _written(self, update, ack):
        """``update`` is in the panel whole: in sync, ``written``; DACK when asked."""
        self._last = update
        self.synced = True
        self._fresh = False
        self._lost_at = None
        self.updates += 1
        if ack:
            self.send(DACK, (str(update),))

    def _takes(self, update, full, now):
        """A FULL update, or the DIFF after the last one written whole, is written;
        another DIFF is lost (said once while out of sync: DLOST repeats by itself)."""
        if full:
            return True
        expected = None if self._last is None else (self._last + 1) % UPDATE_MODULO
        if self.synced and update == expected:
            return True
        if self.synced or self._lost_at is None:
            self._lose(update, now)
        return False

    def _begin(self, value, now):
        update, frames, full = value
        if self._receiving is not None:  # the last one never finished
            self._lose(self._receiving[0], now)
        if self._takes(update, full, now):
            self._receiving = [update, frames, 0, full]

    def _piece(self, value, now):
        receiving = self._receiving
        if receiving is None:
            if self.synced:  # a piece whose DU was lost
                self._lose((self._last + 1) % UPDATE_MODULO, now)
            return
        index, p0, p1, c0, c1, offset, data = value
        if index != receiving[2]:
            self._lose(receiving[0], now)
            return
        panel = self.panel
        if panel is None or not panel.ok:
            self._receiving = None
            self.synced = False
            return
        try:
            panel.window(p0, p1, c0, c1, offset, data)
        except OSError:
            self._receiving = None
            self.synced = False
            self._retry_at = ticks_add(now, RETRY_MS)
            self.report()  # MISSING
            return
        receiving[2] += 1
        if receiving[2] == receiving[1]:
            self._receiving = None
            self._written(receiving[0], True)  # protocol 2: every update answered

    def _configure(self, value, now):
        kind, address = value
        panel = self.panel
        if panel is not None and panel.kind == kind and panel.address == address:
            self.report()
            return
        if self.configure is not None:
            self.panel = self.configure(kind, address)
        self.synced = False
        self._receiving = None
        self._writing = None
        self.queue.clear()
        self._queued_bytes = 0
        if self.panel is not None and not self.panel.init():
            self._retry_at = ticks_add(now, RETRY_MS)
        self.report()

    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def _refresh(self, now):
        panel = self.panel
        if panel is None or not panel.ok:
            self._refresh_step = None
            return
        if self._refresh_step is None:
            if ticks_diff(now, self._refresh_at) < 0:
                return
            self._refresh_at = ticks_add(now, REFRESH_MS)
            self._refresh_step = 0
        try:
            step = panel.refresh(self._refresh_step)
        except OSError:
            self._refresh_step = None
            self._receiving = None
            self._writing = None
            self.synced = False
            self._retry_at = ticks_add(now, RETRY_MS)
            self.report()  # MISSING
            return
        self._refresh_step = step or None

    # -- time ----------------------------------------------------------------------------
    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def tick(self, now, host_alive=True):
        panel = self.panel
        if panel is None:
            return
        if not panel.ok and ticks_diff(now, self._retry_at) >= 0:
            self._retry_at = ticks_add(now, RETRY_MS)
            if panel.init():  # back, with a blank RAM: the Pi sends a FULL update
                self.synced = False
                self._receiving = None
                self._writing = None
                self.queue.clear()
                self._queued_bytes = 0
                self.report()
        if (
            panel.ok
            and host_alive
            and self._lost_at is not None
            and ticks_diff(now, self._lost_at) >= LOST_REPEAT_MS
        ):
            self._lost_at = now
            self.send(DLOST, (str(self._lost_update),))
