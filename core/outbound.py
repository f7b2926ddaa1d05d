"""POSTs to servers outside: no redirects, a deadline for the whole exchange, a capped answer, a guarded address.

Two features send HTTP requests out: webhooks (to URLs the platform registered) and the statements of
reasons (to the EU Transparency Database). Both need the same care:

- A redirect is an answer, never followed: a followed POST could carry a signed body or a token elsewhere.
- The whole exchange has a deadline (connect, send, the status line, the answer), so a receiver that
  trickles bytes cannot hold a worker past it.
- Only the first `max_bytes` of the answer are read.
- With `allow_private=False`, the host name is resolved once, every address it resolves to must be a
  public one (no loopback, private, link-local, shared, reserved or multicast address, IPv4-mapped
  ones included), and the connection goes to the address that was checked. Checking the name and then
  letting the HTTP client resolve it again would let DNS answer differently the second time
  (DNS rebinding). TLS still verifies the certificate against the host name.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import time
import urllib.parse
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


class UnsafeTarget(Exception):
    """The URL cannot be sent to: malformed, not resolvable, or resolving to an address that is not public."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str  # path and query, as sent on the request line


@dataclass(frozen=True)
class Answer:
    status: int | None  # None: no HTTP answer at all
    body: bytes = b""
    error: str = ""
    timed_out: bool = False
    refused: bool = False  # not sent: the address check refused the target


def parse_target(url: str) -> Target:
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UnsafeTarget(f"The URL is malformed: {exc}.") from None
    if parts.scheme not in ("http", "https"):
        raise UnsafeTarget("The URL must start with https://.")
    if not parts.hostname:
        raise UnsafeTarget("The URL has no host name.")
    if parts.username is not None or parts.password is not None:
        raise UnsafeTarget("The URL must not carry a user name or password.")
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    return Target(parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80), path)


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 zone ("fe80::1%eth0") is link-local anyway
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def resolve(target: Target, *, allow_private: bool) -> list[str]:
    """The addresses to connect to, every one of them public unless `allow_private`."""
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise UnsafeTarget(f"The host name {target.host!r} does not resolve ({exc}).") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise UnsafeTarget(f"The host name {target.host!r} does not resolve.")
    if not allow_private:
        refused = [a for a in addresses if not is_public(a)]
        if refused:
            raise UnsafeTarget(
                f"{target.host!r} resolves to {', '.join(refused)}: loopback, private, link-local and other "
                "non-public addresses are refused."
            )
    return addresses


@lru_cache(maxsize=1)
def _tls_context() -> ssl.SSLContext:
    return ssl.create_default_context()


def _connection(target: Target, address: str, timeout: float) -> http.client.HTTPConnection:
    if target.scheme == "https":
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            target.host, target.port, timeout=timeout, context=_tls_context()
        )
    else:
        conn = http.client.HTTPConnection(target.host, target.port, timeout=timeout)

    # Connect to the checked address; the Host header and TLS's server name stay the host name.
    def connect_pinned(_address: Any, timeout: float, source_address: Any = None) -> socket.socket:
        return socket.create_connection((address, target.port), timeout, source_address)

    conn._create_connection = connect_pinned  # type: ignore[attr-defined]
    return conn


PLAIN_HTTP_REFUSED = "Plain http:// is refused: use https://."


def post(
    url: str, body: bytes, headers: dict[str, str], *, timeout: float, allow_private: bool = True,
    https_only: bool = False, max_bytes: int = 1 << 20,
) -> Answer:
    """POST `body`; whatever happens, an Answer (never an exception) within about `timeout` seconds."""
    try:
        target = parse_target(url)
        if https_only and target.scheme != "https":
            raise UnsafeTarget(PLAIN_HTTP_REFUSED)
        addresses = resolve(target, allow_private=allow_private)
    except UnsafeTarget as exc:
        return Answer(None, error=str(exc), refused=True)
    deadline = time.monotonic() + timeout
    conn = _connection(target, addresses[0], timeout)
    try:
        conn.request("POST", target.path, body=body, headers={"Content-Length": str(len(body)), **headers})
        sock = conn.sock  # the connection lets go of it once an HTTP/1.0 answer starts; the answer reads it
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        response = conn.getresponse()
        chunks: list[bytes] = []
        read = 0
        while read < max_bytes:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("the answer took longer than the time-out")
            sock.settimeout(remaining)
            chunk = response.read1(min(65536, max_bytes - read)) if hasattr(response, "read1") else response.read(65536)
            if not chunk:
                break
            chunks.append(chunk)
            read += len(chunk)
        reason = "" if 200 <= response.status < 300 else f"HTTP {response.status} {response.reason}"
        response.close()
        return Answer(response.status, b"".join(chunks), reason)
    except (TimeoutError, socket.timeout) as exc:
        return Answer(None, error=f"no answer within {timeout:g} s ({exc})", timed_out=True)
    except (ssl.SSLError, ConnectionError, http.client.HTTPException, OSError) as exc:
        return Answer(None, error=f"no answer: {exc}")
    finally:
        conn.close()
