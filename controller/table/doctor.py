"""``truco-table doctor``: the table checks itself and says what is wrong, in plain words.

``examine(config_path, place)`` reads the configuration and looks at everything the
service needs, as the service would find it: every seat's node (by USB serial number
under ``/dev/serial/by-id``) or GPIO pad and SPI reader, every seat's panel where it
hangs, the deck registry and the state directory. Each check is one ``Finding``; its
words are for the bar owner (Rioplatense Spanish, vos).

A panel on its seat node (``connected_to = "node"``, the guide's table) is known only to
the node: the running service writes each node's ``PANEL`` report to its status file
(``[table] status_file``, ``controller.table.hardware.SeatStatus``) and the doctor reads
it there. A panel on the Pi's bus (the multiplexer variant) is probed: its channel's bus
found by name as ``OledDisplay`` does, and an SMBus quick write at its address.

Run by the owner without sudo, the doctor reads what a plain user may (the state folder
is the service user's: ``install-pi`` puts the owner in its group) and says in one line
to use ``sudo`` for what it may not; it never ends in a traceback.

Where the checks look is a ``Place``: the Pi's own ``/dev`` and ``/sys`` and a real
I2C probe (an SMBus quick write, as ``i2cdetect`` does), or a simulated table
(``mock_place``: seat nodes on ptys with their by-id names, the multiplexer's buses in
a ``/sys`` tree, panels answering on a simulated bus) for ``--mock`` and the tests.
Nothing is written anywhere, and no port the service holds is opened.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import os
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..hal.deck import DeckError, load_registry
from ..hal.display import DisplayConfig, mux_bus
from ..hal.node_finder import find_nodes
from .config import ConfigError, TableConfig, load_config
from .hardware import read_seat_status, read_status

__all__ = [
    "ExtraCheck",
    "Finding",
    "Place",
    "Verdict",
    "examine",
    "mock_place",
    "pi_place",
    "report",
]

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
#: a check the command layer adds (what this layer may not import: the tournament's
#: link): given the configuration's path and the loaded configuration, its findings
ExtraCheck = Callable[[Path, TableConfig], list[Finding]]


@dataclass(frozen=True)
class Place:
    """Where the checks look (the Pi's own paths, or a simulated table's)."""

    dev: Path = Path("/dev")
    sys_i2c: Path = Path("/sys/bus/i2c/devices")
    probe: I2cProbe | None = None  # None: no I2C probing (the bus is then only listed)
    by_id_dir: Path | None = None  # None: the configuration's
    service: Callable[[], str | None] | None = None  # the unit's state (systemctl is-active)
    #: the service's last status line (``systemctl show -p StatusText``), None: not known
    status_text: Callable[[], str | None] | None = None
    access: Callable[[str | Path, int], bool] = os.access  # may this user use the device?
    #: the unit's main process (``systemctl show -p MainPID``), None: not known
    main_pid: Callable[[], int | None] | None = None


def smbus_probe(bus: int, address: int) -> bool:
    """Does a device acknowledge ``address`` on ``/dev/i2c-<bus>``? (SMBus quick write)"""
    from smbus2 import SMBus  # luma.core's own I2C library

    try:
        with SMBus(bus) as smbus:
            smbus.write_quick(address)
    except OSError:
        return False
    return True


def _systemctl_show(unit: str, *options: str) -> str | None:
    """What ``systemctl show OPTIONS unit`` prints, or None where systemd does not run."""
    if not Path("/run/systemd/system").is_dir() or shutil.which("systemctl") is None:
        return None
    try:
        done = subprocess.run(
            ["systemctl", "show", *options, unit],
            capture_output=True,
            text=True,
            check=False,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout


def systemd_state(unit: str = "truco-table") -> str | None:
    """The unit's active state (``systemctl show``), or None where systemd does not run
    or the unit is not installed (a machine that is not a table)."""
    shown = _systemctl_show(unit, "--property=LoadState,ActiveState")
    if shown is None:
        return None
    values = dict(line.partition("=")[::2] for line in shown.splitlines())
    if values.get("LoadState") in (None, "", "not-found"):
        return None
    return values.get("ActiveState") or None


def systemd_status_text(unit: str = "truco-table") -> str | None:
    """The unit's last ``STATUS=`` line, or None where systemd does not run."""
    shown = _systemctl_show(unit, "--property=StatusText", "--value")
    return (shown or "").strip() or None


