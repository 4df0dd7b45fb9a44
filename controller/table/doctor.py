"""``truco-table doctor``: the table checks itself and says what is wrong, in plain words.

``examine(config_path, place)`` reads the configuration and looks at everything the
service needs, as the service would find it: every seat's node (by USB serial number
under ``/dev/serial/by-id``) or GPIO pad and SPI reader, every display's I2C bus (the
multiplexer channel's bus, found by name as ``OledDisplay`` does) and whether a panel
answers at its address, the deck registry and the state directory. Each check is one
``Finding``; its words are for the bar owner (Rioplatense Spanish, vos).

Where the checks look is a ``Place``: the Pi's own ``/dev`` and ``/sys`` and a real
I2C probe (an SMBus quick write, as ``i2cdetect`` does), or a simulated table
(``mock_place``: seat nodes on ptys with their by-id names, the multiplexer's buses in
a ``/sys`` tree, panels answering on a simulated bus) for ``--mock`` and the tests.
Nothing is written anywhere, and no port the service holds is opened.
"""

from __future__ import annotations

import contextlib
import enum
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..hal.deck import DeckError, load_registry
from ..hal.display import mux_bus
from ..hal.seatlink import find_nodes
from .config import ConfigError, TableConfig, load_config

__all__ = ["Finding", "Place", "Verdict", "examine", "mock_place", "pi_place", "report"]

LOW_DISK_BYTES = 50 * 1024 * 1024  # the record needs little, but a full card stops it


class Verdict(enum.Enum):
    OK = "bien"
    WARN = "ojo"
    FAIL = "MAL"


@dataclass(frozen=True, slots=True)
class Finding:
    verdict: Verdict
    what: str  # the part: "Asiento 2: nodo", "Registro de mazos"
    says: str  # what was found, and for a problem what to do


I2cProbe = Callable[[int, int], bool]  # (bus number, address) -> a device acknowledged


@dataclass(frozen=True)
class Place:
    """Where the checks look (the Pi's own paths, or a simulated table's)."""

    dev: Path = Path("/dev")
    sys_i2c: Path = Path("/sys/bus/i2c/devices")
    probe: I2cProbe | None = None  # None: no I2C probing (the bus is then only listed)
    by_id_dir: Path | None = None  # None: the configuration's
    service: Callable[[], str | None] | None = None  # the unit's state (systemctl is-active)
    access: Callable[[str | Path, int], bool] = os.access  # may this user use the device?


def smbus_probe(bus: int, address: int) -> bool:
    """Does a device acknowledge ``address`` on ``/dev/i2c-<bus>``? (SMBus quick write)"""
    from smbus2 import SMBus  # luma.core's own I2C library

    try:
        with SMBus(bus) as smbus:
            smbus.write_quick(address)
    except OSError:
        return False
    return True


