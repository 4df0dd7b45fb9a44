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
    if not said.split(": ", 3)[-1].startswith("no puedo usar"):  # the key's own words
        assert not ENGLISH.search(error.expected), said


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
