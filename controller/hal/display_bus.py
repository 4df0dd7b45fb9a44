"""The Pi's own bus to a panel: the windows a planner chose, as controller commands and
data on a luma serial interface (I2C or SPI).

How to get one
--------------
``writer_for_device(device)`` is the usual entry point: give it an initialised
luma device.

* ``luma.oled.device.ssd1306`` (and its subclasses) or ``sh1106``: a
  :class:`DisplayWriter` that talks to the device's own serial interface
  (``device._serial_interface``: luma's ``i2c``/``spi``, or any object with
  ``command(*bytes)`` and ``data(list)``).  luma's constructor has already sent
  the init sequence; the writer only addresses RAM and writes data.  The
  device's rotation (``device.preprocess``) is honoured.
* Anything else (luma.core's ``dummy`` in the mock, emulators): a
  :class:`PassthroughWriter` that simply calls ``device.display(image)``.

Without a luma device, ``bus_writer(interface, Controller.SH1106)`` works on the
interface directly (the caller must have initialised the panel).

The transfers
-------------
On luma's smbus2-managed ``i2c(port=...)`` (what ``OledDisplay`` opens) :class:`BusPort`
makes an update's transfers itself, as the messages of one ``i2c_rdwr`` call (up to
the kernel's 42 an ioctl): the same transfers, byte for byte and in order, as luma's
``command()`` and ``data()`` would put on the wire, with a repeated START between them
instead of STOP and START, in one call instead of two a window.  Plans are kept by
where the frame changed (:meth:`DisplayWriter.plan`; plans of the same windows are
one, a page's spans are kept by its change too), and a plan's transfers are made
ready once (smbus2 messages over a buffer of their own, shared by the panels of one
address): an update copies its windows' bytes into them and makes the ioctl.

If the interface raises, :class:`BusPort` raises too: the writer forgets what the panel
shows and sends the full frame next time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from ctypes import c_char, pointer
from dataclasses import dataclass, field
from typing import Any, Protocol

from PIL import Image

from .display_planner import (
    BusModel,
    DisplayWriter,
    FrameWriter,
    KeptPlan,
    Panel,
    UpdateReport,
    WriterTotals,
    window_bytes,
)
from .display_planner import forget_plans as forget_kept_plans
from .panel_addressing import Window, full_frame_commands
from .panels import Controller

__all__ = [
    "BusPort",
    "PassthroughWriter",
    "SerialInterface",
    "bus_model_for",
    "bus_writer",
    "forget_plans",
    "writer_for_device",
]

I2C_MAX_COMMAND_BYTES = 32  # luma's i2c.command() asserts this


class SerialInterface(Protocol):
    """What luma.core's serial interfaces (``i2c``, ``spi``, ...) offer."""

    def command(self, *cmd: int) -> None: ...

    def data(self, data: list[int]) -> None: ...


def bus_model_for(interface: object) -> BusModel:
    """The model matching a luma interface; unknown ones are priced as SMBus I2C."""
    from luma.core.interface.serial import bitbang, i2c

    if isinstance(interface, i2c):
        return BusModel.i2c(4096 if getattr(interface, "_managed", False) else 32)
    if isinstance(interface, bitbang):  # luma's spi is a bitbang subclass
        return BusModel.spi(int(getattr(interface, "_transfer_size", 4096)))
    return BusModel.i2c(32)


