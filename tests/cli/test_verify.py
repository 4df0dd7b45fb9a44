"""`truco-table verify` and `truco-table seal`, through the ``truco-table`` parser."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from controller import cli
from controller.cli import build_parser
from controller.cli import verify as verify_cli
from controller.cli.verify import (
    EXIT_INTACT,
    EXIT_MALFORMED,
    EXIT_TAMPERED,
)
from controller.tournament.wire.seal import seal

ROOT = Path(__file__).parent.parent.parent
SCENARIO = ROOT / "tests" / "scenarios" / "worked-hand-2.truco"
KEY = bytes(range(32))
HEX = KEY.hex()


def parser() -> argparse.ArgumentParser:
    return build_parser()


def run(argv: list[str]) -> tuple[int, str, str]:
    args = parser().parse_args(argv)
    out, err = io.StringIO(), io.StringIO()
    code: int = args.func(args, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "seal.key"
    path.write_text(HEX + "\n")
    return path


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "tournament.toml"
    path.write_text(f'[tournament]\nname = "Apertura"\nkey = "{HEX}"\nkey_id = "apertura"\n')
    return path


@pytest.fixture
def sealed(tmp_path: Path) -> Path:
    path = tmp_path / "game.truco"
    path.write_text(seal(SCENARIO.read_text(), KEY, key_id="apertura", game_id="mesa-3/g-7"))
    return path


def test_the_parser_has_both_commands() -> None:
    args = parser().parse_args(["verify", "f", "--key-file", "k"])
    assert args.func is verify_cli.run_verify
    args = parser().parse_args(["seal", "f", "--config", "c", "--game-id", "g"])
    assert args.func is verify_cli.run_seal and args.out is None


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "f"],  # no key
        ["verify", "f", "--key-file", "k", "--config", "c"],  # both
        ["seal", "f", "--key-file", "k"],  # no game id
    ],
)
def test_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        parser().parse_args(argv)
    assert info.value.code == 2


def test_intact(sealed: Path, key_file: Path, config: Path) -> None:
    lines = len(SCENARIO.read_text().splitlines())
    for opt in (["--key-file", str(key_file)], ["--config", str(config)]):
        assert run(["verify", str(sealed), *opt]) == (
            EXIT_INTACT,
            f"intact: {lines} lines, game mesa-3/g-7 (key id apertura)\n",
            "",
        )


def test_intact_with_crlf_line_ends(sealed: Path, key_file: Path) -> None:
    sealed.write_bytes(sealed.read_bytes().replace(b"\n", b"\r\n"))
    assert run(["verify", str(sealed), "--key-file", str(key_file)])[0] == EXIT_INTACT


def test_tampered(sealed: Path, key_file: Path) -> None:
    text = sealed.read_text()
    sealed.write_text(text.replace("1 no-quiero", "1 quiero", 1))
    code, out, err = run(["verify", str(sealed), "--key-file", str(key_file)])
    assert (code, out, err) == (EXIT_TAMPERED, "tampered: line 15: line changed\n", "")

    lines = text.splitlines(keepends=True)
    sealed.write_text("".join(lines[:8] + lines[9:]))
    code, out, _ = run(["verify", str(sealed), "--key-file", str(key_file)])
    assert (code, out) == (EXIT_TAMPERED, "tampered: line 9: 1 line missing before this line\n")

    sealed.write_text("".join(lines[:-1]))
    code, out, _ = run(["verify", str(sealed), "--key-file", str(key_file)])
    assert (code, out) == (
        EXIT_TAMPERED,
        "tampered: line 16: the record ends after line 15 without its seal line (truncated)\n",
    )


def test_another_key(sealed: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.toml"
    other.write_text(f'[tournament]\nkey = "{"ab" * 32}"\nkey_id = "clausura"\n')
    code, out, err = run(["verify", str(sealed), "--config", str(other)])
    assert code == EXIT_TAMPERED
    assert out == (
        "tampered: line 1: sealed with another key: the seal line names key id 'apertura', "
        "this key is 'clausura'\n"
    )
    assert "ab" * 8 not in out + err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        (b"\xff\xfe", "not UTF-8"),
        (b"table players=2\nhand\n0 mazo\n", "not a sealed record"),
        (b"", "not a sealed record"),
    ],
)
def test_malformed_files(
    tmp_path: Path, key_file: Path, content: bytes | None, message: str
) -> None:
    path = tmp_path / "game.truco"
    if content is not None:
        path.write_bytes(content)
    code, out, err = run(["verify", str(path), "--key-file", str(key_file)])
    assert (code, out) == (EXIT_MALFORMED, "")
    assert err.startswith("truco-table verify: ") and message in err
    assert str(path) in err


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("k.key", "", "una sola línea"),
        ("k.key", HEX[:20], "muy corta"),
        ("k.key", "zz" * 32, "dígitos hexadecimales"),
        ("t.toml", "[tournament]\n", "una sola de key"),
        ("missing.key", None, "cannot read"),
    ],
)
def test_unusable_keys(
    sealed: Path, tmp_path: Path, name: str, content: str | None, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    code, out, err = run(["verify", str(sealed), "--key-file", str(path)])
    assert (code, out) == (EXIT_MALFORMED, "")
    assert "no usable key" in err and message in err
    assert HEX[:20] not in err


def test_config_must_be_toml(sealed: Path, key_file: Path) -> None:
    code, _, err = run(["verify", str(sealed), "--config", str(key_file)])
    assert code == EXIT_MALFORMED and "no es TOML válido" in err and HEX[:16] not in err


def test_seal_then_verify(tmp_path: Path, key_file: Path) -> None:
    out_path = tmp_path / "sealed.truco"
    code, out, err = run(
        [
            "seal",
            str(SCENARIO),
            "--key-file",
            str(key_file),
            "--game-id",
            "m1/g1",
            "--out",
            str(out_path),
        ]
    )
    assert (code, err) == (EXIT_INTACT, "")
    key_id = out.split("key id ")[1].split(")")[0]
    assert out == f"sealed: 15 lines, game m1/g1 (key id {key_id}) -> {out_path}\n"
    assert key_id.startswith("fp-")
    assert out_path.read_text() == seal(SCENARIO.read_text(), KEY, key_id=key_id, game_id="m1/g1")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    code, out, _ = run(["verify", str(out_path), "--key-file", str(key_file)])
    assert (code, out) == (EXIT_INTACT, f"intact: 15 lines, game m1/g1 (key id {key_id})\n")


def test_seal_to_standard_output(key_file: Path, config: Path) -> None:
    code, out, err = run(["seal", str(SCENARIO), "--config", str(config), "--game-id", "g"])
    assert (code, err) == (EXIT_INTACT, "")
    assert out == seal(SCENARIO.read_text(), KEY, key_id="apertura", game_id="g")


def test_seal_in_place(tmp_path: Path, key_file: Path) -> None:
    path = tmp_path / "game.truco"
    path.write_text(SCENARIO.read_text())
    code, _, _ = run(
        ["seal", str(path), "--key-file", str(key_file), "--game-id", "g", "--out", str(path)]
    )
    assert code == EXIT_INTACT
    assert run(["verify", str(path), "--key-file", str(key_file)])[0] == EXIT_INTACT


@pytest.mark.parametrize(
    ("text", "game_id", "message"),
    [
        ("table players=2\nhand\n0 play 8E\n", "g", "game.truco:3: not a card"),
        ("hand\n0 play 1E\nhand\n", "g", "game.truco:3: 'hand' before the previous hand ended"),
        ("hand\n#~ reserved\n", "g", "line 2: lines starting with '#~' are reserved"),
        ("hand\n", "two words", "game id 'two words'"),
    ],
)
def test_seal_refuses(
    tmp_path: Path, key_file: Path, text: str, game_id: str, message: str
) -> None:
    path = tmp_path / "game.truco"
    path.write_text(text)
    out_path = tmp_path / "out.truco"
    code, out, err = run(
        [
            "seal",
            str(path),
            "--key-file",
            str(key_file),
            "--game-id",
            game_id,
            "--out",
            str(out_path),
        ]
    )
    assert (code, out) == (EXIT_MALFORMED, "")
    assert err.startswith("truco-table seal: ") and message in err
    assert not out_path.exists()


def test_seal_refuses_a_sealed_record(sealed: Path, key_file: Path) -> None:
    code, _, err = run(["seal", str(sealed), "--key-file", str(key_file), "--game-id", "g"])
    assert code == EXIT_MALFORMED and "sealed already" in err


@pytest.mark.parametrize("through", ["engine", "mock"])
def test_replay_reads_a_sealed_record_unchanged(
    sealed: Path, through: str, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = json.loads(SCENARIO.with_suffix(".json").read_text())
    assert cli.main(["replay", str(sealed), "--json", "--through", through]) == 0
    assert json.loads(capsys.readouterr().out) == expected


def test_replay_reports_sealed_line_numbers(
    tmp_path: Path, key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A refused action has the same line number sealed or not."""
    text = "table players=2\n\nhand\n# a comment\n1 play 1E\n0 mazo\n"
    plain = tmp_path / "plain.truco"
    plain.write_text(text)
    sealed = tmp_path / "sealed.truco"
    sealed.write_text(seal(text, KEY, key_id="k", game_id="g"))
    results = []
    for path in (plain, sealed):
        assert cli.main(["replay", str(path), "--json"]) == 0
        results.append(json.loads(capsys.readouterr().out))
    assert results[0] == results[1]
    assert results[0]["rejected"][0]["line"] == 5
