"""The v1 REST dialect: :data:`~.v1.routes.ROUTES` (``routes``) and its wire shapes (``render``)."""

from .routes import ROUTES

__all__ = ["ROUTES"]
