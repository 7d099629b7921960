"""The emulator's state: domain objects and their rules, no HTTP and no wire shapes.

``jobs`` (a job and how it moves), ``pods`` (its pods, nodes and labels), ``events``,
``trainlog`` (the simulated training log), ``execute`` (replicas run as local processes),
``pools`` (pools, queues, what their jobs hold), ``paging``, ``errors`` (the domain errors,
each with its AIHC status and code), and ``store`` (:class:`~.store.State`: all of it behind
one lock).  The dialects (``..dialects``) render these objects; ``..http`` serves them.
"""
