"""A venue's network on this machine, for the idle-socket tests and bench (issue 43): two
network namespaces joined by a veth pair, nothing of the machine's own network touched.

- the broker's (``10.43.0.1``): the venue's Mosquitto with the configuration
  ``truco-table venue-broker`` writes, the open-file limit of its systemd drop-in, and,
  when asked, the venue's nftables rules (``broker/truco-firewall.nft``) loaded there;
  the desks log in on its loopback (the desks' listener);
- the crowd's (``10.43.0.2`` the attacker's own address, ``10.43.0.3`` a table,
  ``10.43.1.0`` on: a thousand more addresses). The broker's namespace reaches the
  thousand through ``10.43.0.2``, as behind a router, not each on the link: the kernel's
  ARP table is one for every namespace of the machine, with a hard limit of 1,024
  entries (``net.ipv4.neigh.default.gc_thresh3``), and a thousand neighbours per run
  overflowed it when two runs went side by side (CI's two suites): the broker's replies
  to a new address were dropped for want of an entry, and its connections timed out.

Needs root, ``ip`` (iproute2) and, for the rules, ``nft`` (Debian's nftables). Every
process it starts is stopped and both namespaces deleted by :meth:`VenueNet.close`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Final

from .mosquitto import find_mosquitto

__all__ = ["BROKER", "CROWD", "TABLE", "VenueNet", "can_run"]

BROKER: Final = "10.43.0.1"
CROWD: Final = "10.43.0.2"  # the one address of the 10,000 idle sockets
TABLE: Final = "10.43.0.3"


def crowd_address(k: int) -> str:
    """The ``k``-th of the thousand addresses (0-based)."""
    return f"10.43.{1 + k // 250}.{1 + k % 250}"


def can_run() -> str | None:
    """Why this machine cannot build the venue's network (``None``: it can)."""
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            return f"{tool} not installed (iproute2, nftables)"
    if find_mosquitto() is None:
        return "mosquitto not installed"
    return None


#: What a crowd process runs: open sockets from its addresses, say how many, hold them
#: until its standard input closes.
_CROWD = """
import json, resource, socket, sys, time
port, addresses, per = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
held, refused, unanswered = [], 0, 0
for address in addresses:
    for _ in range(per):
        s = socket.socket()
        s.bind((address, 0))
        s.settimeout(60)  # the kernel retries its SYN meanwhile (1, 3, 7, 15, 31 s)
        try:
            s.connect(("%s", int(port)))
        except TimeoutError:  # nobody answered: not a refusal, a loss; said apart
            unanswered += 1
            s.close()
            continue
        except OSError:  # a reset (the firewall's answer) or any other error
            refused += 1
            s.close()
            continue
        held.append(s)
time.sleep(0.5)
closed = 0
for s in held:
    s.setblocking(False)
    try:
        closed += s.recv(1) == b""
    except BlockingIOError:
        pass
    except OSError:
        closed += 1
print(json.dumps({"held": len(held) - closed, "refused": refused, "unanswered": unanswered,
                  "closed": closed}), flush=True)
sys.stdin.read()
"""

#: What a login probe runs: one account's MQTT login over TLS; its seconds, or null.
_LOGIN = """
import json, ssl, sys, threading, time
import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
host, port, bind, account, password, ca = sys.argv[1:7]
up = threading.Event()
c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=account, protocol=mqtt.MQTTv311)
c.username_pw_set(account, password)
c.tls_set(ca_certs=ca, cert_reqs=ssl.CERT_REQUIRED)
c.on_connect = lambda cl, u, f, rc, p=None: up.set() if not rc.is_failure else None
t0 = time.monotonic()
c.connect_async(host, int(port), 30, bind_address=bind)
c.loop_start()
ok = up.wait(float(sys.argv[7]))
print(json.dumps(round(time.monotonic() - t0, 3) if ok else None), flush=True)
c.disconnect()
c.loop_stop()
"""


