"""The v2 action dialect: :data:`~.v2.actions.ACTIONS` (``actions``) and its wire shapes
(``render`` for jobs and pods, ``pools`` for pools and queues)."""

from .actions import ACTIONS

__all__ = ["ACTIONS"]