def systemd_main_pid(unit: str = "truco-table") -> int | None:
    """The unit's main process, or None where systemd does not run it."""
    shown = (_systemctl_show(unit, "--property=MainPID", "--value") or "").strip()
    return int(shown) if shown.isdigit() and int(shown) > 0 else None


def pi_place() -> Place:
    return Place(
        probe=smbus_probe,
        service=systemd_state,
        status_text=systemd_status_text,
        main_pid=systemd_main_pid,
    )


# ------------------------------------------------------------------------- the checks


SUDO = "corré sudo truco-table doctor"


def examine(
    config_path: Path, place: Place, extra: Sequence[ExtraCheck] = ()
) -> list[Finding]:
    """Every check, in the order a builder fixes things; ``extra`` (the command's own,
    such as the ``[tournament]`` section's) after the table's parts."""
    findings: list[Finding] = []
    add = findings.append
    try:
        config = load_config(config_path)
    except ConfigError as e:
        denied = e.__context__
        if isinstance(denied, PermissionError):  # the configuration or the pin map it names
            says = f"no puedo leer {denied.filename or e.source} con este usuario: {SUDO}."
        else:
            says = f"{e.where}: {e.key}: {e.expected}. {e.fix}."
        add(Finding(Verdict.FAIL, "Configuración", says))
        return findings
    add(
        Finding(
            Verdict.OK,
            "Configuración",
            f"{config_path}: {config.rules.players} asientos, {_wiring(config)}; "
            f"reglas: {config.rules.to_line()}",
        )
    )
    state = place.service() if place.service is not None else None
    checks: list[Callable[[], list[Finding]]] = [
        (lambda: _nodes(config, place))
        if config.topology == "nodes"
        else (lambda: _gpio(config, place)),
        lambda: _mux_hint(config, _displays(config, place, state)),
    ]
    private = _unreadable(config)
    if private is None:
        checks += [lambda: _decks(config), lambda: _state(config)]
    checks += [functools.partial(check, config_path, config) for check in extra]
    for check in checks:
        try:
            findings.extend(check())
        except PermissionError as e:
            add(Finding(Verdict.WARN, "Permisos", f"no puedo leer {e.filename}: {SUDO}."))
    if private is not None:
        add(private)
    try:
        findings.extend(_seat_faults(config))
    except PermissionError as e:
        add(Finding(Verdict.WARN, "Permisos", f"no puedo leer {e.filename}: {SUDO}."))
    if state is not None:
        findings.extend(_service(state))
    findings.extend(_second_service(config, state, place))
    if place.status_text is not None:
        findings.extend(_floods(place.status_text()))
    return findings


READER_WIRES = (
    "Revisá sus seis cables a la Pico (SDA a GP17, SCK a GP18, MOSI a GP19, MISO a GP16, "
    "RST a GP20, 3.3V al 3V3 y GND; nunca a 5 V) y que el módulo esté bien soldado "
    "(docs/bares/armado.md, «El lector a la Pico»)."
)