class BusPort:
    """The Pi's own bus to the panel: a luma serial interface (``i2c``, ``spi``, or any
    object with ``command(*bytes)`` and ``data(list)``) on an initialised panel."""

    def __init__(self, interface: SerialInterface, panel: Panel, bus: BusModel | None = None):
        self.interface = interface
        self._panel = panel
        self._bus = bus if bus is not None else bus_model_for(interface)
        self._addressing = panel.addressing()
        self._combined = _combined_transfers(interface)
        # the same, when its messages are smbus2's own (plans' transfers made ready)
        self._programmable = (
            self._combined
            if self._combined is not None and self._combined[1] is _smbus2_write()
            else None
        )
        self._command_messages: dict[tuple[int, ...], Any] = {}

    @property
    def panel(self) -> Panel:
        return self._panel

    @property
    def bus(self) -> BusModel:
        return self._bus

    def send(self, frame: bytes, windows: Sequence[Window], full: bool) -> UpdateReport:
        if self._combined is not None:
            return self._send_combined(self._combined, frame, windows, full)
        bus, width = self._bus, self._panel.width
        command_bytes = data_bytes = overhead = transfers = 0
        for window, cmds in self._window_commands(windows, full):
            if cmds:
                self.interface.command(*cmds)
                command_bytes += len(cmds)
                overhead += bus.transfer_overhead
                transfers += 1
            data = list(window_bytes(frame, width, window))
            self.interface.data(data)
            data_bytes += len(data)
            blocks = bus.data_transfers(len(data))
            overhead += blocks * bus.transfer_overhead
            transfers += blocks
        return UpdateReport(
            full=full,
            windows=tuple(windows),
            command_bytes=command_bytes,
            data_bytes=data_bytes,
            overhead_bytes=overhead,
            transfers=transfers,
            bits_per_byte=bus.bits_per_byte,
        )

    def send_plan(self, frame: bytes, plan: KeptPlan) -> UpdateReport:
        """``send(frame, windows, full)`` for a plan :meth:`DisplayWriter.plan` kept.

        On luma's smbus2-managed ``i2c`` the plan's transfers are made once, as smbus2
        messages over buffers of their own (each window's data message, its control
        byte first), and kept with the plan's report: an update copies the windows'
        bytes of the frame into them and makes the one ``i2c_rdwr`` (the kernel copies
        the messages at the call, so their buffers are free again when it returns)."""
        rdwr = self._combined
        if rdwr is None or rdwr is not self._programmable:
            return self.send(frame, plan[1], plan[0])
        key = (id(plan), rdwr[0])
        program = _PROGRAMS.get(key)
        if program is None or program.plan is not plan:
            if len(_PROGRAMS) >= PROGRAMS_KEPT:
                _PROGRAMS.clear()
            program = _PROGRAMS[key] = self._program(rdwr, plan)
        busy = program.busy
        if not busy.acquire(blocking=False):  # another thread's update fills its buffer
            return self._send_combined(rdwr, frame, plan[1], plan[0])
        try:
            view = program.view
            for start, stop, first, last in program.copies:
                view[start:stop] = frame[first:last]
            transfer, messages = rdwr[2], program.messages
            if len(messages) <= I2C_RDWR_MAX_MESSAGES:
                transfer(*messages)
            else:
                for first in range(0, len(messages), I2C_RDWR_MAX_MESSAGES):
                    transfer(*messages[first : first + I2C_RDWR_MAX_MESSAGES])
        finally:
            busy.release()
        return program.report

    def _program(self, rdwr: _CombinedTransfers, plan: KeptPlan) -> _Program:
        """A kept plan's messages (as :meth:`_send_combined` makes them) over one buffer
        of the windows' data, where each update's bytes go (``copies``)."""
        address, message, _ = rdwr
        full, windows = plan
        width = self._panel.width
        # a bytearray, not ctypes' create_string_buffer (which makes an array type for
        # every new size: some 10 us)
        buffer = bytearray(sum(window.pages * window.cols for window in windows) + len(windows))
        over = _smbus2_message_type()
        messages: list[Any] = []
        copies: list[tuple[int, int, int, int]] = []
        command_bytes = 0
        at = 0
        for window, cmds in self._window_commands(windows, full):
            if cmds:
                messages.append(self._command_message(message, address, cmds))
                command_bytes += len(cmds)
            page, col, cols = window.page, window.col, window.cols
            size = window.pages * cols
            if size > I2C_MAX_MESSAGE_BYTES:  # pragma: no cover - 1 KiB frames
                raise AssertionError("data too long for one message")
            buffer[at] = _DATA_PREFIX[0]  # a message as i2c_msg.write makes it, on the buffer
            messages.append(over(address, 0, size + 1, pointer(c_char.from_buffer(buffer, at))))
            at += 1
            first = page * width + col
            for _ in range(window.pages):
                copies.append((at, at + cols, first, first + cols))
                at += cols
                first += width
        data_bytes = len(buffer) - len(windows)
        bus = self._bus
        report = UpdateReport(
            full,
            windows,
            command_bytes,
            data_bytes,
            len(messages) * bus.transfer_overhead,
            len(messages),
            bus.bits_per_byte,
        )
        view = memoryview(buffer)
        busy = threading.Lock()
        return _Program(plan, buffer, view, tuple(messages), tuple(copies), report, busy)

    def _command_message(
        self, message: Callable[[int, bytes], Any], address: int, cmds: list[int]
    ) -> Any:
        """The message of a window's addressing commands, made once: the kernel copies a
        message, never keeps it."""
        key = tuple(cmds)
        command = self._command_messages.get(key)
        if command is None:
            command = message(address, bytes((I2C_COMMAND_MODE, *cmds)))
            if len(self._command_messages) >= COMMAND_MESSAGES_KEPT:
                self._command_messages.clear()
            self._command_messages[key] = command
        return command

    def _window_commands(
        self, windows: Sequence[Window], full: bool
    ) -> Iterator[tuple[Window, list[int]]]:
        """Each window with the addressing commands that go before its data (none when
        the panel's pointer is there already; a full frame addresses every window)."""
        state: Any = None
        for index, window in enumerate(windows):
            if full:
                cmds = full_frame_commands(self._addressing, index, window)
            else:
                cmds, state = self._addressing.commands(state, window)
            if len(cmds) > I2C_MAX_COMMAND_BYTES:  # pragma: no cover - never built
                raise AssertionError("command sequence too long for one transfer")
            yield window, cmds

    def _send_combined(
        self, rdwr: _CombinedTransfers, frame: bytes, windows: Sequence[Window], full: bool
    ) -> UpdateReport:
        """The same transfers as ``send`` through luma (each window's commands, then its
        data, each one I2C message from the address byte and control byte on), made as
        ``i2c_rdwr`` messages of one ioctl (up to the kernel's 42 a call) instead of an
        SMBus block write and an ``i2c_rdwr`` per window."""
        address, message, transfer = rdwr
        bus, width = self._bus, self._panel.width
        overhead_each = bus.transfer_overhead
        command_bytes = data_bytes = 0
        messages: list[Any] = []
        for window, cmds in self._window_commands(windows, full):
            if cmds:
                messages.append(self._command_message(message, address, cmds))
                command_bytes += len(cmds)
            if window.pages == 1:
                base = window.page * width
                data = _DATA_PREFIX + frame[base + window.col : base + window.col_end]
            else:
                data = _DATA_PREFIX + window_bytes(frame, width, window)
            if len(data) > I2C_MAX_MESSAGE_BYTES + 1:  # pragma: no cover - 1 KiB frames
                raise AssertionError("data too long for one message")
            messages.append(message(address, data))
            data_bytes += len(data) - 1
        for first in range(0, len(messages), I2C_RDWR_MAX_MESSAGES):
            transfer(*messages[first : first + I2C_RDWR_MAX_MESSAGES])
        return UpdateReport(
            full=full,
            windows=tuple(windows),
            command_bytes=command_bytes,
            data_bytes=data_bytes,
            overhead_bytes=len(messages) * overhead_each,
            transfers=len(messages),
            bits_per_byte=bus.bits_per_byte,
        )


