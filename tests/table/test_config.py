"""The configuration file: the shipped example loads; every mistake names its key."""

from __future__ import annotations

import re
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
    for seat in range(4):  # the guide's table: every 2.42" panel on its seat's node
        display = config.displays[seat]
        assert (display.driver, display.connected_to, display.mux_channel) == (
            "ssd1309",
            "node",
            None,
        )


@pytest.mark.parametrize(
    ("written", "loop_cpu"),
    [
        ("", "last"),
        ('loop_cpu = "last"', "last"),
        ('loop_cpu = "none"', "none"),
        ("loop_cpu = 3", 3),
    ],
)
def test_the_loop_cpu_is_the_last_unless_the_file_says(
    tmp_path: Path, written: str, loop_cpu: object
) -> None:
    path = tmp_path / "t.toml"
    path.write_text(f"[table]\nplayers = 2\n{written}\n{TWO_NODES}")
    assert load_config(path).loop_cpu == loop_cpu
    assert load_config(example(tmp_path)).loop_cpu == "last"  # as the install writes it


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
        ("[table]\nplayers = 3\n", "table.players", "tendría que ser 2, 4 o 6"),
        ("[table]\nplayers = 'four'\n", "table.players", "tendría que ser un número entero"),
        ("[table]\ncolour = 1\n", "table.colour", "clave desconocida"),
        ("[table]\ndeal_reading = 'magic'\n", "table.deal_reading", "seats o dealer o none"),
        ("[rules]\nfalta = 'all'\n", "rules.falta", "tendría que ser to_win o "),
        ("[table]\nplayers = 2\n[topology]\nkind = 'wifi'\n", "topology.kind", "nodes o gpio"),
        (
            "[table]\nplayers = 2\n[[nodes.seat]]\nseat = 0\nserial = 'e6614103e7ab1200'\n",
            "nodes.seat",
            "falta la entrada del asiento 1",
        ),
        (
            "[table]\nplayers = 2\n[[nodes.seat]]\nseat = 6\nserial = 'a'\n",
            "nodes.seat[0].seat",
            "de 0 a 5",
        ),
        ("[table]\nplayers = 4\n[topology]\nkind = 'gpio'\n", "topology.kind", "dos asientos"),
        ("[table\n", "(archivo)", "no es TOML válido"),
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
    with pytest.raises(ConfigError, match="no existe el archivo"):
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
    assert "la configuración tiene un error" in capsys.readouterr().err


