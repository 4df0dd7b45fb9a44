"""Sealed records (docs/TRANSCRIPT.md, "Sealed records"): the format, round trips on every
scenario, and every kind of tampering reported at exactly the first line that changed."""

from __future__ import annotations

import doctest
import hashlib
import hmac
import json
import random
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.tournament.wire import seal as seal_module
from controller.tournament.wire.seal import (
    KeyConfigError,
    NotSealedError,
    SealError,
    TournamentKey,
    UnsealableError,
    Verdict,
    key_fingerprint,
    load_key,
    seal,
    verify,
)
from controller.transcript import parse, replay, result_json

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = sorted((ROOT / "tests" / "scenarios").glob("*.truco"))
KEY = bytes(range(32))
OTHER_KEY = hashlib.sha256(b"another tournament").digest()
TAG_RE = re.compile(r" #~ [0-9a-f]{64}\Z")


def lines_of(text: str) -> list[str]:
    """The spec's lines: CRLF as LF, the last terminator optional."""
    if not text:
        return []
    text = text.replace("\r\n", "\n")
    return (text[:-1] if text.endswith("\n") else text).split("\n")


def reference_seal(text: str, key: bytes, key_id: str, game_id: str) -> str:
    """The chain exactly as docs/TRANSCRIPT.md writes it, independently of the module."""
    prev = hmac.new(key, b"truco-seal v1", hashlib.sha256).digest()
    body = lines_of(text)
    body.append(f"#~seal v1 hmac-sha256 lines={len(body)} key-id={key_id} game={game_id}")
    out = []
    for i, line in enumerate(body, start=1):
        prev = hmac.new(key, prev + i.to_bytes(4, "big") + line.encode(), hashlib.sha256).digest()
        out.append(f"{line} #~ {prev.hex()}")
    return "\n".join(out) + "\n"


def sealed_scenario(path: Path, key: bytes = KEY) -> str:
    return seal(path.read_text(), key, key_id="test-key", game_id=f"t1/{path.stem}")


def first_difference(original: str, mutated: str) -> int | None:
    """The 1-based number of the first line that differs (or is missing, or extra)."""
    a, b = lines_of(original), lines_of(mutated)
    for i, (x, y) in enumerate(zip(a, b, strict=False), start=1):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b)) + 1


def bad(text: str, key: bytes = KEY) -> tuple[int | None, str]:
    v = verify(text, key)
    assert v.ok == (v.first_bad_line is None)
    return v.first_bad_line, v.reason


# -- the format -----------------------------------------------------------------------------


def test_there_are_scenarios() -> None:
    assert len(SCENARIOS) >= 70


def test_the_docs_example_is_what_seal_writes() -> None:
    doc = (ROOT / "docs" / "TRANSCRIPT.md").read_text()
    section = doc.split("## Sealed records", 1)[1]
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", section, re.DOTALL | re.MULTILINE)
    example = next(b for b in blocks if b.startswith("table players=2 #~"))
    text = "table players=2\nhand\n0 mazo\n"
    assert seal(text, KEY, key_id="club", game_id="t1-g1") == example
    assert reference_seal(text, KEY, "club", "t1-g1") == example
    assert verify(example, KEY) == Verdict(True, None, "intact", 3, "club", "t1-g1")


def test_module_examples() -> None:
    result = doctest.testmod(seal_module, verbose=False)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario_round_trip(path: Path) -> None:
    """Sealed: the spec's bytes, intact, and the same replay (same line numbers)."""
    text = path.read_text()
    sealed = sealed_scenario(path)
    assert sealed == reference_seal(text, KEY, "test-key", f"t1/{path.stem}")
    body = lines_of(text)
    got = lines_of(sealed)
    assert len(got) == len(body) + 1
    assert all(g.startswith(b) and TAG_RE.search(g) for g, b in zip(got, body, strict=False))
    assert verify(sealed, KEY) == Verdict(
        True, None, "intact", len(body), "test-key", f"t1/{path.stem}"
    )
    expected = json.loads(path.with_suffix(".json").read_text())
    assert result_json(replay(parse(sealed))) == expected == result_json(replay(parse(text)))
    plain = parse(text)
    assert parse(sealed) == plain


def test_blank_and_comment_lines_are_sealed_too() -> None:
    text = "# a comment\n\ntable players=2   # rules\n  \nhand\n0 mazo\n"
    sealed = seal(text, KEY, key_id="k", game_id="g")
    assert lines_of(sealed)[1].startswith(" #~ ")
    for i, line in enumerate(lines_of(text)):
        if not line.strip():
            spaced = lines_of(sealed)
            spaced[i] = " " + spaced[i]  # a space added to a blank line
            assert bad(join(spaced)) == (i + 1, "line changed")
    assert bad(sealed.replace("# a comment", "# a commment")) == (1, "line changed")
    assert bad(sealed.replace("# rules", "#  rules")) == (3, "line changed")


