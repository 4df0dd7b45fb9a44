"""A person at a terminal, for the tests: a real terminal emulator (tmux) running a
command on a pseudo-terminal, keys typed one at a time, the screen read back as text.

CI installs tmux (.ci/run); where it cannot be had the tests that need it skip.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
TRUCO_TABLE = [sys.executable, "-m", "controller.cli"]


def need_tmux() -> str:
    path = shutil.which("tmux")
    if path is None:
        pytest.skip("tmux not installed (apt-get install tmux; .ci/run does)")
    return path


class Terminal:
    """One tmux session of ``width`` x ``height`` running ``argv``."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        width: int = 140,
        height: int = 48,
        cwd: Path = ROOT,
        env: dict[str, str] | None = None,
    ) -> None:
        """``env``: variables over the terminal's own (``LC_ALL=C``, ``TERM=dumb``)."""
        self.tmux = need_tmux()
        self.name = f"truco-{uuid.uuid4().hex[:10]}"
        self.socket = self.name  # one server per terminal: closing one never races another
        env = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm-256color", **(env or {})}
        exports = " ".join(f"{k}={v}" for k, v in env.items())
        self.status_file = Path(f"/tmp/{self.name}.status")
        command = (
            f"cd {shlex.quote(str(cwd))} && env {exports} {shlex.join(argv)}; "
            f"echo $? > {shlex.quote(str(self.status_file))}; sleep 600"
        )
        self._tmux(
            "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height),
            "sh", "-c", command,
        )  # fmt: skip
        self._tmux("set-option", "-t", self.name, "status", "off")

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            [self.tmux, "-L", self.socket, *args], capture_output=True, text=True, timeout=20
        )
        if done.returncode != 0:
            raise RuntimeError(f"tmux {args[0]}: {done.stderr.strip()}")
        return done.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.name)

    def settled(self, timeout: float = 5.0) -> str:
        """The screen once a frame is drawn whole (the same twice, 50 ms apart)."""
        deadline = time.monotonic() + timeout
        screen = self.screen()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            again = self.screen()
            if again == screen:
                return screen
            screen = again
        return screen

    def type(self, keys: str, delay: float = 0.15) -> None:
        """Type ``keys`` one by one, as a person would."""
        for key in keys:
            self._tmux("send-keys", "-t", self.name, "-l", key)
            time.sleep(delay)

    def press(self, name: str) -> None:
        """A named key: ``Enter``, ``Space``, ``C-c``."""
        self._tmux("send-keys", "-t", self.name, name)

    def resize(self, width: int, height: int) -> None:
        self._tmux("resize-window", "-t", self.name, "-x", str(width), "-y", str(height))

    def wait_for(self, text: str, timeout: float = 120.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                time.sleep(0.05)  # and the frame drawn whole: the same screen twice
                again = self.screen()
                if again == screen:
                    return screen
                continue
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; the screen:\n{screen}")

    def exit_status_now(self) -> int | None:
        """The command's exit status if it has ended, else ``None``."""
        try:
            return int(self.status_file.read_text())
        except (FileNotFoundError, ValueError):
            return None

    def exit_status(self, timeout: float = 120.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(FileNotFoundError, ValueError):
                return int(self.status_file.read_text())
            time.sleep(0.1)
        raise AssertionError(f"the command did not end; the screen:\n{self.screen()}")

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            self._tmux("kill-server")
        with contextlib.suppress(FileNotFoundError):
            self.status_file.unlink()

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def paste(term: Terminal, text: str) -> None:
    """Paste ``text`` as the terminal does (bracketed if the program asked for it)."""
    term._tmux("set-buffer", "-b", "paste", text)
    term._tmux("paste-buffer", "-p", "-d", "-b", "paste", "-t", term.name)
