"""What no Baidu source says, decided once, in one place, and flagged.

Everything here is **invented by the emulator** (``docs/fidelity.md``, "Not verified").  No test of
the provider may pin it: a test that needs one of these behaviours sets it
(:class:`Choices`, the control API's ``POST /_emulator/choices``) and says so.

* :data:`SERVICE_STATUS`: the integer ``briefStat.status``.  Its type is ``int32`` in every
  client (bce-sdk-go ``services/aihc/inference/v2/models.go:308``); the page that would
  give its meaning (``dmb4v6oh0``) is in no corpus.  The numbers below are the emulator's
  own and mean nothing on the real service.
* :attr:`Choices.unique_names`: whether two models, datasets or services may share a name
  (default: they may; ``True`` refuses a second one with ``409 <Kind>AlreadyExists``).
* :attr:`Choices.token_mismatch`: a ``clientToken`` reused with another ``CreateService``
  body.  Default ``replay``: the first service's id is answered, as for an identical
  replay (no error is invented); ``error`` answers ``409 IdempotentParameterMismatch``.
  Either way a token is remembered until its service is deleted, and a create that fails
  validation does not consume it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: ``briefStat.status`` by the emulator's own service phase (invented numbers).
SERVICE_STATUS: dict[str, int] = {
    "Deploying": 1,  # a rollout in progress (instances not all ready on the live conf)
    "Running": 2,  # every instance ready on the live configuration
    "Stopped": 3,  # instanceCount 0 and no instance left
}
TokenMismatch = Literal["replay", "error"]
TOKEN_MISMATCH: tuple[str, ...] = ("replay", "error")


@dataclass
class Choices:
    """The emulator's settable answers to questions the sources leave open.

    :param unique_names: refuse a second model, dataset or service of the same name.
    :param token_mismatch: what a ``clientToken`` reused with another body answers.
    """

    unique_names: bool = False
    token_mismatch: TokenMismatch = "replay"
