"""``truco-table verify`` and ``truco-table seal``: check or make a sealed game record.

::

    truco-table verify FILE (--key-file PATH | --config PATH) [--table ID [--tournament T]]
    truco-table seal FILE (--key-file PATH | --config PATH) --game-id ID [--out FILE]

``verify`` prints ``intact: N lines, game ID (key id K)`` (a v2 seal: also its tournament,
table and match) and exits 0, or
``tampered: line L: reason`` (L is the first line of FILE that does not verify) and exits
1. A file that cannot be read, carries no seal, or a key that cannot be loaded exits 2 with
a message on standard error. ``seal`` checks that FILE is a well-formed transcript (as
``replay`` reads it), seals it with the key and writes the sealed record to ``--out``
(atomically) or to standard output.

``--key-file`` is a file holding the key in hex; ``--config`` is the tournament's TOML
configuration (``[tournament] key = "<hex>"`` or ``key_file = "<path>"``, and
``key_id = "<id>"``). See :func:`controller.tournament.wire.seal.load_key`. Keys are never
printed. With ``--table`` the key given is the tournament's secret and the record is
checked with that table's own key (:mod:`controller.tournament.wire.keys`), as the desk does.

``controller.cli`` adds both subcommands with :func:`configure_verify` and
:func:`configure_seal`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Final, TextIO

from ..table.store import fsync_dir
from ..tournament.wire.seal import (
    KeyConfigError,
    NotSealedError,
    SealError,
    TournamentKey,
    UnsealableError,
    check_id,
    load_key,
    seal,
    verify,
)
from ..transcript import RecordFileError, TranscriptError, parse, read_record, replay

__all__ = [
    "EXIT_INTACT",
    "EXIT_MALFORMED",
    "EXIT_TAMPERED",
    "configure_seal",
    "configure_verify",
    "run_seal",
    "run_verify",
]

EXIT_INTACT: Final = 0
EXIT_TAMPERED: Final = 1
EXIT_MALFORMED: Final = 2  # unreadable, not sealed, not a transcript, no usable key


class _Failure(Exception):
    """A message for standard error and exit status 2."""


def _read(path: str) -> str:
    """The file's text exactly (no newline translation), as UTF-8."""
    try:
        return read_record(path)
    except RecordFileError as e:
        raise _Failure(str(e)) from None


def _key(args: argparse.Namespace) -> TournamentKey:
    try:
        if args.key_file is not None:
            key = load_key(args.key_file)
        else:
            key = load_key(args.config, kind="config")
    except KeyConfigError as e:
        raise _Failure(f"no usable key: {e}") from None
    table = getattr(args, "table", None)
    if table is None:
        return key
    from ..tournament.wire.keys import table_key

    try:
        return table_key(key, _tournament(args), table)
    except ValueError as e:
        raise _Failure(str(e)) from None


