"""Argument types shared by the subcommands: absurd values refused with one line."""

from __future__ import annotations

import argparse
import math

__all__ = ["duration", "port", "seconds"]


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
