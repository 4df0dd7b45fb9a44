"""The table under a failing SD card (issue 26): commands acknowledged once, the
outgoing queue bounded, refusals counted, notices on every seat, the mock run's exit and
the archive's free-space reserve."""

from __future__ import annotations

import contextlib
import errno
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.engine import HouseRules
from controller.table.service import drop_command
from controller.table.store import plain

from .faulty_disk import FaultyDisk
from .panel_text import PanelDisplay, panel_text
from .test_service_faults import Rig

# ----------------------------------------------------------- commands, disk or no disk


def _served(rig: Rig, stop: threading.Event) -> threading.Thread:
    def serve() -> None:
        while not stop.is_set():
            rig.service.step(0.02)

    thread = threading.Thread(target=serve)
    thread.start()
    return thread


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EROFS, errno.EIO])
def test_control_undo_is_acknowledged_while_the_disk_refuses_and_applied_once(
    tmp_path: Path, error: int, capsys: pytest.CaptureFixture[str]
) -> None:
    from controller.cli import main

    disk = FaultyDisk(error)
    run = tmp_path / "run"  # the runtime folder, in memory: the table answers there
    run.mkdir()
    rig = Rig(tmp_path, disk=disk, answers=run / "controls.json")
    rig.deal()
    for seat, button in [(0, "envido"), (1, "quiero")]:
        rig.press(seat, button)
        rig.run()
    disk.failing = True
    stop = threading.Event()
    server = _served(rig, stop)
    try:
        argv = ["control", "undo", "--state", str(tmp_path), "--run", str(run), "--id", "u1"]
        assert main([*argv, "--wait", "5"]) == 0
        out = capsys.readouterr().out  # what the table did, and that it is in memory
        assert out.startswith("undo: deshecho: 1 quiero (en memoria: ")
        # the retry of the same command (its id) is answered, not applied again
        assert main([*argv, "--wait", "5"]) == 0
        assert capsys.readouterr().out.startswith("undo: ya estaba hecho: deshecho: 1 quiero")
    finally:
        stop.set()
        server.join()
    assert rig.moves() == ["0 envido"]  # one undo, in memory
    assert not list((tmp_path / "control").iterdir())
    assert (run / "controls.json").exists()
    disk.failing = False
    rig.clock.now += 5
    rig.run()
    rig.service.step(0.0)
    again = Rig(tmp_path)  # the disk took it: one undo in the record, noted once
    assert again.moves() == ["0 envido"]
    text = plain((tmp_path / "current.truco").read_text(encoding="utf-8"))
    assert text.count("# control u1: deshecho: 1 quiero\n") == 1
    assert text.count("deshecho por el árbitro") == 1


