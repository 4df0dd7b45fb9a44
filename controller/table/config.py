"""The table's configuration: one TOML file (default ``/etc/truco-table/table.toml``).

```toml
[table]
players = 4
deal_reading = "seats"                  # seats | dealer | none
state_dir = "/var/lib/truco-table"      # current.truco, archive/, damaged/, control/
decks = "/var/lib/truco-table/decks.toml"
pinmap = "pinmap.toml"                  # the hardware (hardware/pinmap.toml); relative to this file
status_file = "/run/truco-table/seats.json"   # each seat's node and panel, for the doctor
next_deal_after_s = 3                   # after a hand ends, start reading the next deal
new_game_after_s = 120                  # after a game is won, start a new one
loop_cpu = "last"                       # the CPU the loop keeps to: last | none | a number
archive_max_games = 1000                # the archive keeps the newest games within both
archive_max_mb = 64
archive_reserve_percent = 10            # and keeps the smaller of these free on the card
archive_reserve_mb = 64

[rules]                                 # house rules (docs/RULES.md section 10)
target = 30
flor = "off"
falta = "to_win"
mazo_envido_point = "on"
claims = "auto"
implicit_quiero = "off"
```

The pin map's sections (``[topology]``, ``[nodes]``, ``[gpio]``, ``[display]``) may also be
written into the configuration file itself; ``[tournament]`` is read by
``controller.tournament.table.link``; ``[broadcast]`` (the table's own broadcast and TV
pages, a bar night) is described in ``controller.table.broadcast``.

Everything is checked before the table starts, and a mistake stops start-up with one
``ConfigError`` line naming the file, the key and what was expected: a file that is not
UTF-8 or not TOML, a NUL byte, an unknown section or key, a value of the wrong type, a
number that is not finite or out of its range (the ranges below), a seat given twice or
missing, a serial number that is not hexadecimal, a GPIO pin used twice. The messages are
in Spanish: the doctor shows them to the bar owner as they are.

A pin map may list more seats than ``players`` (the shipped one lists six): seats from
``players`` on are checked but not used, so a two- or four-seat table deletes nothing; the
section of the topology not in use (``[gpio]`` on a table of nodes) is checked, not used.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..engine import HouseRules
from ..engine.rules import Claims, Falta
from ..hal.display import DisplayConfig
from ..hal.panels import PANEL_KINDS
from ..hal.wiring import GpioSeat, NodeSeat
from ..render.broadcast import DelayError, check_delay
from .broadcast import MIN_KEY, BroadcastSettings
from .controls import Button
from .cpu import LAST, LOOP_CPU_CHOICES, LoopCpu
from .store import ArchivePolicy
from .table import DealReading

__all__ = ["DEFAULT_CONFIG", "ConfigError", "TableConfig", "load_config"]

DEFAULT_CONFIG = Path("/etc/truco-table/table.toml")
_BUTTONS = {b.value for b in Button}
_SERIAL_RE = re.compile(r"[0-9a-fA-F]{8,32}")
_SECTIONS = {
    "table",
    "rules",
    "topology",
    "nodes",
    "gpio",
    "display",
    "tournament",
    "broadcast",
}
_HARDWARE = ("topology", "nodes", "gpio", "display")
MAX_SEATS = 6
MAX_CPU = 1023  # the kernel's CPU numbers (a Pi has 0 to 3)
MAX_BYTES = 1 << 20  # a configuration file is a few kilobytes
_ON_OFF = ("on", "off")
#: the house rules [rules] takes, and the values of each (``players`` is [table]'s)
_RULES: dict[str, tuple[str, ...]] = {
    "target": ("15", "30"),
    "flor": _ON_OFF,
    "falta": tuple(f.value for f in Falta),
    "mazo_envido_point": _ON_OFF,
    "claims": tuple(c.value for c in Claims),
    "implicit_quiero": _ON_OFF,
    "pica_pica": _ON_OFF,
}


class ConfigError(ValueError):
    """``source``: the file that is wrong; ``line``: its line (None: the whole file, or a
    key that is missing); ``key``: where in the file; ``expected``: what was expected;
    ``fix``: what to do, in the owner's words. The message says all of it in one line:
    ``/etc/truco-table/table.toml, línea 3: table.players: tendría que ser 2, 4 o 6, y
    es 5. Corregí esa línea y volvé a arrancar la mesa.``"""

    def __init__(
        self, source: str, key: str, expected: str, line: int | None = None, fix: str | None = None
    ) -> None:
        self.source, self.key, self.expected, self.line = source, key, expected, line
        self.fix = fix if fix is not None else _fix(line)
        super().__init__(f"{self.where}: {key}: {expected}. {self.fix}")

    @property
    def where(self) -> str:
        """The file, and its line when there is one: ``table.toml, línea 3``."""
        return self.source if self.line is None else f"{self.source}, línea {self.line}"


def _fix(line: int | None) -> str:
    if line is None:
        return "Corregí el archivo y volvé a arrancar la mesa"
    return "Corregí esa línea y volvé a arrancar la mesa"


@dataclass(frozen=True, slots=True)
class TableConfig:
    rules: HouseRules
    deal_reading: DealReading = DealReading.SEATS
    state_dir: Path = Path("/var/lib/truco-table")
    decks: Path = Path("/var/lib/truco-table/decks.toml")
    # each seat's node and panel as the running service sees them (for the doctor); a
    # configuration file gives /run/truco-table/seats.json unless it names another, a
    # table built in code (the mock table) writes none
    status_file: Path | None = None
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
    #: the CPU the service's loop keeps to (``controller.table.cpu``)
    loop_cpu: LoopCpu = LAST
    archive: ArchivePolicy = field(default_factory=ArchivePolicy)
    tournament: bool = False  # the file has a [tournament] section (the tournament's link)
    #: the [broadcast] section: the table's own broadcast and TV pages (a bar night)
    broadcast: BroadcastSettings | None = None
    #: the configuration file, the pin map it names and the line that names it (what the
    #: doctor and the journal point the owner at when the pin map is the wrong one)
    source: Path | None = None
    pinmap: Path | None = None
    pinmap_line: int | None = None


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_HEADER = re.compile(r"\s*(\[\[?)\s*([A-Za-z0-9_.\s\"']+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r"\s*([A-Za-z0-9_\"'-]+)\s*=")


def key_line(text: str, key: str) -> int | None:
    """The line (1-based) of ``text`` where the dotted ``key`` is written, as the
    checks name keys: ``table.players``, ``nodes.seat[2].serial``, ``gpio.seat[0].buttons.
    truco``; a section (``table``, ``nodes.seat[1]``) is its header's line. None when
    the file does not write it (a key missing, or one the checks name as a whole)."""
    parts: list[tuple[str, int | None]] = []
    for part in key.split("."):
        name, _, index = part.partition("[")
        parts.append((name, int(index.rstrip("]")) if index else None))
    names = [name for name, _ in parts]
    section: list[str] = []  # the current header's dotted name
    counts: dict[str, int] = {}  # [[array]] headers seen, by name
    current_index: dict[str, int] = {}
    best: int | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        header = _HEADER.match(raw)
        if header is not None:
            section = [w.strip().strip("\"'") for w in header.group(2).split(".")]
            joined = ".".join(section)
            if header.group(1) == "[[":
                counts[joined] = counts.get(joined, -1) + 1
                current_index[joined] = counts[joined]
            if _matches(section, parts, current_index) and len(section) == len(parts):
                best = number if best is None else best
                if all(i is None for _, i in parts) or parts[-1][1] is not None:
                    return number
            continue
        assign = _ASSIGN.match(raw)
        if assign is None:
            continue
        full = [*section, assign.group(1).strip("\"'")]
        if len(full) == len(names) and _matches(full, parts, current_index):
            return number
    return best


def _matches(names: list[str], parts: list[tuple[str, int | None]], index: dict[str, int]) -> bool:
    if len(names) > len(parts):
        return False
    for depth, name in enumerate(names):
        wanted, at = parts[depth]
        if name != wanted:
            return False
        if at is not None and index.get(".".join(names[: depth + 1])) != at:
            return False
    return True


class _Reader:
    """Typed, range-checked reads from one file's data; every failure a ConfigError
    naming the file and line it is in (``files``: where to look, the first that writes
    the key wins; the pin map's sections may be written in the configuration file)."""

    def __init__(
        self, source: str, data: Mapping[str, Any], files: tuple[tuple[str, str], ...] = ()
    ) -> None:
        self.source = source
        self.data = data
        self.files = files

    def fail(self, key: str, expected: str) -> ConfigError:
        for source, text in self.files:
            line = key_line(text, key)
            if line is not None:
                return ConfigError(source, key, expected, line)
        return ConfigError(self.source, key, expected)

    def section(self, parent: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
        value = parent.get(key, {})
        if not isinstance(value, Mapping):
            raise self.fail(where, f"tendría que ser una tabla ([{where}]), y es {_show(value)}")
        return value

    def entries(self, parent: Mapping[str, Any], key: str, where: str) -> list[Mapping[str, Any]]:
        value = parent.get(key, [])
        if not isinstance(value, list) or not all(isinstance(e, Mapping) for e in value):
            raise self.fail(where, f"tendrían que ser tablas [[{where}]], y es {_show(value)}")
        return value

    def keys(self, section: Mapping[str, Any], where: str, known: set[str]) -> None:
        for key in section:
            if key not in known:
                raise self.fail(
                    f"{where}.{key}", f"clave desconocida (las que hay: {', '.join(sorted(known))})"
                )

    def integer(
        self, section: Mapping[str, Any], key: str, where: str, default: Any, lo: int, hi: int
    ) -> Any:
        if key not in section:
            return default
        value = section[key]
        if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            raise self.fail(
                f"{where}.{key}",
                f"tendría que ser un número entero de {lo} a {hi}, y es {_show(value)}",
            )
        return value

    def number(
        self,
        section: Mapping[str, Any],
        key: str,
        where: str,
        default: float,
        lo: float,
        hi: float,
        unit: str = "segundos",
    ) -> float:
        if key not in section:
            return default
        value = section[key]
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or not lo <= value <= hi:
            raise self.fail(
                f"{where}.{key}", f"tendrían que ser {unit} de {lo:g} a {hi:g}, y es {_show(value)}"
            )
        return float(value)

    def text(
        self,
        section: Mapping[str, Any],
        key: str,
        where: str,
        default: Any,
        choices: tuple[str, ...] | None = None,
    ) -> Any:
        if key not in section:
            return default
        value = section[key]
        if choices is not None:
            if value not in choices:
                raise self.fail(
                    f"{where}.{key}", f"tendría que ser {' o '.join(choices)}, y es {_show(value)}"
                )
            return value
        if not isinstance(value, str) or not value or not value.isprintable():
            raise self.fail(
                f"{where}.{key}", f"tendría que ser un texto no vacío, y es {_show(value)}"
            )
        return value

    def flag(self, section: Mapping[str, Any], key: str, where: str) -> None:
        if key in section and not isinstance(section[key], bool):
            raise self.fail(
                f"{where}.{key}", f"tendría que ser true o false, y es {_show(section[key])}"
            )


def _read_toml(
    path: Path, source: str, key: str = "(file)", line: int | None = None
) -> tuple[dict[str, Any], str]:
    """The file's data and text. A file that is not there, or cannot be read, is the
    fault of ``source`` (its ``key``, on ``line``: the pin map's name in table.toml); one
    that is there but is no configuration (not UTF-8, a NUL byte, not TOML) is its own,
    named with the line where it goes wrong."""

    def fail(expected: str, fix: str | None = None) -> ConfigError:
        return ConfigError(source, key, expected, line, fix)

    def broken(expected: str, at: int | None = None, fix: str | None = None) -> ConfigError:
        return ConfigError(str(path), "(archivo)", expected, at, fix)

    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        if key == "(file)":
            raise fail(
                "no existe el archivo",
                "Revisá el camino (--config), o copialo de nuevo con la instalación",
            ) from None
        raise fail(
            f"no existe el archivo {path}",
            f"Poné en esa línea el nombre de un mapa de pines que esté al lado de {source} "
            '(la mesa de la guía: pinmap = "pinmap.toml")',
        ) from None
    except OSError as e:
        raise fail(f"no puedo leer {path}: {e.strerror or e}", "Revisá sus permisos") from None
    if len(data) > MAX_BYTES:
        raise broken(f"tiene más de {MAX_BYTES} bytes: no es una configuración")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        at = data[: e.start].count(b"\n") + 1
        raise broken(
            f"no es texto UTF-8 (byte {e.start})",
            at,
            "Guardalo como UTF-8 (nano lo hace) y volvé a arrancar la mesa",
        ) from None
    if "\x00" in text:
        at = text[: text.index(chr(0))].count("\n") + 1
        raise broken(f"tiene un byte NUL (en el carácter {text.index(chr(0))})", at)
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as e:
        reason, line_at, column = _toml_position(e)
        raise broken(f"no es TOML válido: {_toml_words(reason, column)}", line_at) from None
    except RecursionError:
        raise broken("anida demasiado") from None


_TOML_AT = re.compile(r"(.*) \(at (?:line (\d+), column (\d+)|end of document)\)$", re.S)


def _toml_position(error: tomllib.TOMLDecodeError) -> tuple[str, int | None, int | None]:
    """tomllib's reason, line and column (Python 3.11 says them in its message only)."""
    found = _TOML_AT.match(str(error))
    if found is None:
        return str(error), None, None
    line, column = found.group(2), found.group(3)
    return found.group(1), int(line) if line else None, int(column) if column else None


def _toml_words(reason: str, column: int | None) -> str:
    """tomllib's reason (English), said in Spanish where we know it, with its column."""
    words = {
        "Expected ']' at the end of a table declaration": "falta el ] al final del encabezado",
        "Expected ']]' at the end of an array declaration": "falta el ]] al final del encabezado",
        "Expected '=' after a key in a key/value pair": "falta el = después de la clave",
        "Invalid value": "el valor no es válido (¿un texto sin comillas?)",
        "Invalid statement": "esa línea no es ni [sección] ni clave = valor",
        "Cannot declare": "esa sección está dos veces",
        "Cannot overwrite a value": "esa clave está dos veces",
        "Unterminated string": "falta cerrar las comillas",
        "Illegal character": "hay un carácter que no va",
        "Expected newline or end of document after a statement": (
            "sobra algo después del valor (¿falta un #?)"
        ),
    }
    said = next((es for en, es in words.items() if reason.startswith(en)), None)
    if said is None:
        said = f"tomllib dice «{reason}»"
    return said if column is None else f"{said} (columna {column})"


def load_config(path: str | Path) -> TableConfig:
    """Read and check a configuration file (and the pin map it names)."""
    path = Path(path)
    source = str(path)
    data, text = _read_toml(path, source)
    r = _Reader(source, data, ((source, text),))
    r.keys(data, "(top level)", _SECTIONS)
    table = r.section(data, "table", "table")
    r.keys(
        table,
        "table",
        {
            "players",
            "deal_reading",
            "state_dir",
            "decks",
            "pinmap",
            "status_file",
            "next_deal_after_s",
            "new_game_after_s",
            "loop_cpu",
            "archive_max_games",
            "archive_max_mb",
            "archive_reserve_percent",
            "archive_reserve_mb",
        },
    )
    players = r.integer(table, "players", "table", 2, 2, 6)
    if players not in (2, 4, 6):
        raise r.fail("table.players", f"tendría que ser 2, 4 o 6, y es {players}")
    rules_section = r.section(data, "rules", "rules")
    if "players" in rules_section:
        raise r.fail("rules.players", "la cantidad de jugadores va en [table] players")
    options: dict[str, str] = {"players": str(players)}
    for key, value in rules_section.items():
        if isinstance(value, bool):
            options[key] = "on" if value else "off"
        elif isinstance(value, str | int) and not isinstance(value, bool):
            options[key] = str(value)
        else:
            raise r.fail(
                f"rules.{key}",
                f"tendría que ser una palabra, un número o true/false, y es {_show(value)}",
            )
        choices = _RULES.get(key)
        if choices is None:
            raise r.fail(
                f"rules.{key}",
                f"regla de la casa desconocida (las que hay: {', '.join(sorted(_RULES))})",
            )
        if options[key].lower() not in choices:
            raise r.fail(
                f"rules.{key}", f"tendría que ser {' o '.join(choices)}, y es {_show(value)}"
            )
    try:
        rules = HouseRules.from_options(options)
    except ValueError as e:  # pragma: no cover - every value was checked above
        raise r.fail("rules", f"una regla de la casa no va: {e}") from None
    reading = r.text(table, "deal_reading", "table", "seats", ("seats", "dealer", "none"))
    deal_reading = DealReading(reading)
    state_dir = Path(r.text(table, "state_dir", "table", "/var/lib/truco-table"))
    decks = Path(r.text(table, "decks", "table", str(state_dir / "decks.toml")))
    next_deal = r.number(table, "next_deal_after_s", "table", 3.0, 0.0, 600.0)
    new_game = r.number(table, "new_game_after_s", "table", 120.0, 0.0, 86_400.0)
    archive = ArchivePolicy(
        max_games=r.integer(table, "archive_max_games", "table", 1000, 1, 1_000_000),
        max_bytes=int(
            r.number(table, "archive_max_mb", "table", 64.0, 1.0, 100_000.0, "megabytes") * 2**20
        ),
        reserve_fraction=r.number(
            table, "archive_reserve_percent", "table", 10.0, 0.0, 50.0, "percent"
        )
        / 100,
        reserve_bytes=int(
            r.number(table, "archive_reserve_mb", "table", 64.0, 0.0, 100_000.0, "megabytes")
            * 2**20
        ),
    )

    hw: Mapping[str, Any] = data
    pinmap = r.text(table, "pinmap", "table", None)
    hr = r
    if pinmap is not None:
        pin_path = (path.parent / pinmap) if not Path(pinmap).is_absolute() else Path(pinmap)
        pin_line = key_line(text, "table.pinmap")
        pin_data, pin_text = _read_toml(pin_path, source, "table.pinmap", pin_line)
        pin_source = str(pin_path)
        _Reader(pin_source, pin_data, ((pin_source, pin_text),)).keys(
            pin_data, "(top level)", set(_HARDWARE)
        )
        hw = {**pin_data, **{k: v for k, v in data.items() if k in _HARDWARE}}
        # a section written in table.toml replaces the pin map's: its lines are there
        hr = _Reader(pin_source, hw, ((source, text), (pin_source, pin_text)))
        if not any(k in data for k in _HARDWARE):
            hr = _Reader(pin_source, hw, ((pin_source, pin_text),))
    config = _hardware(hr, rules, deal_reading, state_dir, decks, next_deal, new_game)
    status_file = Path(r.text(table, "status_file", "table", "/run/truco-table/seats.json"))
    loop_cpu = _loop_cpu(r, table)
    broadcast = _broadcast(r, data, path) if "broadcast" in data else None
    if broadcast is not None and "tournament" in data:
        # a tournament's tables open no listening socket: the desk serves its broadcast
        raise r.fail(
            "broadcast",
            "en un torneo la transmisión la sirve la mesa de control, no la mesa: "
            "sacá la sección [broadcast]",
        )
    return replace(
        config,
        broadcast=broadcast,
        archive=archive,
        tournament="tournament" in data,
        status_file=status_file,
        loop_cpu=loop_cpu,
        source=path,
        pinmap=pin_path if pinmap is not None else None,
        pinmap_line=key_line(text, "table.pinmap") if pinmap is not None else None,
    )


def _loop_cpu(r: _Reader, table: Mapping[str, Any]) -> LoopCpu:
    """``[table] loop_cpu``: "last", "none" or a CPU's number (``controller.table.cpu``)."""
    value = table.get("loop_cpu", LAST)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_CPU:
        return value
    if isinstance(value, str) and value in LOOP_CPU_CHOICES:
        return LAST if value == LAST else "none"
    raise r.fail(
        "table.loop_cpu",
        f'tendría que ser "last" (la última CPU), "none" (la que quiera el sistema) o el '
        f"número de una CPU, de 0 a {MAX_CPU}, y es {_show(value)}",
    )


def _broadcast(r: _Reader, data: Mapping[str, Any], path: Path) -> BroadcastSettings:
    """The ``[broadcast]`` section (``controller.table.broadcast``)."""
    section = r.section(data, "broadcast", "broadcast")
    r.keys(
        section,
        "broadcast",
        {"port", "key", "key_file", "delay_s", "teaching", "table_name", "team_names"},
    )
    r.flag(section, "teaching", "broadcast")
    teaching = bool(section.get("teaching", False))
    delay = r.number(section, "delay_s", "broadcast", 120.0, 0.0, 3600.0)
    try:
        check_delay(delay, teaching=teaching)
    except DelayError as e:
        raise r.fail("broadcast.delay_s", str(e)) from None
    if ("key" in section) == ("key_file" in section):
        raise r.fail("broadcast.key_file", "hace falta la clave: key_file (o key), una sola")
    if "key" in section:
        key = r.text(section, "key", "broadcast", None)
    else:
        name = r.text(section, "key_file", "broadcast", None)
        key_path = path.parent / name if not Path(name).is_absolute() else Path(name)
        try:
            key = key_path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as e:
            raise r.fail("broadcast.key_file", f"no se puede leer {key_path}: {e}") from None
    if len(key) < MIN_KEY:
        raise r.fail("broadcast.key", f"la clave tiene que tener {MIN_KEY} caracteres o más")
    names = section.get("team_names", ["Nosotros", "Ellos"])
    if (
        not isinstance(names, list)
        or len(names) != 2
        or not all(isinstance(n, str) and n.strip() and n.isprintable() for n in names)
    ):
        raise r.fail(
            "broadcast.team_names",
            f"tendrían que ser dos nombres entre corchetes, y es {_show(names)}",
        )
    return BroadcastSettings(
        key=key,
        delay_s=delay,
        teaching=teaching,
        port=r.integer(section, "port", "broadcast", 8081, 1, 65535),
        table_name=r.text(section, "table_name", "broadcast", "Mesa"),
        team_names=(names[0].strip(), names[1].strip()),
    )


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
    data = r.data
    topology_section = r.section(data, "topology", "topology")
    r.keys(topology_section, "topology", {"kind"})
    topology = r.text(topology_section, "kind", "topology", "nodes", ("nodes", "gpio"))
    nodes_section = r.section(data, "nodes", "nodes")
    r.keys(nodes_section, "nodes", {"by_id_dir", "baudrate", "heartbeat_timeout_s", "seat"})
    gpio_section = r.section(data, "gpio", "gpio")
    r.keys(
        gpio_section,
        "gpio",
        {"pull_up", "debounce_ms", "hold_ms", "reader_spi_bus", "reader_reset_pin", "seat"},
    )
    display_section = r.section(data, "display", "display")
    r.keys(display_section, "display", {"i2c_bus", "mux_address", "seat"})

    # A pin map may list more seats than [table] players: the seats from `players` on
    # are not used (the shipped pin map lists six; a four- or two-seat table ignores the
    # rest), and the section of the topology not in use is only checked, never used.
    def seat_of(entry: Mapping[str, Any], where: str) -> int:
        if "seat" not in entry:
            raise r.fail(f"{where}.seat", f"falta el número de asiento (0 a {MAX_SEATS - 1})")
        seat: int = r.integer(entry, "seat", where, None, 0, MAX_SEATS - 1)
        return seat

    # [nodes]: checked whichever topology is used (it is in the file)
    nodes: list[NodeSeat] = []
    seen: dict[int, str] = {}
    for i, entry in enumerate(r.entries(nodes_section, "seat", "nodes.seat")):
        where = f"nodes.seat[{i}]"
        r.keys(entry, where, {"seat", "serial"})
        seat = seat_of(entry, where)
        serial = r.text(entry, "serial", where, None)
        if serial is None or not _SERIAL_RE.fullmatch(serial):
            raise r.fail(
                f"{where}.serial",
                f"tendría que ser el número de serie USB del Pico (hexadecimal), "
                f"y es {_show(serial)}",
            )
        if seat in seen:
            raise r.fail(f"{where}.seat", f"el asiento {seat} está dos veces")
        seen[seat] = where
        if seat < players:
            nodes.append(NodeSeat(seat, serial.lower()))
    r.integer(nodes_section, "baudrate", "nodes", 115200, 1200, 4_000_000)
    heartbeat = r.number(nodes_section, "heartbeat_timeout_s", "nodes", 3.5, 1.0, 60.0)
    by_id = Path(r.text(nodes_section, "by_id_dir", "nodes", "/dev/serial/by-id"))

    gpio: list[GpioSeat] = []
    gpio_seen: set[int] = set()
    r.flag(gpio_section, "pull_up", "gpio")
    for i, entry in enumerate(r.entries(gpio_section, "seat", "gpio.seat")):
        where = f"gpio.seat[{i}]"
        r.keys(entry, where, {"seat", "buttons", "reader_cs", "led"})
        seat = seat_of(entry, where)
        buttons = r.section(entry, "buttons", f"{where}.buttons")
        if set(buttons) != _BUTTONS:
            raise r.fail(
                f"{where}.buttons", f"falta un pin para alguno de {', '.join(sorted(_BUTTONS))}"
            )
        pins: dict[str, int] = {}
        for name in sorted(buttons):
            pins[name] = r.integer(buttons, name, f"{where}.buttons", None, 0, 27)
        if len(set(pins.values())) != len(pins):
            raise r.fail(f"{where}.buttons", "cada botón necesita su propio pin GPIO")
        if seat in gpio_seen:
            raise r.fail(f"{where}.seat", f"el asiento {seat} está dos veces")
        gpio_seen.add(seat)
        if seat >= players:
            continue
        gpio.append(
            GpioSeat(
                seat,
                pins,
                r.integer(entry, "reader_cs", where, None, 0, 1),
                r.integer(entry, "led", where, None, 0, 27),
            )
        )
    debounce_ms = r.integer(gpio_section, "debounce_ms", "gpio", 20, 1, 500)
    hold_ms = r.integer(gpio_section, "hold_ms", "gpio", 800, 100, 5000)
    spi_bus = r.integer(gpio_section, "reader_spi_bus", "gpio", 0, 0, 6)
    reset_pin = r.integer(gpio_section, "reader_reset_pin", "gpio", None, 0, 27)

    if topology == "gpio" and players != 2:
        raise r.fail("topology.kind", "gpio es para mesas de dos asientos; con más, usá nodes")
    used = set(seen) if topology == "nodes" else gpio_seen
    missing = sorted(set(range(players)) - used)
    if missing:
        section = "nodes.seat" if topology == "nodes" else "gpio.seat"
        raise r.fail(section, f"falta la entrada del asiento {', '.join(map(str, missing))}")

    displays: dict[int, DisplayConfig] = {}
    display_seen: set[int] = set()
    bus = r.integer(display_section, "i2c_bus", "display", 1, 0, 31)
    r.integer(display_section, "mux_address", "display", 0x70, 0x70, 0x77)
    for i, entry in enumerate(r.entries(display_section, "seat", "display.seat")):
        where = f"display.seat[{i}]"
        r.keys(
            entry,
            where,
            {
                "seat",
                "connected_to",
                "mux_channel",
                "driver",
                "interface",
                "i2c_bus",
                "address",
                "width",
                "height",
                "rotate",
            },
        )
        seat = seat_of(entry, where)
        if seat in display_seen:
            raise r.fail(f"{where}.seat", f"el asiento {seat} tiene dos pantallas")
        display_seen.add(seat)
        rotate = r.integer(entry, "rotate", where, 0, 0, 3)
        channel = r.integer(entry, "mux_channel", where, None, 0, 7)
        # Where the panel hangs: on the seat node (one cable per seat) unless the pin
        # map gives it a multiplexer channel on the Pi, or the seats are wired to the Pi.
        usual = "pi" if channel is not None or topology == "gpio" else "node"
        connected_to = r.text(entry, "connected_to", where, usual, ("node", "pi"))
        if connected_to == "node" and topology != "nodes":
            raise r.fail(
                f"{where}.connected_to",
                "una pantalla en el nodo necesita topology kind = nodes (en una mesa gpio "
                'va en la Pi: connected_to = "pi" y su mux_channel)',
            )
        display = DisplayConfig(
            driver=r.text(entry, "driver", where, "ssd1306", PANEL_KINDS),
            bus=r.text(entry, "interface", where, "i2c", ("i2c", "spi")),
            port=r.integer(entry, "i2c_bus", where, bus, 0, 31),
            mux_channel=channel,
            address=r.integer(entry, "address", where, 0x3C, 0x03, 0x77),
            width=r.integer(entry, "width", where, 128, 128, 128),
            height=r.integer(entry, "height", where, 64, 64, 64),
            rotate=rotate,
            connected_to=connected_to,
        )
        if seat < players:
            displays[seat] = display
    return TableConfig(
        rules=rules,
        deal_reading=deal_reading,
        state_dir=state_dir,
        decks=decks,
        topology=topology,
        by_id_dir=by_id,
        heartbeat_timeout_s=heartbeat,
        nodes=tuple(sorted(nodes, key=lambda n: n.seat)),
        gpio=tuple(sorted(gpio, key=lambda g: g.seat)),
        debounce_s=debounce_ms / 1000,
        hold_s=hold_ms / 1000,
        reader_spi_bus=spi_bus,
        reader_reset_pin=reset_pin,
        displays=displays,
        next_deal_after_s=next_deal,
        new_game_after_s=new_game,
    )
