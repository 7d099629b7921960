"""Raw socket servers on 127.0.0.1 for the transport tests: they answer with hand-written
bytes (broken, hostile or proxied), which no real HTTP server library would send."""

from __future__ import annotations

import asyncio
import ipaddress
import re
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class Server:
    """What a test server saw: connections accepted and requests read (head and body)."""

    url: str = ""
    accepted: int = 0
    requests: list[bytes] = field(default_factory=list)


@dataclass
class Conn:
    """One accepted connection, handed to a handler."""

    server: Server
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    async def read_request(self) -> bytes | None:
        """The next request, or ``None`` when the client closed."""
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        request = head + await self.reader.readexactly(content_length(head))
        self.server.requests.append(request)
        return request

    async def write(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()


Handler = Callable[[Conn], Awaitable[None]]


def content_length(head: bytes) -> int:
    """The ``Content-Length`` of a request or answer head (0 when absent)."""
    match = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return int(match[1]) if match else 0


@asynccontextmanager
async def serve(
    handler: Handler, *, ssl_context: ssl.SSLContext | None = None
) -> AsyncIterator[Server]:
    """Run ``handler`` for every connection to a server on 127.0.0.1; yield its record."""
    state = Server()
    tasks: set[asyncio.Task[Any]] = set()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        state.accepted += 1
        try:
            await handler(Conn(state, reader, writer))
        except (OSError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the client went away, or the test ended
        finally:
            writer.close()
            tasks.discard(task)

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0, ssl=ssl_context)
    port = server.sockets[0].getsockname()[1]
    state.url = f"{'https' if ssl_context else 'http'}://127.0.0.1:{port}"
    try:
        yield state
    finally:
        server.close()
        for task in list(tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()


def answering(head: bytes, body: bytes = b"") -> Handler:
    """Answer every request with ``head`` (without its blank line) and ``body``."""

    async def handle(conn: Conn) -> None:
        while await conn.read_request() is not None:
            await conn.write(head + b"\r\n\r\n")
            for start in range(0, len(body), 64 * 1024):
                await conn.write(body[start : start + 64 * 1024])

    return handle


def ok(body: bytes) -> Handler:
    """Answer every request with a 200 carrying ``body``."""
    return answering(b"HTTP/1.1 200 OK\r\nContent-Length: %d" % len(body), body)


async def forward_proxy(conn: Conn) -> None:
    """A plain HTTP forward proxy: read an absolute-form request, relay it to its origin
    with ``Connection: close``, relay the answer back."""
    while (request := await conn.read_request()) is not None:
        line, _, rest = request.partition(b"\r\n")
        method, url, version = line.split(b" ")
        parts = urlsplit(url.decode())
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        try:
            writer.write(
                b"%s %s %s\r\nConnection: close\r\n%s" % (method, target.encode(), version, rest)
            )
            answer = await reader.read()
        finally:
            writer.close()
        await conn.write(answer)


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A self-signed CA certificate for localhost and 127.0.0.1, and its key, as files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "aihc-test-ca")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "ca.pem", directory / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file
