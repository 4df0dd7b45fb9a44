"""A profiling aid: the instructions the real service runs for a card lifted, counted.

Not a figure the README quotes as the service's (``bench/table.py`` measures the service
in whole games, its CPU from the kernel). A card lifted's CPU time follows the host: the
same code read 20.9 µs one morning and 85 µs the next day (docs/dev/benchmarks.md). The
number of instructions it runs does not: this counts them, so that a change to the
service's path for an event can be judged on any day, on any host.

The service is started as ``bench/noop.py`` starts it (``truco-table run --config`` with
the configuration ``scripts/install-pi`` writes, six simulated seat nodes on
pseudo-terminals with their panels, the record in a real state folder), under valgrind's
callgrind, which counts every instruction the process runs in user space (the kernel's
part, the system calls themselves, is not counted). It runs twice, ``--base-events``
cards lifted and then ``--base-events`` + ``--events``; the difference between the two
runs' totals, divided by ``--events``, is one card lifted's instructions (the start-up,
the idle baseline and the shutdown, the same in both, cancel out: the tree's modules
are compiled first, so that neither run compiles one the other finds compiled, and
both hash strings alike). Needs ``valgrind`` on the PATH. Prints::

    instructions_per_card_lifted=... events=... base_events=... valgrind=...
        service_python=... loadavg=...

Run: ``.venv/bin/python bench/instructions.py [--events 1000] [--base-events 200]
[--service-python PY]`` (about a minute: the service runs some fifty times slower under
valgrind).
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.noop import lift_cards  # noqa: E402
from bench.rig import load_average  # noqa: E402
from bench.table import interpreter, service_python_path  # noqa: E402


def counting(python: str, folder: Path) -> Path:
    """An interpreter to give ``--service-python``: ``python`` itself, but the service
    (``python -m controller.cli run ...``) under callgrind, its counts written in
    ``folder`` (one file a process)."""
    wrapper = folder / "python"
    out = folder / "callgrind.%p"
    wrapper.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-m" ]; then\n'
        "  export PYTHONHASHSEED=0\n"  # the same sets' and dicts' orders in both runs
        f"  exec valgrind --tool=callgrind --callgrind-out-file={shlex.quote(str(out))}"
        f' --log-file={shlex.quote(str(folder / "valgrind.%p"))} {shlex.quote(python)} "$@"\n'
        "fi\n"
        f'exec {shlex.quote(python)} "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def instructions(folder: Path) -> int:
    """Every instruction the processes counted in ``folder`` ran (callgrind's totals)."""
    total = 0
    files = sorted(folder.glob("callgrind.*"))
    if not files:
        raise RuntimeError(f"callgrind wrote no counts in {folder}")
    for path in files:
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith(("totals:", "summary:")):
                total += int(line.split()[1])
                break
    return total


def compiled(python: str) -> None:
    """The tree's modules compiled for ``python`` beforehand, so that neither run
    counts the compiling of a module the other found compiled."""
    subprocess.run(
        [python, "-m", "compileall", "-q", str(ROOT / "controller")],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def count(events: int, python: str) -> int:
    """The instructions of a service run with ``events`` cards lifted, start to end."""
    with tempfile.TemporaryDirectory(prefix="bench-instructions-") as name:
        folder = Path(name)
        lift_cards(events, 0, False, str(counting(python, folder)))
        return instructions(folder)


def valgrind_version() -> str | None:
    if shutil.which("valgrind") is None:
        return None
    done = subprocess.run(["valgrind", "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip().removeprefix("valgrind-") or None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--events", type=int, default=1000, help="cards lifted counted")
    parser.add_argument(
        "--base-events", type=int, default=200, help="cards lifted in the run subtracted"
    )
    parser.add_argument(
        "--service-python", default=sys.executable, help="the interpreter the service runs on"
    )
    args = parser.parse_args(argv)
    if args.events < 1 or args.base_events < 1:
        parser.error("--events and --base-events must be at least 1")
    version = valgrind_version()
    if version is None:
        parser.error("needs valgrind on the PATH (Debian: apt install valgrind)")
    args.service_python = service_python_path(args.service_python)
    python = interpreter(parser, args.service_python)
    compiled(args.service_python)
    short = count(args.base_events, args.service_python)
    long = count(args.base_events + args.events, args.service_python)
    print(
        f"instructions_per_card_lifted={(long - short) / args.events:.0f} "
        f"events={args.events} base_events={args.base_events} valgrind={version} "
        f"service_python={python} loadavg={load_average()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
