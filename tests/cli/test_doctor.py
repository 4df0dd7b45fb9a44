"""``truco-table doctor`` checks the ``[tournament]`` section too (issue 49): the command
layer adds the check (the table layer may not import the tournament's link), and a
section the service would refuse is a ``MAL`` naming the file, the line and the fix."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from controller.cli.doctor import tournament_check
from controller.table.doctor import Verdict, examine, mock_place, report
from controller.table.lock import TableLock
from tests.helpers import PATIENCE, wait_until
from tests.test_spanish_output import english_words

GOOD = 'name = "copa"\ntable_id = "mesa07"\nbroker = "192.168.1.10:1883"\n'
KEY = "ab" * 32


def with_tournament(config: Path, section: str) -> None:
    (config.parent / "table.key").write_text(KEY + "\n")
    (config.parent / "table.key").chmod(0o600)
    config.write_text(config.read_text() + "\n[tournament]\n" + section)
    config.chmod(0o600)


def test_a_good_section_is_listed_and_the_key_never_shown() -> None:
    with mock_place(2) as (config, place):
        with_tournament(config, GOOD + 'key_file = "table.key"\nkey_id = "copa:mesa07"\n')
        findings = examine(config, place, (tournament_check,))
    [torneo] = [f for f in findings if f.what == "Torneo"]
    assert torneo.verdict is Verdict.OK
    assert torneo.says == (
        "la mesa mesa07 del torneo copa, broker 192.168.1.10:1883, clave copa:mesa07"
    )
    text, code = report(findings)
    assert code == 0 and KEY[:16] not in text


def test_no_section_no_line_and_no_key_a_warning() -> None:
    with mock_place(2) as (config, place):
        assert not [f for f in examine(config, place, (tournament_check,)) if f.what == "Torneo"]
        with_tournament(config, GOOD)
        findings = examine(config, place, (tournament_check,))
    [torneo] = [f for f in findings if f.what == "Torneo"]
    assert torneo.verdict is Verdict.WARN and "sin clave" in torneo.says
    assert report(findings)[1] == 0


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ('broker = "host:puerto"', "tournament.broker: tendría que ser el broker del torneo"),
        ('profile = "rapido"', "tournament.profile: tendría que ser"),
        ('colour = "rojo"', "tournament.colour: clave desconocida"),
        ('key_file = "falta.key"', "no puedo leer "),
        ("keepalive_s = 0", "tournament.keepalive_s: tendría que ser un número entero"),
    ],
)
def test_a_bad_section_is_a_mal_naming_the_file_the_line_and_the_fix(
    line: str, words: str
) -> None:
    with mock_place(2) as (config, place):
        section = GOOD.replace('broker = "192.168.1.10:1883"\n', "") if "broker" in line else GOOD
        with_tournament(config, section + line + "\n")
        number = config.read_text().splitlines().index(line) + 1
        findings = examine(config, place, (tournament_check,))
    bad = [f for f in findings if f.verdict is Verdict.FAIL]
    assert [f.what for f in bad] == ["Torneo"], bad
    says = bad[0].says
    assert says.startswith(f"{config}, línea {number}: "), says
    assert words in says, says
    assert says.endswith("Corregí esa línea y volvé a arrancar la mesa."), says
    assert english_words(says) == [], says
    text, code = report(findings)
    assert code == 1 and f"  MAL  Torneo: {says}" in text.splitlines()


def test_a_key_others_can_read_is_a_mal_with_chmod() -> None:
    with mock_place(2) as (config, place):
        with_tournament(config, GOOD + 'key_file = "table.key"\n')
        (config.parent / "table.key").chmod(0o644)
        findings = examine(config, place, (tournament_check,))
    [torneo] = [f for f in findings if f.what == "Torneo"]
    assert torneo.verdict is Verdict.FAIL
    assert f"corré chmod 600 {config.parent / 'table.key'}" in torneo.says
    assert f"[tournament] en {config}" in torneo.says
    assert english_words(torneo.says) == [], torneo.says


def test_the_command_as_the_owner_runs_it() -> None:
    """``truco-table doctor --config FILE`` as a process: the line is there, exit 1."""
    with mock_place(2) as (config, _place):
        with_tournament(config, GOOD + 'profile = "rapido"\n')
        done = subprocess.run(
            [sys.executable, "-m", "controller.cli", "doctor", "--config", str(config)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [s for s in done.stdout.splitlines() if s.startswith("  MAL  Torneo: ")]
    assert len(lines) == 1, done.stdout
    assert f"{config}, línea " in lines[0] and "tournament.profile" in lines[0]
    assert english_words(lines[0]) == [], lines[0]


class _TakingTable:
    """What the seat test asks of a running table, alone: its state folder's lock held
    (``holder`` names this process) and every command dropped in its control folder
    taken (read, then removed, as the service takes one), in order."""

    def __init__(self, state: Path) -> None:
        self.lock = TableLock(state)
        self.control = state / "control"
        self.taken: list[str] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._take, daemon=True)

    def __enter__(self) -> _TakingTable:
        self.lock.acquire()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self.lock.release()

    def _take(self) -> None:
        while not self._done.wait(0.02):
            for path in sorted(self.control.glob("*.cmd")) if self.control.is_dir() else ():
                self.taken.append(path.read_text(encoding="utf-8").strip())
                path.unlink()


@pytest.mark.parametrize("sigint", ["default", "ignored"])
def test_ctrl_c_ends_the_seat_test_however_the_command_was_started(
    tmp_path: Path, sigint: str
) -> None:
    """``truco-table doctor --asientos`` says it ends with Ctrl-C: it does, started as a
    terminal starts a command and started with SIGINT ignored (as a shell starts one in
    the background: CPython then raises no ``KeyboardInterrupt``, and the test went on to
    its ``--segundos``). The test is turned off on the table, and said so."""
    state = tmp_path / "state"
    config = tmp_path / "table.toml"
    config.write_text(
        f'[table]\nplayers = 2\nstate_dir = "{state}"\n'
        + "".join(f"[[nodes.seat]]\nseat = {s}\nserial = 'e6614103e7ab120{s}'\n" for s in (0, 1))
    )
    said: list[str] = []
    with _TakingTable(state) as table:
        # the doctor inherits the disposition: the one a terminal gives, or ignored
        start = signal.SIG_IGN if sigint == "ignored" else signal.SIG_DFL
        before = signal.signal(signal.SIGINT, start)
        try:
            doctor = subprocess.Popen(
                [str(Path(sys.executable).with_name("truco-table")), "doctor", "--asientos",
                 "--config", str(config), "--segundos", "3600"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
        finally:
            signal.signal(signal.SIGINT, before)
        reader = threading.Thread(target=lambda: said.extend(doctor.stdout or ()), daemon=True)
        reader.start()
        try:
            assert wait_until(lambda: any(line.startswith("Prueba de asientos") for line in said))
            doctor.send_signal(signal.SIGINT)
            code = doctor.wait(timeout=PATIENCE)
        finally:
            doctor.kill()
            doctor.wait()
        reader.join()
    assert doctor.stderr is not None and doctor.stderr.read() == ""
    assert "Prueba terminada: la mesa juega otra vez.\n" in said, "".join(said)
    assert table.taken == ["seat-test on", "seat-test off"]
    assert code == 1  # no status file: the seats' parts are not known to be well
