"""Durability pinned at the system call (issue 26): checks that spy on the real
``os.fsync``, ``os.replace``, ``os.write``, ``os.link`` and ``os.unlink`` (the ``os``
module's own functions, patched, so no wrapper of ours can hide a missing call) while
the record, the archive, the outbox, the desk's journal and state and the key files are
written, and what a change must keep: each write synced before the call returns, each
temporary file synced before its rename, each directory synced after a rename, a link
or a new name in it.

``CHECKS`` are plain functions of an empty folder (the tests in ``test_durability.py``
run them; so does the deletion check, which removes each call of ``SITES`` from its
module in turn and shows that a check fails). They reach the code through its module
(``store.GameStore``, not an imported name), so that a module rewritten by the deletion
check is the one exercised.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

Event = tuple[str, ...]


class Spy:
    """The real calls, logged as (call, path...) with each descriptor's path."""

    def __init__(self) -> None:
        self.log: list[Event] = []

    @staticmethod
    def _path(fd: int) -> str:
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return f"fd{fd}"

    @contextlib.contextmanager
    def watching(self) -> Iterator[Spy]:
        real = {name: getattr(os, name) for name in ("fsync", "replace", "write", "link", "unlink")}

        def fsync(fd: int) -> None:
            self.log.append(("fsync", self._path(fd)))
            real["fsync"](fd)

        def write(fd: int, data: Any) -> int:
            self.log.append(("write", self._path(fd)))
            n: int = real["write"](fd, data)
            return n

        def replace(src: Any, dst: Any, **kw: Any) -> None:
            self.log.append(("replace", os.path.abspath(src), os.path.abspath(dst)))
            real["replace"](src, dst, **kw)

        def link(src: Any, dst: Any, **kw: Any) -> None:
            self.log.append(("link", os.path.abspath(src), os.path.abspath(dst)))
            real["link"](src, dst, **kw)

        def unlink(path: Any, **kw: Any) -> None:
            self.log.append(("unlink", os.path.abspath(path)))
            real["unlink"](path, **kw)

        fakes = {"fsync": fsync, "replace": replace, "write": write, "link": link}
        fakes["unlink"] = unlink
        try:
            for name, fake in fakes.items():
                setattr(os, name, fake)
            yield self
        finally:
            for name, function in real.items():
                setattr(os, name, function)

    def clear(self) -> None:
        self.log.clear()

    def index(self, event: Event, after: int = -1) -> int:
        """Where ``event`` first happens after position ``after`` (-1: not at all)."""
        for i in range(after + 1, len(self.log)):
            if self.log[i] == event:
                return i
        return -1

    def synced_after(self, path: Path | str, i: int) -> bool:
        """``path`` (a file or a folder) is fsynced after position ``i``."""
        return self.index(("fsync", str(path)), i) > i

    def renamed_durably(self, tmp: Path | str | None, target: Path) -> bool:
        """A file synced, renamed onto ``target``, the folder synced after the rename."""
        for i, event in enumerate(self.log):
            if event[0] == "replace" and event[2] == str(target):
                src = event[1] if tmp is None else str(tmp)
                before = self.index(("fsync", src))
                return 0 <= before < i and self.synced_after(target.parent, i)
        return False


def _modules() -> dict[str, ModuleType]:
    names = {
        "store": "controller.table.store",
        "outbox": "controller.tournament.table.outbox",
        "journal": "controller.tournament.desk.journal",
        "state": "controller.tournament.desk.state",
        "keys": "controller.tournament.wire.keys",
        "verify": "controller.cli.verify",
        "commands": "controller.table.commands",
    }
    return {short: importlib.import_module(name) for short, name in names.items()}


# ------------------------------------------------------------------ the checks


