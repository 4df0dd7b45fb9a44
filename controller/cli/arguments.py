"""Argument types shared by the subcommands: absurd values refused with one line."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine import HouseRules

__all__ = ["duration", "house_rules", "port", "seconds"]


def seconds(text: str) -> float:
    """A number of seconds from 0 to an hour (``nan`` and ``inf`` refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (math.isfinite(value) and 0 <= value <= 3600):
        raise argparse.ArgumentTypeError(f"seconds from 0 to 3600, not {text}")
    return value


def port(text: str) -> int:
    """A TCP port, 0 to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port from 0 to 65535, not {text}")
    return value


def duration(text: str) -> float:
    """A number of seconds, 0 or more (``nan`` and ``inf`` refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"seconds, 0 or more, not {text}")
    return value


def house_rules(text: str, where: str) -> HouseRules:
    """House rules given as ``clave=valor`` words (``--rules``, a ``rules`` line), with a
    Spanish error naming ``where`` and the values a rule takes."""
    from ..engine import HouseRules
    from ..table.config import _RULES

    known = {"players": ("2", "4", "6"), **_RULES}
    options: dict[str, str] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep or not key or not value:
            raise ValueError(f"{where}: la regla {word!r} va como clave=valor, por ejemplo "
                             "target=15")  # fmt: skip
        choices = known.get(key.lower())
        if choices is None:
            raise ValueError(f"{where}: {key!r} no es una regla de la casa (las que hay: "
                             f"{', '.join(sorted(known))})")  # fmt: skip
        if value.lower() not in choices:
            raise ValueError(f"{where}: {key} tendría que ser {' o '.join(choices)}, y es "
                             f"{value!r}")  # fmt: skip
        options[key] = value
    return HouseRules.from_options(options)


def door_arguments(p: argparse.ArgumentParser) -> None:
    """A venue broker's door options (``venue-broker``, ``league add-venue``)."""
    p.add_argument(
        "--inner-port",
        type=port,
        metavar="PUERTO",
        help="el puerto de Mosquitto en 127.0.0.1 detrás de la puerta: las mesas entran por "
        "--port a la puerta, que cierra en 5 s la conexión que no manda su CONNECT (por "
        "omisión, el de --port más 2)",
    )
    p.add_argument(
        "--no-door",
        action="store_true",
        help="sin puerta: Mosquitto escucha a las mesas en --port (una conexión que no dice "
        "nada le dura ~90 s)",
    )
