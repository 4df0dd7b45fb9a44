"""Issue 49: every key of ``[tournament]`` with a bad value names the file, its line and
what it should be, in Spanish."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.table.config import ConfigError
from controller.tournament.table.link import load_tournament_settings

GOOD = {
    "name": '"copa"',
    "table_id": '"mesa07"',
    "broker": '"192.168.1.10:1883"',
    "profile": '"tournament"',
    "key_file": '"table.key"',
    "key_id": '"copa:mesa07"',
    "keepalive_s": "5",
    "username": '"mesa07"',
    "password_file": '"broker.pass"',
    "ca_file": '"ca.crt"',
    "match": '"r1-m4"',
}
ENGLISH = re.compile(r"\b(the|is|must|should|expected|not|unknown|given|without)\b", re.I)


def write(folder: Path, values: dict[str, str]) -> Path:
    for name, text in (("table.key", "ab" * 32), ("broker.pass", "secreto"), ("ca.crt", "x")):
        (folder / name).write_text(text + "\n")
        (folder / name).chmod(0o600)
    path = folder / "table.toml"
    lines = ["[table]", "players = 2", "", "[tournament]"]
    lines += [f"{k} = {v}" for k, v in values.items()]
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o600)
    return path


def test_the_good_section_loads(tmp_path: Path) -> None:
    settings = load_tournament_settings(write(tmp_path, GOOD))
    assert settings is not None and settings.table_id == "mesa07" and settings.match == "r1-m4"


@pytest.mark.parametrize("key", sorted(GOOD))
@pytest.mark.parametrize("bad", ["[[]]", '""', "0", '"con espacios y ñ"'])
def test_every_key_with_a_bad_value_names_its_line_in_spanish(
    tmp_path: Path, key: str, bad: str
) -> None:
    if (key, bad) in {
        ("username", '"con espacios y ñ"'),  # any text is a user name
        ("key_id", '"con espacios y ñ"'),  # checked with the key's file
        ("password_file", '"con espacios y ñ"'),  # a file's name: then it is not there
        ("ca_file", '"con espacios y ñ"'),
        ("key_file", '"con espacios y ñ"'),
        ("keepalive_s", '"con espacios y ñ"'),
    }:
        bad = "[[]]"
    values = {**GOOD, key: bad}
    path = write(tmp_path, values)
    with pytest.raises(ConfigError) as info:
        load_tournament_settings(path)
    error = info.value
    line = path.read_text().splitlines().index(f"{key} = {bad}") + 1
    assert (error.source, error.key, error.line) == (str(path), f"tournament.{key}", line), str(
        error
    )
    said = str(error)
    assert said.startswith(f"{path}, línea {line}: tournament.{key}: "), said
    assert said.endswith("Corregí esa línea y volvé a arrancar la mesa"), said
    assert not ENGLISH.search(error.expected), said  # the key's own words too


@pytest.mark.parametrize(
    ("key", "value", "setup", "words"),
    [
        ("key_file", '"falta.key"', None, "falta.key: no existe: revisá el nombre y la carpeta"),
        ("key_file", '"claves"', "folder", "claves es una carpeta, no un archivo de clave"),
        ("key_file", '"corta.key"', "short", "la clave es muy corta (8 bytes; hacen falta 16)"),
        ("key_file", '"latin.key"', "latin1", "latin.key:1: no es texto UTF-8 (byte 0xe9)"),
        ("password_file", '"falta.pass"', None, "falta.pass: no existe: revisá el nombre"),
    ],
)
def test_an_unusable_key_or_password_file_is_named_in_spanish(
    tmp_path: Path, key: str, value: str, setup: str | None, words: str
) -> None:
    """The file a key names that cannot be used: the error names the line of
    table.toml, that file and what to do, with no English detail after the prefix."""
    name = value.strip('"')
    if setup == "folder":
        (tmp_path / name).mkdir(mode=0o700)
    elif setup == "short":
        (tmp_path / name).write_text("ab" * 8 + "\n")
    elif setup == "latin1":
        (tmp_path / name).write_bytes(b"# clave de la mesa n\xe9\n" + b"ab" * 32 + b"\n")
    if setup in ("short", "latin1"):
        (tmp_path / name).chmod(0o600)
    path = write(tmp_path, {**GOOD, key: value})
    with pytest.raises(ConfigError) as info:
        load_tournament_settings(path)
    said = str(info.value)
    line = path.read_text().splitlines().index(f"{key} = {value}") + 1
    assert said.startswith(f"{path}, línea {line}: tournament.{key}: "), said
    assert words in said, said
    assert str(tmp_path / name) in said, said
    assert not ENGLISH.search(info.value.expected), said


def test_an_unknown_key_and_a_missing_one(tmp_path: Path) -> None:
    path = write(tmp_path, {**GOOD, "colour": '"red"'})
    with pytest.raises(ConfigError, match=r"línea 16: tournament.colour: clave desconocida"):
        load_tournament_settings(path)
    values = dict(GOOD)
    del values["broker"]
    with pytest.raises(ConfigError) as info:
        load_tournament_settings(write(tmp_path, values))
    assert info.value.key == "tournament.broker" and info.value.line == 4  # its section
    assert "falta: tendría que ser el broker del torneo" in str(info.value)