class VenueNet:
    """The two namespaces (see the module docstring); ``with VenueNet() as net: ...``."""

    def __init__(self, crowd: int = 1000) -> None:
        tag = f"{os.getpid()}-{time.monotonic_ns() % 100000}"
        self.broker_ns, self.crowd_ns = f"truco-b{tag}", f"truco-c{tag}"
        self.crowd = crowd
        self.processes: list[subprocess.Popen[str]] = []
        self.mosquitto: subprocess.Popen[bytes] | None = None
        self.doors: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> VenueNet:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ip(self, *args: str, data: str | None = None) -> None:
        subprocess.run(["ip", *args], input=data, text=True, check=True, capture_output=True)

    def start(self) -> None:
        b, c = self.broker_ns, self.crowd_ns
        self._ip("netns", "add", b)
        self._ip("netns", "add", c)
        vb, vc = f"vb{os.getpid() % 100000}", f"vc{os.getpid() % 100000}"
        self._ip("link", "add", vb, "netns", b, "type", "veth", "peer", "name", vc, "netns", c)
        lines = [f"addr add {BROKER}/16 dev {vb}", f"link set {vb} up", "link set lo up"]
        self._ip("-n", b, "-batch", "-", data="\n".join(lines) + "\n")
        lines = [f"addr add {CROWD}/16 dev {vc}", f"addr add {TABLE}/16 dev {vc}",
                 f"link set {vc} up", "link set lo up"]  # fmt: skip
        lines += [f"addr add {crowd_address(k)}/16 dev {vc}" for k in range(self.crowd)]
        self._ip("-n", c, "-batch", "-", data="\n".join(lines) + "\n")
        # the thousand through the attacker's address: one ARP entry, not a thousand
        # (see the module docstring); /24 routes win over the link's /16
        nets = sorted({crowd_address(k).rsplit(".", 1)[0] for k in range(self.crowd)})
        lines = [f"route add {net}.0/24 via {CROWD} dev {vb}" for net in nets]
        if lines:
            self._ip("-n", b, "-batch", "-", data="\n".join(lines) + "\n")

    def in_ns(self, ns: str, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", ns, *argv]

    def firewall(self, rules: Path) -> None:
        """Load the venue's nftables rules in the broker's namespace."""
        subprocess.run(self.in_ns(self.broker_ns, ["nft", "-f", str(rules)]), check=True,
                       capture_output=True, text=True)  # fmt: skip

    def start_broker(self, config: Path, files: int, port: int, log: Path) -> None:
        """The venue's Mosquitto in the broker's namespace, with ``files`` open files."""
        binary = find_mosquitto()
        assert binary is not None

        def limit() -> None:  # in the child, before exec (systemd's LimitNOFILE)
            import resource

            resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

        with open(log, "ab") as out:
            self.mosquitto = subprocess.Popen(
                self.in_ns(self.broker_ns, [binary, "-c", str(config)]),
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, preexec_fn=limit,
            )  # fmt: skip
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            listening = subprocess.run(
                self.in_ns(self.broker_ns, ["ss", "-Hltn", f"sport = :{port}"]),
                capture_output=True, text=True, check=False,
            ).stdout  # fmt: skip
            if listening.strip():
                return
            if self.mosquitto.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {log.read_text(errors='replace')[-400:]}")
            time.sleep(0.05)
        raise RuntimeError("mosquitto did not listen in its namespace")

    def start_front(self, config: Path, port: int, log: Path) -> None:
        """The door in front of the tables' listener (:mod:`..venue.front`) in the
        broker's namespace, as ``venue-night`` starts it (``truco-table venue-door``);
        returns once it listens."""
        with open(log, "ab") as out:
            door = subprocess.Popen(
                self.in_ns(self.broker_ns, [sys.executable, "-m", "controller.cli",
                                            "venue-door", "--config", str(config)]),
                stdin=subprocess.DEVNULL, stdout=out, stderr=out,
            )  # fmt: skip
        self.doors.append(door)
        self._listening(port, door, log)

    def _listening(self, port: int, process: subprocess.Popen[bytes], log: Path) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            listening = subprocess.run(
                self.in_ns(self.broker_ns, ["ss", "-Hltn", f"sport = :{port}"]),
                capture_output=True, text=True, check=False,
            ).stdout  # fmt: skip
            if listening.strip():
                return
            if process.poll() is not None:
                raise RuntimeError(f"it exited: {log.read_text(errors='replace')[-400:]}")
            time.sleep(0.05)
        raise RuntimeError(f"nothing listens on {port} in the broker's namespace")

    def crowd_sockets(self, port: int, addresses: list[str], per: int) -> dict[str, int]:
        """Idle TCP connections to the broker's ``port`` from ``addresses`` (``per``
        each), held until :meth:`close`: ``{"held", "refused", "unanswered", "closed"}``
        (``refused``: answered with a reset or another error; ``unanswered``: no answer
        to the SYN and its retries within 60 s)."""
        code = _CROWD % BROKER
        proc = subprocess.Popen(
            self.in_ns(self.crowd_ns, [sys.executable, "-c", code, str(port),
                                       json.dumps(addresses), str(per)]),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.processes.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the crowd's process ended without a word")
        counts: dict[str, int] = json.loads(line)
        return counts

    def login(self, *, table: bool, port: int, account: str, password: str, ca: Path,
              wait: float = 10.0) -> float | None:  # fmt: skip
        """One MQTT login over TLS: a table from ``TABLE`` to the tables' listener, or
        a desk on the broker's own loopback; its seconds (``None``: not within ``wait``)."""
        ns, host, bind = (
            (self.crowd_ns, BROKER, TABLE) if table else (self.broker_ns, "127.0.0.1", "127.0.0.1")
        )
        done = subprocess.run(
            self.in_ns(ns, [sys.executable, "-c", _LOGIN, host, str(port), bind, account,
                            password, str(ca), str(wait)]),
            capture_output=True, text=True, check=False, timeout=wait + 30,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"the login probe failed: {done.stderr[-400:]}")
        seconds: float | None = json.loads(done.stdout.strip().splitlines()[-1])
        return seconds

    def established(self, port: int) -> int:
        """TCP connections established to ``port`` in the broker's namespace now."""
        out = subprocess.run(
            self.in_ns(self.broker_ns, ["ss", "-Htn", "state", "established",
                                        f"sport = :{port}"]),
            capture_output=True, text=True, check=False,
        ).stdout  # fmt: skip
        return len([line for line in out.splitlines() if line.strip()])

    def broker_files(self) -> int:
        """The broker's open files now."""
        assert self.mosquitto is not None
        out = subprocess.run(["pgrep", "-P", str(self.mosquitto.pid)], capture_output=True,
                             text=True, check=False).stdout.split()  # fmt: skip
        pid = out[0] if out else str(self.mosquitto.pid)  # ip netns exec execs in place
        return len(os.listdir(f"/proc/{pid}/fd"))

    def close(self) -> None:
        for proc in self.processes:
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.processes.clear()
        for door in self.doors:
            door.terminate()
            try:
                door.wait(10)
            except subprocess.TimeoutExpired:
                door.kill()
                door.wait()
        self.doors.clear()
        if self.mosquitto is not None and self.mosquitto.poll() is None:
            self.mosquitto.terminate()
            try:
                self.mosquitto.wait(10)
            except subprocess.TimeoutExpired:
                self.mosquitto.kill()
                self.mosquitto.wait()
        self.mosquitto = None
        for ns in (self.broker_ns, self.crowd_ns):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