def _seat_faults(config: TableConfig) -> list[Finding]:
    """What the running service says is wrong at each seat (``faults.SeatWatch``): the
    reader, a stuck button, a node on another seat, a card of another deck, a node with
    a panel the pin map puts on the Pi."""
    if config.status_file is None:
        return []
    try:
        status = read_status(config.status_file)
    except PermissionError:
        raise
    except OSError:
        return []
    if status is None:
        return []
    out: list[Finding] = []
    where = (
        f"{config.source}, línea {config.pinmap_line}"
        if config.source is not None and config.pinmap_line is not None
        else str(config.source or "table.toml")
    )
    elsewhere: list[int] = []  # seats whose node drives a panel the pin map puts on the Pi
    for seat, entry in sorted(status["seats"].items()):
        if seat >= config.rules.players:
            continue
        faults = entry.get("faults")
        faults = faults if isinstance(faults, dict) else {}
        if "reader_missing" in faults:
            out.append(
                Finding(Verdict.FAIL, f"Asiento {seat}: lector", f"no contesta. {READER_WIRES}")
            )
        if "pad_stuck" in faults:
            button = str(faults["pad_stuck"]).replace("_", " ")
            out.append(
                Finding(
                    Verdict.FAIL,
                    f"Asiento {seat}: botonera",
                    f"el botón {button} está apretado hace más de 10 s: destrabalo, o su "
                    f"cable toca GND (en la Pico, el de {button} va de su pin a GND solo "
                    "cuando lo apretás). Mientras tanto ese botón no anda.",
                )
            )
        if "wrong_seat" in faults:
            out.append(
                Finding(
                    Verdict.FAIL,
                    f"Asiento {seat}: nodo",
                    f"el nodo {faults['wrong_seat']}. En {config.pinmap or 'pinmap.toml'} "
                    "los números de serie de los asientos están cambiados (o la cajita está "
                    "en otro asiento): poné cada número de serie debajo de su asiento (las "
                    "etiquetas del paso 2) y reiniciá con sudo systemctl restart truco-table.",
                )
            )
        if "other_deck" in faults:
            out.append(
                Finding(
                    Verdict.FAIL,
                    f"Asiento {seat}: cartas",
                    f"leyó una carta {faults['other_deck']} hace menos de 10 minutos: "
                    "sacala de esta mesa; cada mesa juega con las 40 cartas de un mazo "
                    "registrado (truco-table enroll).",
                )
            )
        if isinstance(entry.get("pinmap"), str):
            elsewhere.append(seat)
    if elsewhere:
        seats = " y ".join(", ".join(map(str, elsewhere)).rsplit(", ", 1))
        name = config.pinmap.name if config.pinmap is not None else "table.toml"
        out.append(
            Finding(
                Verdict.FAIL,
                "Mapa de pines",
                f"{'el nodo del asiento' if len(elsewhere) == 1 else 'los nodos de los asientos'} "
                f"{seats} {'tiene' if len(elsewhere) == 1 else 'tienen'} su propia pantalla, "
                f"pero {name} pone las pantallas en la Pi detrás de un multiplexor. Si tu mesa "
                "es la de la guía (cada pantalla en su nodo), el mapa de pines es el "
                f'equivocado: poné pinmap = "pinmap.toml" en {where} y reiniciá con sudo '
                "systemctl restart truco-table.",
            )
        )
    return out


def _mux_hint(config: TableConfig, findings: list[Finding]) -> list[Finding]:
    """A table of seat nodes whose pin map puts the panels on the Pi behind a
    multiplexer (``pinmap-mux.toml``): where the Pi's bus or the multiplexer is not
    found, the likelier fault is the ``pinmap`` line of table.toml, and it says so."""
    on_pi = any(d.connected_to == "pi" for d in config.displays.values())
    if config.topology != "nodes" or not on_pi or config.pinmap is None:
        return findings
    where = (
        f"{config.source}, línea {config.pinmap_line}"
        if config.source is not None and config.pinmap_line is not None
        else str(config.source or "table.toml")
    )
    hint = (
        f" Pero si las pantallas van en los nodos (la mesa de la guía), no hay multiplexor: "
        f"el mapa de pines es el equivocado ({config.pinmap.name}); poné "
        f'pinmap = "pinmap.toml" en {where} y reiniciá con sudo systemctl restart truco-table.'
    )
    out: list[Finding] = []
    for f in findings:  # said once, on the first of them
        if f.verdict is Verdict.FAIL and hint:
            f, hint = Finding(f.verdict, f.what, f.says + hint), ""
        out.append(f)
    return out