#: (address, smbus2's ``i2c_msg.write``, the bus's ``i2c_rdwr``)
_CombinedTransfers = tuple[int, Callable[[int, bytes], Any], Callable[..., None]]
I2C_COMMAND_MODE = 0x00  # the control byte before commands (luma's i2c._cmd_mode)
_DATA_PREFIX = b"\x40"  # the control byte before display data (luma's i2c._data_mode)
I2C_MAX_MESSAGE_BYTES = 4096  # luma's managed i2c: data in messages of up to 4 KiB
I2C_RDWR_MAX_MESSAGES = 42  # the kernel's I2C_RDWR_IOCTL_MAX_MSGS
COMMAND_MESSAGES_KEPT = 512  # a panel's addressing messages kept (a window's few bytes each)
PROGRAMS_KEPT = 1024  # plans made ready as smbus2 messages, as many as plans are kept


@dataclass(slots=True, eq=False)
class _Program:
    """A kept plan's transfers, ready: smbus2 messages over ``buffer`` (``view``), and
    where a frame's bytes go in it: ``(start, stop, first, last)``, ``view[start:stop]
    = frame[first:last]`` (a window's page each)."""

    plan: KeptPlan
    buffer: bytearray  # what the data messages point into (kept alive with them)
    view: memoryview
    messages: tuple[Any, ...]
    copies: tuple[tuple[int, int, int, int], ...]
    report: UpdateReport
    busy: threading.Lock  # held while an update fills the buffer and makes the transfer


