"""A real Mosquitto for the tournament tests: a child process on 127.0.0.1, any free port.

``.ci/run`` installs the broker (Debian package ``mosquitto``); the tests that need it
are skipped, saying why, only when the binary cannot be found.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.tournament.broker import LocalBroker, find_mosquitto
from controller.tournament.seal import TournamentKey

KEY = TournamentKey(bytes(range(32)), "test-key")


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[LocalBroker]:
    if find_mosquitto() is None:
        pytest.skip("mosquitto not installed (apt-get install mosquitto; .ci/run does)")
    with LocalBroker(workdir=tmp_path / "broker") as b:
        yield b


@pytest.fixture
def key() -> TournamentKey:
    return KEY
