"""Every subcommand given bad arguments: one clear line, a non-zero status, and no
traceback and none of Python's internals (a function's name, a type's, an exception's
text) in what the user reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.cli import COMMANDS, main

#: what only Python (not a person) would say
INTERNALS = re.compile(
    r"Traceback|File \"|line \d+, in |invalid \w+ value|_\w+\(|dictionary update sequence|"
    r"NoneType|object has no attribute|unhashable|not subscriptable|takes \d+ positional|"
    r"\b(Type|Value|Key|Attribute|Index|Runtime|Assertion|Lookup)Error\b|Errno|<class |"
    r"0x[0-9a-f]{6,}|internal error"
)


def bad(tmp: Path) -> list[list[str]]:
    junk = tmp / "junk.txt"
    junk.write_text("hola, esto no es nada\n", encoding="utf-8")
    folder = tmp / "folder"
    folder.mkdir()
    missing = str(tmp / "missing")
    decks = tmp / "decks.toml"
    return [
        [],
        ["nope"],
        ["replay"],
        ["replay", missing],
        ["replay", str(junk)],
        ["replay", str(folder)],
        ["replay", str(junk), "--through", "nope"],
        ["run", "--mock", "--players", "3"],
        ["run", "--mock", "--seat", "9"],
        ["run", "--mock", "--seed", "x"],
        ["run", "--mock", "--pace", "nan"],
        ["run", "--mock", "--pace", "-1"],
        ["run", "--mock", "--score", "40", "0"],
        ["run", "--mock", "--score", "x", "0"],
        ["run", "--mock", "--state", "/dev/null"],
        ["run", "--mock", "--state", str(junk)],
        ["run", "--mock", "--script", missing],
        ["run", "--mock", "--script", str(junk)],
        ["run", "--mock", "--record", str(folder)],
        ["run", "--mock", "--falta", "nope"],
        ["run", "--config", missing],
        ["control"],
        ["control", "bogus"],
        ["control", "rules", "nokey", "--state", str(folder)],
        ["control", "rules", "=x", "--state", str(folder)],
        ["control", "rules", "flor=maybe", "--state", str(folder)],
        ["control", "undo", "extra", "--state", str(folder)],
        ["control", "undo", "--state", missing],
        ["control", "undo", "--wait", "x"],
        ["enroll"],
        ["enroll", "--deck", "x", "--card", "99Z", "--mock", "--registry", str(decks)],
        ["enroll", "--deck", "x", "--mock", "--mock-pace", "-3", "--registry", str(decks)],
        ["enroll", "--deck", "x", "--mock", "--registry", str(junk)],
        ["render"],
        ["render", "--scale", "1e9", "--out", str(tmp / "a.png")],
        ["render", "--scale", "0", "--out", str(tmp / "a.png")],
        ["render", str(junk), "--out", str(tmp / "a.txt")],
        ["render", missing, "--out", str(tmp / "a.png")],
        ["render", str(junk), "--out", str(tmp / "a.png"), "--line", "x"],
        ["verify", str(junk)],
        ["verify", str(junk), "--key-file", missing],
        ["verify", str(junk), "--key-file", str(junk)],
        ["verify", str(junk), "--config", str(junk)],
        ["seal", str(junk)],
        ["seal", str(junk), "--key-file", str(junk), "--game-id", "t1"],
        ["desk", "--broker", "nope:port"],
        ["desk", "--http-port", "99999"],
        ["desk", "--config", str(junk)],
        ["desk", "--config", missing],
        ["desk", "--refresh", "-1"],
        ["doctor", "--config", str(junk)],
        ["doctor", "--players", "5", "--mock"],
        ["tournament-demo", "--tables", "-1"],
        ["tournament-demo", "--speed", "0"],
        ["tournament-demo", "--format", "league"],
        ["tournament-demo", "--players", "3"],
        ["desk-audit"],
        ["desk-audit", missing],
        ["desk-audit", str(junk)],
        ["desk-audit", str(folder), "--config", str(junk)],
        ["desk-audit", str(folder), "--config", missing],
        ["organiser"],
        ["organiser", "register"],
        ["organiser", "--desk", "nope", "status"],
        ["organiser", "override", "m1", "--games", "x", "--points", "1-2"],
        ["venue-broker"],
        ["venue-broker", "--tournament", "copa", "--tables", "-2", "--out", str(folder)],
        ["venue-broker", "--tournament", "copa", "--tables", "2", "--port", "x",
         "--out", str(folder)],
        ["venue-night"],
        ["venue-night", "--venue", missing],
        ["venue-night", "--venue", str(folder)],
        ["venue-night", "--venue", str(folder), "--http-port", "70000"],
        ["venue-door"],
        ["venue-door", "--config", missing],
        ["venue-door", "--config", str(junk)],
        ["league"],
        ["league", "add-venue"],
        ["league", "add-venue", "--dir", str(folder), "--venue", "bad id!", "--tables", "2"],
        ["league", "add-venue", "--dir", str(folder), "--venue", "bar-a", "--tables", "x"],
        ["league", "add-venue", "--dir", str(folder), "--venue", "bar-a", "--tables", "2",
         "--port", "nope"],
        ["league", "fixture"],
        ["league", "fixture", "--dir", missing],
        ["league", "fixture", "--dir", str(folder)],
        ["league", "desk"],
        ["league", "desk", "--dir", missing, "--http-port", "0"],
        ["league", "desk", "--dir", str(folder), "--http-port", "0"],
        ["league", "desk", "--dir", str(folder), "--http-port", "70000"],
        ["seat"],
        ["seat", "install", "--asiento", "9"],
        ["seat", "install", "--firmware", missing, "/dev/ttyACM9"],
        ["seat", "test"],
        ["seat", "test", missing],
        ["seat", "test", str(junk), "--segundos", "0"],
        ["rekey"],
        ["rekey", "--config", missing, "ABCD-EFGH-JKMN-PQRS"],
        ["rekey", "--config", str(junk), "ABCD-EFGH-JKMN-PQRS"],
        ["rekey", "--config", str(junk), "no-es-un-codigo"],
        ["replay-hand"],
        ["replay-hand", missing],
        ["replay-hand", str(junk)],
        ["replay-hand", str(junk), "--mano", "x"],
        ["replay-hand", str(junk), "--puerto", "70000"],
    ]  # fmt: skip


def test_bad_arguments_get_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRUCO_TABLE_STATE", str(tmp_path / "state"))  # nothing outside tmp
    cases = bad(tmp_path)
    assert {argv[0] for argv in cases if argv} >= {c.name for c in COMMANDS}
    failures = []
    for argv in cases:
        try:
            status = main(argv)
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else 2
        out, err = capsys.readouterr()
        said = out + err
        if status == 0 or not said.strip() or INTERNALS.search(said):
            failures.append(f"{argv}: status {status}: {said.strip()[:300]}")
    assert not failures, "\n".join(failures)


def options_help(text: str) -> dict[str, str]:
    """Each option's help in ``--help``, on one line: ``--flor`` -> its words."""
    out: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        match = re.match(r"^  (--[\w-]+)(?: (?:\{[^}]*\}|[A-Z_ ]+?))?(?:\s{2,}(.*))?$", line)
        if match:
            current = match.group(1)
            out[current] = match.group(2) or ""
        elif current and line.startswith("      "):
            out[current] += " " + line.strip()
        else:
            current = None
    return {k: v.strip() for k, v in out.items()}


def test_help_shows_the_defaults_and_explains_every_house_rule(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["run", "--help"])
    assert done.value.code == 0
    said = options_help(capsys.readouterr().out)
    rules = {
        "--players": "2", "--target": "30", "--flor": "off", "--falta": "to_win",
        "--mazo-envido-point": "on", "--claims": "auto", "--implicit-quiero": "off",
        "--pica-pica": "off",
    }  # fmt: skip
    for option, default in rules.items():
        assert len(said[option].split()) >= 8, said[option]  # says what the rule does
        assert said[option].endswith(f"(por defecto: {default})"), said[option]
    others = {"--seed": "0", "--seat": "0", "--pace": "0.6", "--deal-reading": "seats",
              "--lang": "es", "--ui": "auto"}  # fmt: skip
    for option, default in others.items():
        assert f"(por defecto: {default})" in said[option], said[option]
