"""The deck registry: decks, lookups, the TOML file and its checks."""

from __future__ import annotations

import dataclasses
import os
import random
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.engine.cards import CARDS, Card
from controller.engine.errors import RefusalCode
from controller.hal.deck import (
    Deck,
    DeckError,
    DeckRegistry,
    IncompleteDeckError,
    UnknownCardError,
    WatchedRegistry,
    check_deck_name,
    default_registry_path,
    dumps,
    load_registry,
    loads,
    parse_uid,
    save_registry,
    uid_hex,
)


def uid(i: int, deck: int = 0) -> bytes:
    """A distinct NTAG213-like UID per (deck, card index)."""
    return bytes([0x04, 0xA0 + deck, 0x24, 0xB2, 0xC5, deck, i])


def make_deck(name: str = "bar deck 1", number: int = 0) -> Deck:
    return Deck(name, {uid(c.index, number): c for c in CARDS})


C = Card.from_str


# -- decks ----------------------------------------------------------------------------------


def test_deck_maps_every_tag_to_its_card() -> None:
    deck = make_deck()
    assert len(deck) == 40
    assert deck.lookup(uid(0)) == C("1E")
    assert deck.lookup(uid(39)) == C("12C")
    assert deck.lookup(b"\x04\0\0\0\0\0\0") is None
    assert deck.uid_of(C("7O")) == uid(C("7O").index)
    assert list(deck.cards.values()) == list(CARDS)  # stored in deck order


def test_deck_is_frozen_and_read_only() -> None:
    deck = make_deck()
    with pytest.raises(dataclasses.FrozenInstanceError):
        deck.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        deck.cards[uid(0)] = C("2E")  # type: ignore[index]
    assert deck == make_deck()
    assert hash(deck) == hash(make_deck())
    assert deck != make_deck(number=1)


def test_deck_ignores_the_input_order_and_copies_the_mapping() -> None:
    source = {uid(c.index): c for c in reversed(CARDS)}
    deck = Deck("d", source)
    source.clear()
    assert len(deck) == 40
    assert deck == make_deck("d")


def test_deck_missing_cards_is_refused_naming_them() -> None:
    cards = {uid(c.index): c for c in CARDS if str(c) not in ("7E", "3C")}
    with pytest.raises(IncompleteDeckError) as info:
        Deck("bar deck 1", cards)
    assert info.value.missing == (C("7E"), C("3C"))
    assert info.value.deck == "bar deck 1"
    assert "faltan 2 cartas: 7E, 3C" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_deck_card_listed_twice() -> None:
    cards: dict[bytes, Card] = {uid(c.index): c for c in CARDS}
    cards[uid(99)] = C("7E")
    with pytest.raises(DeckError, match=r"mazo 'x'.*7E está dos veces") as info:
        Deck("x", cards)
    assert info.value.entry == '"04A024B2C50063" = "7E"'


@pytest.mark.parametrize("bad", [b"", b"\x04\x01\x02", bytes(8), bytes(11), "04A224B2C55E80"])
def test_deck_bad_uid(bad: object) -> None:
    cards: dict[object, Card] = {uid(c.index): c for c in CARDS[1:]}
    cards[bad] = CARDS[0]
    with pytest.raises(DeckError, match="mazo 'x'"):
        Deck("x", cards)  # type: ignore[arg-type]


def test_deck_value_must_be_a_card() -> None:
    cards: dict[bytes, object] = {uid(c.index): c for c in CARDS}
    cards[uid(0)] = "1E"
    with pytest.raises(DeckError, match="not a Card"):
        Deck("x", cards)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["", " x", "x ", "a\nb", "tab\there", "x" * 65, 7])
def test_bad_deck_names(name: object) -> None:
    with pytest.raises(DeckError):
        check_deck_name(name)
    with pytest.raises(DeckError):
        Deck(name, {uid(c.index): c for c in CARDS})  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["bar deck 1", "Mazo de Mabel", 'el "nuevo"', "a\\b", "ñandú 2"])
def test_good_deck_names(name: str) -> None:
    assert check_deck_name(name) == name


def test_uid_text() -> None:
    assert uid_hex(bytes.fromhex("04a224b2c55e80")) == "04A224B2C55E80"
    assert parse_uid("04a224b2c55e80") == bytes.fromhex("04A224B2C55E80")
    for bad in ("", "04A2", "04A224B2C55E8", "04A224B2C55E8G", "04:A2:24:B2", "0" * 16):
        with pytest.raises(ValueError):
            parse_uid(bad)


# -- the registry -------------------------------------------------------------------------------


