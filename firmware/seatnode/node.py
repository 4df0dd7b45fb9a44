"""The seat node's behaviour, independent of the hardware.

``NodeApp`` turns button samples, reader polls and bytes from the Pi into
frames for the Pi and an LED state.  ``seatnode.main`` feeds it from the real
pins; the host's tests feed it directly, and the Pi-side link tests run it as a
simulated node over a pseudo-terminal.
"""

from seatnode import FIRMWARE_VERSION, display, protocol
from seatnode.compat import const, micropython, ticks_add, ticks_diff
from seatnode.debounce import DEBOUNCE_MS, HOLD_MS, STUCK_MS, ButtonPad
from seatnode.led import StatusLed
from seatnode.tags import CONFIRM_READS, GRACE_MS, TAGMANY, TagPresence

HEARTBEAT_MS = const(1000)
HOST_TIMEOUT_MS = const(3500)
# A DU's counted block that has not come whole this long after its DU is given up
# (lost): the Pi writes a DU and its block in one go, so only a Pi gone mid-write leaves
# one unfinished, and the node takes frames again.
BLOCK_TIMEOUT_MS = const(250)


class NodeApp:
    """One seat node.

    ``write`` is called with each outgoing frame (bytes).  ``seat`` is the seat
    number stored on the node (None when not configured), ``serial`` its USB
    serial number as the Pi sees it, ``reader_version`` the MFRC522's VersionReg
    (reported in HELLO so a builder sees which chip, or clone, they have).
    ``panel`` is the seat's OLED (``seatnode.panel.Panel``, None when the panel
    hangs on the Pi) and ``configure_panel(kind, address)`` makes another one when
    the Pi names it.
    """

    def __init__(
        self,
        write,
        seat,
        serial,
        now,
        firmware=FIRMWARE_VERSION,
        heartbeat_ms=HEARTBEAT_MS,
        host_timeout_ms=HOST_TIMEOUT_MS,
        debounce_ms=DEBOUNCE_MS,
        hold_ms=HOLD_MS,
        stuck_ms=STUCK_MS,
        grace_ms=GRACE_MS,
        confirm_reads=CONFIRM_READS,
        reader_version=0,
        panel=None,
        configure_panel=None,
    ):
        self.write = write
        self.seat = seat
        self.serial = serial
        self.firmware = firmware
        self.heartbeat_ms = heartbeat_ms
        self.host_timeout_ms = host_timeout_ms
        self.seq = protocol.Sequencer()
        self.lines = protocol.LineReader()
        self.pad = ButtonPad(protocol.BUTTONS, debounce_ms, hold_ms, stuck_ms)
        self.tags = TagPresence(grace_ms, confirm_reads)
        self.led = StatusLed(now)
        self.reader_ok = False  # main.py sets it at start and after each poll
        self._reader_said = None  # what the last heartbeat said of the reader
        self.reader_version = reader_version
        self.rx_errors = 0
        self.reset_requested = False
        self.repl_requested = False
        self._host_seen = None
        self._last_tick = now
        self._uptime_ms = 0
        self._next_heartbeat = now
        self.version = protocol.PROTOCOL_VERSION  # this session's, as the Pi's HELLO chose
        self._header = None  # protocol 3 to 5: the DU whose counted block is coming
        self._block_since = now
        self.display = display.PanelLink(panel, self.send, now, configure_panel, self.version)
        self.send_hello()
        self.display.report()

    def set_version(self, version):
        """This session's protocol version, as the Pi's HELLO chose it (``version``; at
        power-up the newest): it says what the heartbeat carries and bounds the display
        queue (protocol 5's is larger)."""
        self.version = version
        self.display.bound(version)

    # -- outgoing -------------------------------------------------------------
    def send(self, kind, args=()):
        self.write(protocol.encode(self.seq.next(), kind, args))

    def send_hello(self, session=None):
        """HELLO: at power-up (session ``-``), or answering the Pi's (its session)."""
        seat = "-" if self.seat is None else str(self.seat)
        version = self.reader_version & 0xFF
        self.send(
            protocol.HELLO,
            (
                str(self.version),
                self.firmware,
                seat,
                self.serial,
                protocol.uid_hex(bytes((version,))),
                "-" if session is None else str(session),
            ),
        )

    def send_heartbeat(self):
        """HB <uptime_s> <rx_errors> <reader>, and in a session of protocol 4 or 5 <written>:
        the last display update written whole (``-``: none, or out of sync)."""
        uptime = str(self._uptime_ms // 1000)
        self._reader_said = self.reader_ok
        reader = "OK" if self.reader_ok else "NONE"
        if self.version < 4:  # protocols 2 and 3: three arguments
            self.send(protocol.HB, (uptime, str(self.rx_errors), reader))
            return
        written = self.display.written
        self.send(
            protocol.HB,
            (uptime, str(self.rx_errors), reader, "-" if written is None else str(written)),
        )

    # -- incoming -------------------------------------------------------------
    def receive(self, data, now):
        """Bytes from the Pi: frames are validated; bad ones only count in rx_errors."""
        lines = self.lines
        for line in lines.items(data):
            if line is None:  # oversized: only a DR frame is long, this one outside its block
                self.rx_errors += 1
                self.display.stray_region(now)
                continue
            if line is protocol.BLOCK:
                self._block_done(now)
                continue
            kind = None
            try:
                _seq, kind, args = protocol.parse(line)
                if kind in display.COMMANDS:
                    value = display.check(kind, args)
                else:
                    value = protocol.check_command(kind, args)
            except protocol.ProtocolError:
                self.rx_errors += 1
                if kind == display.DR:  # outside a block: its DU was lost
                    self.display.stray_region(now)
                else:
                    self.display.bad_line(now)
                continue
            if kind in display.COMMANDS:
                self._host_seen = now
                if kind == display.DU and len(value) == 5:  # protocol 3 to 5: a block follows
                    self._header = value
                    self._block_since = now
                    lines.expect(value[2])
                    continue
                self.display.receive(kind, value, now)
                continue
            if kind == protocol.HELLO:
                self.set_version(int(args[0]))
            self._handle(kind, value, now)

    # -- protocol 3's and 4's counted blocks ---------------------------------------------------
    @property
    def block_wanted(self):
        """Bytes of a display update's block still to come (0: frames, line by line)."""
        return self.lines.wanted

    def block_space(self):
        """Where the next bytes of the block go (``readinto`` it, then ``block_read``)."""
        return self.lines.space()

    def block_read(self, count, now):
        """``count`` bytes were read into ``block_space()``."""
        if count and self.lines.filled(count):
            self._block_done(now)

    def _block_done(self, now):
        header, self._header = self._header, None
        if header is not None:
            self.display.receive_block(header, self.lines.block(), now)

    def _handle(self, kind, value, now):
        self._host_seen = now
        if kind == protocol.HELLO:
            self.send_hello(value)
            self.display.new_session()
            self.display.report()
        elif kind == protocol.IDENT:
            self.led.identify(value, now)
        elif kind == protocol.LED:
            self.led.set_mode(value)
        elif kind == protocol.RESET:
            self.reset_requested = True
        elif kind == protocol.REPL:
            self.repl_requested = True
        # HB: being alive is all it says.

    def attach_panel(self, panel, configure_panel, now):
        """Drive ``panel`` (main.py's, once the board is set up) and tell the Pi."""
        self.display = display.PanelLink(panel, self.send, now, configure_panel, self.version)
        self.display.report()

    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def host_alive(self, now):
        """True while the Pi has sent a valid frame within host_timeout_ms."""
        if self._host_seen is None:
            return False
        if ticks_diff(now, self._host_seen) < self.host_timeout_ms:
            return True
        self._host_seen = None
        return False

    # -- inputs -----------------------------------------------------------------
    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def buttons(self, raw_states, now):
        """One sample of the eight buttons, in protocol.BUTTONS order."""
        for kind, name in self.pad.update(raw_states, now):
            self.send(kind, (name,))
            self.led.flash(now)

    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def tag(self, uid, now):
        """One reader poll: the UID read (bytes), None, or MANY (several tags)."""
        for kind, seen in self.tags.update(uid, now):
            if kind == TAGMANY:
                self.send(protocol.TAGMANY)
            else:
                self.send(kind, (protocol.uid_hex(seen),))
            self.led.flash(now)

    # -- time ---------------------------------------------------------------------
    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def tick(self, now, display=True):
        """Advance the clock: sends the heartbeat when due.  ``display`` False: no
        display work in this pass (the panel's next piece waits for the next)."""
        elapsed = ticks_diff(now, self._last_tick)
        if elapsed > 0:
            self._uptime_ms += elapsed
        self._last_tick = now
        # a reader that stopped answering (or answers again) is said at once, not in
        # the heartbeat due up to a second later
        if ticks_diff(now, self._next_heartbeat) >= 0 or self.reader_ok != self._reader_said:
            self.send_heartbeat()
            self._next_heartbeat = ticks_add(now, self.heartbeat_ms)
        if self._header is not None and ticks_diff(now, self._block_since) >= BLOCK_TIMEOUT_MS:
            self.lines.abandon()  # the block never came whole: that update is lost
            self.rx_errors += 1
            self.display.receive_block(self._header, None, now)
            self._header = None
        if display:
            self.display.step(now)
        if self.display.rejected:  # bad blocks, checked by step
            self.rx_errors += self.display.rejected
            self.display.rejected = 0
        self.display.tick(now, self.host_alive(now))

    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def led_on(self, now):
        return self.led.is_on(now, self.host_alive(now), self.reader_ok)

    @property
    def exit_requested(self):
        return self.reset_requested or self.repl_requested
