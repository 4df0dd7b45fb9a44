"""`truco-table enroll` end to end: a simulated node on a pty, read by a real SeatLink."""

from __future__ import annotations

import _thread
import argparse
import io
import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import TextIO

import pytest

from controller.cli import build_parser
from controller.cli import enroll as enroll_cli
from controller.cli.enroll import MockReader, mock_script, mock_uids
from controller.engine.cards import Card
from controller.hal.deck import DeckRegistry, load_registry, save_registry
from controller.hal.enroll import ENROLL_ORDER
from controller.hal.seatlink import SeatLink
from tests.helpers import wait_until

C = Card.from_str


def parse(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def enroll(
    argv: list[str], *, keys: str | TextIO = "", by_id_dir: Path | None = None
) -> tuple[int, str]:
    args = parse(["enroll", *argv])
    assert args.func is enroll_cli.run
    out = io.StringIO()
    stream = io.StringIO(keys) if isinstance(keys, str) else keys
    extra = {} if by_id_dir is None else {"by_id_dir": by_id_dir}
    code = args.func(args, out=out, keys=stream, **extra)
    return code, out.getvalue()


def expected_deck(seed: int) -> dict[bytes, Card]:
    return dict(zip(mock_uids(seed), ENROLL_ORDER, strict=True))


# -- the simulated reader's tags ----------------------------------------------------------------


def test_mock_uids_are_deterministic_ntag213_like() -> None:
    uids = mock_uids(0)
    assert uids == mock_uids(0) != mock_uids(1)
    assert len(uids) == len(set(uids)) == 40
    assert all(len(u) == 7 and u[0] == 0x04 for u in uids)


def test_mock_script_taps_every_card_in_order() -> None:
    for seed in range(20):
        script = mock_script(seed)
        uids = mock_uids(seed)
        firsts: list[bytes] = []
        for kind, uid in script:
            if kind == "TAGON" and uid not in firsts:
                firsts.append(uid)
        assert firsts == list(uids)
    # Some seeds include mistakes (strays and bounces), some do not.
    assert any(len(mock_script(seed)) > 80 for seed in range(5))


# -- the command ---------------------------------------------------------------------------------


def test_mock_enrollment_end_to_end(tmp_path: Path) -> None:
    registry = tmp_path / "state" / "decks.toml"
    code, out = enroll(
        ["--deck", "bar deck 1", "--registry", str(registry), "--mock", "--mock-pace", "0"]
    )
    assert code == 0, out
    assert "[ 1/40] Tocá el 1 de espadas (1E)\n" in out
    assert "[40/40] Tocá el 12 de copas (12C)" in out
    assert "Lector conectado en /dev/pts/" in out
    assert "Nodo del lector 00000000c0ffee00, firmware mock" in out
    assert out.count("ok Registrado") == 40
    assert "La misma etiqueta otra vez (6B): ignorada" in out  # seed 0 bounces the 6B...
    assert "Esa carta ya está registrada como 5B" in out  # ...and taps the 5B again
    assert f"Quedó guardado el mazo 'bar deck 1' (40 cartas) en {registry}." in out
    reg = load_registry(registry)
    assert reg.names == ("bar deck 1",)
    assert dict(reg["bar deck 1"].cards) == expected_deck(0)


def test_several_decks_and_a_tag_of_another_deck(tmp_path: Path) -> None:
    registry = tmp_path / "decks.toml"
    base = ["--registry", str(registry), "--mock", "--mock-pace", "0"]
    assert enroll(["--deck", "a", *base])[0] == 0
    code, out = enroll(["--deck", "b", *base, "--seed", "7"])
    assert code == 0, out
    assert "El registro tiene 2 mazos: a, b." in out
    reg = load_registry(registry)
    assert dict(reg["b"].cards) == expected_deck(7)
    assert reg.card_of(mock_uids(7)[5]) == ENROLL_ORDER[5]
    before = registry.read_bytes()
    # The same made-up tags again: every one belongs to deck "a"; nothing is written.
    code, out = enroll(["--deck", "c", *base])
    assert code == 1
    assert "Esa carta es el 1E del mazo 'a'" in out
    assert "El lector simulado no tiene más cartas: no se escribió nada" in out
    assert "Se tocaron 0 de 40 cartas; faltan: 1E 2E 3E" in out
    assert registry.read_bytes() == before


def test_existing_deck_needs_replace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry = tmp_path / "decks.toml"
    base = ["--registry", str(registry), "--mock", "--mock-pace", "0"]
    assert enroll(["--deck", "a", *base])[0] == 0
    before = registry.read_bytes()
    assert enroll(["--deck", "A", *base, "--seed", "3"])[0] == 2
    assert "ya tiene un mazo que se llama 'a': usá --replace" in capsys.readouterr().err
    assert registry.read_bytes() == before
    code, out = enroll(["--deck", "a", *base, "--seed", "3", "--replace"])
    assert code == 0, out
    assert dict(load_registry(registry)["a"].cards) == expected_deck(3)


def test_retag_one_card(tmp_path: Path) -> None:
    registry = tmp_path / "decks.toml"
    base = ["--registry", str(registry), "--mock", "--mock-pace", "0"]
    assert enroll(["--deck", "a", *base])[0] == 0
    code, out = enroll(["--deck", "a", "--card", "7e", *base, "--seed", "9"])
    assert code == 0, out
    assert "de nuevo 7E" in out and "[ 1/1] Tocá el 7 de espadas (7E)" in out
    deck = load_registry(registry)["a"]
    expected = expected_deck(0)
    del expected[mock_uids(0)[6]]
    expected[mock_uids(9)[0]] = C("7E")
    assert dict(deck.cards) == {u: expected[u] for u in deck.cards}
    assert len(deck) == 40


def test_retag_of_an_unknown_deck(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = enroll(
        ["--deck", "zz", "--card", "7E", "--registry", str(tmp_path / "d.toml"), "--mock"]
    )
    assert code == 2
    assert "no such deck" in capsys.readouterr().err


def test_default_registry_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRUCO_TABLE_STATE", str(tmp_path))
    code, out = enroll(["--deck", "a", "--mock", "--mock-pace", "0"])
    assert code == 0, out
    assert load_registry(tmp_path / "decks.toml").names == ("a",)


def test_quit_writes_nothing(tmp_path: Path) -> None:
    registry = tmp_path / "decks.toml"
    code, out = enroll(
        ["--deck", "a", "--registry", str(registry), "--mock", "--mock-pace", "0.05"],
        keys="q\n",
    )
    assert code == 1
    assert "Saliste: no se escribió nada en" in out
    assert not registry.exists()


class _CtrlC(io.StringIO):
    """Keys typed: none; instead Ctrl-C is pressed once the command, whose output is
    ``said``, asks for the first card (waited for: a slow machine must not let it be
    pressed before, or after the deck is done)."""

    def __init__(self, said: io.StringIO) -> None:
        super().__init__()
        self.said = said

    # typeshed types _io._IOBase.readline as returning bytes; StringIO's returns str.
    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        assert wait_until(lambda: "[ 1/40]" in self.said.getvalue())
        _thread.interrupt_main()
        return ""


def test_ctrl_c_writes_nothing(tmp_path: Path) -> None:
    registry = tmp_path / "decks.toml"
    save_registry(DeckRegistry(), registry)
    before = registry.read_bytes()
    # the first card is tapped 30 s after the prompt: Ctrl-C comes while it is awaited
    argv = ["--deck", "a", "--registry", str(registry), "--mock", "--mock-pace", "30"]
    args = parse(["enroll", *argv])
    out = io.StringIO()
    code = args.func(args, out=out, keys=_CtrlC(out))
    assert code == 130
    assert "Interrumpido: no se escribió nada en" in out.getvalue()
    assert registry.read_bytes() == before


class _SigInt(_CtrlC):
    """As ``_CtrlC``, with the signal a terminal sends the main thread on Ctrl-C."""

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        assert wait_until(lambda: "[ 1/40]" in self.said.getvalue())
        main = threading.main_thread().ident
        assert main is not None
        signal.pthread_kill(main, signal.SIGINT)
        return ""


def test_the_signal_of_ctrl_c_writes_nothing_and_its_handler_is_put_back(tmp_path: Path) -> None:
    """A real SIGINT while the first card is awaited: the enrollment notes it at its next
    turn (never lost in whatever the interpreter runs when it comes), writes nothing,
    and leaves SIGINT's handler as it found it."""
    registry = tmp_path / "decks.toml"
    before = signal.getsignal(signal.SIGINT)
    args = parse(["enroll", "--deck", "a", "--registry", str(registry), "--mock",
                  "--mock-pace", "30"])  # fmt: skip
    out = io.StringIO()
    code = args.func(args, out=out, keys=_SigInt(out))
    assert code == 130, out.getvalue()
    assert "Interrumpido: no se escribió nada en" in out.getvalue()
    assert not registry.exists()
    assert signal.getsignal(signal.SIGINT) is before


def test_typed_undo_and_skip(tmp_path: Path) -> None:
    registry = tmp_path / "decks.toml"
    # Pace 30 s: the typed keys are handled before the first tag arrives, on any machine.
    code, out = enroll(
        ["--deck", "a", "--registry", str(registry), "--mock", "--mock-pace", "30"],
        keys="u\ns\nhelp\n\nq\n",
    )
    assert code == 1
    assert "-- No hay nada que deshacer" in out
    assert "-- Salteado el 1E: se pide al final" in out
    assert "Teclas: u+Enter deshace" in out
    assert "[ 1/40] Tocá el 2 de espadas (2E)" in out
    assert not registry.exists()


def test_port_and_serial_use_a_real_node(tmp_path: Path) -> None:
    """--port and --serial: the same simulated node, found by device path or by-id name."""
    registry = tmp_path / "decks.toml"
    with MockReader(mock_script(4), pace=0) as node:
        code, out = enroll(["--deck", "a", "--registry", str(registry), "--port", node.port])
    assert code == 0, out
    assert dict(load_registry(registry)["a"].cards) == expected_deck(4)
    by_id = tmp_path / "by-id"
    by_id.mkdir()
    with MockReader(mock_script(5), pace=0) as node:
        (by_id / "usb-MicroPython_Board_in_FS_mode_e6614103e7ab1234-if00").symlink_to(node.port)
        code, out = enroll(
            ["--deck", "b", "--registry", str(registry), "--serial", "E6614103E7AB1234"],
            by_id_dir=by_id,
        )
    assert code == 0, out
    assert "el nodo con número de serie USB e6614103e7ab1234" in out
    assert load_registry(registry).names == ("a", "b")


def test_a_reader_the_service_holds_fails_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Opening a node is exclusive: enroll says what to do instead of sharing its frames."""
    registry = tmp_path / "decks.toml"
    with MockReader(mock_script(6), pace=1.0) as node:
        service = SeatLink(0, node.port, lambda _seat, _event: None)
        with service:
            deadline = time.monotonic() + 5
            while not service.connected and time.monotonic() < deadline:
                time.sleep(0.01)
            assert service.connected
            started = time.monotonic()
            code, out = enroll(["--deck", "a", "--registry", str(registry), "--port", node.port])
            took = time.monotonic() - started
            assert service.connected
    assert code == 2 and took < 2.0, out
    err = capsys.readouterr().err
    assert f"truco-table enroll: {node.port} is in use by another program" in err
    assert "sudo systemctl stop truco-table" in err and len(err.strip().splitlines()) == 1
    assert not registry.exists()


class _QuitLater(io.StringIO):
    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.calls = 0

    # typeshed types _io._IOBase.readline as returning bytes; StringIO's returns str.
    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        self.calls += 1
        if self.calls > 1:
            return ""
        time.sleep(self.delay)
        return "q\n"


def test_no_reader_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(enroll_cli, "NO_READER_HINT_SECONDS", 0.1)
    by_id = tmp_path / "by-id"
    by_id.mkdir()
    registry = str(tmp_path / "decks.toml")
    code, out = enroll(
        ["--deck", "a", "--registry", registry, "--serial", "abc123"],
        keys=_QuitLater(0.5),
        by_id_dir=by_id,
    )
    assert code == 1
    assert "No hay enchufado ningún nodo con número de serie abc123 (nodos que hay: ninguno)" in out
    code, out = enroll(
        ["--deck", "a", "--registry", registry, "--port", str(tmp_path / "ttyNONE")],
        keys=_QuitLater(0.5),
    )
    assert code == 1
    assert "No responde ningún lector en" in out
    assert not os.path.exists(registry)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--deck", "a", "--port", "/dev/null", "--seed", "3"], "--seed y --mock-pace van"),
        (["--deck", " a", "--mock"], "el nombre de mazo ' a' no sirve"),
    ],
)
def test_bad_arguments(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = enroll([*argv, "--registry", str(tmp_path / "d.toml")])
    assert code == 2
    assert message in capsys.readouterr().err


def test_corrupt_registry_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry = tmp_path / "decks.toml"
    registry.write_text('format = 1\n[[deck]]\nname = "a"\n[deck.cards]\n"04" = "1E"\n')
    code, _ = enroll(["--deck", "b", "--registry", str(registry), "--mock"])
    assert code == 2
    assert f"{registry}: mazo 'a'" in capsys.readouterr().err


def test_argparse_rejects(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse(["enroll", "--deck", "a", "--mock", "--card", "8E"])
    err = capsys.readouterr().err
    assert "no hay carta '8E': un número (1-7, 10-12) y después E, B, O o C" in err
    with pytest.raises(SystemExit):
        parse(["enroll", "--deck", "a"])  # no reader
    with pytest.raises(SystemExit):
        parse(["enroll", "--deck", "a", "--mock", "--port", "/dev/ttyACM0"])
    with pytest.raises(SystemExit):
        parse(["enroll", "--deck", "a", "--mock", "--replace", "--card", "7E"])


def test_any_seats_reader_may_enroll(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A node that says it is seat 2 draws no "check the pin map" warning while enrolling."""
    caplog.set_level(logging.INFO, logger="controller.hal.seatlink")
    registry = tmp_path / "decks.toml"
    with MockReader(mock_script(0), pace=0, seat=2) as node:
        code, out = enroll(["--deck", "a", "--registry", str(registry), "--port", node.port])
    assert code == 0, out
    assert "nodo conectado" in caplog.text
    assert "says it is seat" not in caplog.text
    assert logging.getLogger("controller.hal.seatlink").filters == []