#: (id of a kept plan, I2C address) -> its transfers made ready, shared by the panels of
#: one address (six seats' panels, each on its own bus, change in the same places). A
#: program keeps its plan alive, so the plan's id is not another's while it is kept.
_PROGRAMS: dict[tuple[int, int], _Program] = {}


def _smbus2_write() -> Any:
    """smbus2's ``i2c_msg.write`` (what luma's managed ``i2c`` makes its messages with)."""
    global _SMBUS2_WRITE
    if _SMBUS2_WRITE is None:
        from smbus2 import i2c_msg

        _SMBUS2_WRITE = i2c_msg.write
    return _SMBUS2_WRITE


_SMBUS2_WRITE: Any = None


def _smbus2_message_type() -> Any:
    """smbus2's ``i2c_msg`` (addr, flags, len, buf)."""
    from smbus2 import i2c_msg

    return i2c_msg


def _combined_transfers(interface: object) -> _CombinedTransfers | None:
    """For luma's ``i2c(port=N)`` (smbus2 opened by luma: its data already goes as
    ``i2c_rdwr`` messages), what sends its transfers as messages of one ioctl; else None
    (an SMBus object handed to luma takes block writes of 32 bytes only; SPI)."""
    if not getattr(interface, "_managed", False):
        return None
    message = getattr(interface, "_i2c_msg_write", None)
    transfer = getattr(getattr(interface, "_bus", None), "i2c_rdwr", None)
    address = getattr(interface, "_addr", None)
    if message is None or transfer is None or not isinstance(address, int):
        return None
    if (getattr(interface, "_cmd_mode", None), getattr(interface, "_data_mode", None)) != (
        I2C_COMMAND_MODE,
        _DATA_PREFIX[0],
    ):
        return None
    return address, message, transfer


def forget_plans() -> None:
    """Forget every kept plan and its transfers made ready (as a freshly started
    process: benchmarks that replay frames, tests)."""
    forget_kept_plans()
    _PROGRAMS.clear()


def bus_writer(
    interface: SerialInterface,
    controller: Controller,
    *,
    width: int = 128,
    height: int = 64,
    column_offset: int | None = None,
    bus: BusModel | None = None,
    preprocess: Callable[[Image.Image], Image.Image] | None = None,
    size: tuple[int, int] | None = None,
    rotation: int | None = None,
) -> DisplayWriter:
    """A writer on the Pi's own bus (a :class:`BusPort` on ``interface``)."""
    panel = Panel(controller, width, height, column_offset)
    port = BusPort(interface, panel, bus)
    return DisplayWriter(port, preprocess=preprocess, size=size, rotation=rotation)


@dataclass
class PassthroughWriter:
    """For devices without a known controller (luma's ``dummy``): ``device.display()``."""

    device: Any
    totals: WriterTotals = field(default_factory=WriterTotals)

    def update(self, image: Image.Image) -> UpdateReport:
        mode = getattr(self.device, "mode", image.mode)
        self.device.display(image if image.mode == mode else image.convert(mode))
        report = UpdateReport(full=True, passthrough=True)
        self.totals.add(report)
        return report

    def invalidate(self) -> None:
        pass


# luma.oled before 3.16 has no ``sh1106._page_address_offset``: its sh1106.display()
# always addresses column 2 (``0x02 0x10``), the first visible column of a 128-wide
# panel in the SH1106's 132-column RAM.
LUMA_SH1106_COLUMN = 2


def writer_for_device(device: Any, *, bus: BusModel | None = None) -> FrameWriter:
    """A :class:`DisplayWriter` for luma's ssd1306/ssd1309/sh1106, else a
    :class:`PassthroughWriter`."""
    from luma.oled.device import sh1106, ssd1306, ssd1309

    if isinstance(device, sh1106):
        offset = int(getattr(device, "_page_address_offset", LUMA_SH1106_COLUMN))
        controller = Controller.SH1106
    elif isinstance(device, ssd1309):
        controller, offset = Controller.SSD1309, int(getattr(device, "_colstart", 0))
    elif isinstance(device, ssd1306):
        controller, offset = Controller.SSD1306, int(getattr(device, "_colstart", 0))
    else:
        return PassthroughWriter(device)
    return bus_writer(
        device._serial_interface,
        controller,
        width=int(device._w),
        height=int(device._h),
        column_offset=offset,
        bus=bus,
        preprocess=device.preprocess,
        size=(int(device.size[0]), int(device.size[1])),
        rotation=int(device.rotate),
    )