def test_a_retried_command_id_is_applied_once_across_a_restart(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.deal()
    for seat, button in [(0, "envido"), (1, "quiero")]:
        rig.press(seat, button)
        rig.run()
    drop_command(tmp_path, "undo", command_id="again")
    rig.service.step(0.0)
    assert rig.moves() == ["0 envido"]
    rig.close()
    restarted = Rig(tmp_path)
    drop_command(tmp_path, "undo", command_id="again")  # the retry after the restart
    restarted.service.step(0.0)
    assert restarted.moves() == ["0 envido"]
    assert not list((tmp_path / "control").iterdir())
    drop_command(tmp_path, "undo", command_id="another")  # a new command is applied
    restarted.service.step(0.0)
    assert restarted.moves() == []


@pytest.mark.parametrize("words", [("new-game",), ("rules", "target=15")])
def test_new_game_and_rules_retried_are_applied_once(
    tmp_path: Path, words: tuple[str, ...]
) -> None:
    disk = FaultyDisk(errno.ENOSPC)
    rig = Rig(tmp_path, disk=disk)
    if words[0] == "new-game":
        rig.deal()
        rig.press(0, "envido")
        rig.run()
    disk.failing = True
    drop_command(tmp_path, *words, command_id="g1")
    rig.service.step(0.0)
    assert not list((tmp_path / "control").iterdir())  # acknowledged with no disk
    assert rig.game.hand_number == 0 and not rig.moves()  # applied: a new game
    rig.deal()
    rig.press(0, "truco")
    rig.run()
    drop_command(tmp_path, *words, command_id="g1")
    rig.service.step(0.0)
    assert rig.moves() == ["0 truco"]  # the retry did not start another game
    assert rig.service.next_rules is None  # nor set the rules again for the next one
    assert not list((tmp_path / "control").iterdir())


def test_a_command_withdrawn_before_the_table_claims_it_is_not_applied(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.deal()
    rig.press(0, "envido")
    rig.run()
    path = drop_command(tmp_path, "undo", command_id="late")
    path.unlink()  # what the command line does when its --wait runs out
    rig.service.step(0.0)
    assert rig.moves() == ["0 envido"]


def test_control_cli_rejects_a_bad_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import main

    assert main(["control", "undo", "--state", str(tmp_path), "--id", "../x"]) == 2
    assert "--id" in capsys.readouterr().err
    assert main(["control", "undo", "--state", str(tmp_path), "--wait", "0.1", "--id", "k"]) == 1
    assert "--id k" in capsys.readouterr().err  # how to retry, once


# ------------------------------------- the outgoing queue and refusals while refusing


def _stuck_button(rig: Rig, presses: int, seat: int = 1, button: str = "truco") -> None:
    for n in range(presses):
        rig.press(seat, button)  # not its turn: refused
        if n % 32 == 31:
            rig.run()
    rig.run()


@pytest.mark.parametrize("record_refusals", [False, True])
def test_the_outgoing_queue_stays_bounded_while_the_disk_refuses(
    tmp_path: Path, record_refusals: bool
) -> None:
    import dataclasses
    import gc
    import tracemalloc

    disk = FaultyDisk(errno.EROFS)
    rig = Rig(tmp_path, disk=disk)
    service = rig.service
    service.config = dataclasses.replace(service.config, record_refusals=record_refusals)
    rig.deal()
    disk.failing = True
    rig.press(0, "envido")  # an accepted action waiting for the disk
    rig.run()
    _stuck_button(rig, 1_000)  # warm up (caches, the first window, the counters)
    tracemalloc.start()
    try:
        gc.collect()  # what is alive, not the garbage a collection would free
        before = tracemalloc.get_traced_memory()[0]
        presses = 10_000
        for _ in range(presses // 2_000):
            rig.clock.now += 3.0  # windows open and close: count lines come and go
            _stuck_button(rig, 2_000)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # at most 1 MB per 10^6 presses: 1 byte a press
    assert grown <= presses, f"{grown} bytes for {presses} presses"
    assert len(service.outgoing.queue) <= 2 + 256  # the deal, the envido, the refusals kept
    assert service.refusals_untold > 0.99 * (presses + 1_000) - 256
    disk.failing = False
    rig.clock.now += 60
    rig.service.step(0.0)
    rig.run()
    assert rig.moves() == ["0 envido"]
    assert [type(e).__name__ for e in rig.events].count("Accepted") == 2  # deal, envido
    text = (tmp_path / "current.truco").read_text(encoding="utf-8")
    lines = text.splitlines()
    if record_refusals:
        # a count line per window, not a line per press (11,000 presses, 15 s)
        refusals = [line for line in lines if line.startswith("# rechaz")]
        assert 5 < len(refusals) <= 3 * 6
        counted = sum(
            int(line.split(", ")[1].split()[0])
            for line in refusals
            if line.startswith("# rechazos sin anotar: asiento 1, ")
        )
        told = sum(1 for line in refusals if line.startswith("# rechazado: "))
        assert counted + told == presses + 1_000
    else:
        assert not any(line.startswith("# rechaz") for line in lines)
    from controller.table.store import plain
    from controller.transcript import parse, replay

    assert [str(a) for a in replay(parse(plain(text))).game.hand_actions] == ["0 envido"]


# ------------------------------------------- a last line without its newline, checked


def test_a_record_line_that_lost_only_its_newline_is_kept(tmp_path: Path) -> None:
    from controller.table.store import GameStore, render_lines

    lines = ["table players=2", "hand", "0 envido", "1 quiero"]
    data = render_lines(lines)[0]
    for kept in (1, 4):  # the header alone, or a whole game's last action
        (tmp_path / "current.truco").write_bytes(render_lines(lines[:kept])[0][:-1])
        store = GameStore(tmp_path)
        assert store.restore() == lines[:kept]
        assert store.damage is None and store.dropped is None
        store.close()
        assert (tmp_path / "current.truco").read_bytes() == render_lines(lines[:kept])[0]
    # a fragment whose check does not match is still a torn end, dropped quietly
    (tmp_path / "current.truco").write_bytes(data[:-1].replace(b"1 quiero", b"1 quier0"))
    store = GameStore(tmp_path)
    store.restore()
    assert store.lines == lines[:3] and store.damage is None and store.dropped is not None
    store.close()


def _journal(folder: Path, entries: int, payload: bytes) -> Path:
    """An outbox journal of ``entries`` messages (``payload % seq``), closed."""
    from controller.tournament.table.outbox import Outbox

    box = Outbox(folder)
    for n in range(1, entries + 1):
        box.append("events", payload % n)
    box.close()
    return folder / "journal.jsonl"


def test_outbox_lines_are_checked_at_open(tmp_path: Path) -> None:
    from controller.tournament.table.outbox import Outbox

    journal = _journal(tmp_path, 5, b'{"seq":%d,"kind":"action"}')
    data = journal.read_bytes()
    flipped = data.replace(b'{"seq":3,', b'{"seq":4,', 1)  # one digit: seq 3 becomes 4
    assert flipped != data
    journal.write_bytes(flipped)
    again = Outbox(tmp_path)
    # the damaged line is seq 3, lost; 4 and 5 stay where they were, nothing renumbered
    assert again.lost == [3] and again.damage is not None
    assert [e.payload for e in again.entries(4, 5)] == [
        b'{"seq":4,"kind":"action"}',
        b'{"seq":5,"kind":"action"}',
    ]
    assert again.next_seq() == 6
    again.close()


def test_an_outbox_entry_that_lost_only_its_newline_keeps_its_seq(tmp_path: Path) -> None:
    from controller.tournament.table.outbox import Outbox

    journal = _journal(tmp_path, 3, b'{"seq":%d}')
    journal.write_bytes(journal.read_bytes()[:-1])  # the card lost the last newline
    again = Outbox(tmp_path)
    assert again.next_seq() == 4 and again.damage is None and not again.lost
    assert again.get(3) is not None and again.get(3).payload == b'{"seq":3}'  # type: ignore[union-attr]
    assert journal.read_bytes().endswith(b"\n")
    again.append("events", b'{"seq":4}')
    again.close()
    assert len(Outbox(tmp_path)) == 4


# ------------------------------------------------- notices on every seat, read back


def _panels(rig: Rig, *, pages: bool = True) -> list[PanelDisplay]:
    """The rig's seats given panels read back from their pixels (node frames)."""
    panels = [PanelDisplay(pages=pages) for _ in rig.service.displays]
    rig.service.displays = list(panels)
    rig.service.redraw(force=True)
    return panels


def _all_say(panels: list[PanelDisplay], words: str) -> list[str]:
    """The panels' texts not saying ``words`` (empty: every seat says them)."""
    return [f"seat {n}: {p.text()}" for n, p in enumerate(panels) if words not in p.text()]


def test_the_panel_reader_reads_every_screen_kind() -> None:
    from controller.cli.gallery import shots
    from controller.render.screen import render_screen, screen_content

    read = 0
    for shot in shots():
        content = screen_content(shot.screen)
        if content.card:
            continue
        text = panel_text(render_screen(shot.screen))
        if content.banner:
            assert text == content.banner, shot.name
        else:
            assert text[1:] == (content.lines[0].text, content.lines[1].text), shot.name
        read += 1
    assert read > 50


@pytest.mark.parametrize("pages", [True, False], ids=["node-frames", "images"])
def test_sin_disco_reaches_every_seat_and_clears_within_a_second(
    tmp_path: Path, pages: bool
) -> None:
    from controller.table.service import RETRY_S

    disk = FaultyDisk(errno.ENOSPC)
    rig = Rig(tmp_path, disk=disk, rules=HouseRules(players=4))
    panels = _panels(rig, pages=pages)
    assert not any("SIN DISCO" in p.text() for p in panels)
    disk.failing = True
    rig.deal({0: "7C 6C 3E", 1: "2O 1B 4B", 2: "5E 4E 12C", 3: "7O 6O 11B"})
    assert rig.game.hand_in_progress
    turn = rig.game.view(0).turn
    assert turn is not None
    assert not _all_say(panels, "SIN DISCO"), "while the deal is read and after"
    assert "TURNO: VOS" in panels[turn].text()  # the seat whose turn it is, told too
    rig.press(turn, "envido")  # a call: the other team must answer
    rig.run()
    assert not _all_say(panels, "SIN DISCO")
    answering = (turn + 1) % 4
    assert "QUIERO" in panels[answering].text()  # its answers stay in view
    disk.failing = False
    rig.clock.now += RETRY_S  # the next retry: the record catches up
    rig.service.step(0.0)  # no event comes
    assert not rig.store.pending
    assert not [p.text() for p in panels if "SIN DISCO" in p.text()]


def test_registro_danado_reaches_every_seat_for_a_minute(tmp_path: Path) -> None:
    from controller.hal.events import NodeConnected
    from controller.table.store import render_lines

    lines = ["table players=2", "hand", "deal 0: 7C 6C 3E", "deal 1: 2O 1B 4B", "0 envido"]
    data = bytearray(render_lines([*lines, "1 quiero", "0 play 3E"])[0])
    at = data.index(b"1 quiero")
    data[at : at + 4] = bytes(4)  # a damaged line: the game goes on from line 5
    (tmp_path / "current.truco").write_bytes(bytes(data))
    rig = Rig(tmp_path)
    panels = _panels(rig)
    assert rig.store.damage is not None
    start = rig.clock.now
    assert not _all_say(panels, "REGISTRO DAÑADO")
    for seat in (0, 1):  # the nodes come up: their notice takes the lines
        rig.post(seat, NodeConnected("/dev/ttyACM0"))
    rig.run()
    assert not _all_say(panels, "REGISTRO DAÑADO")
    for t in (5.0, 20.0, 40.0, 59.0):
        rig.clock.now = start + t
        rig.press(1, "quiero")  # play goes on under the notice
        rig.run()
        rig.service.step(0.0)
        assert not _all_say(panels, "REGISTRO DAÑADO"), t
    rig.clock.now = start + 60.0
    rig.service.step(0.0)  # no event: it ends on its own, at once
    assert not [p.text() for p in panels if "REGISTRO DAÑADO" in p.text()]


# -------------------------------------------- a real full card: a small tmpfs (ENOSPC)


@pytest.fixture
def card(tmp_path: Path) -> Iterator[Callable[[int], Path]]:
    """``card(size)``: a real tmpfs of ``size`` bytes mounted under tmp_path (root only:
    skipped elsewhere), unmounted after the test."""
    import subprocess

    mounted: list[Path] = []

    def mount(size: int) -> Path:
        where = tmp_path / f"card{len(mounted)}"
        where.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(folder: Path, leave: int = 0) -> None:
    """Fill the file system of ``folder`` until at most ``leave`` bytes are free."""
    import os

    with open(folder / "filler", "wb") as f:
        while (st := os.statvfs(folder)).f_bavail * st.f_frsize > leave:
            try:
                f.write(b"x" * min(4096, st.f_bavail * st.f_frsize - leave or 4096))
                f.flush()
            except OSError:
                break


def test_a_mock_script_that_cannot_write_its_record_says_so_and_fails(
    card: Callable[[int], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from controller.cli import main
    from controller.cli.run import EXIT_NOT_RECORDED

    script = tmp_path / "game.truco"
    script.write_text("table players=2 target=15\n0 mazo\n", encoding="utf-8")
    roomy = card(1 << 20)
    assert main(["run", "--mock", "--script", str(script), "--bots", "--state", str(roomy)]) == 0
    assert '"winner"' in capsys.readouterr().out
    full = card(64 << 10)
    _fill(full)
    status = main(["run", "--mock", "--script", str(script), "--bots", "--state", str(full)])
    err = capsys.readouterr().err
    assert status == EXIT_NOT_RECORDED
    assert "cannot write the game's record" in err and "No space left" in err
    assert "Traceback" not in err
    # a card gone read-only (EROFS): the same
    import subprocess

    readonly = card(1 << 20)
    subprocess.run(["mount", "-o", "remount,ro", str(readonly)], check=True)
    status = main(["run", "--mock", "--script", str(script), "--bots", "--state", str(readonly)])
    err = capsys.readouterr().err
    assert status == EXIT_NOT_RECORDED and "Read-only file system" in err, err
    # --record FILE on a card with one page left: the header fits, the game does not
    (full / "filler").unlink()
    _fill(full, leave=4096)
    six = tmp_path / "six.truco"
    six.write_text("table players=6 target=30\n0 mazo\n", encoding="utf-8")  # ~7 KB
    record = full / "r.truco"
    # the plain bot (facil), whose seeded six-seat game makes a record of some 7 KB (the
    # club player's is shorter, and might fit the page)
    argv = ["run", "--mock", "--players", "6", "--script", str(six), "--bots", "--bot", "facil"]
    status = main([*argv, "--record", str(roomy / "whole.truco")])
    capsys.readouterr()
    assert status == 0 and (roomy / "whole.truco").stat().st_size > 4096
    status = main([*argv, "--record", str(record)])
    err = capsys.readouterr().err
    assert status == EXIT_NOT_RECORDED, err
    assert f"cannot write {record}" in err and "incomplete" in err
    assert "Traceback" not in err


def test_the_archive_keeps_a_free_space_reserve_oldest_games_first(
    card: Callable[[int], Path],
) -> None:
    import os

    from controller.table.store import ArchivePolicy, GameStore

    state = card(512 << 10)
    archive = state / "archive"
    archive.mkdir()
    for n in range(6):  # six old games of 64 KiB each, oldest first
        old = archive / f"2026010{n}-120000.truco"
        old.write_bytes(b"# old\n" * ((64 << 10) // 6))
        os.utime(old, ns=(n * 10**9, n * 10**9))
    policy = ArchivePolicy(reserve_fraction=0.25)  # 128 KiB of the 512 KiB card
    store = GameStore(state, policy=policy)
    for line in ("table players=2", "hand", "0 mazo"):
        assert store.append(line)
    done = store.archive()
    assert done is not None and done.exists()
    st = os.statvfs(state)
    assert st.f_bavail * st.f_frsize >= 128 << 10
    left = sorted(p.name for p in archive.iterdir())
    assert done.name in left
    # the oldest went first, the newest stayed
    assert "20260105-120000.truco" in left and "20260100-120000.truco" not in left
    gone = [f"2026010{n}-120000.truco" for n in range(6) if f"2026010{n}-120000.truco" not in left]
    assert gone == [f"2026010{n}-120000.truco" for n in range(len(gone))]


def test_a_card_full_of_archived_games_makes_room_for_the_current_one(
    card: Callable[[int], Path],
) -> None:
    """Two archived games filled a small card and the table stayed on "Sin disco" for
    good: now the oldest are deleted when the record meets a full card."""
    import os

    from controller.table.store import GameStore

    state = card(256 << 10)
    archive = state / "archive"
    archive.mkdir()
    for n in range(3):
        old = archive / f"2026010{n}-120000.truco"
        with open(old, "wb") as f, contextlib.suppress(OSError):
            f.write(b"# old\n" * ((80 << 10) // 6))
        os.utime(old, ns=(n * 10**9, n * 10**9))
    _fill(archive)  # and the rest of the card
    (archive / "filler").rename(archive / "20251231-120000.truco")  # the oldest of all
    os.utime(archive / "20251231-120000.truco", ns=(0, 0))
    store = GameStore(state)
    assert not store.append("table players=2")  # the card is full: ENOSPC
    assert store.problem is not None and "No space left" in store.problem
    assert store.flush()  # room was made: the retry writes
    assert store.append("hand") and store.append("0 mazo")
    assert store.problem is None
    assert not (archive / "20251231-120000.truco").exists()  # the oldest went first
    assert (archive / "20260102-120000.truco").exists()  # the newest stayed


# --------------------------------------------------- a flooding seat: told, and cheap


def test_flood_drops_are_logged_rate_limited_and_in_the_status(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import logging
    import socket

    from controller.table.inbox import PER_SEAT
    from controller.table.notify import Notifier, parse_flood_status
    from controller.table.service import FLOOD_LOG_S

    rig = Rig(tmp_path / "state")
    rig.deal()
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(tmp_path / "notify"))
        sock.settimeout(5)
        rig.service.notifier = Notifier(str(tmp_path / "notify"))
        with caplog.at_level(logging.WARNING, logger="controller.table.service"):
            for _ in range(1_000):  # a stuck button, faster than the loop
                rig.press(1, "truco")
            rig.run()
            for _ in range(3):  # within the window: counted, not logged again
                for _ in range(500):
                    rig.press(1, "truco")
                rig.run()
            rig.clock.now += FLOOD_LOG_S
            rig.service.step(0.0)
        lines = [r.getMessage() for r in caplog.records if "se descartaron" in r.getMessage()]
        first = 1_000 - PER_SEAT
        later = 3 * (500 - PER_SEAT)
        assert lines == [
            f"asiento 1: se descartaron {first} eventos (¿un botón trabado o un nodo que "
            f"inunda?), {first} desde el arranque",
            f"asiento 1: se descartaron {later} eventos (¿un botón trabado o un nodo que "
            f"inunda?), {first + later} desde el arranque",
        ]
        statuses = []
        while True:
            try:
                message = sock.recv(4096).decode()
            except TimeoutError:
                break
            statuses += [f[7:] for f in message.split("\n") if f.startswith("STATUS=")]
            if parse_flood_status(statuses[-1]) == {1: first + later}:
                break
        assert parse_flood_status(statuses[0]) == {1: first}
        assert parse_flood_status(statuses[-1]) == {1: first + later}


def test_another_seats_action_waits_behind_one_flood_event_and_is_drawn_at_once(
    tmp_path: Path,
) -> None:
    from controller.table.inbox import PER_SEAT

    rig = Rig(tmp_path)
    rig.deal()
    rig.press(1, "truco")
    rig.run()
    handle = rig.service.table.handle

    def logged(seat: int, event: object) -> bool:
        rig.log.append(("handle", str(seat)))
        return handle(seat, event)  # type: ignore[arg-type]

    rig.service.table.handle = logged  # type: ignore[method-assign]
    for _ in range(PER_SEAT * 3):  # seat 1's truco is stuck: refused, call_pending
        rig.press(1, "truco")
    rig.press(0, "envido")  # seat 0's action (envido goes first), behind the flood
    frames = len(rig.log)
    rig.service.step(0.0)  # one batch
    assert rig.moves() == ["1 truco", "0 envido"]
    log = rig.log[frames:]
    acted = log.index(("handle", "0"))
    assert log[:acted].count(("handle", "1")) <= 1  # behind one flood event at most
    shown = log.index(("show", "0"), acted)
    assert ("handle", "1") not in log[acted:shown]  # and drawn before the flood goes on
    assert log.count(("handle", "1")) > 32  # the batch went on with the flood
    rig.run()
    assert rig.moves() == ["1 truco", "0 envido"]


def test_a_command_claimed_before_a_power_cut_is_applied_once_on_restart(tmp_path: Path) -> None:
    from .faulty_disk import PowerCut

    rig = Rig(tmp_path)
    rig.deal()
    for seat, button in [(0, "envido"), (1, "quiero")]:
        rig.press(seat, button)
        rig.run()
    drop_command(tmp_path, "undo", command_id="cut")

    def cut(*args: object, **kw: object) -> bool:
        raise PowerCut("after the claim, before the undo")

    rig.service.command = cut  # type: ignore[method-assign]
    with pytest.raises(PowerCut):
        rig.service.step(0.0)
    assert [p.name for p in (tmp_path / "control").iterdir()] == ["cut.taken"]
    again = Rig(tmp_path)  # the restart applies the claimed command, once
    assert again.moves() == ["0 envido"]
    assert not list((tmp_path / "control").iterdir())
    drop_command(tmp_path, "undo", command_id="cut")  # the command line's retry
    again.service.step(0.0)
    assert again.moves() == ["0 envido"]


# ------------------------------------------------- issue 45: the answer is the truth


def test_a_command_without_an_id_is_refused_while_an_earlier_one_is_unresolved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from controller.cli import main

    run = tmp_path / "run"
    run.mkdir()
    argv = ["control", "undo", "--state", str(tmp_path), "--run", str(run), "--wait", "0"]
    drop_command(tmp_path, "undo", command_id="first")  # pending, and no table answered
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert "todavía no respondió al comando anterior (undo, id first)" in err
    assert "--id first" in err and "Traceback" not in err
    assert [p.name for p in (tmp_path / "control").iterdir()] == ["first.cmd"]  # no other
    assert main([*argv, "--id", "first"]) == 1  # asked again: still no table, withdrawn
    assert "no se hizo nada" in capsys.readouterr().err
    assert not list((tmp_path / "control").iterdir())
    assert main(argv) == 1  # resolved: a new command goes (and no table takes it either)


def test_an_answer_of_a_table_that_is_gone_is_not_believed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json
    import subprocess
    import sys

    from controller.cli import main

    run = tmp_path / "run"
    run.mkdir()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    answers = {"u1": {"state": "done", "text": "deshecho: 0 envido", "durable": False}}
    (run / "controls.json").write_text(json.dumps({"pid": int(gone.stdout), "answers": answers}))
    argv = ["control", "undo", "--state", str(tmp_path), "--run", str(run), "--wait", "0"]
    assert main([*argv, "--id", "u1"]) == 1  # its undo died with it: asked again, not taken
    assert "ninguna mesa tomó" in capsys.readouterr().err


def test_the_record_mark_says_what_was_done_and_is_read_back() -> None:
    from controller.table.answers import Answer, answer_in_record, mark

    lines = ["table players=2", mark("a", "deshecho: 0 envido"), "# control old"]
    lines.append(mark("n", "no había nada para deshacer"))
    assert answer_in_record(lines, "a") == Answer("done", "deshecho: 0 envido", True)
    assert answer_in_record(lines, "old") == Answer("done", "aplicado", True)  # before 45
    assert answer_in_record(lines, "n") == Answer("nothing", "no había nada para deshacer")
    assert answer_in_record(lines, "x") is None
    assert answer_in_record(lines, "ol") is None  # an id is matched whole


def test_nothing_to_undo_is_said_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from controller.cli import main

    run = tmp_path / "run"
    run.mkdir()
    rig = Rig(tmp_path, answers=run / "controls.json")
    stop = threading.Event()
    server = _served(rig, stop)
    try:
        argv = ["control", "undo", "--state", str(tmp_path), "--run", str(run), "--wait", "5"]
        assert main(argv) == 1
        assert capsys.readouterr().out == "undo: no había nada para deshacer: no se hizo nada\n"
    finally:
        stop.set()
        server.join()