def check_record_lines(d: Path) -> None:
    """Every record line written, then synced, before ``append`` returns; a new
    record's name synced into its folder; a rewrite synced, renamed, the folder synced."""
    m = _modules()["store"]
    spy = Spy()
    current = d / "current.truco"
    with spy.watching():
        store = m.GameStore(d)
        assert store.append("table players=2")
        w = spy.index(("write", str(current)))
        assert w >= 0 and spy.synced_after(current, w), spy.log
        assert spy.synced_after(d, -1), f"the new record's name is not synced: {spy.log}"
        for line in ("hand", "0 envido", "1 quiero"):
            spy.clear()
            assert store.append(line)
            w = spy.index(("write", str(current)))
            assert w >= 0 and spy.synced_after(current, w), (line, spy.log)
        spy.clear()
        assert store.rewrite(["table players=2", "hand", "0 envido"])
        assert spy.renamed_durably(None, current), spy.log
    store.close()


def check_record_aside(d: Path) -> None:
    """A damaged record: the original kept in damaged/ (synced, its folder synced), the
    good part rewritten durably."""
    m = _modules()["store"]
    data, _ = m.render_lines(["table players=2", "hand", "0 mazo", "hand", "1 mazo"])
    (d / "current.truco").write_bytes(data.replace(b"0 mazo", b"0 maz\x00"))
    spy = Spy()
    with spy.watching():
        store = m.GameStore(d)
        store.restore()
    [aside] = (d / "damaged").iterdir()
    assert spy.synced_after(aside, -1), spy.log
    done = spy.index(("fsync", str(aside)))
    assert spy.synced_after(d / "damaged", done), spy.log
    assert spy.renamed_durably(None, d / "current.truco"), spy.log
    store.close()


def check_record_unreadable(d: Path) -> None:
    """A record that cannot be read at all: moved into damaged/ (both folders synced
    after the rename) before a new one is written."""
    m = _modules()["store"]
    (d / "current.truco").mkdir()  # reading it fails (a folder)
    spy = Spy()
    with spy.watching():
        store = m.GameStore(d)
        store.restore()
        assert store.append("table players=2")
    [aside] = (d / "damaged").iterdir()
    current = str(d / "current.truco")
    moved = spy.index(("replace", current, str(aside)))
    assert moved >= 0, spy.log
    assert spy.synced_after(d / "damaged", moved), spy.log
    # the folder synced after the move, before a new record takes the name
    new = next(
        i
        for i in range(moved + 1, len(spy.log))
        if spy.log[i][-1] == current and spy.log[i][0] in ("replace", "write")
    )
    synced = spy.index(("fsync", str(d)), moved)
    assert moved < synced < new, spy.log
    store.close()


def check_archive(d: Path) -> None:
    """A finished game linked into archive/, unlinked from current.truco, both folders
    synced after the unlink; a restart that finds the link finishes it durably."""
    m = _modules()["store"]
    current = d / "current.truco"
    spy = Spy()
    with spy.watching():
        store = m.GameStore(d)
        store.append("table players=2")
        store.append("hand")
        store.append("0 mazo")
        spy.clear()
        target = store.archive()
        assert target is not None
        gone = spy.index(("unlink", str(current)))
        assert gone >= 0, spy.log
        assert spy.synced_after(d / "archive", gone), spy.log
        assert spy.synced_after(d, gone), spy.log
        store.close()
        # a cut between the link and the unlink: the restart unlinks, durably
        current.write_bytes(m.render_lines(["table players=2"])[0])
        os.link(current, d / "archive" / "interrupted.truco")
        spy.clear()
        again = m.GameStore(d)
        again.restore()
        gone = spy.index(("unlink", str(current)))
        assert gone >= 0 and spy.synced_after(d, gone), spy.log
        again.close()


