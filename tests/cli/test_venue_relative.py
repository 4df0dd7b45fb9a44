"""``truco-table venue-broker ... --out venue/`` as the README writes it: a relative
folder works (openssl used to be handed paths relative to a folder it was not in)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from controller.cli import main


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl (.ci/run installs it)")
def test_a_relative_out_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["venue-broker", "--tournament", "copa", "--tables", "2",
                 "--out", "venue/"]) == 0  # fmt: skip
    conf = (tmp_path / "venue" / "broker" / "mosquitto.conf").read_text(encoding="utf-8")
    assert str(tmp_path / "venue") in conf  # absolute paths for the broker too
    assert (tmp_path / "venue" / "ca" / "ca.crt").is_file()
