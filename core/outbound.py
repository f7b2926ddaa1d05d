"""POSTs to servers outside: no redirects, one deadline for the whole exchange, a capped answer, a guarded address.

Two features send HTTP requests out: webhooks (to URLs the platform registered) and the statements of
reasons (to the EU Transparency Database, an address the operator chose). Both need the same care:

- A redirect is an answer, never followed: a followed POST could carry a signed body or a token elsewhere.
- One deadline bounds the whole exchange: resolving the name, connecting, sending, the status line, the
  headers and the answer. A receiver that trickles bytes is cut off at it (a watchdog shuts the socket).
- Only the first `max_bytes` of the answer are read.
- It never raises: whatever happens is an `Answer`.
- With `allow_private=False` (webhooks), the host name is resolved once, every address it resolves to
  must be public (no loopback, private, link-local, shared, reserved or multicast address, nor one of
  those carried inside IPv6: mapped, 6to4, NAT64), and the connection goes to the addresses that were
  checked. Checking the name and then letting the HTTP client resolve it again would let DNS answer
  differently the second time (DNS rebinding). TLS still verifies the certificate against the host name.
- With `allow_private=True` (the operator's own endpoint), an HTTPS target goes through the proxy of
  `HTTPS_PROXY` (and `NO_PROXY`), as urllib would, if one is set.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

PLAIN_HTTP_REFUSED = "Plain http:// is refused: use https://."
NAT64 = ipaddress.ip_network("64:ff9b::/96")
GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")
_resolver = ThreadPoolExecutor(max_workers=4, thread_name_prefix="outbound-dns")


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
    if not url.isascii() or any(c.isspace() or ord(c) < 32 for c in url):
        raise UnsafeTarget("The URL must be ASCII without spaces: percent-encode the path and write an "
                           "international host name in punycode (xn--...).")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UnsafeTarget(f"The URL is malformed: {exc}.") from None
    if parts.scheme not in ("http", "https"):
        raise UnsafeTarget("The URL must start with https:// (or http://).")
    if not parts.hostname:
        raise UnsafeTarget("The URL has no host name.")
    if parts.username is not None or parts.password is not None:
        raise UnsafeTarget("The URL must not carry a user name or password.")
    if port == 0:
        raise UnsafeTarget("The port must be 1 to 65535.")
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    return Target(
        parts.scheme,
        parts.hostname.rstrip(".") or parts.hostname,
        port or (443 if parts.scheme == "https" else 80),
        path,
    )


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 zone ("fe80::1%eth0") is link-local anyway
    if isinstance(ip, ipaddress.IPv4Address):
        return ip.is_global and not ip.is_multicast
    # An IPv4 address carried inside IPv6 is judged as that IPv4 address.
    if ip in NAT64:
        return is_public(str(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)))
    if ip.ipv4_mapped is not None:
        return is_public(str(ip.ipv4_mapped))
    # Otherwise only global unicast: no IPv4-compatible (::/96), translated, local NAT64, ULA, link-local...
    if ip not in GLOBAL_UNICAST or ip.teredo is not None:
        return False
    if ip.sixtofour is not None:
        return is_public(str(ip.sixtofour))
    return ip.is_global


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def resolve(target: Target, *, allow_private: bool, timeout: float = 5.0) -> list[str]:
    """The addresses to connect to, every one of them public unless `allow_private`."""
    lookup = _resolver.submit(socket.getaddrinfo, target.host, target.port, type=socket.SOCK_STREAM)
    try:
        infos = lookup.result(timeout=timeout)
    except FutureTimeout:
        raise UnsafeTarget(f"The host name {target.host!r} did not resolve within {timeout:g} s.") from None
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise UnsafeTarget(f"The host name {target.host!r} does not resolve ({exc}).") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise UnsafeTarget(f"The host name {target.host!r} does not resolve.")
    if not allow_private:
        refused = [a for a in addresses if not is_public(a)]
        if refused:
            # A name's internal addresses are not told to whoever asked (registration is no DNS oracle).
            what = refused[0] if _is_address(target.host) else f"{target.host!r} resolves to an address that"
            raise UnsafeTarget(
                f"{what} is not public: loopback, private, link-local and other non-public addresses are refused."
            )
    return addresses


@lru_cache(maxsize=1)
def _tls_context() -> ssl.SSLContext:
    return ssl.create_default_context()


def _proxy(target: Target) -> tuple[str, int] | None:
    if target.scheme != "https":
        return None
    proxy = urllib.request.getproxies().get("https")
    if not proxy or urllib.request.proxy_bypass(target.host):
        return None
    parts = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    return (parts.hostname, parts.port or 8080) if parts.hostname else None


def _connection(target: Target, addresses: list[str], timeout: float, *, proxy: tuple[str, int] | None):
    if proxy is not None:
        conn = http.client.HTTPSConnection(proxy[0], proxy[1], timeout=timeout, context=_tls_context())
        conn.set_tunnel(target.host, target.port)
        return conn
    if target.scheme == "https":
        conn = http.client.HTTPSConnection(target.host, target.port, timeout=timeout, context=_tls_context())
    else:
        conn = http.client.HTTPConnection(target.host, target.port, timeout=timeout)

    # Connect to the checked addresses, in turn; the Host header and TLS's server name stay the host name.
    def connect_pinned(_address: Any, timeout: float, source_address: Any = None) -> socket.socket:
        error: OSError | None = None
        for address in addresses:
            try:
                return socket.create_connection((address, target.port), timeout, source_address)
            except OSError as exc:
                error = exc
        raise error or OSError("no address to connect to")

    conn._create_connection = connect_pinned  # type: ignore[attr-defined]
    return conn


class _Watchdog:
    """Shuts the connection's socket at the deadline, whatever read or write is blocked on it."""

    def __init__(self, conn: http.client.HTTPConnection, seconds: float) -> None:
        self.conn = conn
        self.sock: socket.socket | None = None  # the answer's socket, once the connection has let go of it
        self.fired = False
        self.timer = threading.Timer(max(seconds, 0.0), self._fire)
        self.timer.daemon = True

    def _fire(self) -> None:
        self.fired = True
        sock = self.conn.sock or self.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> _Watchdog:
        self.timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.timer.cancel()


