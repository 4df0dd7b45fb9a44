"""The bar owner's guide (docs/bares) run as its owner runs it: every command block, in
the guide's order, against the shipped files, and the output the guide quotes compared
with what the program prints.

What runs here is the simulated table of ``test_guide_table`` (the shipped table.toml and
pinmap.toml with only their folders moved into a temporary one, the seat nodes running
the firmware's NodeApp on ptys under a by-id folder with the pin map's serial numbers,
the service started from the installed unit's ExecStart). Each printed line is run as
printed, with what a temporary folder changes and nothing else: ``--config`` names the
moved table.toml, the placeholders ``<número de serie ...>`` are seat 0's serial number,
``sudo -u truco`` is the user the service runs as (the test's own: the state folder is
its), the doctor runs as that user too (the guide's ``sudo truco-table doctor``; a plain
user in the service's group is ``test_guide_table``'s),
``sudo systemctl stop|start truco-table`` stops and starts the service the test started
(there is no systemd here), and the environment says where the state folder and the
by-id folder moved (``TRUCO_TABLE_STATE``, ``TRUCO_TABLE_BY_ID_DIR``).

A block that cannot run on this machine is listed in ``NOT_HERE`` with why and what is
checked instead; its test runs those checks and then reports itself skipped with that
reason, so no block is passed over silently. A block the guide gains and this file
does not know fails ``test_every_block_is_run_or_listed``.
"""

from __future__ import annotations

import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from controller.cli import seat
from controller.engine import Card
from controller.hal.deck import load_registry
from controller.hal.mock import MockDeck
from tests.helpers import wait_until as wait_for

from .test_guide_table import GuideTable, guide_table

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("index.md", "armado.md", "problemas.md")  # the guide's order


@dataclass(frozen=True)
class Block:
    page: str
    number: int  # its place among the page's command blocks, from 1
    lines: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.page}#{self.number}"


def command_blocks() -> list[Block]:
    blocks: list[Block] = []
    for page in PAGES:
        text = (ROOT / "docs" / "bares" / page).read_text(encoding="utf-8")
        found = re.findall(r"^( *)```sh\n(.*?)^\1```", text, re.S | re.M)
        for number, (indent, body) in enumerate(found, 1):
            lines, joined = [], ""
            for raw in body.splitlines():
                line = raw[len(indent) :] if raw.startswith(indent) else raw
                joined += line.rstrip("\\").rstrip() + " " if line.endswith("\\") else line
                if not line.endswith("\\"):
                    lines.append(" ".join(joined.split()))
                    joined = ""
            blocks.append(Block(page, number, tuple(line for line in lines if line)))
    return blocks


#: blocks that cannot run on a CI machine: why, and the check made instead
NOT_HERE: dict[str, str] = {
    "sudo apt-get install -y git": (
        "the install on a fresh Raspberry Pi OS: it needs a Debian 13 root and the "
        "network (scripts/check-debian13 runs these lines in a debootstrap root, by hand: "
        "not in .ci/run, it downloads a Debian system); here: install-pi's checks pass on a "
        "Debian 13 os-release and its closing lines send the owner to this guide"
    ),
    "sha256sum RPI_PICO-20250415-v1.25.0.uf2": (
        "needs the official MicroPython file, downloaded from micropython.org (not "
        "reachable from CI); here: the file and the hash the guide quotes are the ones "
        "the install names and firmware/README.md gives "
        "(test_the_guide_quotes_the_tested_micropython); with TRUCO_MICROPYTHON_UF2 set "
        "to the official file, the command is run on it as printed"
    ),
    "truco-table seat install": (
        "needs a Pico running the official MicroPython, plugged in by USB (the install "
        "with mpremote faked, the .mpy compile for the Pico's Cortex-M0+ and the version "
        "check are tests/cli/test_seat.py's); here: the command answers in Spanish and "
        "every module main.py imports is in the firmware folder it copies"
    ),
    "truco-table seat test": (
        "needs a seat node on a USB port (tests/cli/test_seat.py runs it against the "
        "firmware on a pty and compares what the guide quotes); here: the command answers "
        "in Spanish"
    ),
    "journalctl -u truco-table -f": (
        "systemd's journal (no systemd here; tests/test_systemd.py checks the unit and "
        "the service logs to standard error, which the journal keeps)"
    ),
}

#: blocks run on the simulated table, by their first line
RUN = (
    "truco-table doctor",
    "sudo systemctl stop truco-table",
    "sudo truco-table doctor --asientos",
)


def first(block: Block) -> str:
    """The block's first command, its comment off and its spaces single: the block's
    key in ``NOT_HERE`` (a key may be the start of it) and ``RUN``."""
    line = " ".join(block.lines[0].partition("#")[0].split())
    return next((key for key in NOT_HERE if line.startswith(key)), line)