def _second_service(config: TableConfig, state: str | None, place: Place) -> list[Finding]:
    """Two services for one table: a ``truco-table run`` started by hand holds the
    table while the systemd service does not run it, or one was stopped at the lock a
    moment ago."""
    from .lock import holder

    what = "Servicio truco-table"
    out: list[Finding] = []
    try:
        pid = holder(config.state_dir)
    except OSError:
        pid = None
    main_pid = place.main_pid() if place.main_pid is not None else None
    if pid is not None and state is not None and (state != "active" or main_pid not in (None, pid)):
        shown = f"el proceso {pid}" if pid > 0 else "otro proceso"
        out.append(
            Finding(
                Verdict.FAIL,
                what,
                f"la mesa la tiene {shown} (un truco-table run arrancado a mano), no el "
                "servicio: pará ese (Ctrl-C en su terminal, o kill "
                f"{pid if pid > 0 else 'PID'}) y arrancá el servicio con sudo systemctl "
                "start truco-table.",
            )
        )
    try:
        status = read_status(config.status_file) if config.status_file else None
    except OSError:
        status = None
    second = status.get("second_run") if status is not None else None
    if isinstance(second, dict) and isinstance(second.get("at"), int | float):
        ago = time.time() - float(second["at"])
        if 0 <= ago < SECOND_RUN_SHOWN_S:
            out.append(
                Finding(
                    Verdict.FAIL,
                    what,
                    f"hace {max(1, round(ago / 60))} min alguien arrancó otro truco-table "
                    f"run (proceso {second.get('pid')}) con la mesa andando; se paró sin "
                    "tocar nada. No hace falta arrancarla a mano: la mesa ya anda como "
                    "servicio (para probar a mano, antes sudo systemctl stop truco-table).",
                )
            )
    return out


#: a second ``run`` stopped at the lock is a problem for the doctor this long
SECOND_RUN_SHOWN_S = 600.0


def _floods(status: str | None) -> list[Finding]:
    """A seat that sent more than the table could take (a stuck button, a loose cable):
    what the running service counted and dropped (``notify.flood_status``)."""
    from .notify import parse_flood_status

    return [
        Finding(
            Verdict.WARN,
            f"Asiento {seat}: botonera",
            f"mandó de más: {count} evento{'s' if count != 1 else ''} descartado"
            f"{'s' if count != 1 else ''} desde el arranque (¿un botón trabado o un cable "
            "flojo?). Revisá los botones de ese asiento.",
        )
        for seat, count in sorted(parse_flood_status(status or "").items())
        if count
    ]


def _wiring(config: TableConfig) -> str:
    if config.topology == "gpio":
        return "botones y lectores al GPIO, pantallas en la Pi"
    panels = {d.connected_to for d in config.displays.values()}
    where = {
        frozenset({"node"}): "cada pantalla en su nodo",
        frozenset({"pi"}): "pantallas en la Pi (multiplexor)",
    }.get(frozenset(panels), "pantallas en los nodos y en la Pi")
    return f"un nodo por asiento (USB), {where}"


def _unreadable(config: TableConfig) -> Finding | None:
    """One line for the state folder and the registry this user may not read."""
    for folder in dict.fromkeys((config.state_dir, config.decks.parent)):
        if folder.exists() and not os.access(folder, os.R_OK | os.X_OK):
            return Finding(
                Verdict.WARN,
                "Carpeta de la partida y registro de mazos",
                f"{folder} es del servicio (usuario truco) y este usuario no la puede leer: "
                f"{SUDO} (o entrá de nuevo: la instalación te sumó al grupo truco).",
            )
    return None


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