def check_outbox(d: Path) -> None:
    """The outbox: a new journal's name synced, every entry synced before ``append``
    returns, ``acked`` renamed durably, a torn end cut off durably, a damaged journal
    rewritten durably."""
    m = _modules()["outbox"]
    folder = d / "outbox"
    journal = folder / "journal.jsonl"
    spy = Spy()
    with spy.watching():
        box = m.Outbox(folder)
        assert spy.synced_after(folder, -1), f"the new journal's name: {spy.log}"
        for n in range(3):
            spy.clear()
            box.append("events", b'{"n":%d}' % n)
            w = spy.index(("write", str(journal)))
            assert w >= 0 and spy.synced_after(journal, w), spy.log
        box.ack(1)
        box.ack(2)
        spy.clear()
        assert box.save_acked()
        assert spy.renamed_durably(folder / "acked.tmp", folder / "acked"), spy.log
        box.close()
        with open(journal, "ab") as f:
            f.write(b'{"seq":4,"topic":"ev')  # a torn end
        spy.clear()
        m.Outbox(folder).close()
        assert spy.synced_after(journal, -1), f"the torn end's cut: {spy.log}"
        data = journal.read_bytes()
        journal.write_bytes(data.replace(b'"seq":2', b'"seq":x', 1))  # damage
        spy.clear()
        m.Outbox(folder).close()
        assert spy.renamed_durably(folder / "journal.jsonl.tmp", journal), spy.log


def check_desk_journal(d: Path) -> None:
    """The desk's journal: its name synced when created, every entry synced before
    ``append`` returns, a torn last line cut off durably."""
    m = _modules()["journal"]
    folder = d / "desk"
    spy = Spy()
    with spy.watching():
        j = m.AuditJournal(folder, "t", b"k" * 32)
        j.open()
        path = j.path
        assert spy.synced_after(folder, -1), spy.log
        for n in range(3):
            spy.clear()
            j.append(1000.0 + n, "test", {"n": n})
            assert spy.synced_after(path, -1), spy.log
        j.close()
        with open(path, "ab") as f:
            f.write(b'{"n":4,"t":1')
        spy.clear()
        again = m.AuditJournal(folder, "t", b"k" * 32)
        assert len(again.open()) == 3
        assert spy.synced_after(path, -1), f"the torn line's cut: {spy.log}"
        again.close()


def check_desk_state(d: Path) -> None:
    """The desk's state journal (``events.jsonl``): a game's record and a referee's
    acknowledgement synced before they take effect."""
    from tests.tournament.conftest import KEY
    from tests.tournament.desk.test_desk import GAME, event, final_score, record_message, sealed_for

    m = _modules()["state"]
    desk = m.DeskState("t", out_dir=d / "desk", key=KEY, profile="tournament")
    log = d / "desk" / "events.jsonl"
    spy = Spy()
    with spy.watching():
        desk.handle(*record_message("mesa01", 1, sealed_for("mesa01"), score=final_score(GAME)))
        assert spy.synced_after(log, -1), f"the record's message: {spy.log}"
        desk.handle(
            *event("mesa01", 2, "refusal", seat=0, action=None, code="unknown_card", text="x")
        )
        assert desk.tables["mesa01"].pending()
        spy.clear()
        assert desk.ack("mesa01") == 1
        assert spy.synced_after(log, -1), f"the acknowledgement: {spy.log}"
    desk.close()


def check_key_files(d: Path) -> None:
    """A key file: written, synced, renamed, its folder synced."""
    m = _modules()["keys"]
    spy = Spy()
    target = d / "keys" / "mesa01.key"
    with spy.watching():
        m.write_private(target, b"00" * 32)
    assert spy.renamed_durably(None, target), spy.log


def check_sealed_file(d: Path) -> None:
    """``truco-table seal``'s output: written, synced, renamed, its folder synced."""
    m = _modules()["verify"]
    spy = Spy()
    target = d / "sealed.truco"
    with spy.watching():
        m._write_atomically(str(target), "table players=2\n")
    assert spy.renamed_durably(None, target), spy.log