def test_every_block_is_run_or_listed() -> None:
    blocks = command_blocks()
    assert len(blocks) >= 8
    unknown = [b.name for b in blocks if first(b) not in NOT_HERE and first(b) not in RUN]
    assert unknown == [], "a block of the guide that this test neither runs nor lists"
    listed = {first(b) for b in blocks}
    assert set(NOT_HERE) <= listed, "NOT_HERE lists a block the guide no longer has"


def _check_not_here(block: Block, tmp_path: Path) -> None:
    head = first(block)
    if head.startswith("sudo apt-get install"):
        assert block.lines[-1] == "sudo sh scripts/install-pi"
        release = tmp_path / "os-release"
        release.write_text('ID=debian\nVERSION_CODENAME=trixie\nPRETTY_NAME="Debian 13"\n')
        done = subprocess.run(
            ["sh", "scripts/install-pi", "--check", "--not-a-pi"],
            cwd=ROOT,
            env={**os.environ, "TRUCO_OS_RELEASE": str(release)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0 and "se puede instalar" in done.stdout, done.stderr
        script = (ROOT / "scripts" / "install-pi").read_text(encoding="utf-8")
        assert "docs/bares/armado.md, pasos 2 a 6" in script
    elif head.startswith("truco-table seat"):
        words = head.split()
        done = subprocess.run(
            [str(Path(sys.executable).with_name("truco-table")), *words[1:3], "--help"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0 and done.stdout.startswith("uso:"), done.stdout + done.stderr
        if words[2] == "install":
            main_py = (ROOT / "firmware" / "main.py").read_text(encoding="utf-8")
            for module in re.findall(r"^\s*from seatnode import (\w+)", main_py, re.M):
                assert (ROOT / "firmware" / "seatnode" / f"{module}.py").is_file(), module
    elif head.startswith("sha256sum"):
        assert list(block.lines) == [f"sha256sum {seat.TESTED_UF2}"]
        guide = (ROOT / "docs" / "bares" / "armado.md").read_text(encoding="utf-8")
        assert f"`{seat.TESTED_UF2_SHA256}`" in guide  # what the guide says it must print
        official = os.environ.get("TRUCO_MICROPYTHON_UF2")  # the official file, if at hand
        if official:
            (tmp_path / seat.TESTED_UF2).write_bytes(Path(official).read_bytes())
            done = subprocess.run(
                shlex.split(block.lines[0]), cwd=tmp_path, capture_output=True, text=True
            )
            assert done.stdout.split()[0] == seat.TESTED_UF2_SHA256, done.stdout + done.stderr
    elif head.startswith("journalctl"):
        unit = (ROOT / "systemd" / "truco-table.service").read_text(encoding="utf-8")
        assert "ExecStart=" in unit
    else:
        raise AssertionError(f"no check for {head!r}")


@pytest.mark.parametrize("block", [b for b in command_blocks() if first(b) in NOT_HERE],
                         ids=lambda b: b.name)  # fmt: skip
def test_a_block_that_cannot_run_here_says_why(block: Block, tmp_path: Path) -> None:
    _check_not_here(block, tmp_path)
    pytest.skip(f"{block.name} not run here: {NOT_HERE[first(block)]}")


# ----------------------------------------------------------------------- the table side


class Owner:
    """Runs the guide's lines on the simulated table, as its owner would at the Pi."""

    def __init__(self, guide: GuideTable) -> None:
        self.guide = guide
        self.serial = guide.nodes[0].serial
        self.deck = MockDeck(1)  # the stickers on the owner's cards
        self.outputs: list[tuple[str, str]] = []

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "NOTIFY_SOCKET"}
        env["TRUCO_TABLE_STATE"] = str(self.guide.state)
        env["TRUCO_TABLE_BY_ID_DIR"] = str(self.guide.by_id)
        return env

    def argv(self, line: str) -> list[str]:
        line = re.sub(r"<número de serie[^>]*>", self.serial, line)
        words = shlex.split(line)
        if words[:3] == ["sudo", "-u", "truco"]:
            words = words[3:]
        elif words[0] == "sudo":  # the owner is root here already
            words = words[1:]
        assert words[0] == "truco-table", line
        words[0] = str(Path(sys.executable).with_name("truco-table"))
        if words[1] == "doctor":
            words += ["--config", str(self.guide.config)]
        return words

    def run(self, line: str) -> str:
        command, _, quoted = line.partition("#")
        command = command.strip()
        if command == "sudo systemctl stop truco-table":
            self.guide.stop()
            return ""
        if command == "sudo systemctl start truco-table":
            self.guide.start()
            return ""
        argv = self.argv(command)
        if argv[1] == "enroll":
            out = self.enroll(argv)
            self.deck = MockDeck(2)  # a card re-tagged gets a new sticker
        elif "--asientos" in argv:
            out = self.seat_test(argv)
        else:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=120,
                env=self.env(),
                cwd=self.guide.base,
            )
            assert "Traceback" not in done.stderr, done.stderr
            assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
            out = done.stdout
        self.outputs.append((command, out))
        quote = quoted.strip().strip('"')
        if quote:  # the output the guide quotes in its comment ("..." is any text)
            pattern = ".*".join(re.escape(part.strip()) for part in quote.split("..."))
            assert re.search(pattern, out), f"the guide quotes {quote!r}; {command} said:\n{out}"
        return out

    def seat_test(self, argv: list[str]) -> str:
        """Step 6's seat test: a button pressed at seat 0 (down, then up) while it runs,
        then Ctrl-C, as the guide says to end it."""
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env(),
            cwd=self.guide.base,
        )
        said: list[str] = []
        reader = threading.Thread(target=lambda: said.extend(proc.stdout or ()), daemon=True)
        reader.start()
        node = self.guide.nodes[0]
        try:
            assert wait_for(lambda: any("todavía no escuchó nada" in line for line in said))
            node.set_button("truco", True)
            assert wait_for(lambda: node.app is not None and node.app.pad.buttons[0].pressed)
            node.set_button("truco", False)
            assert wait_for(lambda: "  Asiento 0: botón truco\n" in said)
        finally:
            proc.send_signal(signal.SIGINT)  # Ctrl-C, as the guide says
            proc.wait(timeout=120)
            reader.join(5)
        err = proc.stderr.read() if proc.stderr else ""
        out = "".join(said)
        assert proc.returncode == 0 and "Traceback" not in err, out + err
        # the lines the guide quotes
        assert "Asiento 0: botonera bien, lector bien, pantalla bien; escuchó: botón truco" in out
        return out

    def enroll(self, argv: list[str]) -> str:
        """The enrolment, its cards tapped on seat 0's reader when the terminal asks."""
        node = self.guide.nodes[0]
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env(),
            cwd=self.guide.base,
        )
        said: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert proc.stdout is not None
            for out_line in proc.stdout:
                said.put(out_line)
            said.put(None)

        threading.Thread(target=pump, daemon=True).start()
        lines: list[str] = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            try:
                got = said.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                break
            if got is None:
                break
            lines.append(got)
            asked = re.search(r"Tocá .* \((\w+)\)$", got.rstrip())
            if asked:
                node.tag = self.deck.uid(Card.from_str(asked.group(1)))
        node.tag = None
        assert proc.stdin is not None
        proc.stdin.close()
        code = proc.wait(timeout=60)
        assert proc.stderr is not None
        err = proc.stderr.read()
        out = "".join(lines)
        assert code == 0 and "Traceback" not in err, out + err
        return out


