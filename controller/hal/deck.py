"""The deck registry: which card each NFC tag is, for every enrolled deck.

Every card carries a sticker whose UID (4, 7 or 10 bytes; printed as upper-case
hex, ``04A224B2C55E80``) is fixed at the factory.  A :class:`Deck` maps the 40
UIDs of one physical deck to its cards; a :class:`DeckRegistry` holds several
decks (each tag belongs to exactly one of them) and the table plays with any of
them: :meth:`DeckRegistry.lookup` answers for every registered tag.

The registry lives in one TOML file (see ``hardware/cards.md``), by default
``$TRUCO_TABLE_STATE/decks.toml`` or ``/var/lib/truco-table/decks.toml``::

    format = 1

    [[deck]]
    name = "bar deck 1"

    [deck.cards]
    "04A224B2C55E80" = "1E"
    "04A2A4B2C55E81" = "2E"
    # ... 40 lines, one per card

Everything here is pure except :func:`load_registry` and :func:`save_registry`
(:func:`loads` / :func:`dumps` do the same without touching the disk).  A file
that is not a valid registry is refused as a whole with a :class:`DeckError`
that names the file, the deck and the entry.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
import time
import tomllib
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Final

from ..engine.cards import CARDS, Card
from ..engine.errors import RefusalCode
from ..textfile import TextFileError, decode_text

__all__ = [
    "DEFAULT_STATE_DIR",
    "FORMAT_VERSION",
    "REGISTRY_FILENAME",
    "STATE_ENV",
    "UID_LENGTHS",
    "Deck",
    "DeckError",
    "DeckRegistry",
    "IncompleteDeckError",
    "UnknownCardError",
    "WatchedRegistry",
    "check_deck_name",
    "default_registry_path",
    "dumps",
    "load_registry",
    "loads",
    "parse_uid",
    "save_registry",
    "uid_hex",
]

#: Environment variable naming the table's state directory.
STATE_ENV: Final = "TRUCO_TABLE_STATE"
#: The state directory when ``$TRUCO_TABLE_STATE`` is not set.
DEFAULT_STATE_DIR: Final = Path("/var/lib/truco-table")
REGISTRY_FILENAME: Final = "decks.toml"
REGISTRY_LIMIT: Final = 4 * 1024 * 1024  # bytes read at most from a registry file
#: The registry file format written by :func:`dumps` (the ``format`` key).
FORMAT_VERSION: Final = 1
#: ISO 14443-3 UID sizes: single, double and triple size.  NTAG213 UIDs are 7 bytes.
UID_LENGTHS: Final = (4, 7, 10)
MAX_NAME_LENGTH: Final = 64

_HEX_UID: Final = re.compile(r"[0-9A-Fa-f]+")
_log = logging.getLogger(__name__)


# -- errors -------------------------------------------------------------------------------


class DeckError(ValueError):
    """A deck or registry that is not valid, or a file that holds none.

    ``source`` is the file (or None), ``deck`` the deck's name, ``line`` the
    line of a file TOML could not read, ``entry`` the offending entry as
    written in the file (``"04A2..." = "8E"``) when known.
    """

    def __init__(
        self,
        reason: str,
        *,
        deck: str | None = None,
        entry: str | None = None,
        source: str | None = None,
        line: int | None = None,
    ) -> None:
        self.reason = reason
        self.deck = deck
        self.entry = entry
        self.source = source
        self.line = line
        super().__init__(self._text())

    def _text(self) -> str:
        parts = []
        if self.source is not None:
            parts.append(self.source)
        if self.deck is not None:
            parts.append(f"mazo {self.deck!r}")
        if self.line is not None:
            parts.append(f"línea {self.line}")
        if self.entry is not None:
            parts.append(f"entrada {self.entry}")
        parts.append(self.reason)
        return ": ".join(parts)

    def with_source(self, source: str) -> DeckError:
        """The same error, naming the file it came from."""
        self.source = source
        self.args = (self._text(),)
        return self


class IncompleteDeckError(DeckError):
    """A deck without a tag for every one of the 40 cards; ``missing`` lists them."""

    def __init__(self, deck: str, missing: Iterable[Card], *, source: str | None = None) -> None:
        self.missing: tuple[Card, ...] = tuple(sorted(missing, key=lambda c: c.index))
        n = len(self.missing)
        names = ", ".join(str(c) for c in self.missing)
        super().__init__(
            f"falta{'n' if n != 1 else ''} {n} carta{'s' if n != 1 else ''}: {names}",
            deck=deck,
            source=source,
        )


class UnknownCardError(ValueError):
    """A tag that is no card of any registered deck (RULES.md section 11: ``unknown_card``)."""

    code: Final = RefusalCode.UNKNOWN_CARD

    def __init__(self, uid: bytes) -> None:
        self.uid = bytes(uid)
        super().__init__(f"unknown_card: tag {uid_hex(self.uid)} is no card of a registered deck")


# -- UIDs and names -------------------------------------------------------------------------


def uid_hex(uid: bytes) -> str:
    """A UID as the table prints it: upper-case hex, no separators."""
    return bytes(uid).hex().upper()


def parse_uid(text: str) -> bytes:
    """A UID from hex (either case); raises ValueError for anything else."""
    if not _HEX_UID.fullmatch(text) or len(text) % 2:
        raise ValueError(
            f"no es un UID de etiqueta: {text!r} (van dígitos hexadecimales, por ejemplo "
            "04A224B2C55E80)"
        )
    uid = bytes.fromhex(text)
    _check_uid(uid)
    return uid


def _check_uid(uid: object) -> bytes:
    if not isinstance(uid, bytes | bytearray):
        raise ValueError(f"a tag UID must be bytes, not {type(uid).__name__}")
    if len(uid) not in UID_LENGTHS:
        raise ValueError(
            f"el UID {uid_hex(bytes(uid)) or '(vacío)'} tiene {len(uid)} bytes "
            f"(el de una etiqueta tiene 4, 7 o 10)"
        )
    return bytes(uid)


def check_deck_name(name: object) -> str:
    """Return ``name`` if it can name a deck, else raise DeckError saying why.

    A name is 1 to 64 characters, printable, without leading or trailing spaces.
    """
    if not isinstance(name, str):
        raise DeckError(f"a deck name must be text, not {type(name).__name__}")
    if not name or name != name.strip():
        raise DeckError(
            f"el nombre de mazo {name!r} no sirve: vacío o con espacios al principio o al final"
        )
    if len(name) > MAX_NAME_LENGTH:
        raise DeckError(f"el nombre de mazo {name!r} tiene más de {MAX_NAME_LENGTH} caracteres")
    if any(unicodedata.category(ch).startswith(("C", "Z")) and ch != " " for ch in name):
        raise DeckError(
            f"el nombre de mazo {name!r} no sirve: tiene caracteres de control o espacios raros"
        )
    return name


def _entry(uid: bytes, card: object) -> str:
    return f'"{uid_hex(uid)}" = "{card}"'


# -- decks ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Deck:
    """One physical deck: tag UID -> card for all 40 cards, each card exactly once.

    Construction checks everything (raises DeckError / IncompleteDeckError);
    ``cards`` is stored read-only, in deck order (1E ... 12C).
    """

    name: str
    cards: Mapping[bytes, Card] = field(hash=False)
    _uid_of: Mapping[Card, bytes] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        check_deck_name(self.name)
        by_card: dict[Card, bytes] = {}
        for uid, card in self.cards.items():
            try:
                key = _check_uid(uid)
            except ValueError as error:
                raise DeckError(str(error), deck=self.name, entry=repr(uid)) from None
            if not isinstance(card, Card):
                raise DeckError(f"not a Card: {card!r}", deck=self.name, entry=_entry(key, card))
            if card in by_card:
                raise DeckError(
                    f"{card} está dos veces, como {uid_hex(by_card[card])} y {uid_hex(key)}",
                    deck=self.name,
                    entry=_entry(key, card),
                )
            by_card[card] = key
        missing = [c for c in CARDS if c not in by_card]
        if missing:
            raise IncompleteDeckError(self.name, missing)
        ordered = {by_card[c]: c for c in CARDS}
        object.__setattr__(self, "cards", MappingProxyType(ordered))
        object.__setattr__(self, "_uid_of", MappingProxyType({c: by_card[c] for c in CARDS}))

    def lookup(self, uid: bytes) -> Card | None:
        """The card with this tag, or None if the tag is not in this deck."""
        return self.cards.get(bytes(uid))

    def uid_of(self, card: Card) -> bytes:
        """The tag UID of ``card`` in this deck."""
        return self._uid_of[card]

    def retagged(self, new_tags: Mapping[Card, bytes]) -> Deck:
        """This deck with some cards carrying new tags (a re-tagged card)."""
        by_card = dict(self._uid_of)
        by_card.update(new_tags)
        return Deck(self.name, {uid: card for card, uid in by_card.items()})

    def __len__(self) -> int:
        return len(self.cards)


@dataclass(frozen=True)
class DeckRegistry:
    """Several decks; every tag belongs to one deck only and deck names are unique.

    Names are compared case-insensitively ("Bar" and "bar" cannot both exist).
    """

    decks: tuple[Deck, ...] = ()
    _index: Mapping[bytes, tuple[Deck, Card]] = field(
        init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        decks = tuple(self.decks)
        object.__setattr__(self, "decks", decks)
        names: dict[str, str] = {}
        index: dict[bytes, tuple[Deck, Card]] = {}
        for deck in decks:
            if not isinstance(deck, Deck):
                raise DeckError(f"not a Deck: {deck!r}")
            folded = deck.name.casefold()
            if folded in names:
                raise DeckError(
                    f"dos mazos se llaman {names[folded]!r} y {deck.name!r}", deck=deck.name
                )
            names[folded] = deck.name
            for uid, card in deck.cards.items():
                if uid in index:
                    other, other_card = index[uid]
                    raise DeckError(
                        f"la etiqueta {uid_hex(uid)} también es el {other_card} del mazo "
                        f"{other.name!r} (una etiqueta es de un solo mazo)",
                        deck=deck.name,
                        entry=_entry(uid, card),
                    )
                index[uid] = (deck, card)
        object.__setattr__(self, "_index", MappingProxyType(index))

    # -- tags ---------------------------------------------------------------------------------
    def lookup(self, uid: bytes) -> Card | None:
        """The card with this tag in any registered deck, or None."""
        found = self._index.get(bytes(uid))
        return None if found is None else found[1]

    def card_of(self, uid: bytes) -> Card:
        """The card with this tag; raises UnknownCardError for a tag of no registered deck."""
        found = self._index.get(bytes(uid))
        if found is None:
            raise UnknownCardError(uid)
        return found[1]

    def deck_of(self, uid: bytes) -> Deck | None:
        """The deck this tag belongs to, or None."""
        found = self._index.get(bytes(uid))
        return None if found is None else found[0]

    # -- decks -------------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(deck.name for deck in self.decks)

    def get(self, name: str) -> Deck | None:
        """The deck with this name (case-insensitive), or None."""
        folded = name.casefold()
        for deck in self.decks:
            if deck.name.casefold() == folded:
                return deck
        return None

    def __getitem__(self, name: str) -> Deck:
        deck = self.get(name)
        if deck is None:
            raise KeyError(name)
        return deck

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[Deck]:
        return iter(self.decks)

    def __len__(self) -> int:
        return len(self.decks)

    def with_deck(self, deck: Deck) -> DeckRegistry:
        """A registry with ``deck`` added, or replacing the deck of the same name."""
        folded = deck.name.casefold()
        kept = [d for d in self.decks if d.name.casefold() != folded]
        if len(kept) == len(self.decks):
            return DeckRegistry((*self.decks, deck))
        return DeckRegistry(tuple(deck if d.name.casefold() == folded else d for d in self.decks))

    def without(self, name: str) -> DeckRegistry:
        """A registry without the deck of this name (unchanged if there is none)."""
        folded = name.casefold()
        return DeckRegistry(tuple(d for d in self.decks if d.name.casefold() != folded))


# -- the file format -----------------------------------------------------------------------

_HEADER: Final = """\
# truco-table deck registry: for every enrolled deck, tag UID -> card.
# Written by `truco-table enroll` (see hardware/cards.md). You may edit it by
# hand: UIDs are upper-case hex, cards are rank + suit letter (E espadas,
# B bastos, O oros, C copas), every deck lists all 40 cards, and a tag
# belongs to one deck only. The file is checked when it is loaded.
"""


def _toml_string(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif unicodedata.category(ch).startswith("C"):
            out.append(f"\\u{ord(ch):04X}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def dumps(registry: DeckRegistry) -> str:
    """The registry as TOML text (decks in registry order, cards in deck order)."""
    lines = [_HEADER, f"format = {FORMAT_VERSION}"]
    for deck in registry.decks:
        lines += ["", "[[deck]]", f"name = {_toml_string(deck.name)}", "", "[deck.cards]"]
        lines += [_entry(uid, card) for uid, card in deck.cards.items()]
    return "\n".join(lines) + "\n"


def _toml_error(error: tomllib.TOMLDecodeError, text: str) -> DeckError:
    message = str(error)
    match = re.fullmatch(r"(.*) \(at line (\d+), column (\d+)\)", message, re.S)
    if match is None:
        return DeckError(f"no es TOML válido: {message}")
    what, number, column = match.group(1), int(match.group(2)), int(match.group(3))
    lines = text.splitlines()
    line = lines[number - 1].strip() if 0 < number <= len(lines) else ""
    deck = None  # the deck the line is in, if its name came before it
    for previous in reversed(lines[:number]):
        name = re.fullmatch(r"\s*name\s*=\s*(\"[^\"]*\")\s*(#.*)?", previous)
        if name is not None:
            deck = name.group(1)[1:-1]
            break
        if previous.strip() == "[[deck]]":
            break
    reason = f"no es TOML válido: {what} (columna {column})"
    if line:
        reason += f" en {line}"
    if "overwrite" in what or "declare" in what:
        reason += " (una clave dos veces: ¿el mismo UID dos veces en un mazo?)"
    return DeckError(reason, deck=deck, line=number)


def _parse_deck(item: object, position: int) -> Deck:
    if not isinstance(item, dict):
        raise DeckError(f"el mazo número {position} no es una tabla")
    name = item.get("name")
    if name is None:
        raise DeckError(f"el mazo número {position} no tiene nombre")
    try:
        check_deck_name(name)
    except DeckError as error:
        raise DeckError(f"el mazo número {position}: {error.reason}") from None
    assert isinstance(name, str)
    unknown = sorted(set(item) - {"name", "cards"})
    if unknown:
        raise DeckError(f"clave desconocida {unknown[0]!r} (un mazo tiene name y cards)", deck=name)
    table = item.get("cards")
    if not isinstance(table, dict):
        raise DeckError("falta la tabla [deck.cards]", deck=name)
    cards: dict[bytes, Card] = {}
    first_text: dict[bytes, str] = {}
    for key, value in table.items():
        entry = f'"{key}" = {_toml_string(value) if isinstance(value, str) else repr(value)}'
        try:
            uid = parse_uid(key)
        except ValueError as error:
            raise DeckError(str(error), deck=name, entry=entry) from None
        if not isinstance(value, str):
            raise DeckError('la carta tiene que ser un texto como "7E"', deck=name, entry=entry)
        try:
            card = Card.from_str(value)
        except ValueError as error:
            raise DeckError(str(error), deck=name, entry=entry) from None
        if uid in cards:
            raise DeckError(
                f'la etiqueta {uid_hex(uid)} está dos veces (también como "{first_text[uid]}")',
                deck=name,
                entry=entry,
            )
        cards[uid] = card
        first_text[uid] = key
    return Deck(name, cards)


def loads(text: str, source: str = "<registry>") -> DeckRegistry:
    """Parse registry TOML; raises DeckError naming ``source``, the deck and the entry."""
    try:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise _toml_error(error, text) from None
        version = data.get("format", FORMAT_VERSION)
        if version != FORMAT_VERSION:
            raise DeckError(
                f"no entiendo el formato {version!r} (este programa lee el formato "
                f"{FORMAT_VERSION})"
            )
        unknown = sorted(set(data) - {"format", "deck"})
        if unknown:
            raise DeckError(
                f"clave desconocida {unknown[0]!r} (se esperan format y tablas [[deck]])"
            )
        items = data.get("deck", [])
        if not isinstance(items, list):
            raise DeckError("'deck' tiene que ser tablas [[deck]]")
        return DeckRegistry(tuple(_parse_deck(item, i) for i, item in enumerate(items, 1)))
    except DeckError as error:
        raise error.with_source(source) from None


# -- disk ----------------------------------------------------------------------------------------


def default_registry_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$TRUCO_TABLE_STATE/decks.toml``, else ``/var/lib/truco-table/decks.toml``."""
    env = os.environ if environ is None else environ
    state = env.get(STATE_ENV)
    return (Path(state) if state else DEFAULT_STATE_DIR) / REGISTRY_FILENAME


