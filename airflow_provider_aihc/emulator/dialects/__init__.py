"""The two API generations the emulator speaks, each over the same state (``..state``).

A dialect parses requests into calls on :class:`~.state.store.State` and renders the
domain objects it gets back into its answers: ``v1`` (REST paths, what the ``aihc`` CLI
sends: :data:`.v1.routes.ROUTES`), ``v2`` (``/?action=…``, what bce-python-sdk's ``AihcClient``
and the generated clients send: :data:`.v2.actions.ACTIONS`).  ``call`` is what a handler sees and
what a route is; ``create`` parses and validates both dialects' create bodies; ``common``
holds the wire forms both share (times, events).
"""
