"""Fuzzing every command: arguments and input files made up by hypothesis, never a
traceback. Each run ends with a documented exit status (0, 1 or 2; argparse's 0 and 2),
and what goes to standard error is one line at most per message, never a traceback.

Commands that run until stopped (run without --script, desk, tournament-demo, enroll,
venue-broker) have their arguments fuzzed through the parser; the others are run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.cli import COMMANDS, build_parser, main

SCENARIOS = Path(__file__).parent.parent / "scenarios"
RECORDS = sorted(p.read_bytes() for p in SCENARIOS.glob("*.truco"))
KEY_HEX = bytes(range(32)).hex().encode()

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        if not out:
            break
        i = rng.randrange(len(out))
        action = rng.randrange(4)
        if action == 0:
            del out[i : i + rng.randint(1, 20)]
        elif action == 1:
            out[i] = rng.randrange(256)
        elif action == 2:
            j = rng.randrange(len(out))
            out[i:i] = out[j : j + rng.randint(1, 30)]
        else:
            out[i:i] = rng.choice([b"\n", b"hand\n", b" 7E", b"0 play 1E\n", b"#", b"="])
    return bytes(out)


contents = st.one_of(
    st.just(b""),
    st.binary(max_size=200),
    st.sampled_from(RECORDS),
    st.builds(lambda r: b"\xef\xbb\xbf" + r, st.sampled_from(RECORDS)),
    st.builds(
        lambda r, seed: _mutate(r, random.Random(seed)),
        st.sampled_from(RECORDS),
        st.integers(0, 2**32),
    ),
    st.builds(lambda r: r.replace(b"\n", b"\r\n"), st.sampled_from(RECORDS)),
    st.just(KEY_HEX + b"\n"),
    st.builds(lambda r: r + b"\xe9\n", st.sampled_from(RECORDS)),
)
numbers = st.one_of(st.integers(-3, 40), st.integers(-(10**9), 10**9)).map(str)
words = st.text(alphabet=st.characters(codec="utf-8"), max_size=12).filter(
    lambda s: "\x00" not in s  # no NUL in a real command line
)


@contextlib.contextmanager
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="truco-fuzz-") as name:
        yield Path(name)


def run(argv: list[str]) -> tuple[int, str, str]:
    """``truco-table argv`` in this process: its exit status, standard output and error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:  # argparse: --help (0) or a usage error (2)
            code = e.code if isinstance(e.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def check(argv: list[str], allowed: tuple[int, ...] = (0, 1, 2)) -> tuple[int, str, str]:
    code, out, err = run(argv)
    assert code in allowed, (argv, code, err)
    assert "Traceback" not in err and "Traceback" not in out, (argv, err)
    return code, out, err


def paths(base: Path, file: Path) -> st.SearchStrategy[str]:
    return st.sampled_from(
        [str(file), str(base / "missing.truco"), str(base), "/dev/null", "/dev/zero"]
    )


@FUZZ
@given(data=contents, choice=st.data())
def test_replay(data: bytes, choice: st.DataObject) -> None:
    with folder() as base:
        file = base / "game.truco"
        file.write_bytes(data)
        argv = ["replay", choice.draw(paths(base, file))]
        if choice.draw(st.booleans()):
            argv.append("--json")
            if choice.draw(st.integers(0, 9)) == 0:
                argv += ["--through", "mock"]
        code, out, err = check(argv)
        if code == 2:
            assert err.count("\n") == 1, err  # one line
        elif code == 0:
            assert out


@FUZZ
@given(data=contents, choice=st.data())
def test_render(data: bytes, choice: st.DataObject) -> None:
    with folder() as base:
        file = base / "game.truco"
        file.write_bytes(data)
        argv = ["render"]
        if choice.draw(st.integers(0, 15)) == 0:
            argv.append("--contact-sheet")
        else:
            argv.append(choice.draw(paths(base, file)))
            argv += ["--seat", choice.draw(numbers)]
            where = choice.draw(st.sampled_from(["", "--line", "--action"]))
            if where:
                argv += [where, choice.draw(numbers)]
        outs = [base / "s.png", base / "no" / "s.png", base, base / "s.jpg", base / "s"]
        argv += ["--out", str(choice.draw(st.sampled_from(outs)))]
        if choice.draw(st.booleans()):
            argv += ["--scale", choice.draw(st.sampled_from(["0", "-1", "1", "3", "40", "5000"]))]
        code, _, err = check(argv)
        if code == 2:
            assert err.count("\n") == 1, err


@FUZZ
@given(data=contents, key=contents, choice=st.data())
def test_verify_and_seal(data: bytes, key: bytes, choice: st.DataObject) -> None:
    with folder() as base:
        file = base / "game.truco"
        file.write_bytes(data)
        key_file = base / "seal.key"
        key_file.write_bytes(key)
        config = base / "t.toml"
        config.write_bytes(choice.draw(st.sampled_from([key, b'[tournament]\nkey = "x"\n'])))
        command = choice.draw(st.sampled_from(["verify", "seal"]))
        argv = [command, choice.draw(paths(base, file))]
        source = choice.draw(st.sampled_from(["--key-file", "--config"]))
        argv += [source, str(key_file if source == "--key-file" else config)]
        if command == "seal":
            argv += ["--game-id", choice.draw(st.sampled_from(["mesa-1/g-2", "", "a b", "é"]))]
            if choice.draw(st.booleans()):
                argv += ["--out", str(choice.draw(st.sampled_from([base / "o.truco", base])))]
        check(argv)


@FUZZ
@given(choice=st.data())
def test_control(choice: st.DataObject) -> None:
    with folder() as base:
        (base / "file").write_text("x")
        command = choice.draw(st.sampled_from(["undo", "new-game", "rules", "nope"]))
        extra = choice.draw(st.lists(st.sampled_from(["flor=on", "target=15", "x", "a=b"])))
        state = choice.draw(st.sampled_from([base, base / "missing", base / "file"]))
        argv = ["control", command, *extra, "--state", str(state), "--wait", "0"]
        check(argv)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=contents, choice=st.data())