def load_registry(path: str | os.PathLike[str], *, missing_ok: bool = False) -> DeckRegistry:
    """Read and check a registry file.

    A missing file is an empty registry if ``missing_ok``, else FileNotFoundError.
    An unreadable or invalid file raises DeckError.
    """
    path = Path(path)
    try:
        with open(path, "rb") as f:
            data = f.read(REGISTRY_LIMIT + 1)  # bounded: never /dev/zero without end
    except FileNotFoundError:
        if missing_ok:
            return DeckRegistry()
        raise
    except OSError as error:
        raise DeckError(f"cannot read: {error.strerror}", source=str(path)) from None
    if len(data) > REGISTRY_LIMIT:
        raise DeckError("larger than 4 MiB: not a deck registry", source=str(path))
    try:
        text = decode_text(data, str(path))
    except TextFileError:
        raise DeckError("not UTF-8 text", source=str(path)) from None
    return loads(text, str(path))


def save_registry(registry: DeckRegistry, path: str | os.PathLike[str]) -> None:
    """Write the registry atomically: a temporary file in the same directory,
    flushed to disk, then renamed over ``path`` (the directory is created if needed).

    A crash leaves either the old file or the new one, never a mix.
    """
    path = Path(path)
    text = dumps(registry)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o644
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as tmp:
            tmp.write(text)
            tmp.flush()
            os.fchmod(tmp.fileno(), mode)
            os.fsync(tmp.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    # Make the rename itself durable.
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


class WatchedRegistry:
    """The registry file as the running table sees it: read again whenever it changes.

    A deck enrolled while the table runs (``truco-table enroll`` writes the file
    atomically) is used from the next card on, without restarting the service.
    ``lookup`` is what the table calls for each card that arrives. A card the decks in
    use do not know has the file looked at at once (its identity, size and modification
    time compared with the last read: one ``stat``), and loaded again when they differ:
    a deck just enrolled is used from its first card. A card they know has the file
    looked at only once ``CHECK_S`` seconds passed (on ``clock``) since the last look:
    a card laid pays no system call, and a deck enrolled again with other tags is read
    within ``CHECK_S``. A file that became invalid or unreadable is logged once and the
    decks already known stay in use.
    """

    #: the longest a card the decks in use know goes without the file being looked at
    CHECK_S = 1.0

    def __init__(
        self, path: str | os.PathLike[str], *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.path = Path(path)
        self._name = os.fspath(self.path)
        self.clock = clock
        self._stamp = self._stat()
        self._next_check = clock() + self.CHECK_S
        self.registry = load_registry(self.path, missing_ok=True)  # DeckError: not started
        self._failed: tuple[int, int, int] | None = None

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self._name)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def refresh(self) -> bool:
        """Read the file again if it changed; True when the decks in use changed."""
        self._next_check = self.clock() + self.CHECK_S
        stamp = self._stat()
        if stamp == self._stamp or stamp is None or stamp == self._failed:
            return False
        try:
            registry = load_registry(self.path, missing_ok=True)
        except DeckError as error:
            self._failed = stamp
            _log.error(
                "el registro de mazos no se recargó, siguen los mazos que había: %s",
                error,
            )
            return False
        self._stamp, self._failed = stamp, None
        changed = registry != self.registry
        self.registry = registry
        if changed:
            _log.info("registro de mazos %s recargado: %s", self.path, ", ".join(registry.names))
        return changed

    def lookup(self, uid: bytes) -> Card | None:
        card = self.registry.lookup(uid)
        if card is None or self.clock() >= self._next_check:
            self.refresh()  # unknown, or not looked at for CHECK_S: an enrolment since?
            card = self.registry.lookup(uid)
        return card

    @property
    def names(self) -> tuple[str, ...]:
        return self.registry.names
