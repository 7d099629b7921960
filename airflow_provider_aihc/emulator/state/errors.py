"""The one error type of the emulator: a domain error that carries its wire form.

Handlers never build error bodies themselves: :class:`EmulatorError` is raised anywhere
(validation, backend, signature check) and turned into
``{"requestId", "code", "message"}`` with its HTTP status in one place, ``app.App``.
"""

from __future__ import annotations


class EmulatorError(Exception):
    """An AIHC error answer.

    :param status: the HTTP status code.
    :param code: the BCE error code, e.g. ``InvalidParam``.
    :param message: the human-readable message.
    """

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


def invalid_param(message: str) -> EmulatorError:
    """``400 InvalidParam``: a parameter is missing or has a bad value."""
    return EmulatorError(400, "InvalidParam", message)


def malformed_json(message: str) -> EmulatorError:
    """``400 MalformedJSON``: the body is not JSON, or a field has the wrong JSON type."""
    return EmulatorError(400, "MalformedJSON", message)


def not_found(code: str, message: str) -> EmulatorError:
    """``404`` with a resource-specific code such as ``JobNotFound`` (inferred codes)."""
    return EmulatorError(404, code, message)