def test_line_endings_are_normalised() -> None:
    sealed = sealed_scenario(SCENARIOS[0])
    assert verify(sealed.replace("\n", "\r\n"), KEY).ok
    assert verify(sealed.rstrip("\n"), KEY).ok
    crlf_sealed = seal(
        SCENARIOS[0].read_text().replace("\n", "\r\n"),
        KEY,
        key_id="test-key",
        game_id=f"t1/{SCENARIOS[0].stem}",
    )
    assert crlf_sealed == sealed
    # a lone CR is no line end: it changes the line
    lines = lines_of(sealed)
    lines[2] = lines[2].replace(" ", "\r", 1)
    assert bad("\n".join(lines))[0] == 3
    assert bad(sealed + "\n")[0] == len(lines) + 1  # a blank line after the seal line


def test_empty_transcript() -> None:
    sealed = seal("", KEY, key_id="k", game_id="g")
    assert sealed.startswith("#~seal v1 hmac-sha256 lines=0 key-id=k game=g #~ ")
    assert verify(sealed, KEY) == Verdict(True, None, "intact", 0, "k", "g")


def test_verify_compares_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[object, object]] = []
    real = hmac.compare_digest

    def spy(a: str, b: str) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    sealed = sealed_scenario(SCENARIOS[0])
    assert verify(sealed, KEY).ok
    assert len(calls) == len(lines_of(sealed))


# -- what cannot be sealed or verified ------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "#~ a reserved line\n",
        "hand\n#~seal v1 hmac-sha256 lines=1 key-id=k game=g\n",
        "hand\r0 mazo\n",  # a lone CR: parse would count two lines
        "hand\n0 mazo\u2028\n",
        "hand\x0c\n",
        "hand \ud800\n",
    ],
)
def test_unsealable_text(text: str) -> None:
    with pytest.raises(UnsealableError, match="line"):
        seal(text, KEY, key_id="k", game_id="g")


def test_a_sealed_record_is_not_sealed_again() -> None:
    sealed = sealed_scenario(SCENARIOS[0])
    with pytest.raises(UnsealableError, match="sealed already"):
        seal(sealed, KEY, key_id="k", game_id="g")


@pytest.mark.parametrize("ident", ["", "a b", "-x", "x#y", "x=y", "é", "x" * 101])
def test_bad_ids(ident: str) -> None:
    with pytest.raises(UnsealableError):
        seal("hand\n", KEY, key_id=ident, game_id="g")
    with pytest.raises(UnsealableError):
        seal("hand\n", KEY, key_id="k", game_id=ident)


def test_short_key() -> None:
    with pytest.raises(KeyConfigError, match="at least 16"):
        seal("hand\n", b"short", key_id="k", game_id="g")
    with pytest.raises(KeyConfigError):
        verify(sealed_scenario(SCENARIOS[0]), b"")


@pytest.mark.parametrize("text", ["", "\n", "table players=2\nhand\n0 mazo\n", "#~ 12\n"])
def test_unsealed_is_not_a_sealed_record(text: str) -> None:
    with pytest.raises(NotSealedError):
        verify(text, KEY)
    assert issubclass(NotSealedError, SealError) and issubclass(SealError, ValueError)


# -- tampering, scenario by scenario ---------------------------------------------------------