def systemd_state(unit: str = "truco-table") -> str | None:
    """``systemctl is-active`` of the unit, or None where systemd does not run."""
    if not Path("/run/systemd/system").is_dir() or shutil.which("systemctl") is None:
        return None
    done = subprocess.run(
        ["systemctl", "is-active", unit], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or None


def pi_place() -> Place:
    return Place(probe=smbus_probe, service=systemd_state)


# ------------------------------------------------------------------------- the checks


def examine(config_path: Path, place: Place) -> list[Finding]:
    """Every check, in the order a builder fixes things."""
    findings: list[Finding] = []
    add = findings.append
    try:
        config = load_config(config_path)
    except ConfigError as e:
        add(
            Finding(
                Verdict.FAIL, "Configuración", f"{e.key}: {e.expected}. Corregilo en {e.source}."
            )
        )
        return findings
    wiring = (
        "un nodo por asiento (USB)" if config.topology == "nodes" else "botones y lectores al GPIO"
    )
    add(
        Finding(
            Verdict.OK,
            "Configuración",
            f"{config_path}: {config.rules.players} asientos, {wiring}; "
            f"reglas: {config.rules.to_line()}",
        )
    )
    if config.topology == "nodes":
        findings.extend(_nodes(config, place))
    else:
        findings.extend(_gpio(config, place))
    findings.extend(_displays(config, place))
    findings.extend(_decks(config))
    findings.extend(_state(config))
    if place.service is not None:
        findings.extend(_service(place.service()))
    return findings


def _service(state: str | None) -> list[Finding]:
    what = "Servicio truco-table"
    if state is None:
        return []
    if state == "active":
        return [Finding(Verdict.OK, what, "andando")]
    return [
        Finding(
            Verdict.FAIL,
            what,
            f"no está andando ({state}). Arrancalo con sudo systemctl start truco-table; "
            "si se vuelve a parar, mirá por qué con journalctl -u truco-table -b.",
        )
    ]


def _nodes(config: TableConfig, place: Place) -> list[Finding]:
    out: list[Finding] = []
    by_id = place.by_id_dir or config.by_id_dir
    plugged = find_nodes(by_id, product_prefix="")
    wanted = {node.serial for node in config.nodes}
    for node in config.nodes:
        what = f"Asiento {node.seat}: nodo"
        path = plugged.get(node.serial)
        if path is None:
            out.append(
                Finding(
                    Verdict.FAIL,
                    what,
                    f"no encuentro el nodo {node.serial}. Revisá su cable USB; si lo cambiaste, "
                    "poné su número de serie en pinmap.toml (mpremote connect list, 2.ª columna).",
                )
            )
        elif not place.access(path, os.R_OK | os.W_OK):
            out.append(
                Finding(
                    Verdict.FAIL,
                    what,
                    f"{node.serial} está en {_real(path)}, pero sin permiso: el usuario tiene que "
                    "estar en el grupo dialout (sudo usermod -aG dialout USUARIO).",
                )
            )
        else:
            out.append(Finding(Verdict.OK, what, f"{node.serial} en {_real(path)}"))
    for serial, path in sorted(plugged.items()):
        if serial not in wanted:
            out.append(
                Finding(
                    Verdict.WARN,
                    "Nodo sin asiento",
                    f"hay un nodo {serial} enchufado en {_real(path)} que no está en pinmap.toml. "
                    "Si es de un asiento, copiá su número de serie ahí.",
                )
            )
    return out


def _gpio(config: TableConfig, place: Place) -> list[Finding]:
    out: list[Finding] = []
    chips = sorted(place.dev.glob("gpiochip*"))
    if not chips:
        out.append(
            Finding(Verdict.FAIL, "GPIO", f"no hay {place.dev}/gpiochip*: ¿es una Raspberry Pi?")
        )
    elif not all(place.access(c, os.R_OK | os.W_OK) for c in chips):
        out.append(
            Finding(Verdict.FAIL, "GPIO", "sin permiso sobre gpiochip: falta el grupo gpio.")
        )
    for seat in config.gpio:
        pins = ", ".join(f"{name} GPIO{pin}" for name, pin in seat.buttons.items())
        out.append(Finding(Verdict.OK, f"Asiento {seat.seat}: botones", pins))
        if seat.reader_cs is None:
            out.append(
                Finding(Verdict.WARN, f"Asiento {seat.seat}: lector", "sin lector en pinmap.toml")
            )
            continue
        spi = place.dev / f"spidev{config.reader_spi_bus}.{seat.reader_cs}"
        what = f"Asiento {seat.seat}: lector"
        if not spi.exists():
            out.append(
                Finding(
                    Verdict.FAIL,
                    what,
                    f"no existe {spi}: SPI está apagado. Prendelo con "
                    "sudo raspi-config nonint do_spi 0 y reiniciá.",
                )
            )
        elif not place.access(spi, os.R_OK | os.W_OK):
            out.append(Finding(Verdict.FAIL, what, f"sin permiso sobre {spi}: falta el grupo spi."))
        else:
            out.append(Finding(Verdict.OK, what, f"MFRC522 en {spi}"))
    return out


def _displays(config: TableConfig, place: Place) -> list[Finding]:
    out: list[Finding] = []
    parents = sorted({d.port for d in config.displays.values() if d.bus == "i2c"})
    for parent in parents:
        dev = place.dev / f"i2c-{parent}"
        if not dev.exists():
            out.append(
                Finding(
                    Verdict.FAIL,
                    f"Bus I2C {parent}",
                    f"no existe {dev}: falta habilitar I2C y cargar i2c-dev "
                    "(sudo raspi-config nonint do_i2c 0) y reiniciar.",
                )
            )
        else:
            out.append(Finding(Verdict.OK, f"Bus I2C {parent}", str(dev)))
    for seat in range(config.rules.players):
        what = f"Asiento {seat}: pantalla"
        d = config.displays.get(seat)
        if d is None:
            out.append(Finding(Verdict.WARN, what, "sin pantalla en pinmap.toml"))
            continue
        if d.bus != "i2c":
            out.append(
                Finding(Verdict.OK, what, f"{d.driver} por SPI {d.port}.{d.device} (sin sondear)")
            )
            continue
        bus = d.port
        where = f"i2c-{bus}"
        if d.mux_channel is not None:
            found = mux_bus(d.port, d.mux_channel, place.sys_i2c)
            if found is None:
                out.append(
                    Finding(
                        Verdict.FAIL,
                        what,
                        f"no aparece el canal {d.mux_channel} del multiplexor en i2c-{d.port}: "
                        "revisá la línea dtoverlay=i2c-mux en /boot/firmware/config.txt y los "
                        "cables del TCA9548A (VCC, GND, SDA, SCL).",
                    )
                )
                continue
            bus = found
            where = f"i2c-{bus} (canal {d.mux_channel} del multiplexor)"
        label = f"{d.driver} {d.width}x{d.height} en {where}, dirección 0x{d.address:02X}"
        dev = place.dev / f"i2c-{bus}"
        if not dev.exists():
            out.append(Finding(Verdict.FAIL, what, f"{label}: no existe {dev}."))
        elif not place.access(dev, os.R_OK | os.W_OK):
            out.append(Finding(Verdict.FAIL, what, f"{label}: sin permiso, falta el grupo i2c."))
        elif place.probe is None:
            out.append(Finding(Verdict.OK, what, f"{label} (sin sondear)"))
        elif not place.probe(bus, d.address):
            out.append(
                Finding(
                    Verdict.FAIL,
                    what,
                    f"{label}: no contesta. Revisá sus cuatro cables y la dirección "
                    "(0x3C, o 0x3D si el módulo tiene el puente cambiado).",
                )
            )
        else:
            out.append(Finding(Verdict.OK, what, f"{label}: contesta"))
    return out


def _decks(config: TableConfig) -> list[Finding]:
    what = "Registro de mazos"
    try:
        registry = load_registry(config.decks, missing_ok=True)
    except DeckError as e:
        return [
            Finding(
                Verdict.FAIL, what, f"{config.decks} está dañado: {e}. Volvé a registrar el mazo."
            )
        ]
    except OSError as e:
        return [Finding(Verdict.FAIL, what, f"no puedo leer {config.decks}: {e.strerror}.")]
    if not registry.decks:
        return [
            Finding(
                Verdict.FAIL,
                what,
                f"no hay ningún mazo en {config.decks}: registrá uno con truco-table enroll "
                "(sin mazo, la mesa no reconoce ninguna carta).",
            )
        ]
    decks = ", ".join(f"{deck.name} ({len(deck.cards)} cartas)" for deck in registry.decks)
    return [Finding(Verdict.OK, what, f"{config.decks}: {decks}")]


def _state(config: TableConfig) -> list[Finding]:
    what = "Carpeta de la partida"
    state = config.state_dir
    if not state.is_dir():
        return [
            Finding(
                Verdict.FAIL,
                what,
                f"no existe {state}: el servicio la crea al arrancar "
                "(sudo systemctl start truco-table).",
            )
        ]
    out: list[Finding] = []
    if not os.access(state, os.W_OK | os.X_OK):
        out.append(
            Finding(
                Verdict.WARN,
                what,
                f"{state}: este usuario no puede escribir (el servicio, como usuario truco, sí "
                "debería poder: mirá sudo ls -ld " + str(state) + ").",
            )
        )
    current = state / "current.truco"
    archive = state / "archive"
    games = len(list(archive.glob("*.truco"))) if archive.is_dir() else 0
    playing = "hay una partida en curso" if current.exists() else "ninguna partida en curso"
    free = shutil.disk_usage(state).free
    line = f"{state}: {playing}, {games} partidas archivadas, {free // (1024 * 1024)} MB libres"
    if free < LOW_DISK_BYTES:
        out.append(Finding(Verdict.FAIL, what, f"{line}. Queda poco disco: liberá espacio."))
    else:
        out.append(Finding(Verdict.OK, what, line))
    return out


def _real(path: str) -> str:
    return os.path.realpath(path)


# ------------------------------------------------------------------------- the report


def report(findings: list[Finding]) -> tuple[str, int]:
    """The text for the terminal and the exit status (0: nothing wrong, 1: a problem)."""
    lines = [f"  {f.verdict.value:<4} {f.what}: {f.says}" for f in findings]
    problems = sum(f.verdict is Verdict.FAIL for f in findings)
    warnings = sum(f.verdict is Verdict.WARN for f in findings)
    if problems:
        plural = "problema" if problems == 1 else "problemas"
        lines.append(
            f"{problems} {plural}: arreglá los que dicen MAL y volvé a correr truco-table doctor."
        )
    elif warnings:
        lines.append("Todo lo necesario funciona; mirá los avisos (ojo).")
    else:
        lines.append("Todo en orden: la mesa está lista para jugar.")
    return "\n".join(lines), 1 if problems else 0


# ------------------------------------------------------------------------- a simulated table


@contextlib.contextmanager
def mock_place(
    players: int = 4,
    *,
    missing_nodes: frozenset[int] = frozenset(),
    silent_panels: frozenset[int] = frozenset(),
    enrolled: bool = True,
    root: Path | None = None,
) -> Iterator[tuple[Path, Place]]:
    """A whole simulated table to examine: (its configuration file, where to look).

    Seat nodes are ``MockNode``s on ptys, named under a by-id folder as udev names real
    Picos; the multiplexer's eight buses are in a ``/sys`` tree and ``/dev`` has their
    device names; panels answer at 0x3C on their channel's bus, but for
    ``silent_panels``; nodes in ``missing_nodes`` are not plugged in.
    """
    from ..engine import CARDS
    from ..hal.deck import Deck, DeckRegistry, save_registry
    from ..hal.mock import MockDeck, MockNode

    with contextlib.ExitStack() as stack:
        base = root or Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="truco-doctor-"))
        )
        dev, sys_i2c, by_id, state = base / "dev", base / "sys", base / "by-id", base / "state"
        for folder in (dev, sys_i2c, by_id, state):
            folder.mkdir(parents=True, exist_ok=True)
        (dev / "i2c-1").touch()
        mux_buses = {channel: 11 + channel for channel in range(8)}  # as the kernel numbers them
        for channel, bus in mux_buses.items():
            (sys_i2c / f"i2c-{bus}").mkdir(exist_ok=True)
            (sys_i2c / f"i2c-{bus}" / "name").write_text(f"i2c-1-mux (chan_id {channel})\n")
            (dev / f"i2c-{bus}").touch()
        serials = [f"e66141{s:010x}" for s in range(players)]
        for seat, serial in enumerate(serials):
            if seat in missing_nodes:
                continue
            node = MockNode(seat, serial)
            stack.callback(node.close)
            (by_id / f"usb-MicroPython_Board_in_FS_mode_{serial}-if00").symlink_to(node.path)
        if enrolled:
            deck = MockDeck(0)
            registry = DeckRegistry((Deck("casa", {deck.uid(card): card for card in CARDS}),))
            save_registry(registry, state / "decks.toml")
        nodes = "".join(
            f'[[nodes.seat]]\nseat = {s}\nserial = "{serials[s]}"\n' for s in range(players)
        )
        panels = "".join(
            f'[[display.seat]]\nseat = {s}\nmux_channel = {s}\ndriver = "sh1106"\n'
            for s in range(players)
        )
        config = base / "table.toml"
        config.write_text(
            f'[table]\nplayers = {players}\nstate_dir = "{state}"\n'
            f'decks = "{state / "decks.toml"}"\n'
            f'[topology]\nkind = "nodes"\n[nodes]\nby_id_dir = "{by_id}"\n{nodes}'
            f"[display]\ni2c_bus = 1\n{panels}",
            encoding="utf-8",
        )
        answering = {(mux_buses[s], 0x3C) for s in range(players) if s not in silent_panels}

        def probe(bus: int, address: int) -> bool:
            return (bus, address) in answering

        yield config, Place(dev=dev, sys_i2c=sys_i2c, probe=probe)