TWO_NODES = "".join(f"[[nodes.seat]]\nseat = {s}\nserial = 'e6614103e7ab120{s}'\n" for s in (0, 1))


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        # issue 13, 6: wrong types that gave tracebacks
        ("[table]\nplayers = 2\n[nodes]\nseat = [5, 6]\n", "nodes.seat", "tablas [[nodes.seat]]"),
        (
            "[table]\nplayers = 2\n" + TWO_NODES + "[display]\nseat = 3\n",
            "display.seat",
            "tablas [[display.seat]]",
        ),
        ("table = 3\n", "table", "tendría que ser una tabla"),
        (
            "[table]\nplayers = 2\n[rules]\ntarget = [15]\n",
            "rules.target",
            "tendría que ser una palabra",
        ),
        # issue 13, 6: absurd values that were accepted silently
        *[
            (
                f"[table]\nplayers = 2\n{TWO_NODES}[nodes]\nheartbeat_timeout_s = {v}\n",
                "nodes.heartbeat_timeout_s",
                "tendrían que ser segundos de 1 a 60",
            )
            for v in ("0", "-1", "nan", "inf", "0.2", "1e9", "'3'", "true")
        ],
        *[
            (
                f"[table]\nplayers = 2\nnext_deal_after_s = {v}\n",
                "table.next_deal_after_s",
                "tendrían que ser segundos de 0 a 600",
            )
            for v in ("nan", "-1", "-inf", "1e400")
        ],
        (
            "[table]\nnew_game_after_s = nan\n",
            "table.new_game_after_s",
            "tendrían que ser segundos",
        ),
        (
            "[table]\nplayers = 2\n" + TWO_NODES + "[[display.seat]]\nseat = 0\naddress = -1\n",
            "display.seat[0].address",
            "de 3 a 119",
        ),
        (
            "[table]\nplayers = 2\n" + TWO_NODES + "[[display.seat]]\nseat = 0\nwidth = 0\n",
            "display.seat[0].width",
            "de 128 a 128",
        ),
        (
            "[table]\nplayers = 2\n" + TWO_NODES + "[[display.seat]]\nseat = 0\nrotate = 7\n",
            "display.seat[0].rotate",
            "de 0 a 3",
        ),
        (
            "[table]\nplayers = 2\n" + TWO_NODES + "[[display.seat]]\nseat = 0\ndriver = 'x'\n",
            "display.seat[0].driver",
            "ssd1306 o sh1106",
        ),
        (
            "[table]\nplayers = 2\n" + TWO_NODES + "[[display.seat]]\nseat = 0\n"
            "[[display.seat]]\nseat = 0\n",
            "display.seat[1].seat",
            "dos pantallas",
        ),
        (
            "[table]\nplayers = 2\n[[nodes.seat]]\nseat = 0\nserial = 'not-hex!'\n",
            "nodes.seat[0].serial",
            "hexadecimal",
        ),
        (
            "[table]\nplayers = 2\n[[nodes.seat]]\nseat = 0\nserial = 'e6614103e7ab1200'\n"
            "colour = 'red'\n",
            "nodes.seat[0].colour",
            "clave desconocida",
        ),
        (
            "[table]\nplayers = 2\n" + TWO_NODES + "[display]\nbrightness = 3\n",
            "display.brightness",
            "clave desconocida",
        ),
        ("[tables]\nplayers = 2\n", "(top level).tables", "clave desconocida"),
        ("[table]\nplayers = 2\n[rules]\nplayers = 4\n", "rules.players", "va en [table] players"),
        (
            "[table]\nplayers = 2\n[rules]\ncolour = 'red'\n",
            "rules.colour",
            "regla de la casa desconocida",
        ),
        ("[table]\nstate_dir = ''\n", "table.state_dir", "texto no vacío"),
        ('[table]\nstate_dir = "/var/\\u0000x"\n', "table.state_dir", "texto no vacío"),
        ("[table]\narchive_max_games = 0\n", "table.archive_max_games", "de 1 a 1000000"),
        *[
            (
                f"[table]\nplayers = 2\nloop_cpu = {v}\n{TWO_NODES}",
                "table.loop_cpu",
                '"last" (la última CPU), "none" (la que quiera el sistema) o el número de una CPU',
            )
            for v in ("-1", "1024", "1.5", "true", "'primera'", "'LAST'", "''", "[1]")
        ],
        ("[table]\narchive_max_mb = -5\n", "table.archive_max_mb", "megabytes"),
        (
            "[table]\nplayers = 2\n[topology]\nkind = 'gpio'\n[gpio]\nhold_ms = 0\n",
            "gpio.hold_ms",
            "de 100 a 5000",
        ),
    ],
)
def test_every_bad_value_names_file_key_and_expectation(
    tmp_path: Path, text: str, key: str, expected: str
) -> None:
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.key == key
    assert expected in str(info.value)
    assert info.value.source == str(path)
    assert str(info.value).startswith(f"{info.value.where}: {key}: ")
    assert "\n" not in str(info.value)
    if info.value.line is not None:  # the line named is the one that writes the key
        written = text.splitlines()[info.value.line - 1]
        assert key.split(".")[-1].split("[")[0] in written, (written, key)


def test_duplicate_gpio_pins_are_refused(tmp_path: Path) -> None:
    buttons = "".join(f"{b.value} = 4\n" for b in Button)
    path = tmp_path / "t.toml"
    path.write_text(
        "[table]\nplayers = 2\n[topology]\nkind = 'gpio'\n"
        f"[[gpio.seat]]\nseat = 0\n[gpio.seat.buttons]\n{buttons}"
    )
    with pytest.raises(ConfigError, match="cada botón necesita su propio pin GPIO"):
        load_config(path)


@pytest.mark.parametrize(
    "data",
    [
        b"[table]\nplayers = 2\n# caf\xe9\n",  # Latin-1, not UTF-8
        b"\xff\xfe[\x00t\x00a\x00b\x00",  # UTF-16
        b"[table]\nplayers = 2\x00\n",  # a NUL byte
        b"[table]\nstate_dir = '\x00'\n",
        b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n",
    ],
)
@pytest.mark.parametrize("which", ["table.toml", "pinmap.toml"])
def test_any_file_content_is_a_one_line_error(tmp_path: Path, data: bytes, which: str) -> None:
    """Issue 13, 6: a non-UTF-8 table.toml or pinmap.toml, or NUL bytes, gave tracebacks."""
    config = tmp_path / "table.toml"
    config.write_text("[table]\npinmap = 'pinmap.toml'\n")
    (tmp_path / "pinmap.toml").write_text("")
    (tmp_path / which).write_bytes(data)
    with pytest.raises(ConfigError) as info:
        load_config(config)
    # the broken file is the one named, whichever it is (a pin map's own fault is never
    # blamed on table.toml)
    assert info.value.key == "(archivo)"
    assert info.value.source == str(tmp_path / which)
    assert "\n" not in str(info.value)