def test_registry_of_several_decks() -> None:
    a, b = make_deck("a", 0), make_deck("b", 1)
    reg = DeckRegistry((a, b))
    assert reg.lookup(uid(5, 0)) == CARDS[5]
    assert reg.lookup(uid(5, 1)) == CARDS[5]
    assert reg.card_of(uid(39, 1)) == C("12C")
    assert reg.deck_of(uid(3, 1)) is b
    assert reg.deck_of(uid(3, 2)) is None
    assert reg.names == ("a", "b")
    assert reg.get("A") is a and reg["b"] is b
    assert "a" in reg and "c" not in reg and 3 not in reg
    assert list(reg) == [a, b] and len(reg) == 2
    with pytest.raises(KeyError):
        reg["c"]


def test_unknown_uid() -> None:
    reg = DeckRegistry((make_deck(),))
    stranger = bytes.fromhex("04FFFFFFFFFFFF")
    assert reg.lookup(stranger) is None
    with pytest.raises(UnknownCardError) as info:
        reg.card_of(stranger)
    assert isinstance(info.value, ValueError)
    assert info.value.uid == stranger
    assert info.value.code is RefusalCode.UNKNOWN_CARD
    assert "unknown_card" in str(info.value) and "04FFFFFFFFFFFF" in str(info.value)
    assert DeckRegistry().lookup(uid(0)) is None


def test_a_tag_belongs_to_one_deck_only() -> None:
    a = make_deck("a", 0)
    cards = {uid(c.index, 1): c for c in CARDS}
    del cards[uid(7, 1)]
    cards[uid(0, 0)] = CARDS[7]  # deck a's 1E tag, claimed as b's 10E
    b = Deck("b", cards)
    with pytest.raises(DeckError, match=r"mazo 'b'.*también es el 1E del mazo 'a'"):
        DeckRegistry((a, b))
    with pytest.raises(DeckError):
        DeckRegistry((a,)).with_deck(b)


def test_deck_names_are_unique_ignoring_case() -> None:
    with pytest.raises(DeckError, match="dos mazos se llaman"):
        DeckRegistry((make_deck("Bar", 0), make_deck("bar", 1)))


def test_with_deck_adds_or_replaces_and_without_removes() -> None:
    a, b, b2 = make_deck("a", 0), make_deck("b", 1), make_deck("B", 2)
    reg = DeckRegistry((a,)).with_deck(b)
    assert reg.names == ("a", "b")
    reg2 = reg.with_deck(b2)
    assert reg2.names == ("a", "B")
    assert reg2.lookup(uid(0, 1)) is None and reg2.lookup(uid(0, 2)) == CARDS[0]
    assert reg2.without("b").names == ("a",)
    assert reg2.without("zzz") == reg2
    assert reg.names == ("a", "b")  # unchanged


def test_retagged() -> None:
    deck = make_deck()
    new = deck.retagged({C("7E"): uid(7, 9)})
    assert new.uid_of(C("7E")) == uid(7, 9)
    assert new.lookup(uid(C("7E").index)) is None
    assert [u for u in new.cards if u not in deck.cards] == [uid(7, 9)]


# -- the file ---------------------------------------------------------------------------------


def test_dumps_format() -> None:
    text = dumps(DeckRegistry((make_deck("bar deck 1"),)))
    lines = text.splitlines()
    assert "format = 1" in lines
    at = lines.index("[[deck]]")
    assert lines[at + 1 : at + 5] == [
        'name = "bar deck 1"',
        "",
        "[deck.cards]",
        '"04A024B2C50000" = "1E"',
    ]
    assert lines[-1] == '"04A024B2C50027" = "12C"'
    assert sum(1 for line in lines if line.startswith('"04')) == 40