def test_the_guide_s_table_commands_run_as_printed() -> None:
    blocks = [b for b in command_blocks() if first(b) in RUN]
    assert [b.name for b in blocks] == [
        "armado.md#5", "armado.md#6", "armado.md#7", "armado.md#8", "problemas.md#1",
    ]  # fmt: skip
    with guide_table() as guide:
        owner = Owner(guide)
        for block in blocks:
            for line in block.lines:
                owner.run(line)
        registry = load_registry(guide.state / "decks.toml")
        assert "mazo 1" in registry.names and len(registry["mazo 1"]) == 40
        # the two doctors before and after the deck end as the guide says they do
        doctors = [out for command, out in owner.outputs if command == "truco-table doctor"]
        assert len(doctors) == 3
        for out in doctors:
            assert out.rstrip().endswith("Todo en orden: la mesa está lista para jugar."), out
        enrolled = [out for command, out in owner.outputs if "enroll" in command]
        assert "Tocá el 1 de espadas (1E)" in enrolled[0]  # the prompt the guide quotes
        assert "Quedó guardado el mazo 'mazo 1' (40 cartas)" in enrolled[0]
        assert "de nuevo 7E" in enrolled[1] and "ok Registrado el 7 de espadas" in enrolled[1]
        assert registry["mazo 1"].uid_of(Card.from_str("7E")) == MockDeck(2).uid(
            Card.from_str("7E")
        )


def test_the_guide_quotes_the_tested_micropython() -> None:
    """The file the builder flashes and its SHA-256: the same in the Spanish guide's
    command and its quoted output, in firmware/README.md and in the install's refusal."""
    guide = (ROOT / "docs" / "bares" / "armado.md").read_text(encoding="utf-8")
    readme = (ROOT / "firmware" / "README.md").read_text(encoding="utf-8")
    assert f"sha256sum {seat.TESTED_UF2}" in guide
    assert f"`{seat.TESTED_UF2_SHA256}`" in guide
    assert f"`{seat.TESTED_UF2}`" in readme and f"`{seat.TESTED_UF2_SHA256}`" in readme
    assert f"v{seat.TESTED_MICROPYTHON}" in seat.TESTED_UF2