def mutations(seed: int, count: int) -> list[bytes]:
    """The shipped example, mutated byte by byte and value by value."""
    import random

    rng = random.Random(seed)
    base = (ROOT / "systemd" / "table.toml").read_bytes() + (
        ROOT / "hardware" / "pinmap.toml"
    ).read_bytes().replace(b"[topology]", b"[topology]", 1)
    values = [
        b"0",
        b"-1",
        b"nan",
        b"inf",
        b"'x'",
        b"[1, 2]",
        b"{a = 1}",
        b"true",
        b"1e308",
        b'"\\u0000"',
        b"9999999999999999999999",
        b"[[x]]",
        b"\xff",
        b"\x00",
    ]
    out = []
    for _ in range(count):
        data = bytearray(base)
        for _ in range(rng.randint(1, 4)):
            kind = rng.random()
            at = rng.randrange(len(data))
            if kind < 0.4:  # a value replaced
                eq = data.find(b"= ", at)
                if eq >= 0:
                    end = data.find(b"\n", eq)
                    data[eq + 2 : end if end >= 0 else len(data)] = rng.choice(values)
            elif kind < 0.7:
                data[at] = rng.randrange(256)
            elif kind < 0.85:
                del data[at : at + rng.randint(1, 40)]
            else:
                data[at:at] = rng.choice(values)
        out.append(bytes(data))
    return out


def test_mutated_configuration_files_never_raise_anything_but_config_error(
    tmp_path: Path, full_run: bool
) -> None:
    """A fuzz run: every mutated file loads or is one ConfigError (no other exception)."""
    count = 20_000 if full_run else 1_000
    path = tmp_path / "table.toml"
    loaded = refused = 0
    for data in mutations(13, count):
        path.write_bytes(data)
        try:
            load_config(path)
            loaded += 1
        except ConfigError as e:
            assert "\n" not in str(e)
            refused += 1
    assert loaded + refused == count and refused > count // 2


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
    with pytest.raises(
        ConfigError, match=r"display.seat\[0\].connected_to: tendría que ser node o pi"
    ):
        load_config(path)


ENGLISH = re.compile(
    r"\b(the|is|must|should|expected|not|unknown|invalid|missing|cannot|file|line)\b", re.I
)


def shipped_keys(path: Path) -> list[tuple[int, str]]:
    """(line, key) of every key the file writes (not its comments)."""
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        found = re.match(r"\s*([a-z_]+)\s*=", line)
        if found:
            out.append((number, found.group(1)))
    return out


@pytest.mark.parametrize("which", ["table.toml", "pinmap.toml", "pinmap-mux.toml"])
def test_every_key_of_the_shipped_files_with_a_bad_value_names_its_file_and_line(
    tmp_path: Path, which: str
) -> None:
    """Issue 49: for every key the owner may edit, a wrong value is said in Spanish, on the
    file and the line that hold it, with what to do."""
    config = example(tmp_path)
    shutil.copy(ROOT / "hardware" / "pinmap-mux.toml", tmp_path / "pinmap-mux.toml")
    if which == "pinmap-mux.toml":
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace('pinmap = "pinmap.toml"', 'pinmap = "pinmap-mux.toml"'))
    target = tmp_path / which
    original = target.read_text(encoding="utf-8")
    keys = shipped_keys(target)
    assert len(keys) > 10
    for number, key in keys:
        lines = original.splitlines()
        lines[number - 1] = f"{key} = [[]]"  # no key takes a list of lists
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with pytest.raises(ConfigError) as info:
            load_config(config)
        error = info.value
        assert (error.source, error.line) == (str(target), number), (key, str(error))
        said = str(error)
        assert said.startswith(f"{target}, línea {number}: ") and key in error.key, said
        assert said.endswith("Corregí esa línea y volvé a arrancar la mesa"), said
        assert not ENGLISH.search(error.expected), said
    target.write_text(original, encoding="utf-8")
    load_config(config)  # as shipped again: it loads


def test_a_pin_map_that_is_not_there_points_at_the_pinmap_line(tmp_path: Path) -> None:
    config = example(tmp_path)
    (tmp_path / "pinmap.toml").unlink()
    with pytest.raises(ConfigError) as info:
        load_config(config)
    line = next(
        n
        for n, text in enumerate(config.read_text().splitlines(), 1)
        if text.startswith("pinmap =")
    )
    assert (info.value.source, info.value.line, info.value.key) == (
        str(config),
        line,
        "table.pinmap",
    )
    assert 'pinmap = "pinmap.toml"' in str(info.value)