def test_save_load_round_trip(tmp_path: Path) -> None:
    reg = DeckRegistry((make_deck("a", 0), make_deck('b "quoted" \\ ñ', 1)))
    path = tmp_path / "state" / "decks.toml"  # the directory is created
    save_registry(reg, path)
    assert load_registry(path) == reg
    assert loads(path.read_text()) == reg
    assert [p.name for p in path.parent.iterdir()] == ["decks.toml"]  # no temp file left
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_save_replaces_atomically_and_keeps_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "decks.toml"
    save_registry(DeckRegistry((make_deck("a"),)), path)
    path.chmod(0o600)
    save_registry(DeckRegistry((make_deck("a"), make_deck("b", 1))), path)
    assert load_registry(path).names == ("a", "b")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_failed_save_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "decks.toml"
    save_registry(DeckRegistry((make_deck("a"),)), path)
    before = path.read_bytes()

    def broken_replace(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("controller.hal.deck.os.replace", broken_replace)
    with pytest.raises(OSError):
        save_registry(DeckRegistry((make_deck("a"), make_deck("b", 1))), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["decks.toml"]


def test_empty_registry_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "decks.toml"
    save_registry(DeckRegistry(), path)
    assert load_registry(path) == DeckRegistry()
    assert loads("") == DeckRegistry()


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_registry(tmp_path / "nope.toml")
    assert load_registry(tmp_path / "nope.toml", missing_ok=True) == DeckRegistry()


def test_unreadable_and_binary_files(tmp_path: Path) -> None:
    binary = tmp_path / "decks.toml"
    binary.write_bytes(b"format = 1\n\xff\xfe")
    with pytest.raises(DeckError, match="not UTF-8"):
        load_registry(binary)
    with pytest.raises(DeckError, match="cannot read"):
        load_registry(tmp_path)  # a directory


def test_default_registry_path() -> None:
    assert default_registry_path({}) == Path("/var/lib/truco-table/decks.toml")
    assert default_registry_path({"TRUCO_TABLE_STATE": ""}) == Path(
        "/var/lib/truco-table/decks.toml"
    )
    assert default_registry_path({"TRUCO_TABLE_STATE": "/tmp/s"}) == Path("/tmp/s/decks.toml")


GOOD = dumps(DeckRegistry((make_deck("bar deck 1", 0), make_deck("bar deck 2", 1))))


def _edit(old: str, new: str, count: int = 1) -> str:
    assert old in GOOD
    return GOOD.replace(old, new, count)


def _drop_line(line: str) -> str:
    return _edit(line + "\n", "")


# (edited text, words the error must contain)
CORRUPT = {
    "unknown card": (
        _edit('"04A024B2C50006" = "7E"', '"04A024B2C50006" = "8E"'),
        ["mazo 'bar deck 1'", '"04A024B2C50006" = "8E"', "ranks are 1-7, 10, 11, 12"],
    ),
    "card listed twice": (
        _edit('"04A024B2C50006" = "7E"', '"04A024B2C50006" = "6E"'),
        ["mazo 'bar deck 1'", "6E está dos veces", '"04A024B2C50006" = "6E"'],
    ),
    "missing card": (
        _drop_line('"04A024B2C50006" = "7E"'),
        ["mazo 'bar deck 1'", "falta 1 carta: 7E"],
    ),
    "same UID twice in one deck": (
        _edit('"04A024B2C50006" = "7E"', '"04A024B2C50005" = "7E"'),
        ["mazo 'bar deck 1'", "línea", '"04A024B2C50005" = "7E"', "dos veces"],
    ),
    "same UID twice, differing case": (
        _edit('"04A024B2C50006" = "7E"', '"04a024b2c50005" = "7E"'),
        ["mazo 'bar deck 1'", "04A024B2C50005 está dos veces", '"04a024b2c50005" = "7E"'],
    ),
    "UID in two decks": (
        _edit('"04A124B2C50100" = "1E"', '"04A024B2C50000" = "1E"'),
        ["mazo 'bar deck 2'", "también es el 1E del mazo 'bar deck 1'", '"04A024B2C50000" = "1E"'],
    ),
    "UID not hex": (
        _edit('"04A024B2C50006" = "7E"', '"04A024B2C5000G" = "7E"'),
        ["mazo 'bar deck 1'", "no es un UID de etiqueta", '"04A024B2C5000G"'],
    ),
    "UID wrong size": (
        _edit('"04A024B2C50006" = "7E"', '"04A024B2C500" = "7E"'),
        ["mazo 'bar deck 1'", "6 bytes", '"04A024B2C500"'],
    ),
    "card not a string": (
        _edit('"04A024B2C50006" = "7E"', '"04A024B2C50006" = 7'),
        ["mazo 'bar deck 1'", "tiene que ser un texto", '"04A024B2C50006" = 7'],
    ),
    "deck without a name": (
        _edit('name = "bar deck 2"\n', ""),
        ["el mazo número 2 no tiene nombre"],
    ),
    "bad deck name": (
        _edit('name = "bar deck 2"', 'name = " bar"'),
        ["el mazo número 2", "espacios al principio o al final"],
    ),
    "two decks of one name": (
        _edit('name = "bar deck 2"', 'name = "Bar Deck 1"'),
        ["dos mazos se llaman 'bar deck 1' y 'Bar Deck 1'"],
    ),
    "deck without cards": (
        GOOD.split("[deck.cards]")[0] + "[deck.cards]\n",
        ["mazo 'bar deck 1'", "faltan 40 cartas"],
    ),
    "deck without a cards table": (
        GOOD.split("\n[deck.cards]")[0],
        ["mazo 'bar deck 1'", "falta la tabla [deck.cards]"],
    ),
    "unknown deck key": (
        _edit('name = "bar deck 2"', 'name = "bar deck 2"\ncolour = "red"'),
        ["mazo 'bar deck 2'", "clave desconocida 'colour'"],
    ),
    "unknown top-level key": (
        _edit("format = 1", "format = 1\ndekcs = 3"),
        ["clave desconocida 'dekcs'"],
    ),
    "newer format": (_edit("format = 1", "format = 2"), ["no entiendo el formato 2"]),
    "deck not an array of tables": ("format = 1\ndeck = 3\n", ["tiene que ser tablas [[deck]]"]),
    "half-written file": (GOOD[: len(GOOD) // 2] + '"04A0', ["no es TOML válido", "línea"]),
    "not TOML": ("this is not toml\n", ["no es TOML válido", "línea 1"]),
}


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_corrupt_files_are_refused_clearly(case: str, tmp_path: Path) -> None:
    text, words = CORRUPT[case]
    path = tmp_path / "decks.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DeckError) as info:
        load_registry(path)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    for word in words:
        assert word in message, (case, message)


def test_good_text_loads() -> None:
    reg = loads(GOOD)
    assert reg.names == ("bar deck 1", "bar deck 2")


def test_hand_edited_file_with_comments_and_lower_case_uids() -> None:
    text = GOOD.replace('"04A024B2C50000" = "1E"', '# the ace\n"04a024b2c50000" = "1e"  # ok')
    reg = loads(text)
    assert reg.card_of(uid(0)) == C("1E")
    assert "04A024B2C50000" in dumps(reg)


names: st.SearchStrategy[str] = st.text(
    st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=20
).filter(lambda s: _valid_name(s))


def _valid_name(name: str) -> bool:
    try:
        check_deck_name(name)
    except DeckError:
        return False
    return True


@settings(max_examples=60, deadline=None)
@given(st.lists(names, max_size=4, unique_by=str.casefold), st.integers(0, 2**32))
def test_dumps_loads_round_trip(deck_names: list[str], seed: int) -> None:
    rnd = random.Random(seed)
    decks = []
    for n, name in enumerate(deck_names):
        size = rnd.choice((4, 7, 10))
        cards = {bytes([n]) + rnd.randbytes(size - 2) + bytes([c.index]): c for c in CARDS}
        decks.append(Deck(name, cards))
    reg = DeckRegistry(tuple(decks))
    assert loads(dumps(reg)) == reg


def test_save_uses_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = os.fsync

    def spy(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr("controller.hal.deck.os.fsync", spy)
    save_registry(DeckRegistry((make_deck(),)), tmp_path / "decks.toml")
    assert len(calls) == 2  # the file, then its directory


# -- the running table's registry ----------------------------------------------------------


def test_watched_registry_reads_a_deck_enrolled_later(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "decks.toml"
    now = [0.0]
    watched = WatchedRegistry(path, clock=lambda: now[0])  # nothing enrolled yet
    assert watched.lookup(uid(5)) is None
    save_registry(DeckRegistry((make_deck("a"),)), path)
    assert watched.lookup(uid(5)) == CARDS[5]  # unknown: the file looked at at once
    save_registry(DeckRegistry((make_deck("a"), make_deck("b", 1))), path)
    assert watched.lookup(uid(7, 1)) == CARDS[7]
    assert watched.names == ("a", "b")
    assert not watched.refresh()  # unchanged: not read again
    path.write_text("this is not toml [")
    with caplog.at_level("ERROR"):
        now[0] += WatchedRegistry.CHECK_S  # a known card looks at the file this often
        assert watched.lookup(uid(7, 1)) == CARDS[7]  # the decks known stay in use
        now[0] += WatchedRegistry.CHECK_S
        assert watched.lookup(uid(7, 1)) == CARDS[7]
    assert len([r for r in caplog.records if "no se recargó" in r.getMessage()]) == 1
    path.unlink()  # gone: still the decks known
    assert watched.lookup(uid(5)) == CARDS[5]


def test_watched_registry_looks_at_the_file_for_a_known_card_once_a_while(
    tmp_path: Path,
) -> None:
    path = tmp_path / "decks.toml"
    save_registry(DeckRegistry((make_deck("a"),)), path)
    now = [0.0]
    watched = WatchedRegistry(path, clock=lambda: now[0])
    # the deck enrolled again with other tags: a known card is read as before until
    # CHECK_S passed, then from the new file
    save_registry(DeckRegistry((make_deck("a", 1),)), path)
    assert watched.lookup(uid(5)) == CARDS[5]
    assert watched.names == ("a",) and watched.lookup(uid(5)) == CARDS[5]
    now[0] += WatchedRegistry.CHECK_S
    assert watched.lookup(uid(5)) is None  # the old tag: no longer a card of a deck
    assert watched.lookup(uid(5, 1)) == CARDS[5]


def test_watched_registry_refuses_a_bad_file_at_start(tmp_path: Path) -> None:
    path = tmp_path / "decks.toml"
    path.write_text("format = 99\n")
    with pytest.raises(DeckError):
        WatchedRegistry(path)
