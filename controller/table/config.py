"""The table's configuration: one TOML file (default ``/etc/truco-table/table.toml``).

```toml
[table]
players = 4
deal_reading = "seats"                  # seats | dealer | none
state_dir = "/var/lib/truco-table"      # current.truco, archive/, control/
decks = "/var/lib/truco-table/decks.toml"
pinmap = "pinmap.toml"                  # the hardware (hardware/pinmap.toml); relative to this file
next_deal_after_s = 3                   # after a hand ends, start reading the next deal
new_game_after_s = 120                  # after a game is won, start a new one

[rules]                                 # house rules (docs/RULES.md section 10)
target = 30
flor = "off"
falta = "to_win"
mazo_envido_point = "on"
claims = "auto"
implicit_quiero = "off"
```

The pin map's sections (``[topology]``, ``[nodes]``, ``[gpio]``, ``[display]``) may also be
written into the configuration file itself. A bad configuration stops start-up with a
``ConfigError`` naming the key and what was expected.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine import HouseRules
from ..hal.display import DisplayConfig
from .controls import Button
from .table import DealReading

__all__ = ["DEFAULT_CONFIG", "ConfigError", "NodeSeat", "TableConfig", "load_config"]

DEFAULT_CONFIG = Path("/etc/truco-table/table.toml")
_BUTTONS = {b.value for b in Button}


class ConfigError(ValueError):
    """``key``: where in the file; the message says what was expected."""

    def __init__(self, source: str, key: str, expected: str) -> None:
        self.source, self.key, self.expected = source, key, expected
        super().__init__(f"{source}: {key}: {expected}")


@dataclass(frozen=True, slots=True)
class NodeSeat:
    seat: int
    serial: str


@dataclass(frozen=True, slots=True)
class GpioSeat:
    seat: int
    buttons: Mapping[str, int]
    reader_cs: int | None = None


@dataclass(frozen=True, slots=True)
class TableConfig:
    rules: HouseRules
    deal_reading: DealReading = DealReading.SEATS
    state_dir: Path = Path("/var/lib/truco-table")
    decks: Path = Path("/var/lib/truco-table/decks.toml")
    topology: str = "nodes"
    by_id_dir: Path = Path("/dev/serial/by-id")
    heartbeat_timeout_s: float = 3.5
    nodes: tuple[NodeSeat, ...] = ()
    gpio: tuple[GpioSeat, ...] = ()
    debounce_s: float = 0.020
    hold_s: float = 0.800
    reader_spi_bus: int = 0
    reader_reset_pin: int | None = None
    displays: Mapping[int, DisplayConfig] = field(default_factory=dict)
    next_deal_after_s: float = 3.0
    new_game_after_s: float | None = 120.0


class _Reader:
    def __init__(self, source: str, data: Mapping[str, Any]) -> None:
        self.source = source
        self.data = data

    def fail(self, key: str, expected: str) -> ConfigError:
        return ConfigError(self.source, key, expected)

    def table(self, key: str) -> Mapping[str, Any]:
        value = self.data.get(key, {})
        if not isinstance(value, Mapping):
            raise self.fail(key, "expected a table ([" + key + "])")
        return value

    def get(
        self, section: Mapping[str, Any], key: str, kind: type, default: Any, where: str
    ) -> Any:
        if key not in section:
            return default
        value = section[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(f"{where}.{key}", f"expected {kind.__name__}, got {value!r}")
        return value


def _check_keys(r: _Reader, section: Mapping[str, Any], where: str, known: set[str]) -> None:
    for key in section:
        if key not in known:
            raise r.fail(f"{where}.{key}", f"unknown key (known: {', '.join(sorted(known))})")


def load_config(path: str | Path) -> TableConfig:
    """Read and check a configuration file (and the pin map it names)."""
    path = Path(path)
    source = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(source, "(file)", "no such file") from None
    except OSError as e:
        raise ConfigError(source, "(file)", f"cannot read: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(source, "(file)", f"not valid TOML: {e}") from None
    r = _Reader(source, data)
    table = r.table("table")
    _check_keys(
        r,
        table,
        "table",
        {
            "players",
            "deal_reading",
            "state_dir",
            "decks",
            "pinmap",
            "next_deal_after_s",
            "new_game_after_s",
        },
    )
    players = r.get(table, "players", int, 2, "table")
    rules_section = dict(r.table("rules"))
    rules_section["players"] = str(players)
    options = {
        key: ("on" if value else "off") if isinstance(value, bool) else str(value)
        for key, value in rules_section.items()
    }
    try:
        rules = HouseRules.from_options(options)
    except ValueError as e:
        raise r.fail("rules", str(e)) from None
    reading = r.get(table, "deal_reading", str, "seats", "table")
    try:
        deal_reading = DealReading(reading)
    except ValueError:
        raise r.fail("table.deal_reading", "expected seats, dealer or none") from None
    state_dir = Path(r.get(table, "state_dir", str, "/var/lib/truco-table", "table"))
    decks = Path(r.get(table, "decks", str, str(state_dir / "decks.toml"), "table"))
    next_deal = r.get(table, "next_deal_after_s", float, 3.0, "table")
    new_game = r.get(table, "new_game_after_s", float, 120.0, "table")

    hw = dict(data)
    pinmap = r.get(table, "pinmap", str, None, "table")
    if pinmap is not None:
        pin_path = (path.parent / pinmap) if not Path(pinmap).is_absolute() else Path(pinmap)
        try:
            pin_data = tomllib.loads(pin_path.read_text(encoding="utf-8"))
        except OSError as e:
            raise r.fail("table.pinmap", f"cannot read {pin_path}: {e.strerror}") from None
        except tomllib.TOMLDecodeError as e:
            raise r.fail("table.pinmap", f"{pin_path} is not valid TOML: {e}") from None
        hw = {
            **pin_data,
            **{k: v for k, v in data.items() if k in ("topology", "nodes", "gpio", "display")},
        }
    hr = _Reader(source if pinmap is None else f"{source} (pin map {pinmap})", hw)
    return _hardware(hr, rules, deal_reading, state_dir, decks, next_deal, new_game)


def _hardware(
    r: _Reader,
    rules: HouseRules,
    deal_reading: DealReading,
    state_dir: Path,
    decks: Path,
    next_deal: float,
    new_game: float,
) -> TableConfig:
    players = rules.players
    topology = r.get(r.table("topology"), "kind", str, "nodes", "topology")
    if topology not in ("nodes", "gpio"):
        raise r.fail("topology.kind", "expected nodes or gpio")
    nodes_section = r.table("nodes")
    nodes: list[NodeSeat] = []
    gpio: list[GpioSeat] = []
    seats_seen: set[int] = set()

    def seat_of(entry: Mapping[str, Any], where: str) -> int:
        seat = r.get(entry, "seat", int, None, where)
        if seat is None or not 0 <= seat < players:
            raise r.fail(f"{where}.seat", f"expected a seat number 0..{players - 1}")
        return int(seat)

    if topology == "nodes":
        for i, entry in enumerate(nodes_section.get("seat", [])):
            where = f"nodes.seat[{i}]"
            seat = seat_of(entry, where)
            serial = r.get(entry, "serial", str, None, where)
            if not serial:
                raise r.fail(f"{where}.serial", "expected the Pico's USB serial number")
            if seat in seats_seen:
                raise r.fail(f"{where}.seat", f"seat {seat} listed twice")
            seats_seen.add(seat)
            nodes.append(NodeSeat(seat, serial.lower()))
    else:
        if players != 2:
            raise r.fail("topology.kind", "gpio wiring is for two-seat tables; use nodes")
        gpio_section = r.table("gpio")
        for i, entry in enumerate(gpio_section.get("seat", [])):
            where = f"gpio.seat[{i}]"
            seat = seat_of(entry, where)
            buttons = entry.get("buttons", {})
            if not isinstance(buttons, Mapping) or set(buttons) != _BUTTONS:
                raise r.fail(
                    f"{where}.buttons", f"expected a pin for each of {', '.join(sorted(_BUTTONS))}"
                )
            for name, pin in buttons.items():
                if not isinstance(pin, int) or isinstance(pin, bool) or not 0 <= pin <= 27:
                    raise r.fail(f"{where}.buttons.{name}", "expected a BCM GPIO number 0..27")
            if seat in seats_seen:
                raise r.fail(f"{where}.seat", f"seat {seat} listed twice")
            seats_seen.add(seat)
            gpio.append(GpioSeat(seat, dict(buttons), r.get(entry, "reader_cs", int, None, where)))
    missing = sorted(set(range(players)) - seats_seen)
    if missing:
        section = "nodes.seat" if topology == "nodes" else "gpio.seat"
        raise r.fail(section, f"no entry for seat(s) {', '.join(map(str, missing))}")

    displays: dict[int, DisplayConfig] = {}
    display_section = r.table("display")
    bus = r.get(display_section, "i2c_bus", int, 1, "display")
    for i, entry in enumerate(display_section.get("seat", [])):
        where = f"display.seat[{i}]"
        seat = seat_of(entry, where)
        channel = r.get(entry, "mux_channel", int, None, where)
        if channel is not None and not 0 <= channel <= 7:
            raise r.fail(f"{where}.mux_channel", "expected a multiplexer channel 0..7")
        # Where the panel hangs: on the seat node (one cable per seat) unless the pin
        # map gives it a multiplexer channel on the Pi, or the seats are wired to the Pi.
        usual = "pi" if channel is not None or topology == "gpio" else "node"
        connected_to = r.get(entry, "connected_to", str, usual, where)
        if connected_to not in ("node", "pi"):
            raise r.fail(f"{where}.connected_to", "expected node or pi")
        if connected_to == "node" and topology != "nodes":
            raise r.fail(f"{where}.connected_to", "a panel on the node needs topology nodes")
        try:
            displays[seat] = DisplayConfig(
                driver=r.get(entry, "driver", str, "ssd1306", where),
                bus=r.get(entry, "interface", str, "i2c", where),
                port=r.get(entry, "i2c_bus", int, bus, where),
                mux_channel=channel,
                address=r.get(entry, "address", int, 0x3C, where),
                width=r.get(entry, "width", int, 128, where),
                height=r.get(entry, "height", int, 64, where),
                rotate=r.get(entry, "rotate", int, 0, where),
                connected_to=connected_to,
            )
        except ValueError as e:
            raise r.fail(where, str(e)) from None
    gpio_section = r.table("gpio")
    return TableConfig(
        rules=rules,
        deal_reading=deal_reading,
        state_dir=state_dir,
        decks=decks,
        topology=topology,
        by_id_dir=Path(r.get(nodes_section, "by_id_dir", str, "/dev/serial/by-id", "nodes")),
        heartbeat_timeout_s=r.get(nodes_section, "heartbeat_timeout_s", float, 3.5, "nodes"),
        nodes=tuple(sorted(nodes, key=lambda n: n.seat)),
        gpio=tuple(sorted(gpio, key=lambda g: g.seat)),
        debounce_s=r.get(gpio_section, "debounce_ms", int, 20, "gpio") / 1000,
        hold_s=r.get(gpio_section, "hold_ms", int, 800, "gpio") / 1000,
        reader_spi_bus=r.get(gpio_section, "reader_spi_bus", int, 0, "gpio"),
        reader_reset_pin=r.get(gpio_section, "reader_reset_pin", int, None, "gpio"),
        displays=displays,
        next_deal_after_s=next_deal,
        new_game_after_s=new_game,
    )
