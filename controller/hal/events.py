"""The events the hardware layer hands the table: from a seat's pad, reader and node.

Every source produces the same values, whatever it is wired to: a seat node over USB
(``controller.hal.seatlink``), the Pi's own GPIO pads (``controller.hal.gpio_pad``) and
SPI card readers (``controller.hal.spi_reader``), or their mock counterparts
(``controller.hal.mock``). The table (``controller.table.table``) takes them in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = [
    "PROTOCOL_VERSION",
    "PROTOCOL_VERSIONS",
    "ButtonHeld",
    "ButtonPressed",
    "ButtonStuck",
    "DisplayAck",
    "DisplayEvent",
    "DisplayLost",
    "Heartbeat",
    "Hello",
    "LinkEvent",
    "NodeConnected",
    "NodeDisconnected",
    "NodeEvent",
    "PanelReport",
    "TagArrived",
    "TagConflict",
    "TagLeft",
]

PROTOCOL_VERSION: Final = 5  # firmware/PROTOCOL.md: the newest the Pi speaks
PROTOCOL_VERSIONS: Final = (2, 3, 4, 5)  # the versions the Pi speaks with a node (newest last)


@dataclass(frozen=True)
class TagArrived:
    """A card's tag was put on the seat's reader."""

    uid: bytes


@dataclass(frozen=True)
class TagLeft:
    """The card was taken off the reader (after the node's grace period)."""

    uid: bytes


@dataclass(frozen=True)
class TagConflict:
    """Several tags were in the reader's field at once: nothing is read (TAGMANY)."""


@dataclass(frozen=True)
class ButtonPressed:
    """A short press of one of the eight pad buttons (reported on release)."""

    name: str


@dataclass(frozen=True)
class ButtonHeld:
    """A button kept down for the long-press time (reported once, while held)."""

    name: str


@dataclass(frozen=True)
class ButtonStuck:
    """A button has been down for the node's stuck time (``STUCK``: a line shorted to
    ground, a jammed key; ``stuck`` True), or was let go after that (``FREED``: False).
    Nothing is played: the table tells the seat and the owner (firmware/PROTOCOL.md)."""

    name: str
    stuck: bool = True


@dataclass(frozen=True)
class Hello:
    """The node introduced itself: protocol and firmware version, stored seat, serial.

    ``reader_version`` is the MFRC522's VersionReg as the node last read it (0x91 or
    0x92 for NXP chips, other values for clones; 0x00 or 0xFF: no chip answered).
    ``session`` is the Pi's session number the node answered, None at power-up.
    """

    seat: int | None
    firmware: str
    serial: str
    protocol: int = PROTOCOL_VERSION
    reader_version: int = 0x92
    session: int | None = None


@dataclass(frozen=True)
class Heartbeat:
    """The node's periodic sign of life (answered by the link automatically).

    ``written`` (protocol 4): the last display update the node wrote whole into its
    panel, None when it says none (``-``) or its protocol does not say."""

    uptime_s: int = 0
    rx_errors: int = 0
    reader_ok: bool = True
    written: int | None = None


@dataclass(frozen=True)
class NodeConnected:
    """The seat's node is talking (after start-up or after being plugged back in)."""

    port: str


@dataclass(frozen=True)
class NodeDisconnected:
    """The seat's node went away.

    ``reason``: "unplugged" (the port vanished or failed), "silent" (no valid
    frame for ``heartbeat_timeout``) or "closed" (``SeatLink.close()``).
    """

    port: str
    reason: str


@dataclass(frozen=True)
class PanelReport:
    """The node's panel (display frames, PROTOCOL.md): its controller ("ssd1306",
    "sh1106" or "ssd1309"), I2C address and whether it answers.  Sent after every
    HELLO and whenever the panel goes or comes back (then freshly initialised, its
    RAM blank)."""

    kind: str
    address: int
    ok: bool


@dataclass(frozen=True)
class DisplayAck:
    """Display update ``update`` is in the node's panel RAM."""

    update: int


@dataclass(frozen=True)
class DisplayLost:
    """The node lost a piece of display update ``update``: it waits for a full frame."""

    update: int


DisplayEvent = PanelReport | DisplayAck | DisplayLost
NodeEvent = (
    TagArrived
    | TagLeft
    | TagConflict
    | ButtonPressed
    | ButtonHeld
    | ButtonStuck
    | Hello
    | Heartbeat
    | DisplayEvent
)
LinkEvent = NodeEvent | NodeConnected | NodeDisconnected
