"""The configuration file: the shipped example loads; every mistake names its key."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from controller.engine.rules import Claims
from controller.table.config import ConfigError, load_config
from controller.table.controls import Button
from controller.table.table import DealReading

ROOT = Path(__file__).parent.parent.parent


def example(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "systemd" / "table.toml", tmp_path / "table.toml")
    shutil.copy(ROOT / "hardware" / "pinmap.toml", tmp_path / "pinmap.toml")
    return tmp_path / "table.toml"


def test_the_shipped_example_loads(tmp_path: Path) -> None:
    config = load_config(example(tmp_path))
    assert config.rules.players == 4 and config.deal_reading is DealReading.SEATS
    assert config.topology == "nodes"
    assert [n.seat for n in config.nodes] == [0, 1, 2, 3]
    assert sorted(config.displays) == [0, 1, 2, 3]
    assert config.displays[2].driver == "sh1106" and config.displays[2].connected_to == "node"
    assert config.displays[0].driver == "ssd1309" and config.displays[0].mux_channel is None


def test_inline_hardware_and_rules(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(
        '[table]\nplayers = 2\n[rules]\nclaims = "declared"\nflor = true\n'
        '[topology]\nkind = "gpio"\n'
        + "".join(
            f"[[gpio.seat]]\nseat = {s}\n[gpio.seat.buttons]\n"
            + "".join(
                f"{b} = {p}\n"
                for b, p in zip(
                    [b.value for b in Button],
                    range(4 + 8 * s, 12 + 8 * s),
                    strict=True,
                )
            )
            for s in (0, 1)
        )
    )
    config = load_config(path)
    assert config.rules.claims is Claims.DECLARED and config.rules.flor
    assert config.topology == "gpio" and config.gpio[1].buttons["truco"] == 12


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        ("[table]\nplayers = 3\n", "rules", "players must be"),
        ("[table]\nplayers = 'four'\n", "table.players", "expected int"),
        ("[table]\ncolour = 1\n", "table.colour", "unknown key"),
        ("[table]\ndeal_reading = 'magic'\n", "table.deal_reading", "seats, dealer or none"),
        ("[rules]\nfalta = 'all'\n", "rules", "falta must be one of"),
        ("[table]\nplayers = 2\n[topology]\nkind = 'wifi'\n", "topology.kind", "nodes or gpio"),
        (
            "[table]\nplayers = 2\n[[nodes.seat]]\nseat = 0\nserial = 'a'\n",
            "nodes.seat",
            "no entry for seat(s) 1",
        ),
        (
            "[table]\nplayers = 2\n[[nodes.seat]]\nseat = 5\nserial = 'a'\n",
            "nodes.seat[0].seat",
            "0..1",
        ),
        ("[table]\nplayers = 4\n[topology]\nkind = 'gpio'\n", "topology.kind", "two-seat"),
        ("[table\n", "(file)", "not valid TOML"),
    ],
)
def test_mistakes_name_the_key(tmp_path: Path, text: str, key: str, expected: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.key == key
    assert expected in str(info.value)


def test_missing_file_and_pinmap(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "nope.toml")
    path = tmp_path / "t.toml"
    path.write_text("[table]\npinmap = 'missing.toml'\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.key == "table.pinmap"


def test_run_with_a_bad_config_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import main

    path = tmp_path / "t.toml"
    path.write_text("[table]\nplayers = 5\n")
    assert main(["run", "--config", str(path)]) == 2
    assert "bad configuration" in capsys.readouterr().err


def test_each_seat_says_where_its_panel_hangs(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    nodes = "".join(f'[[nodes.seat]]\nseat = {s}\nserial = "e66141{s:010x}"\n' for s in range(4))
    displays = (
        '[[display.seat]]\nseat = 0\ndriver = "ssd1309"\n'  # on its node (no mux channel)
        "[[display.seat]]\nseat = 1\nmux_channel = 1\n"  # on the Pi, behind the multiplexer
        '[[display.seat]]\nseat = 2\ndriver = "sh1106"\nconnected_to = "node"\n'
        '[[display.seat]]\nseat = 3\nconnected_to = "pi"\n'
    )
    path.write_text("[table]\nplayers = 4\n" + nodes + displays)
    config = load_config(path)
    assert [config.displays[s].connected_to for s in range(4)] == ["node", "pi", "node", "pi"]
    assert config.displays[0].driver == "ssd1309"
    path.write_text(
        "[table]\nplayers = 4\n" + nodes + '[[display.seat]]\nseat = 0\nconnected_to = "usb"\n'
    )
    with pytest.raises(ConfigError, match=r"display.seat\[0\].connected_to: expected node or pi"):
        load_config(path)