def _displays(config: TableConfig, place: Place, service: str | None) -> list[Finding]:
    out: list[Finding] = []
    on_pi = [d for d in config.displays.values() if d.connected_to == "pi"]
    parents = sorted({d.port for d in on_pi if d.bus == "i2c"})
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
    status: dict[int, dict[str, object]] | None = None
    status_error: str | None = None
    status_read = False
    for seat in range(config.rules.players):
        what = f"Asiento {seat}: pantalla"
        d = config.displays.get(seat)
        if d is None:
            out.append(Finding(Verdict.WARN, what, "sin pantalla en pinmap.toml"))
            continue
        if d.connected_to == "node":
            if status_error is None and status is None and not status_read:
                status_read = True
                try:
                    status = read_seat_status(config.status_file) if config.status_file else None
                except PermissionError:
                    status_error = f"no puedo leer {config.status_file}: {SUDO}."
                except OSError as e:
                    status_error = f"no puedo leer {config.status_file}: {e.strerror}."
            out.append(_node_panel(seat, d, status, status_error, service))
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


NODE_PANEL_WIRES = (
    "Revisá los cuatro cables entre la pantalla y el Pico (GND; VCC al 3V3, pin 36; "
    "SCL a GP1, pin 2; SDA a GP0, pin 1) y la dirección (0x3C, o 0x3D con el puente "
    'cambiado); una 2.42" de 7 pines necesita sus puentes en I2C y RES al 3V3 '
    "(hardware/one-cable-seat.md)."
)