def post(
    url: str, body: bytes, headers: dict[str, str], *, timeout: float, allow_private: bool = True,
    https_only: bool = False, max_bytes: int = 1 << 20,
) -> Answer:
    """POST `body`; whatever happens, an Answer (never an exception) within about `timeout` seconds."""
    deadline = time.monotonic() + timeout
    try:
        target = parse_target(url)
        if https_only and target.scheme != "https":
            raise UnsafeTarget(PLAIN_HTTP_REFUSED)
        proxy = _proxy(target) if allow_private else None
        addresses = [] if proxy else resolve(target, allow_private=allow_private, timeout=timeout)
    except UnsafeTarget as exc:
        return Answer(None, error=str(exc), refused=True)
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return Answer(None, error=f"no answer within {timeout:g} s (resolving the name took it all)", timed_out=True)
    conn = _connection(target, addresses, remaining, proxy=proxy)
    watchdog = _Watchdog(conn, remaining)
    try:
        with watchdog:
            conn.request("POST", target.path, body=body, headers={"Content-Length": str(len(body)), **headers})
            watchdog.sock = conn.sock  # the connection lets go of it once an HTTP/1.0 answer starts
            response = conn.getresponse()
            chunks: list[bytes] = []
            read = 0
            while read < max_bytes:
                chunk = response.read1(min(65536, max_bytes - read))
                if not chunk:
                    break
                chunks.append(chunk)
                read += len(chunk)
            response.close()
        if watchdog.fired:
            raise TimeoutError("cut off at the deadline")
        reason = "" if 200 <= response.status < 300 else f"HTTP {response.status} {response.reason}"
        return Answer(response.status, b"".join(chunks), reason)
    except Exception as exc:  # noqa: BLE001 - every failure is an answer: the caller records and retries it
        if watchdog.fired or isinstance(exc, TimeoutError | socket.timeout):
            return Answer(None, error=f"no answer within {timeout:g} s", timed_out=True)
        return Answer(None, error=f"no answer: {type(exc).__name__}: {exc}"[:500])
    finally:
        conn.close()
