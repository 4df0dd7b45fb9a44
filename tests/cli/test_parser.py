"""The ``truco-table`` parser: every subcommand there, each one's module loaded only
when that subcommand is parsed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from controller.cli import COMMANDS, SPANISH_COMMANDS, build_parser, main


def _modules_after_parsing(argv: list[str]) -> set[str]:
    code = (
        "import sys\n"
        "from controller.cli import build_parser\n"
        f"build_parser().parse_args({argv!r})\n"
        "print('\\n'.join(m for m in sys.modules if m.startswith('controller')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return set(out.split())


def test_run_does_not_import_the_other_commands() -> None:
    loaded = _modules_after_parsing(["run", "--mock"])
    assert "controller.cli.run" in loaded
    for other in (
        "controller.cli.desk",
        "controller.cli.render",
        "controller.cli.enroll",
        "controller.cli.verify",
        "controller.tournament.desk",
        "controller.hal.enroll",
    ):
        assert other not in loaded


def test_replay_loads_only_replay() -> None:
    loaded = _modules_after_parsing(["replay", "x.truco"])
    commands = {f"controller.cli.{c.module}" for c in COMMANDS}
    assert loaded & commands == {"controller.cli.replay"}


@pytest.mark.parametrize("command", [c.name for c in COMMANDS])
def test_every_subcommand_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    # the bar owner's and the players' commands speak Spanish, argparse's words too
    usage = "uso" if command in SPANISH_COMMANDS else "usage"
    assert capsys.readouterr().out.startswith(f"{usage}: truco-table {command}")


def test_top_level_help_lists_every_subcommand() -> None:
    text = build_parser().format_help()
    for command in COMMANDS:
        assert command.name in text


def test_a_usage_error_is_one_line_naming_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["render", "--no-such-option"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "truco-table render: the following arguments are required: --out" in err
    assert "(see truco-table render --help)" in err
    with pytest.raises(SystemExit):
        main(["no-such-command"])
    assert "truco-table: argument command: invalid choice" in capsys.readouterr().err


def test_python_dash_m() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.startswith("truco-table ")


@pytest.mark.parametrize("argv", [["replay", "0", "\n"], ["run", "\n"], ["render", "\x1b[2J"]])
def test_a_control_character_in_an_argument_keeps_the_error_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith(" --help)\n"), err
    assert "\x1b" not in err