def _node_panel(
    seat: int,
    d: DisplayConfig,
    status: dict[int, dict[str, object]] | None,
    error: str | None,
    service: str | None,
) -> Finding:
    """A panel on the seat's node, from the node's PANEL report as the service keeps it."""
    what = f"Asiento {seat}: pantalla"
    label = f"{d.driver} {d.width}x{d.height} en el nodo, dirección 0x{d.address:02X}"
    if error is not None:
        return Finding(Verdict.WARN, what, f"{label}: {error}")
    if status is None:
        why = (
            "el servicio no está andando"
            if service not in (None, "active")
            else "el servicio no informa el estado de los nodos"
        )
        return Finding(
            Verdict.WARN,
            what,
            f"{label}: {why}, así que no sé si contesta (solo el nodo lo sabe). "
            "Arrancalo (sudo systemctl start truco-table) y volvé a correr el doctor.",
        )
    entry = status.get(seat, {})
    if entry.get("node") != "connected":
        return Finding(
            Verdict.WARN, what, f"{label}: el nodo no está conectado, así que no sé si contesta."
        )
    panel = entry.get("panel")
    if not isinstance(panel, dict):
        return Finding(
            Verdict.FAIL,
            what,
            f"{label}: el nodo no informa ninguna pantalla. Actualizá su firmware "
            "(docs/bares/problemas.md, «Actualizar o recargar un nodo»).",
        )
    driver, address = panel.get("driver"), panel.get("address")
    if panel.get("ok") is not True:
        return Finding(Verdict.FAIL, what, f"{label}: no contesta. {NODE_PANEL_WIRES}")
    if (driver, address) != (d.driver, d.address):
        shown = f"{driver} 0x{address:02X}" if isinstance(address, int) else str(driver)
        return Finding(
            Verdict.WARN,
            what,
            f"{label}: el nodo maneja una {shown}; el servicio le está pasando la de "
            "pinmap.toml. Volvé a correr el doctor en unos segundos.",
        )
    return Finding(Verdict.OK, what, f"{label}: contesta")


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
    # the service writes there as its owner (StateDirectory=, user truco); the owner of the
    # bar reading it as a member of the group need not (and should not) write
    if not os.access(state, os.W_OK | os.X_OK) and not state.stat().st_mode & stat.S_IWUSR:
        out.append(
            Finding(
                Verdict.WARN,
                what,
                f"{state}: ni su dueño puede escribir (el servicio, como usuario truco, "
                "tiene que poder: mirá sudo ls -ld " + str(state) + ").",
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
    panels: str = "node",
) -> Iterator[tuple[Path, Place]]:
    """A whole simulated table to examine: (its configuration file, where to look).

    Seat nodes are ``MockNode``s on ptys, named under a by-id folder as udev names real
    Picos; nodes in ``missing_nodes`` are not plugged in. ``panels``: ``"node"`` (the
    guide's table: each panel on its node, an SSD1309 at 0x3C; the status file says
    what each node reported, as the running service writes it) or ``"pi"`` (the
    multiplexer variant: the eight channel buses in a ``/sys`` tree and ``/dev``, SH1106
    panels answering at 0x3C on their channel's bus). Panels in ``silent_panels`` do not
    answer.
    """
    from ..engine import CARDS
    from ..hal.deck import Deck, DeckRegistry, save_registry
    from ..hal.events import PanelReport
    from ..hal.mock import MockDeck, MockNode
    from .hardware import SeatStatus

    if panels not in ("node", "pi"):
        raise ValueError(f"panels must be node or pi, not {panels!r}")
    with contextlib.ExitStack() as stack:
        base = root or Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="truco-doctor-"))
        )
        dev, sys_i2c, by_id, state = base / "dev", base / "sys", base / "by-id", base / "state"
        run = base / "run"
        for folder in (dev, sys_i2c, by_id, state, run):
            folder.mkdir(parents=True, exist_ok=True)
        (dev / "i2c-1").touch()
        mux_buses = {channel: 11 + channel for channel in range(8)}  # as the kernel numbers them
        for channel, bus in mux_buses.items():
            (sys_i2c / f"i2c-{bus}").mkdir(exist_ok=True)
            (sys_i2c / f"i2c-{bus}" / "name").write_text(f"i2c-1-mux (chan_id {channel})\n")
            (dev / f"i2c-{bus}").touch()
        serials = [f"e66141{s:010x}" for s in range(players)]
        status = SeatStatus(run / "seats.json")
        for seat, serial in enumerate(serials):
            if seat in missing_nodes:
                continue
            node = MockNode(seat, serial)
            stack.callback(node.close)
            (by_id / f"usb-MicroPython_Board_in_FS_mode_{serial}-if00").symlink_to(node.path)
            status.node(seat, True)
            if panels == "node":
                status.panel(seat, PanelReport("ssd1309", 0x3C, seat not in silent_panels))
        if enrolled:
            deck = MockDeck(0)
            registry = DeckRegistry((Deck("casa", {deck.uid(card): card for card in CARDS}),))
            save_registry(registry, state / "decks.toml")
        nodes = "".join(
            f'[[nodes.seat]]\nseat = {s}\nserial = "{serials[s]}"\n' for s in range(players)
        )
        if panels == "node":
            displays = "".join(
                f'[[display.seat]]\nseat = {s}\nconnected_to = "node"\ndriver = "ssd1309"\n'
                for s in range(players)
            )
        else:
            displays = "".join(
                f'[[display.seat]]\nseat = {s}\nmux_channel = {s}\ndriver = "sh1106"\n'
                for s in range(players)
            )
        config = base / "table.toml"
        config.write_text(
            f'[table]\nplayers = {players}\nstate_dir = "{state}"\n'
            f'decks = "{state / "decks.toml"}"\nstatus_file = "{run / "seats.json"}"\n'
            f'[topology]\nkind = "nodes"\n[nodes]\nby_id_dir = "{by_id}"\n{nodes}'
            f"[display]\ni2c_bus = 1\n{displays}",
            encoding="utf-8",
        )
        answering = {(mux_buses[s], 0x3C) for s in range(players) if s not in silent_panels}

        def probe(bus: int, address: int) -> bool:
            return (bus, address) in answering

        yield config, Place(dev=dev, sys_i2c=sys_i2c, probe=probe)