def test_run_a_script_on_the_mock_table(data: bytes, choice: st.DataObject) -> None:
    with folder() as base:
        file = base / "game.truco"
        file.write_bytes(data)
        argv = ["run", "--mock", "--ui", "lines", "--script", choice.draw(paths(base, file))]
        argv += ["--players", choice.draw(st.sampled_from(["2", "4"]))]
        if choice.draw(st.booleans()):
            argv += ["--record", str(choice.draw(st.sampled_from([base / "r.truco", base])))]
        if choice.draw(st.booleans()):
            argv += ["--state", str(base / "state")]
        check(argv)


@settings(max_examples=10, deadline=None)
@given(data=contents)
def test_run_with_a_configuration_that_is_not_one(data: bytes) -> None:
    with folder() as base:
        config = base / "table.toml"
        config.write_bytes(b"\x00" + data)  # never a usable configuration
        code, _, err = check(["run", "--config", str(config)])
        assert code == 2 and err.strip()
        code, _, err = check(["run", "--config", str(base / "none.toml")])
        assert code == 2 and "--mock" in err


def _option_words() -> list[str]:
    """Every option of every subcommand, from the parsers themselves."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found: set[str] = set()
    for command_parser in sub.choices.values():
        command_parser.format_usage()  # loads the subcommand's arguments
        for action in command_parser._actions:
            found.update(action.option_strings)
    return sorted(found)


OPTION_WORDS = _option_words()


@settings(max_examples=300, deadline=None)
@given(
    command=st.sampled_from([c.name for c in COMMANDS]),
    tokens=st.lists(st.one_of(st.sampled_from(OPTION_WORDS), numbers, words), max_size=8),
)
def test_every_command_parses_any_arguments_without_a_traceback(
    command: str, tokens: list[str]
) -> None:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            build_parser().parse_args([command, *tokens])
        except SystemExit as e:
            assert e.code in (0, 2)
            if e.code == 2:
                assert err.getvalue().count("\n") == 1, err.getvalue()


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """``truco-table replay FILE | head``: no BrokenPipeError, exit status 141. The reading
    end is closed before the command writes (a game's story fits a pipe's buffer)."""
    record = tmp_path / "game.truco"
    cli = [sys.executable, "-m", "controller.cli"]
    made = subprocess.run(
        [*cli, "run", "--mock", "--bots-only", "--ui", "lines", "--record", str(record)],
        capture_output=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    reader, writer = os.pipe()
    proc = subprocess.Popen([*cli, "replay", str(record)], stdout=writer, stderr=subprocess.PIPE)
    os.close(writer)
    os.close(reader)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141, err
    assert err == b""
