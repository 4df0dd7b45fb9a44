"""Sealed game records: a chain of HMAC-SHA256 over a transcript's lines.

docs/TRANSCRIPT.md, section "Sealed records", is the specification. In short: every line
of the record gets a trailing comment ``" #~ " + 64 hex digits`` (its tag), where::

    mac_0 = HMAC-SHA256(key, b"truco-seal v1")
    mac_i = HMAC-SHA256(key, mac_(i-1) || uint32_be(i) || utf8(text of line i))
    tag_i = hex(mac_i)

and one last line, itself tagged the same way, seals the line count, the key id and the
game id (scheme v1), or also the tournament, the table and the match (scheme v2, what a
tournament's tables write)::

    #~seal v1 hmac-sha256 lines=N key-id=KEY-ID game=GAME-ID
    #~seal v2 hmac-sha256 lines=N key-id=KEY-ID tournament=T table=TABLE game=GAME-ID match=M #~ <tag>

The tags and the seal line are comments, so a sealed record is still a transcript that
``parse`` and ``replay`` read unchanged, with the same line numbers.

>>> key = bytes(range(32))
>>> sealed = seal("table players=2\\nhand\\n0 mazo\\n", key, key_id="club", game_id="t1-g1")
>>> print(sealed, end="")
table players=2 #~ 755c6b590d1a4fec1af69378f8fc558275653f2d05674f3ffd2b401645352db9
hand #~ 1d88b6fde15eda1966c983a92f59d0e7c2cea341332eb97195f5261ec5ffab6f
0 mazo #~ 316affa13b33d6536eacb5a4848987f4957052c274661ff6caeb5c9dc53bd66c
#~seal v1 hmac-sha256 lines=3 key-id=club game=t1-g1 #~ e356ad803e020d811afe5732d8c0ef6719acfb2bf9509f5d8556bf04b90f771d
>>> verify(sealed, key)
Verdict(ok=True, first_bad_line=None, reason='intact', lines=3, key_id='club', game_id='t1-g1', tournament=None, table=None, match=None)
>>> verify(sealed.replace("0 mazo", "1 mazo"), key)
Verdict(ok=False, first_bad_line=3, reason='line changed', lines=None, key_id=None, game_id=None, tournament=None, table=None, match=None)

Keys are never logged, printed or put in an exception message; :class:`TournamentKey`
leaves the key out of its ``repr``.
"""  # noqa: E501

from __future__ import annotations

import hashlib
import hmac
import itertools
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from ...textfile import TextFileError, read_text_file

__all__ = [
    "MIN_KEY_BYTES",
    "NO_MATCH",
    "SCHEME",
    "KeyConfigError",
    "NotSealedError",
    "SealError",
    "TournamentKey",
    "UnsealableError",
    "Verdict",
    "check_id",
    "key_fingerprint",
    "load_key",
    "seal",
    "verify",
]

#: The scheme this module writes and reads.
SCHEME: Final = "v1"
#: Shortest key accepted (128 bits).
MIN_KEY_BYTES: Final = 16
#: Between a line's text and its tag.
TAG_MARK: Final = " #~ "
#: A line whose text starts with this is the seal's own (the seal line); body lines may not.
RESERVED: Final = "#~"

