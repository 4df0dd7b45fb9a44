"""``bench/table.py`` as a developer runs it: it starts ``truco-table run --config`` as
a process, plays its games on both topologies and prints the key=value lines its README
figures are read from. No figure is judged here (figures are the benchmark's, not a
test's); only that each is printed and well formed, that ``--runs`` gives the medians of
the runs' own figures, and that the in-process profiling aids (``bench/table_inprocess.py``,
``bench/redraw.py``) still run."""

from __future__ import annotations

import contextlib
import math
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from tests.bench.runs import ROOT, key_values, run_bench


def _run(
    tmp_path: Path, *args: str, bench: str = "bench/table.py"
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # its state directories: ours
    return run_bench(bench, *args, env=env)


def _bench(tmp_path: Path, *args: str, bench: str = "bench/table.py") -> list[dict[str, str]]:
    done = _run(tmp_path, "--games", "1", *args, bench=bench)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return key_values(done.stdout, only=True)


def _float(text: str) -> float:
    value = float(text)
    assert value > 0
    return value


def test_both_topologies_print_their_figures(tmp_path: Path) -> None:
    lines = _bench(tmp_path, "--topology", "node", "pi", "--next-deal-after-s", "0")
    heads = [line for line in lines if not {"kind", "what", "runs"} & line.keys()]
    assert [line["topology"] for line in heads] == ["node", "pi"]
    for line in heads:
        assert line["players"] == "6" and line["build"] == "pure"
        assert line["next_deal_after_s"] == "0"
        # each next deal within the event that ended the hand: none by the service's timer
        assert line["timer_deals"] == "0" and line["timer_deal_cpu_ms_mean"] == "-"
        assert int(line["hands"]) > 2
        assert int(line["events"]) > 1000
        for key in ("cpu_ms_mean", "cpu_ms_p99", "noop_cpu_ms_mean", "raw_cpu_ms_mean"):
            _float(line[key])
        assert float(line["idle_cpu_ms_per_s"]) >= 0
        assert 0 <= int(line["system_pct"]) <= 100
        assert 0 < int(line["noop_events"]) < int(line["events"])
        assert float(line["panel_bytes_mean"]) > 0
        assert int(line["node_overflows"]) == 0  # the Pi keeps to the node's queue
        assert int(line["dacks"]) > 0 if line["topology"] == "node" else line["dacks"] == "0"
        assert line["p99_set_by"]
        assert line["loadavg"] == "-" or float(line["loadavg"]) >= 0
        # the pace the events came at, and a bare process's card lifted at that pace
        assert float(line["event_gap_ms_median"]) > 0
        assert math.isfinite(_float(line["floor_noop_us"]))
        assert math.isfinite(_float(line["floor_fsync_us"]))  # a statement synced: its CPU
        # the host's yardstick, one a hand on the loop's CPU, and the figures split by it
        _float(line["host_ref_us_p10"])
        slow, hands = (int(part) for part in line["host_slow_hands"].split("/"))
        assert hands == int(line["hands"]) and 0 <= slow < hands  # the fastest tenth is fast
        assert 0 < int(line["host_fast_events"]) <= int(line["events"])
        for key in ("host_fast_cpu_ms_mean", "host_fast_cpu_ms_p99", "host_fast_noop_cpu_ms_mean"):
            _float(line[key])
        for key in ("host_slow_cpu_ms_mean", "host_slow_noop_cpu_ms_mean"):
            assert (line[key] == "-") == (slow == 0), key
        # the loop kept to the last CPU the service may use, as the installed file says
        allowed = sorted(os.sched_getaffinity(0))
        assert line["loop_cpus"] == (str(allowed[-1]) if len(allowed) > 1 else str(allowed[0]))
        # the service ran on the bench's own interpreter (no --service-python)
        assert line["service_python"] == platform.python_version()
        assert line["service_python_home"] == sys.base_prefix
    # the same seeds: the same events on both, each kind and what they did split out
    assert heads[0]["events"] == heads[1]["events"]
    for topology in ("node", "pi"):
        kinds = {
            line["kind"] for line in lines if line.get("topology") == topology and "kind" in line
        }
        assert kinds == {"press", "hold", "tag_on", "tag_off"}
        whats = {
            line["what"] for line in lines if line.get("topology") == topology and "what" in line
        }
        assert whats == {"deal", "hand_end", "accepted", "other"}


def test_the_in_process_aid_prints_its_figures(tmp_path: Path) -> None:
    lines = _bench(tmp_path, "--topology", "pi", bench="bench/table_inprocess.py")
    (head,) = [line for line in lines if not {"kind", "what", "part", "runs"} & line.keys()]
    assert head["topology"] == "pi" and int(head["events"]) > 1000
    _float(head["cpu_ms_mean"])
    (writer,) = [line for line in lines if line.get("part") == "writer"]
    _float(writer["us_per_update_min"])


def test_the_redraw_aid_prints_its_figures(tmp_path: Path) -> None:
    lines = _bench(tmp_path, bench="bench/redraw.py")
    (head,) = lines
    assert head["players"] == "6" and int(head["redraws"]) > 300
    assert 0 < float(head["seats_shown_mean"]) <= 6
    for key in ("us_per_redraw_mean", "us_per_redraw_p50", "us_per_redraw_p99"):
        _float(head[key])


def test_the_deal_by_the_service_timer_is_measured_apart(tmp_path: Path) -> None:
    """A ``next_deal_after_s`` above 0 (the shipped file's is 3 s): the service deals
    the next hand by its own timer; that deal is no player's event, so it is measured
    apart, one for each hand after a game's first (``--games 1``: two games, the deal
    read and unread), and the players' events are still every one of the games'."""
    lines = _bench(tmp_path, "--topology", "node", "--next-deal-after-s", "0.25")
    head = next(line for line in lines if not {"kind", "what"} & line.keys())
    assert head["next_deal_after_s"] == "0.25"
    assert int(head["hands"]) > 2
    assert int(head["timer_deals"]) == int(head["hands"]) - 2
    _float(head["timer_deal_cpu_ms_mean"])
    whats = {line["what"] for line in lines if "what" in line}
    assert whats == {"deal", "hand_end", "accepted", "other"}


def test_the_shipped_configuration_is_the_default(tmp_path: Path) -> None:
    """The bench's service runs the configuration ``install-pi`` writes: its
    ``next_deal_after_s`` is the shipped file's unless ``--next-deal-after-s`` says
    otherwise."""
    probe = (
        "import sys, tomllib; from pathlib import Path; sys.path.insert(0, 'bench');"
        "import table; from controller.table.table import DealReading;"
        "tmp = Path(sys.argv[1]);"
        "path, _ = table.install_config(tmp, 'node', 6, list(DealReading)[0]);"
        "print(tomllib.loads(path.read_text())['table']['next_deal_after_s'],"
        " table.shipped_deal_after())"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with open(ROOT / "systemd" / "table.toml", "rb") as f:
        shipped = tomllib.load(f)["table"]["next_deal_after_s"]
    assert shipped > 0
    assert done.stdout.split() == [str(shipped), str(float(shipped))]
    assert "--next-deal-after-s" in (_run(tmp_path, "--help").stdout)


def test_the_quiet_check_sees_a_frame_written_a_moment_ago() -> None:
    """Whether the service is done looks at what waits unread on each pty's end: a frame
    the service wrote a moment ago, still in the pty's flip buffer, counts (else a
    ``DT`` frame of ``--ablate text`` was once taken for the next event's, a card lifted
    that drew)."""
    probe = (
        "import os, pty, select, sys, tty; sys.path.insert(0, 'bench'); import table;"
        "pi, node = pty.openpty(); tty.setraw(pi); tty.setraw(node); missed = 0\n"
        "for _ in range(3000):\n"
        "    os.write(node, b'#1 DT 0 QQ==\\n')\n"
        "    missed += table._unread(pi) == 0\n"
        "    while select.select([pi], [], [], 0)[0]: os.read(pi, 4096)\n"
        "print(missed)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0"]


def test_runs_print_the_medians_of_their_figures(tmp_path: Path) -> None:
    lines = _bench(tmp_path, "--topology", "node", "--runs", "3", "--next-deal-after-s", "0")
    runs = [line for line in lines if "run" in line]
    assert [line["run"] for line in runs] == ["1", "2", "3"]
    (medians,) = [line for line in lines if "runs" in line]
    assert medians["runs"] == "3" and medians["topology"] == "node"
    for key in ("cpu_ms_mean", "cpu_ms_p99", "noop_cpu_ms_mean"):
        each = [float(line[key]) for line in runs]
        assert float(medians[f"median_{key}"]) == statistics.median(each), key
        # and of the hands the host ran at its fast speed (bench/host.py)
        fast = [float(line[f"host_fast_{key}"]) for line in runs]
        assert float(medians[f"median_host_fast_{key}"]) == statistics.median(fast), key


def test_runs_must_be_one_or_more(tmp_path: Path) -> None:
    done = _run(tmp_path, "--runs", "0")
    assert done.returncode == 2 and "--runs must be at least 1" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_interpreter_that_cannot_run_the_service_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "python3"
    done = _run(tmp_path, "--service-python", str(missing))
    assert done.returncode == 2
    assert f"--service-python {missing}: No such file or directory" in done.stderr
    bare = tmp_path / "bare"  # a venv without the service's packages
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    done = _run(tmp_path, "--service-python", str(bare / "bin" / "python"))
    assert done.returncode == 2
    assert "cannot run the service: ModuleNotFoundError" in done.stderr
    assert "Traceback" not in done.stderr
    # a name on the PATH is looked up there, as a shell would
    done = _run(tmp_path, "--service-python", "no-such-python-here")
    assert done.returncode == 2
    assert "--service-python no-such-python-here: No such file or directory" in done.stderr


def test_the_ablation_aid_leaves_the_panels_out_and_says_so(tmp_path: Path) -> None:
    """``--ablate`` (a profiling aid: what an event costs without its panels) marks
    its lines and sends no panel after the first screens; the record is still checked."""
    lines = _bench(tmp_path, "--topology", "node", "--ablate", "send")
    head = next(line for line in lines if not {"kind", "what"} & line.keys())
    assert head["ablate"] == "send"
    assert int(head["events"]) > 1000
    # the first screens went out before the first event: none is counted in an event
    assert float(head["panel_bytes_mean"]) == 0
    assert head["noop_events"] == head["events"]
    done = _run(tmp_path, "--ablate", "redraw")  # both topologies: the pi one has no aid
    assert done.returncode == 2
    assert "--ablate measures the node topology alone" in done.stderr
    # the deal by the service's timer is told by the panels, which the aid leaves out
    done = _run(tmp_path, "--topology", "node", "--ablate", "send", "--next-deal-after-s", "3")
    assert done.returncode == 2
    assert "--ablate runs with --next-deal-after-s 0" in done.stderr


def test_the_text_aid_sends_the_changed_texts_instead_of_the_tiles(tmp_path: Path) -> None:
    """``--ablate text`` (an estimate of the nodes drawing their own text): each redrawn
    seat is sent its changed texts, fewer bytes than its tiles; a card lifted sends
    nothing, as before; the deal by the service's timer is told by those texts."""
    lines = _bench(tmp_path, "--topology", "node", "--ablate", "text", "--next-deal-after-s", "0")
    shipped = _bench(tmp_path, "--topology", "node", "--next-deal-after-s", "0")
    head = next(line for line in lines if not {"kind", "what"} & line.keys())
    whole = next(line for line in shipped if not {"kind", "what"} & line.keys())
    assert head["ablate"] == "text" and "ablate" not in whole
    assert head["events"] == whole["events"]  # the same games
    assert 0 < float(head["panel_bytes_mean"]) < float(whole["panel_bytes_mean"])
    (lifted,) = [line for line in lines if line.get("kind") == "tag_off"]
    assert lifted["noop_events"] == lifted["events"] and lifted["panel_bytes_mean"] == "0"
    assert int(head["noop_events"]) < int(head["events"])
    timed = _bench(tmp_path, "--topology", "node", "--ablate", "text", "--next-deal-after-s", ".25")
    head = next(line for line in timed if not {"kind", "what"} & line.keys())
    assert int(head["timer_deals"]) == int(head["hands"]) - 2


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except FileNotFoundError:
        return []
    return [int(child) for child in text.split()]


def test_a_stopped_bench_stops_its_service(tmp_path: Path) -> None:
    """``kill`` on a run (SIGTERM) stops the service it started and deletes its
    folders: a service left alone would retry its seat links' by-id names, whose ptys a
    later run may be given (it then took them from that run's service)."""
    bench = subprocess.Popen(
        [sys.executable, "bench/table.py", "--topology", "node", "--games", "1"],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        service = None
        deadline = time.monotonic() + 300  # a bound for a stuck start, not a speed
        while service is None:
            assert bench.poll() is None, bench.stderr.read() if bench.stderr else ""
            assert time.monotonic() < deadline, "the bench started no service"
            for child in _children(bench.pid):
                with contextlib.suppress(FileNotFoundError):
                    if b"controller.cli" in Path(f"/proc/{child}/cmdline").read_bytes():
                        service = child
            time.sleep(0.05)
        assert list(tmp_path.glob("bench-table-*"))
        bench.terminate()
        assert bench.wait(120) == 128 + signal.SIGTERM
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
    left = Path(f"/proc/{service}").exists()  # reaped by the bench as it stopped
    if left:  # not left running after this test either
        with contextlib.suppress(ProcessLookupError):
            os.kill(service, signal.SIGKILL)
    assert not left
    assert not list(tmp_path.glob("bench-table-*"))