def _tournament(args: argparse.Namespace) -> str:
    """The tournament's name: ``--tournament``, or the configuration's ``name``."""
    if getattr(args, "tournament", None):
        return str(args.tournament)
    if args.config is not None:
        import tomllib

        with contextlib.suppress(OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            section = tomllib.loads(Path(args.config).read_text(encoding="utf-8"))
            name = section.get("tournament", {}).get("name")
            if isinstance(name, str):
                return name
    raise _Failure("--table needs the tournament's name (--tournament, or name in --config)")


def run_verify(
    args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """``truco-table verify``: 0 intact, 1 tampered, 2 unreadable, unsealed or no key."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    try:
        key = _key(args)
        text = _read(args.file)
        try:
            verdict = verify(text, key.key, key_id=key.key_id)
        except NotSealedError as e:
            raise _Failure(f"{args.file}: {e}") from None
    except _Failure as e:
        print(f"truco-table verify: {e}", file=err)
        return EXIT_MALFORMED
    table = getattr(args, "table", None)
    if verdict.ok and table is not None:
        bound = (verdict.tournament, verdict.table)
        if bound != (_tournament(args), table):
            what = f"tournament {verdict.tournament}, table {verdict.table}"
            if verdict.tournament is None:
                what = "no tournament and table (a v1 seal)"
            print(f"tampered: the seal names {what}", file=out)
            return EXIT_TAMPERED
    if verdict.ok:
        bound_text = ""
        if verdict.tournament is not None:
            bound_text = (
                f", tournament {verdict.tournament}, table {verdict.table}, match {verdict.match}"
            )
        print(
            f"intact: {verdict.lines} lines, game {verdict.game_id}{bound_text} "
            f"(key id {verdict.key_id})",
            file=out,
        )
        return EXIT_INTACT
    print(f"tampered: line {verdict.first_bad_line}: {verdict.reason}", file=out)
    return EXIT_TAMPERED


def _write_atomically(path: str, text: str) -> None:
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
        fsync_dir(target.parent)  # the rename itself survives a power cut
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def run_seal(
    args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """``truco-table seal``: 0 sealed, 2 unreadable, not a transcript, unsealable or no key."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    try:
        try:
            check_id("game id", args.game_id)
        except UnsealableError as e:
            raise _Failure(str(e)) from None
        key = _key(args)
        text = _read(args.file)
        try:
            replay(parse(text))
        except TranscriptError as e:
            raise _Failure(f"{args.file}:{e.line}: {e.message}") from None
        try:
            sealed = seal(text, key.key, key_id=key.key_id, game_id=args.game_id)
        except UnsealableError as e:
            raise _Failure(f"{args.file}: {e}") from None
        if args.out is None:
            out.write(sealed)
            return EXIT_INTACT
        try:
            _write_atomically(args.out, sealed)
        except OSError as e:
            raise _Failure(f"cannot write {args.out}: {e.strerror or e}") from None
    except (_Failure, SealError) as e:
        print(f"truco-table seal: {e}", file=err)
        return EXIT_MALFORMED
    lines = sealed.count("\n") - 1
    print(
        f"sealed: {lines} lines, game {args.game_id} (key id {key.key_id}) -> {args.out}",
        file=out,
    )
    return EXIT_INTACT


def _key_options(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--key-file", metavar="PATH", help="a file holding the key in hex")
    g.add_argument(
        "--config",
        metavar="PATH",
        help="the tournament's TOML configuration ([tournament] key or key_file, key_id)",
    )


def configure_verify(v: argparse.ArgumentParser) -> None:
    """The ``verify`` subcommand's arguments (its ``func`` is :func:`run_verify`)."""
    v.description = (
        "Check a sealed game record (docs/TRANSCRIPT.md, 'Sealed records'). Prints "
        "'intact: N lines, game ID' (exit 0) or 'tampered: line L: reason' with the "
        "first line that does not verify (exit 1); an unreadable or unsealed file, or "
        "a key that cannot be loaded, exits 2."
    )
    v.add_argument("file", help="the sealed .truco record")
    _key_options(v)
    v.add_argument(
        "--table",
        metavar="ID",
        help="the key given is the tournament's secret: verify with this table's own key "
        "(and that the seal names this tournament and table)",
    )
    v.add_argument("--tournament", metavar="NAME", help="with --table (default: the config's)")
    v.set_defaults(func=run_verify)


def configure_seal(s: argparse.ArgumentParser) -> None:
    """The ``seal`` subcommand's arguments (its ``func`` is :func:`run_seal`)."""
    s.description = (
        "Seal a transcript with the tournament key: every line gets an HMAC-SHA256 "
        "chain tag in a trailing comment and a last line seals the line count, so the "
        "record still replays unchanged. The file must be a well-formed transcript."
    )
    s.add_argument("file", help="the .truco transcript")
    _key_options(s)
    s.add_argument("--game-id", required=True, metavar="ID", help="the table/game id to seal in")
    s.add_argument("--out", metavar="FILE", help="write here (default: standard output)")
    s.set_defaults(func=run_seal)
