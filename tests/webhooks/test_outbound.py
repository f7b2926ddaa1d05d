"""core.outbound: one deadline for the whole exchange, and HTTPS through the operator's proxy."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from core import outbound


class TricklingServer:
    """Answers a status line, then one header byte every 0.2 s, for ever: a receiver holding a worker."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.stop = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"

    def serve(self) -> None:
        conn, _ = self.sock.accept()
        conn.recv(65536)
        try:
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            while not self.stop.is_set():
                conn.sendall(b"X")
                time.sleep(0.2)
        except OSError:
            pass
        finally:
            conn.close()


def test_a_receiver_that_trickles_its_headers_is_cut_off_at_the_deadline():
    server = TricklingServer()
    try:
        started = time.monotonic()
        answer = outbound.post(server.url, b"{}", {}, timeout=1.0)
        elapsed = time.monotonic() - started
    finally:
        server.stop.set()
        server.sock.close()
    assert answer.timed_out and answer.status is None
    assert 0.9 < elapsed < 2.0, elapsed  # each byte came within the socket time-out; the deadline still held


class ConnectProxy:
    """Notes the CONNECT line it is sent, then refuses the tunnel."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.request_line = ""
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        conn, _ = self.sock.accept()
        self.request_line = conn.recv(65536).decode().split("\r\n", 1)[0]
        conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
        conn.close()


@pytest.mark.parametrize("allow_private", [True, False])
def test_https_to_the_operators_endpoint_goes_through_https_proxy_and_webhooks_never_do(monkeypatch, allow_private):
    proxy = ConnectProxy()
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.sock.getsockname()[1]}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    try:
        answer = outbound.post("https://93.184.216.34:8443/api/v1/statements", b"{}", {}, timeout=1.0,
                               allow_private=allow_private)
    finally:
        proxy.sock.close()
    assert answer.status is None
    if allow_private:  # submit_statements: through the proxy, which was asked for a tunnel to the target
        assert proxy.request_line == "CONNECT 93.184.216.34:8443 HTTP/1.0"
        assert "403" in answer.error
    else:  # a webhook: straight to the checked address, never through a proxy that would resolve it again
        assert proxy.request_line == ""
