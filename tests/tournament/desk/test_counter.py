"""The assignments' counter through desk crashes (issue 42): the organiser's desk as a
process (``truco-table desk --competition`` with the venue's ``desk.toml``, as
``venue-night`` starts it), the venue's real Mosquitto, four tables of the roster. Twenty
times the organiser moves a match to another table and the desk is killed (``kill -9``)
right after, or a moment later, then started again on its folder. No table ever refuses
an assignment ("not newer than the last taken"), the desk never says a table took an
assignment other than the one it sent, and each table ends on what the desk wants."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from controller.tournament.competition.codec import action_to_json
from controller.tournament.competition.model import (
    AssignTable,
    Format,
    FormatSpec,
    Register,
    Start,
)
from controller.tournament.sim.mosquitto import LocalBroker, free_port
from controller.tournament.table.publisher import TablePublisher
from controller.tournament.venue.broker import Venue
from tests.helpers import http_answer, wait_until

from ..conftest import venue_table
from .scenes import entrants

ROOT = Path(__file__).resolve().parents[3]
ORGANISER_KEY = "clave-de-la-mesa-de-control"
ROSTER = ["mesa01", "mesa02", "mesa03", "mesa04"]
KILLS = 20


class DeskProcess:
    """``truco-table desk --competition`` on one folder, started again and again."""

    def __init__(self, venue: Venue, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        key_file = folder.parent / "organiser.key"
        key_file.write_text(ORGANISER_KEY + "\n", encoding="utf-8")
        key_file.chmod(0o600)
        self.argv = [sys.executable, "-m", "controller.cli", "desk",
                     "--config", str(venue.desk_dir("desk1") / "desk.toml"), "--competition",
                     "--out", str(folder), "--http-port", str(self.port), "--quiet",
                     "--refresh", "3600", "--organiser-key-file", str(key_file)]  # fmt: skip
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder.parent / "desk.log", "ab") as log:
            self.process = subprocess.Popen(self.argv, cwd=ROOT, stdout=log, stderr=log)
        assert wait_until(lambda: self.state() is not None), "the desk's page"
        assert wait_until(lambda: (self.state() or {}).get("broker", {}).get("connected")), (
            "the desk on the broker"
        )

    def state(self) -> dict[str, Any] | None:
        assert self.process is not None
        if self.process.poll() is not None:
            said = (self.folder.parent / "desk.log").read_text()[-2000:]
            raise AssertionError(f"the desk exited ({self.process.returncode}): {said}")
        try:
            with urllib.request.urlopen(self.url + "api/state", timeout=5) as r:
                return dict(json.loads(r.read()))
        except (OSError, ValueError):
            return None

    def tournament(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + "api/tournament", timeout=60) as r:
            return dict(json.loads(r.read()))

    def do(self, action: Any) -> int:
        """The action as the command line sends it; the HTTP status (0: no answer)."""
        request = urllib.request.Request(
            self.url + "api/organiser",
            data=json.dumps({"action": action_to_json(action)}).encode(),
            headers={"Content-Type": "application/json",
                     "Authorization": f"Bearer {ORGANISER_KEY}"},
        )  # fmt: skip
        try:
            return http_answer(request)[0]
        except OSError:
            return 0

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(120)
            except subprocess.TimeoutExpired:
                self.kill()


def test_twenty_desk_kills_never_repeat_an_assignment_counter(
    venue: Venue, venue_broker: LocalBroker, tmp_path: Path
) -> None:
    tables: dict[str, TablePublisher] = {t: venue_table(venue, t, tmp_path / t) for t in ROSTER}
    desk = DeskProcess(venue, tmp_path / "desk")
    try:
        desk.start()
        for e in entrants(4):
            assert desk.do(Register(e)) == 200
        assert desk.do(Start(FormatSpec(Format.KNOCKOUT, best_of=3))) == 200
        where = {m["match"]: m["table"] for m in desk.tournament()["matches"]}
        assert where == {"r1-m01": "mesa01", "r1-m02": "mesa02"}
        for kill in range(KILLS):
            target = "mesa03" if kill % 2 == 0 else "mesa01"
            if kill % 3 == 0:  # killed while the action is on its way
                sent = threading.Thread(target=desk.do, args=(AssignTable("r1-m01", target),))
                sent.start()
                time.sleep(0.01 * (kill % 5))
                desk.kill()
                sent.join()
            else:  # killed once it answered (the assignment told, or about to be)
                assert desk.do(AssignTable("r1-m01", target)) == 200
                time.sleep(0.05 * (kill % 4))
                desk.kill()
            desk.start()
        # the last move made sure of (the one killed on its way may not have been done)
        final = desk.tournament()
        at = next(m["table"] for m in final["matches"] if m["match"] == "r1-m01")
        other = "mesa03" if at == "mesa01" else "mesa01"

        def settled() -> bool:
            a, b = tables[at].matches.assignment, tables[other].matches.assignment
            return (a is not None and a.match == "r1-m01" and b is not None and b.match is None)

        assert wait_until(settled), f"{at} playing r1-m01 and {other} nothing"
        refused = {t: p.refused_assignments for t, p in tables.items()}
        assert refused == dict.fromkeys(ROSTER, 0), refused
        notes = [a["text"] for a in desk.tournament()["desk"]["attention"]]
        assert not [n for n in notes if "asignación" in n], notes
        told = [json.loads(line) for line in
                (tmp_path / "desk" / "assignments.jsonl").read_text().splitlines()]  # fmt: skip
        numbers = [a["n"] for a in told]
        assert numbers == sorted(set(numbers)), numbers  # each above the one before
        taken = [p.matches.last_n or 0 for p in tables.values()]
        assert max(taken) <= numbers[-1], (taken, numbers[-1])
    finally:
        for pub in tables.values():
            pub.close(timeout=0.5)
        desk.stop()