def join(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def _mutations(sealed: str, rng: random.Random) -> list[tuple[str, str, int, str]]:
    """(name, mutated text, expected first bad line, expected reason prefix)."""
    lines = lines_of(sealed)
    n = len(lines) - 1  # body lines; the seal line is n+1
    out: list[tuple[str, str, int, str]] = []

    # edit a character of a line's text (a blank line gains one)
    j = rng.randrange(n)
    text, tag = lines[j][:-68], lines[j][-68:]
    if text:
        k = rng.randrange(len(text))
        text = text[:k] + ("x" if text[k] != "x" else "y") + text[k + 1 :]
    else:
        text = "x"
    edited = [*lines[:j], text + tag, *lines[j + 1 :]]
    out.append(("edit text", join(edited), j + 1, "line changed"))

    # edit a hex digit of a tag
    j = rng.randrange(n)
    k = len(lines[j]) - 1 - rng.randrange(64)
    c = lines[j][k]
    edited = lines[:]
    edited[j] = lines[j][:k] + ("0" if c != "0" else "1") + lines[j][k + 1 :]
    out.append(("edit tag", join(edited), j + 1, "seal tag changed"))

    # delete a body line
    j = rng.randrange(n)
    deleted = lines[:j] + lines[j + 1 :]
    why = "1 line missing" if j < n - 1 else f"the seal line says {n} lines, but {n - 1}"
    out.append(("delete", join(deleted), j + 1, why))

    # delete two body lines
    if n >= 3:
        j = rng.randrange(n - 2)
        out.append(("delete 2", join(lines[:j] + lines[j + 2 :]), j + 1, "2 lines missing"))

    # insert an unsealed line, anywhere up to the seal line
    j = rng.randrange(n + 1)
    inserted = [*lines[:j], "0 truco", *lines[j:]]
    out.append(("insert", join(inserted), j + 1, "no seal tag"))

    # insert a copy of a sealed line elsewhere
    j = rng.randrange(n)
    src = rng.choice([i for i in range(n) if i not in (j, j - 1)] or [j])
    if src not in (j, j - 1):
        copied = [*lines[:j], lines[src], *lines[j:]]
        out.append(("copy", join(copied), j + 1, f"line moved: it was sealed as line {src + 1}"))

    # swap two body lines (distinct ones)
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n) if lines[a] != lines[b]]
    a, b = rng.choice(pairs)
    swapped = lines[:]
    swapped[a], swapped[b] = swapped[b], swapped[a]
    out.append(("swap", join(swapped), a + 1, f"line moved: it was sealed as line {b + 1}"))
    if n >= 2:
        a = rng.randrange(n - 1)
        swapped = lines[:]
        swapped[a], swapped[a + 1] = swapped[a + 1], swapped[a]
        out.append(
            ("swap next", join(swapped), a + 1, f"line moved: it was sealed as line {a + 2}")
        )

    # truncate: the seal line lost, more lines lost, cut inside a line
    out.append(("drop seal line", join(lines[:-1]), n + 1, "the record ends after line"))
    j = rng.randrange(1, n + 1)
    out.append(("truncate", join(lines[:j]), j + 1, "the record ends after line"))
    j = rng.randrange(1, n + 1)
    cut = "\n".join([*lines[:j], lines[j][: rng.randrange(1, len(lines[j]) - 1)]])
    out.append(("cut inside a line", cut, j + 1, ""))
    out.append(("text after the seal line", sealed + "0 mazo\n", n + 2, "text after the seal line"))

    # change the header (the seal line)
    seal_line = lines[-1]
    for old, new, why in [
        ("game=", "game=x", "seal line changed"),
        ("key-id=test-key", "key-id=other", "seal line changed"),
        ("#~seal v1", "#~seal v2", "seal line changed"),
        ("hmac-sha256", "hmac-sha512", "seal line changed"),
        (f"lines={n} ", f"lines={n + 1} ", f"the seal line says {n + 1} lines, but {n} precede"),
    ]:
        out.append(
            (f"header {new}", join([*lines[:-1], seal_line.replace(old, new, 1)]), n + 1, why)
        )
    return out


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_tampering_is_reported_at_the_first_changed_line(path: Path) -> None:
    sealed = sealed_scenario(path)
    rng = random.Random(path.stem)
    for name, mutated, line, why in _mutations(sealed, rng):
        assert first_difference(sealed, mutated) == line, name
        v = verify(mutated, KEY)
        assert not v.ok, name
        assert v.first_bad_line == line, (name, v)
        assert v.reason.startswith(why), (name, v)
        # a tampered record still reads as the transcript it claims to be, or fails cleanly
        assert v.lines is None and v.game_id is None


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_another_key_reports_the_first_line(path: Path) -> None:
    sealed = sealed_scenario(path)
    assert bad(sealed, OTHER_KEY) == (
        1,
        "no line verifies with this key: sealed with another key",
    )
    v = verify(sealed, OTHER_KEY, key_id="other-key")
    assert (v.ok, v.first_bad_line) == (False, 1)
    assert v.reason == (
        "sealed with another key: the seal line names key id 'test-key', this key is 'other-key'"
    )
    resealed = sealed_scenario(path, OTHER_KEY)
    assert verify(resealed, OTHER_KEY).ok
    assert bad(resealed)[0] == 1


# -- random mutations --------------------------------------------------------------------------