def check_archive_damaged(d: Path) -> None:
    """A damaged record caught between the archive's link and unlink (issue 45): moved
    from the archive to damaged/, both folders synced after the move."""
    m = _modules()["store"]
    store = m.GameStore(d)
    for line in ("table players=2", "hand", "deal 0: 7C 6C 3E", "deal 1: 2O 1B 4B"):
        store.append(line)
    store.append("0 envido")
    store.close()
    (d / "archive").mkdir()
    os.link(d / "current.truco", d / "archive" / "x.truco")
    with open(d / "current.truco", "ab") as f:
        f.write(b"\0\0 torn")
    spy = Spy()
    with spy.watching():
        again = m.GameStore(d)
        again.restore()
    moved = next(
        i for i, e in enumerate(spy.log) if e[:2] == ("replace", str(d / "archive" / "x.truco"))
    )
    assert spy.synced_after(d / "damaged", moved), spy.log
    assert spy.synced_after(d / "archive", moved), spy.log
    again.close()


def check_command_file(d: Path) -> None:
    """``truco-table control``'s command file: written, synced, renamed into control/,
    the folder synced (a pending command survives a power cut); control/ made, its name
    synced into the state folder."""
    m = _modules()["commands"]
    spy = Spy()
    with spy.watching():
        target = m.drop_command(d, "undo", command_id="c1")
    assert spy.synced_after(d, -1), f"control/'s name is not synced: {spy.log}"
    assert spy.renamed_durably(None, target), spy.log


CHECKS: dict[str, Callable[[Path], None]] = {
    "record-lines": check_record_lines,
    "record-aside": check_record_aside,
    "record-unreadable": check_record_unreadable,
    "archive": check_archive,
    "outbox": check_outbox,
    "desk-journal": check_desk_journal,
    "desk-state": check_desk_state,
    "key-files": check_key_files,
    "sealed-file": check_sealed_file,
    "archive-damaged": check_archive_damaged,
    "command-file": check_command_file,
}


# ------------------------------------------------------------------ the deletion check


@dataclass(frozen=True, slots=True)
class Site:
    """One durability call: in ``module``'s function ``function`` (``Class.method``), the
    ``occurrence``-th statement that is exactly the call ``call``."""

    module: str
    function: str
    call: str
    occurrence: int = 0

    @property
    def name(self) -> str:
        extra = f"#{self.occurrence + 1}" if self.occurrence else ""
        return f"{self.module}:{self.function}:{self.call}{extra}"


SITES = (
    # the record (controller/table/store.py): the real calls, and where they are made
    Site("store", "Disk.fsync", "os.fsync(fd)"),
    Site("store", "Disk.fsync_dir", "os.fsync(fd)"),
    Site("store", "GameStore._sync_head", "self.disk.fsync(fd)"),
    Site("store", "GameStore._sync_head", "self.disk.fsync_dir(self.dir)"),
    Site("store", "GameStore._write_file", "self.disk.fsync(fd)"),
    Site("store", "GameStore._open", "self.disk.fsync_dir(self.dir)"),
    Site("store", "GameStore._settle", "self.disk.fsync_dir(self.damaged_dir)"),
    Site("store", "GameStore._settle", "self.disk.fsync_dir(self.dir)"),
    Site("store", "GameStore._settle", "self.disk.fsync_dir(self.damaged_dir)", 1),
    # the archive
    Site("store", "GameStore._archive_head", "self.disk.fsync_dir(self.archive_dir)"),
    Site("store", "GameStore._archive_head", "self.disk.fsync_dir(self.dir)"),
    Site("store", "GameStore._finish_interrupted_archive", "self.disk.fsync_dir(self.dir)"),
    Site("store", "GameStore._take_out_of_archive", "self.disk.fsync_dir(self.damaged_dir)"),
    Site("store", "GameStore._take_out_of_archive", "self.disk.fsync_dir(self.archive_dir)"),
    # truco-table control's command files
    Site("commands", "drop_command", "os.fsync(fd)"),
    Site("commands", "drop_command", "Disk().fsync_dir(control)"),
    Site("commands", "drop_command", "fsync_dir(state_dir)"),
    # the outbox
    Site("outbox", "atomic_write", "os.fsync(f.fileno())"),
    Site("outbox", "atomic_write", "fsync_dir(path.parent)"),
    Site("outbox", "Outbox.__init__", "fsync_dir(self.dir)"),
    Site("outbox", "Outbox.append", "os.fsync(self._fd)"),
    Site("outbox", "Outbox._truncate", "os.fsync(f.fileno())"),
    # the desk's journal and state
    Site("journal", "AuditJournal.open", "os.fsync(f.fileno())"),
    Site("journal", "AuditJournal.open", "fsync_dir(self.path.parent)"),
    Site("journal", "AuditJournal.append", "os.fsync(self._file.fileno())"),
    Site("state", "DeskState._journal", "os.fsync(self._log.fileno())"),
    Site("state", "DeskState.ack", "os.fsync(self._log.fileno())"),
    # the key files and sealed records
    Site("keys", "write_private", "os.fsync(fd)"),
    Site("keys", "write_private", "fsync_dir(p.parent)"),
    Site("verify", "_write_atomically", "os.fsync(f.fileno())"),
    Site("verify", "_write_atomically", "fsync_dir(target.parent)"),
)


