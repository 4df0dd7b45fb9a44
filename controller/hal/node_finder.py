"""Finding the seat nodes plugged in, by USB serial number.

:func:`find_nodes` lists the nodes plugged in now, from the stable names udev makes under
``/dev/serial/by-id``; :func:`port_for_serial` is a seat link's resolver for one node,
wherever it is plugged in (``controller.hal.seatlink.SeatLink.for_serial``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Final

__all__ = ["DEFAULT_BY_ID_DIR", "find_nodes", "port_for_serial"]


DEFAULT_BY_ID_DIR: Final = Path("/dev/serial/by-id")

_BY_ID_NAME: Final = re.compile(r"usb-(?P<product>.+)_(?P<serial>[0-9A-Za-z]+)-if00")


def find_nodes(
    by_id_dir: Path = DEFAULT_BY_ID_DIR, product_prefix: str = "MicroPython"
) -> dict[str, str]:
    """Seat nodes plugged in now: {USB serial number (lower case): stable port path}.

    Looks at the names udev makes under ``/dev/serial/by-id``, for example
    ``usb-MicroPython_Board_in_FS_mode_e6614103e7ab1234-if00``.  A missing
    directory (nothing plugged in) gives an empty dict.
    """
    nodes: dict[str, str] = {}
    try:
        entries = sorted(by_id_dir.iterdir())
    except OSError:
        return nodes
    for entry in entries:
        match = _BY_ID_NAME.fullmatch(entry.name)
        if match is None or not match.group("product").startswith(product_prefix):
            continue
        nodes[match.group("serial").lower()] = str(entry)
    return nodes


def port_for_serial(
    serial_number: str, by_id_dir: Path = DEFAULT_BY_ID_DIR
) -> Callable[[], str | None]:
    """A resolver for SeatLink: the node's current port path, or None while unplugged."""
    wanted = serial_number.lower()

    def resolve() -> str | None:
        return find_nodes(by_id_dir, product_prefix="").get(wanted)

    return resolve
