"""``bench/card_to_light.py`` as a developer runs it: it runs ``bench/display.py`` (its
NodePort on protocol 5) and composes the end-to-end figure from its parts. No figure is
judged (the benchmark's, not a test's); only that every part is printed, well formed, and
that the total is their sum."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.runs import key_values, run_bench


def _run(*args: str) -> dict[str, str]:
    done = run_bench("bench/card_to_light.py", "--seeds", "1", *args)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    (pairs,) = key_values(done.stdout, only=True)
    return pairs


@pytest.mark.parametrize("bus", ["i2c", "spi"])
def test_the_figure_is_the_sum_of_its_parts(bus: str, tmp_path: Path) -> None:
    pico = tmp_path / "pico.txt"  # bench/pico.py's line, as a developer saved it
    pico.write_text("emulated=rp2040 boot_ms=102.8 card_to_tagon_ms_p99_busy=40.8\n")
    line = _run("--service-cpu-ms", "1.5", "--pico-output", str(pico), "--node-bus", bus)
    assert line["card_to_tagon_source"] == "bench_pico" and line["card_to_tagon_ms"] == "40.8"
    assert line["node_bus"] == bus and line["pi4_factor"] == "6"
    assert float(line["service_ms_pi4_estimate"]) == pytest.approx(9.0)
    parts = ("card_to_tagon_ms", "usb_poll_ms", "service_ms_pi4_estimate", "display_ms")
    assert float(line["display_ms"]) > 0
    total = sum(float(line[part]) for part in parts)
    assert float(line["card_to_light_ms_p99"]) == pytest.approx(total, abs=0.2)


def test_the_documented_figure_stands_in_for_the_node(tmp_path: Path) -> None:
    line = _run("--service-cpu-ms", "1.5")
    assert line["card_to_tagon_source"] == "documented_firmware_readme"
    assert line["target_ms_p99"] == "100"


def test_the_display_bench_speaks_protocol_5_and_breaks_the_time_down() -> None:
    done = run_bench("bench/display.py", "--seeds", "1", "--node-bus", "spi")
    assert done.returncode == 0, done.stderr
    nodes = [line for line in done.stdout.splitlines() if line.startswith("topology=node")]
    (node,) = key_values("\n".join(nodes))
    assert node["protocol"] == "5" and node["node_bus"] == "spi"
    for key in ("last_panel_ms_p99", "last_panel_ms_max", "after_pi_ms_p99"):
        assert float(node[key]) > 0
    parts = ("worst_pi_ms", "worst_usb_ms", "worst_node_cpu_ms", "worst_bus_ms", "worst_scan_ms")
    assert sum(float(node[part]) for part in parts) == pytest.approx(
        float(node["last_panel_ms_max"]), abs=0.3
    )
