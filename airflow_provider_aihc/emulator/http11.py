"""A small HTTP/1.1 server loop on asyncio streams: one coroutine per connection.

Keep-alive by default (HTTP/1.1), ``Connection: close`` honoured both ways, bodies by
``Content-Length`` or ``Transfer-Encoding: chunked``, ``Expect: 100-continue`` answered.
The handler is synchronous and quick (the backend takes one lock and does a little
work); an answer ``delay`` is awaited, so a slow answer never blocks other connections.
Nothing is logged per request above DEBUG.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from email.utils import formatdate
from http import HTTPStatus

from .errors import EmulatorError
from .wire import Request, Response, error_response

log = logging.getLogger(__name__)

Handler = Callable[[Request], Response]

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 32 * 1024 * 1024
IDLE_TIMEOUT_SECONDS = 300.0
_CRLF = b"\r\n"
_HEAD_END = b"\r\n\r\n"


class BadRequest(Exception):
    """The bytes on the wire are not an HTTP/1.x request we can read."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def serve_connection(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, handler: Handler
) -> None:
    """Serve requests on one connection until it closes, asks to close, or idles out."""
    peername = writer.get_extra_info("peername")
    peer = str(peername[0]) if isinstance(peername, tuple) else ""
    try:
        while await _serve_one(reader, writer, handler, peer):
            pass
    except (ConnectionError, TimeoutError, asyncio.IncompleteReadError):
        pass
    except BadRequest as bad:
        writer.write(_error_bytes(bad.status, bad.message))
        await _drain(writer)
    finally:
        writer.close()


async def _serve_one(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, handler: Handler, peer: str
) -> bool:
    """One request/answer; returns whether the connection stays open."""
    try:
        async with asyncio.timeout(IDLE_TIMEOUT_SECONDS):
            head = await reader.readuntil(_HEAD_END)
    except asyncio.IncompleteReadError as eof:
        if eof.partial.strip():
            raise BadRequest(400, "incomplete request head") from None
        return False
    except asyncio.LimitOverrunError:
        raise BadRequest(431, "request head too large") from None
    method, target, version, headers = parse_head(head)
    body = await _read_body(reader, writer, headers)
    try:
        response = handler(Request(method, target, headers, body, peer))
    except Exception:
        log.exception("AIHC emulator failed on %s %s", method, target.partition("?")[0])
        error = EmulatorError(500, "InternalError", "emulator internal error")
        response = error_response(error, str(uuid.uuid4()))
    if response.delay > 0:
        await asyncio.sleep(response.delay)
    if response.drop:
        return False
    keep_alive = _keep_alive(version, headers)
    writer.write(serialize(response, keep_alive))
    await writer.drain()
    return keep_alive


def parse_head(head: bytes) -> tuple[str, str, str, list[tuple[str, str]]]:
    """The request line and headers of a request head (ending with a blank line)."""
    text = _decode(head)
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[1]:
        raise BadRequest(400, "malformed request line")
    method, target, version = parts
    if not version.startswith("HTTP/1."):
        raise BadRequest(505, "only HTTP/1.x is supported")
    headers = []
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise BadRequest(400, f"malformed header line {line[:40]!r}")
        headers.append((name, value.strip()))
    return method.upper(), target, version, headers


def serialize(response: Response, keep_alive: bool) -> bytes:
    """The bytes of an answer, with ``Content-Length``, ``Date`` and ``Connection``."""
    try:
        reason = HTTPStatus(response.status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [f"HTTP/1.1 {response.status} {reason}"]
    lines.extend(f"{name}: {value}" for name, value in response.headers)
    lines.append(f"Content-Length: {len(response.body)}")
    lines.append(f"Date: {formatdate(usegmt=True)}")
    lines.append("Server: aihc-emulator")
    if not keep_alive:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + response.body


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name), None)


def _keep_alive(version: str, headers: list[tuple[str, str]]) -> bool:
    connection = (_header(headers, "connection") or "").lower()
    if version == "HTTP/1.0":
        return "keep-alive" in connection
    return "close" not in connection


async def _read_body(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, headers: list[tuple[str, str]]
) -> bytes:
    chunked = "chunked" in (_header(headers, "transfer-encoding") or "").lower()
    length_text = _header(headers, "content-length")
    if not chunked and not length_text:
        return b""
    if (_header(headers, "expect") or "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    if chunked:
        return await _read_chunked(reader)
    if length_text is None or not length_text.isdigit():
        raise BadRequest(400, "bad Content-Length")
    length = int(length_text)
    if length > MAX_BODY_BYTES:
        raise BadRequest(413, "request body too large")
    return await reader.readexactly(length)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        size_line = await reader.readuntil(_CRLF)
        try:
            size = int(size_line.split(b";")[0].strip(), 16)
        except ValueError:
            raise BadRequest(400, "bad chunk size") from None
        total += size
        if total > MAX_BODY_BYTES:
            raise BadRequest(413, "request body too large")
        if size == 0:
            while (await reader.readuntil(_CRLF)) != _CRLF:
                pass  # trailers
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


def _error_bytes(status: int, message: str) -> bytes:
    error = EmulatorError(status, "InvalidHTTPRequest", message)
    return serialize(error_response(error, str(uuid.uuid4())), keep_alive=False)


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


async def _drain(writer: asyncio.StreamWriter) -> None:
    try:
        await writer.drain()
    except ConnectionError:
        log.debug("client went away before the error answer")