_TAG_LEN: Final = 64
_SUFFIX_LEN: Final = len(TAG_MARK) + _TAG_LEN
_TAG_RE: Final = re.compile(r"[0-9a-f]{64}")
_ID_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/+@-]{0,99}")
_SEAL_LINE_RE: Final = re.compile(
    r"#~seal v1 hmac-sha256 lines=(0|[1-9][0-9]{0,9}) key-id=(\S+) game=(\S+)"
)
_SEAL_LINE_V2_RE: Final = re.compile(
    r"#~seal v2 hmac-sha256 lines=(0|[1-9][0-9]{0,9}) key-id=(\S+) tournament=(\S+)"
    r" table=(\S+) game=(\S+) match=(\S+)"
)
#: The match field of a v2 seal line for a game played outside any match.
NO_MATCH: Final = "-"
_SEAL_KEY_ID_RE: Final = re.compile(r"#~seal .*\bkey-id=(\S+)")
_SEAL_LINES_RE: Final = re.compile(r"#~seal .*\blines=([0-9]{1,10})\b")
#: What ``str.splitlines`` (and so ``transcript.parse``) breaks lines at, besides LF/CRLF.
_OTHER_BREAKS: Final = frozenset("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_MAX_LINES: Final = 2**32 - 2  # the seal line's number must fit in 32 bits
_IV_LABEL: Final = b"truco-seal v1"
_MAX_MISSING_SEARCH: Final = 100_000  # how many missing lines a diagnosis looks for at most
_FINGERPRINT_LABEL: Final = b"truco-seal key-id"


class SealError(ValueError):
    """Base of this module's errors."""


class KeyConfigError(SealError):
    """A key, key file or tournament configuration that cannot be used.

    The message names the file and what is wrong, never the key.
    """


class UnsealableError(SealError):
    """A text that cannot be sealed (a reserved ``#~`` line, a stray line break, a bad id)."""


class NotSealedError(SealError):
    """``verify`` was given a text that carries no seal at all."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What :func:`verify` found.

    ``first_bad_line`` is the 1-based line number in the file of the first line that does
    not verify (one past the last line when the record is truncated), ``None`` when intact.
    When intact, ``lines``, ``key_id`` and ``game_id`` come from the (verified) seal line;
    ``lines`` counts the record's lines before the seal line.
    """

    ok: bool
    first_bad_line: int | None
    reason: str
    lines: int | None = None
    key_id: str | None = None
    game_id: str | None = None
    tournament: str | None = None  # v2 seals only: what the seal binds besides the game
    table: str | None = None
    match: str | None = None


@dataclass(frozen=True, slots=True)
class TournamentKey:
    """A sealing key and its public id. The key is left out of ``repr``."""

    key: bytes = field(repr=False)
    key_id: str


# -- the chain ------------------------------------------------------------------------------


def _check_key(key: bytes) -> None:
    if not isinstance(key, bytes | bytearray):
        raise KeyConfigError("the key must be bytes")
    if len(key) < MIN_KEY_BYTES:
        raise KeyConfigError(f"the key is too short ({len(key)} bytes; at least {MIN_KEY_BYTES})")


def _iv(key: bytes) -> bytes:
    return hmac.new(key, _IV_LABEL, hashlib.sha256).digest()


def _mac(key: bytes, prev: bytes, number: int, text: str) -> bytes | None:
    """mac_i, or ``None`` when the text has no UTF-8 form (lone surrogates)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return hmac.new(key, prev + number.to_bytes(4, "big") + data, hashlib.sha256).digest()


def _lines(text: str) -> list[str]:
    """The record's lines: CRLF read as LF, the last line's terminator optional."""
    if not text:
        return []
    text = text.replace("\r\n", "\n")
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n")


def _split(line: str) -> tuple[str, str | None]:
    """(text, tag) of a sealed line; tag ``None`` when the line carries no well-formed tag."""
    if (
        len(line) >= _SUFFIX_LEN
        and line[-_SUFFIX_LEN:-_TAG_LEN] == TAG_MARK
        and _TAG_RE.fullmatch(line[-_TAG_LEN:])
    ):
        return line[:-_SUFFIX_LEN], line[-_TAG_LEN:]
    return line, None


def check_id(what: str, value: str) -> None:
    """Raise :class:`UnsealableError` unless ``value`` is a valid key id or game id."""
    if not isinstance(value, str) or not _ID_RE.fullmatch(value):
        raise UnsealableError(
            f"{what} {value!r}: 1 to 100 letters, digits and . _ : / + @ -, "
            "starting with a letter or digit"
        )


def key_fingerprint(key: bytes) -> str:
    """A public id derived from the key (HMAC of a fixed label), e.g. ``fp-3a9c01d27be45f60``.

    It names the key without revealing it; used when a key comes without a ``key_id``.
    """
    _check_key(key)
    return "fp-" + hmac.new(key, _FINGERPRINT_LABEL, hashlib.sha256).hexdigest()[:16]


def seal(
    text: str,
    key: bytes,
    *,
    key_id: str,
    game_id: str,
    tournament: str | None = None,
    table: str | None = None,
    match: str | None = None,
) -> str:
    """The sealed record of ``text`` (docs/TRANSCRIPT.md, "Sealed records").

    Every line keeps its text and gains a tag; a last line seals the line count, the key id
    and the game id. CRLF line ends are read as LF; the result uses LF and ends with one.
    Raises :class:`UnsealableError` for a line starting with ``#~`` (reserved for the seal,
    so a sealed record cannot be sealed again), a line break other than LF/CRLF inside the
    text, text that is not encodable as UTF-8, or a malformed id; :class:`KeyConfigError`
    for a key shorter than :data:`MIN_KEY_BYTES`.
    """
    _check_key(key)
    check_id("key id", key_id)
    check_id("game id", game_id)
    if (tournament is None) != (table is None):
        raise UnsealableError("a v2 seal names both the tournament and the table")
    if tournament is not None and table is not None:
        check_id("tournament", tournament)
        check_id("table", table)
        if match is not None:
            check_id("match", match)
        seal_text = (
            f"#~seal v2 hmac-sha256 lines={{n}} key-id={key_id} tournament={tournament}"
            f" table={table} game={game_id} match={match or NO_MATCH}"
        )
    elif match is not None:
        raise UnsealableError("a match is bound only with the tournament and the table")
    else:
        seal_text = f"#~seal {SCHEME} hmac-sha256 lines={{n}} key-id={key_id} game={game_id}"
    lines = _lines(text)
    if len(lines) > _MAX_LINES:
        raise UnsealableError("too many lines to seal")
    out: list[str] = []
    prev = _iv(key)
    for number, line in enumerate(lines, start=1):
        if line.startswith(RESERVED):
            raise UnsealableError(
                f"line {number}: lines starting with {RESERVED!r} are reserved for the seal "
                "(is the record sealed already?)"
            )
        if any(c in _OTHER_BREAKS for c in line):
            raise UnsealableError(f"line {number}: a line break other than LF or CRLF")
        mac = _mac(key, prev, number, line)
        if mac is None:
            raise UnsealableError(f"line {number}: not encodable as UTF-8")
        out.append(line + TAG_MARK + mac.hex())
        prev = mac
    seal_text = seal_text.replace("{n}", str(len(lines)), 1)
    mac = _mac(key, prev, len(lines) + 1, seal_text)
    assert mac is not None  # ASCII
    out.append(seal_text + TAG_MARK + mac.hex())
    return "\n".join(out) + "\n"


def _ok(key: bytes, prev: bytes, number: int, text: str, tag: str) -> bool:
    """Whether ``tag`` is the tag of ``text`` as line ``number`` after a line whose mac is
    ``prev`` (constant-time comparison)."""
    if not 1 <= number <= _MAX_LINES + 1:
        return False
    mac = _mac(key, prev, number, text)
    return mac is not None and hmac.compare_digest(mac.hex(), tag)


def verify(text: str, key: bytes, *, key_id: str | None = None) -> Verdict:
    """Check a sealed record; the verdict names the first line that does not verify.

    Lines are checked in file order; the first whose tag is missing or wrong is reported,
    with a diagnosis when the tags around it prove one (a line changed, its tag changed, a
    line moved, lines missing or inserted, another key). A record that ends before its seal
    line is reported at the line after its last; anything after the seal line is reported
    there. ``key_id``, if given, is the id of ``key``, only used to explain a mismatch.

    Raises :class:`NotSealedError` when no line carries a seal tag (an unsealed transcript,
    an empty file) and :class:`KeyConfigError` for a key shorter than :data:`MIN_KEY_BYTES`.
    """
    _check_key(key)
    entries = [_split(line) for line in _lines(text)]
    if all(tag is None for _, tag in entries):
        raise NotSealedError("not a sealed record: no line carries a seal tag")
    prev = _iv(key)
    for index, (line_text, tag) in enumerate(entries):
        number = index + 1
        if tag is None or not _ok(key, prev, number, line_text, tag):
            reason = _diagnose(key, entries, number, prev, key_id)
            return Verdict(False, number, reason)
        if line_text.startswith(RESERVED):
            m = _SEAL_LINE_RE.fullmatch(line_text)
            m2 = _SEAL_LINE_V2_RE.fullmatch(line_text)
            if m is None and m2 is None:
                return Verdict(False, number, "malformed seal line")
            count = int((m or m2)[1])  # type: ignore[index]
            if count != index:
                return Verdict(
                    False, number, f"the seal line counts {count} lines but follows {index}"
                )
            if number < len(entries):
                return Verdict(False, number + 1, "text after the seal line")
            if m2 is not None:
                return Verdict(True, None, "intact", index, m2[2], m2[5], m2[3], m2[4], m2[6])
            assert m is not None
            return Verdict(True, None, "intact", index, m[2], m[3])
        prev = bytes.fromhex(tag)
    return Verdict(
        False,
        len(entries) + 1,
        f"the record ends after line {len(entries)} without its seal line (truncated)",
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _diagnose(
    key: bytes,
    entries: list[tuple[str, str | None]],
    number: int,
    prev: bytes,
    key_id: str | None,
) -> str:
    """Why line ``number`` (1-based) does not verify, given that the lines before it do.

    "seal tag changed", "line changed", "line moved", "missing" and "inserted" are each
    proven by a tag that verifies (the tags of the file's other lines serve only as
    candidate predecessors). The key-id and line-count explanations read what the
    unverified seal line says; the last two reasons are the fallbacks. The search is
    linear in the number of lines.
    """
    text, tag = entries[number - 1]
    if tag is None:
        if RESERVED in text:
            return "malformed seal tag"
        return "no seal tag: a line added here, or its tag removed"

    sealed_key_id = None
    for other_text, _ in reversed(entries):
        m = _SEAL_KEY_ID_RE.match(other_text)
        if m:
            sealed_key_id = m[1]
            break
    if number == 1 and key_id is not None and sealed_key_id not in (None, key_id):
        return (
            f"sealed with another key: the seal line names key id {sealed_key_id!r}, "
            f"this key is {key_id!r}"
        )

    nxt = entries[number] if number < len(entries) else None
    expected = _mac(key, prev, number, text)
    if nxt is not None and nxt[1] is not None:
        if expected is not None and _ok(key, expected, number + 1, nxt[0], nxt[1]):
            return "seal tag changed (the line's text is as sealed)"
        if _ok(key, bytes.fromhex(tag), number + 1, nxt[0], nxt[1]):
            return "line changed"

    # Moved: the line verifies at another position p after some line of the file.
    candidates: list[tuple[bytes, int]] = [(_iv(key), 1)]
    for m_number, (_, m_tag) in enumerate(entries, start=1):
        if m_tag is not None and m_number != number:
            m_mac = bytes.fromhex(m_tag)
            candidates.extend((m_mac, p) for p in (m_number, m_number + 1, m_number + 2))
    for cand_prev, p in candidates:
        if p != number and _ok(key, cand_prev, p, text, tag):
            return f"line moved: it was sealed as line {p}"

    # Lines missing before this one: the next line follows this tag, but further on.
    if nxt is not None and nxt[1] is not None:
        limit = len(entries) + 2
        m_lines = _SEAL_LINES_RE.match(entries[-1][0])
        if m_lines:  # unverified: bounded, so a forged count cannot make this search long
            limit = max(limit, min(int(m_lines[1]) + 2, len(entries) + _MAX_MISSING_SEARCH))
        this_mac = bytes.fromhex(tag)
        for k in range(1, min(limit, _MAX_LINES)):
            if _ok(key, this_mac, number + 1 + k, nxt[0], nxt[1]):
                return f"{_plural(k, 'line')} missing before this line"

    # Lines inserted: a later line is the sealed line `number`.
    for j in range(number + 1, len(entries) + 1):
        j_text, j_tag = entries[j - 1]
        if j_tag is not None and _ok(key, prev, number, j_text, j_tag):
            return (
                f"{_plural(j - number, 'line')} inserted here (line {j} is sealed as line {number})"
            )

    if nxt is None and text.startswith(RESERVED):
        m_lines = _SEAL_LINES_RE.match(text)
        if m_lines and int(m_lines[1]) != number - 1:
            return (
                f"the seal line says {m_lines[1]} lines, but {number - 1} precede it "
                "(lines removed or added)"
            )
        if number > 1:
            return "seal line changed"

    if number == 1 and len(entries) >= 2:
        locally_ok = any(
            t_prev is not None and t is not None and _ok(key, bytes.fromhex(t_prev), i, txt, t)
            for i, ((_, t_prev), (txt, t)) in enumerate(itertools.pairwise(entries), 2)
        )
        if not locally_ok:
            return "no line verifies with this key: sealed with another key"

    return "seal tag does not match: the line was changed, or lines before it removed or moved"


# -- keys -----------------------------------------------------------------------------------


def _parse_hex_key(value: object, where: str) -> bytes:
    if not isinstance(value, str):
        raise KeyConfigError(f"{where}: la clave tiene que ser un texto de dígitos hexadecimales")
    digits = value.strip()
    if len(digits) % 2 or not re.fullmatch(r"[0-9A-Fa-f]*", digits):
        raise KeyConfigError(f"{where}: la clave no es una cantidad par de dígitos hexadecimales")
    key = bytes.fromhex(digits)
    if len(key) < MIN_KEY_BYTES:
        raise KeyConfigError(
            f"{where}: la clave es muy corta ({len(key)} bytes; hacen falta {MIN_KEY_BYTES})"
        )
    return key


def _read_text(path: Path) -> str:
    try:  # bounded: a key file or a configuration is a few lines (never /dev/zero)
        return read_text_file(path, limit=1024 * 1024, what="key file or configuration")
    except TextFileError as e:
        raise KeyConfigError(f"{e} (un archivo de clave tiene la clave en hexadecimal)") from None


def _key_from_key_file(path: Path, text: str) -> bytes:
    content = [s for s in (raw.strip() for raw in text.splitlines()) if s and s[0] != "#"]
    if len(content) != 1:
        raise KeyConfigError(
            f"{path}: un archivo de clave tiene una sola línea, la clave en hexadecimal "
            "(se permiten comentarios con '#')"
        )
    return _parse_hex_key(content[0], str(path))


def _key_from_config(path: Path, doc: dict[str, object]) -> TournamentKey:
    section = doc.get("tournament")
    if not isinstance(section, dict):
        raise KeyConfigError(f"{path}: falta la sección [tournament]")
    where = f"{path}: [tournament]"
    has_key, has_file = "key" in section, "key_file" in section
    if has_key == has_file:
        raise KeyConfigError(
            f"{where}: poné una sola de key (en hexadecimal) y key_file (una ruta)"
        )
    if has_key:
        key = _parse_hex_key(section["key"], f"{where} key")
    else:
        name = section["key_file"]
        if not isinstance(name, str) or not name:
            raise KeyConfigError(f"{where} key_file: tiene que ser una ruta")
        key_path = path.parent / Path(name).expanduser()
        key = _key_from_key_file(key_path, _read_text(key_path))
    key_id = section.get("key_id")
    if key_id is None:
        return TournamentKey(key, key_fingerprint(key))
    if not isinstance(key_id, str) or not _ID_RE.fullmatch(key_id):
        raise KeyConfigError(
            f"{where} key_id: de 1 a 100 letras, números y . _ : / + @ -, "
            "empezando por una letra o un número"
        )
    return TournamentKey(key, key_id)


def load_key(
    path: str | os.PathLike[str], *, kind: Literal["auto", "config", "key-file"] = "auto"
) -> TournamentKey:
    """The sealing key from a tournament configuration or a key file.

    A configuration is TOML with a ``[tournament]`` table holding ``key = "<hex>"`` or
    ``key_file = "<path>"`` (relative to the configuration), and optionally
    ``key_id = "<id>"``; other keys are ignored. A key file holds one line, the key in
    hex (``#`` comment lines allowed); its key id is :func:`key_fingerprint`, as is a
    configuration's without ``key_id``. Keys are at least :data:`MIN_KEY_BYTES` bytes.
    ``kind="auto"`` reads the file as a configuration when it is named ``*.toml`` or is
    TOML with a ``[tournament]`` table, else as a key file. Raises :class:`KeyConfigError`,
    whose message never contains the key.
    """
    p = Path(path)
    text = _read_text(p)
    if kind == "key-file":
        key = _key_from_key_file(p, text)
        return TournamentKey(key, key_fingerprint(key))
    as_config = kind == "config" or p.suffix.lower() == ".toml"
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        if as_config:
            raise KeyConfigError(f"{p}: no es TOML válido ({e})") from None
        doc = None
    if as_config or (doc is not None and "tournament" in doc):
        return _key_from_config(p, doc or {})
    key = _key_from_key_file(p, text)
    return TournamentKey(key, key_fingerprint(key))