SAMPLE = [sealed_scenario(p) for p in SCENARIOS[:: max(1, len(SCENARIOS) // 8)]]
ALPHABET = "abc0123 #~\n\r\té"

Mutation = Callable[[str], str]


@st.composite
def mutations(draw: st.DrawFn) -> Mutation:
    kind = draw(
        st.sampled_from(
            [
                "replace",
                "insert char",
                "delete char",
                "delete line",
                "insert line",
                "copy line",
                "swap lines",
                "move line",
                "truncate",
                "append",
            ]
        )
    )
    a = draw(st.integers(min_value=0, max_value=10_000))
    b = draw(st.integers(min_value=0, max_value=10_000))
    c = draw(st.text(alphabet=ALPHABET, min_size=1, max_size=3))

    def apply(text: str) -> str:
        lines = text.split("\n")
        i = a % max(1, len(text))
        li, lj = a % len(lines), b % len(lines)
        if kind == "replace":
            return text[:i] + c + text[i + 1 :]
        if kind == "insert char":
            return text[:i] + c + text[i:]
        if kind == "delete char":
            return text[:i] + text[i + len(c) :]
        if kind == "delete line":
            return "\n".join(lines[:li] + lines[li + 1 :])
        if kind == "insert line":
            return "\n".join([*lines[:li], c.replace("\n", ""), *lines[li:]])
        if kind == "copy line":
            return "\n".join([*lines[:li], lines[lj], *lines[li:]])
        if kind == "swap lines":
            lines[li], lines[lj] = lines[lj], lines[li]
            return "\n".join(lines)
        if kind == "move line":
            moved = lines.pop(li)
            lines.insert(lj % (len(lines) + 1), moved)
            return "\n".join(lines)
        if kind == "truncate":
            return text[:i]
        return text + c

    return apply


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLE), st.lists(mutations(), min_size=1, max_size=3))
def test_random_mutations_report_the_first_changed_line(
    sealed: str, changes: list[Mutation]
) -> None:
    mutated = sealed
    for change in changes:
        mutated = change(mutated)
    expected = first_difference(sealed, mutated)
    if not any(TAG_RE.search(line) for line in lines_of(mutated)):
        with pytest.raises(NotSealedError):
            verify(mutated, KEY)
        return
    v = verify(mutated, KEY)
    assert v.first_bad_line == expected, (v, mutated)
    assert v.ok == (expected is None)


# -- keys ---------------------------------------------------------------------------------------

HEX = KEY.hex()


def test_load_key_from_config(tmp_path: Path) -> None:
    cfg = tmp_path / "tournament.toml"
    cfg.write_text(f'[tournament]\nname = "Apertura"\nkey = "{HEX}"\nkey_id = "apertura-2025"\n')
    k = load_key(cfg)
    assert k == TournamentKey(KEY, "apertura-2025")
    assert HEX not in repr(k) and "key=" not in repr(k)
    assert load_key(cfg, kind="config") == k


def test_load_key_from_config_with_key_file(tmp_path: Path) -> None:
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "seal.key").write_text(f"# the tournament key\n{HEX.upper()}\n")
    cfg = tmp_path / "t.toml"
    cfg.write_text('[tournament]\nkey_file = "keys/seal.key"\n')
    k = load_key(cfg)
    assert k.key == KEY
    assert k.key_id == key_fingerprint(KEY)
    assert re.fullmatch(r"fp-[0-9a-f]{16}", k.key_id)
    assert k.key_id[3:] not in HEX


def test_load_key_from_key_file(tmp_path: Path) -> None:
    path = tmp_path / "seal.key"
    path.write_text(f"  {HEX}  \n")
    assert load_key(path) == TournamentKey(KEY, key_fingerprint(KEY))
    assert load_key(path, kind="key-file") == load_key(path)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("k.key", "", "una sola línea"),
        ("k.key", f"{HEX}\n{HEX}\n", "una sola línea"),
        ("k.key", HEX[:30], "muy corta"),
        ("k.key", HEX[:-1], "dígitos hexadecimales"),
        ("k.key", HEX.replace("0", "g"), "dígitos hexadecimales"),
        ("t.toml", "[tournament\n", "no es TOML válido"),
        ("t.toml", f'[other]\nkey = "{HEX}"\n', "falta la sección [tournament]"),
        ("t.toml", "[tournament]\nkey_id = 'x'\n", "una sola de key"),
        ("t.toml", f'[tournament]\nkey = "{HEX}"\nkey_file = "k"\n', "una sola de key"),
        ("t.toml", f"[tournament]\nkey = 0x{HEX}\n", "texto de dígitos hexadecimales"),
        ("t.toml", f'[tournament]\nkey = "{HEX[:-2]}zz"\n', "dígitos hexadecimales"),
        ("t.toml", f'[tournament]\nkey = "{HEX}"\nkey_id = "a b"\n', "key_id"),
        ("t.toml", '[tournament]\nkey_file = "missing.key"\n', "cannot read"),
    ],
)
def test_bad_keys(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(KeyConfigError, match=re.escape(message)) as info:
        load_key(path)
    assert HEX[:20] not in str(info.value) and HEX[:20].upper() not in str(info.value)


def test_unreadable_key_files(tmp_path: Path) -> None:
    with pytest.raises(KeyConfigError, match="cannot read"):
        load_key(tmp_path / "nothing.key")
    (tmp_path / "bin.key").write_bytes(b"\xff\xfe" + KEY)
    with pytest.raises(KeyConfigError, match="not UTF-8"):
        load_key(tmp_path / "bin.key")
    (tmp_path / "plain.key").write_text(HEX)
    with pytest.raises(KeyConfigError, match="no es TOML válido"):
        load_key(tmp_path / "plain.key", kind="config")