def _function(tree: ast.Module, qualname: str) -> ast.FunctionDef:
    scope: list[ast.stmt] = tree.body
    *outer, name = qualname.split(".")
    for part in outer:
        scope = next(n for n in scope if isinstance(n, ast.ClassDef) and n.name == part).body
    return next(n for n in scope if isinstance(n, ast.FunctionDef) and n.name == name)


def without(source: str, site: Site) -> str:
    """``source`` with the site's statement replaced by ``pass``."""
    function = _function(ast.parse(source), site.function)
    found = [
        node
        for node in ast.walk(function)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and ast.get_source_segment(source, node) == site.call
    ]
    found.sort(key=lambda n: n.lineno)
    if len(found) <= site.occurrence:
        raise LookupError(f"{site.name}: no such call (the site list is out of date)")
    node = found[site.occurrence]
    lines = source.splitlines(keepends=True)
    line = lines[node.lineno - 1]
    indent = line[: len(line) - len(line.lstrip())]
    lines[node.lineno - 1 : node.end_lineno] = [f"{indent}pass  # deleted: {site.call}\n"]
    return "".join(lines)


@contextlib.contextmanager
def deleted(site: Site) -> Iterator[None]:
    """The site's module as if the call were deleted (its namespace rewritten in place,
    put back as it was afterwards)."""
    module = _modules()[site.module]
    assert module.__file__ is not None
    source = Path(module.__file__).read_text(encoding="utf-8")
    saved = dict(module.__dict__)
    code = compile(without(source, site), module.__file__, "exec")
    try:
        exec(code, module.__dict__)
        yield
    finally:
        for name in set(module.__dict__) - set(saved):
            del module.__dict__[name]
        module.__dict__.update(saved)


def failing_checks(site: Site, folder: Path) -> list[str]:
    """The checks that fail with the site's call deleted (each in its own folder)."""
    failed = []
    with deleted(site):
        for n, (name, check) in enumerate(CHECKS.items()):
            where = folder / f"{n}-{name}"
            where.mkdir(parents=True)
            try:
                check(where)
            except AssertionError:
                failed.append(name)
    return failed


def main() -> int:
    """``python -m tests.table.durability``: every site deleted in turn, what failed."""
    import logging
    import tempfile
    import time

    logging.disable(logging.CRITICAL)  # the checks' own warnings (damage found) aside
    start = time.monotonic()
    missed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, site in enumerate(SITES):
            failed = failing_checks(site, Path(tmp) / str(i))
            missed += not failed
            print(f"{'caught' if failed else 'MISSED'} {site.name}: {', '.join(failed) or '-'}")
    print(f"sites={len(SITES)} missed={missed} seconds={time.monotonic() - start:.1f}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["CHECKS", "SITES", "Site", "Spy", "deleted", "failing_checks", "main", "without"]
