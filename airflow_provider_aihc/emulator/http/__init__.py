"""The emulator's HTTP machinery under the server (``..server``:
:class:`~.server.EmulatorServer`, aiohttp's): the request → response app that routes to the
dialects, injects faults and records requests (``app``), signature verification
(``verify``), the control API (``control``: ``/_emulator/…``) and the request and response
types (``wire``)."""
