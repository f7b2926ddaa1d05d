"""Servers a test starts for itself and stops again: a private redis-server it may kill, free ports.

The suite's shared Redis and PostgreSQL are never stopped; a test that needs an outage kills
only the redis-server it started here.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

import pytest


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (at the moment of asking)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, *, up: bool, timeout: float = 10.0) -> None:
    """Wait until something listens on `port` (up) or nothing does any more (not up)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            listening = True
        except OSError:
            listening = False
        if listening == up:
            return
        time.sleep(0.05)
    raise TimeoutError(f"port {port} is still {'closed' if up else 'open'} after {timeout} s")


class RedisServer:
    """A redis-server of the test's own on a free port, without persistence: a restart is empty."""

    def __init__(self, port: int | None = None) -> None:
        self.binary = shutil.which("redis-server")
        if self.binary is None:
            pytest.skip("redis-server is not installed, so no private Redis can be started and killed")
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        assert self.process is None, "already running"
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, up=True)

    def kill(self) -> None:
        """An outage: SIGKILL, as a crashed or unreachable Redis; nothing is saved."""
        if self.process is None:
            return
        self.process.kill()
        self.process.wait(timeout=10)
        self.process = None
        wait_for_port(self.port, up=False)
