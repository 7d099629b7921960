"""Task attributes that OpenLineage's full task info cannot list.

With ``[openlineage] include_full_task_info = True``, the OpenLineage provider puts every
entry of an operator's instance ``__dict__`` into Airflow's own ``airflow`` run facet
(``TaskInfoComplete``), and offers no way for an operator to leave an attribute out (its
``excludes`` belong to the provider's class).  Its redaction does not catch what a task
renders either: the redactor keeps the secrets masker's pattern as it was when the
listener started, before the task rendered and masked anything, and a facet whose values
are all JSON is emitted without redacting its keys.  So the create operator's parameters
that carry secrets (``envs``, ``image_config``, ``body``) are :class:`SealedAttribute`:
they read and write like plain attributes, templating included, but their values live in
one opaque :class:`Sealed` store, which the facet shows as ``<<non-serializable: Sealed>>``.

Stdlib only: the operator module imports this at DAG parse.
"""

from __future__ import annotations

import copy
from typing import Any

#: The instance ``__dict__`` key of the store.
STORE = "_aihc_sealed"


class Sealed:
    """The values of an object's sealed attributes: no ``__dict__``, not JSON, and a
    ``repr`` that names the attributes only.

    :param values: attribute name → value.
    """

    __slots__ = ("values",)

    def __init__(self, values: dict[str, Any] | None = None) -> None:
        self.values: dict[str, Any] = values if values is not None else {}

    def __repr__(self) -> str:
        return f"<sealed: {', '.join(sorted(self.values))}>"

    def __deepcopy__(self, memo: dict[int, Any]) -> Sealed:
        return Sealed(copy.deepcopy(self.values, memo))


class SealedAttribute:
    """A data descriptor whose value is kept in the instance's :class:`Sealed` store; an
    attribute never set reads ``None``."""

    name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return _store(obj).values.get(self.name)

    def __set__(self, obj: object, value: Any) -> None:
        # A new store on every write, never a change to the old one: a shallow copy (Airflow
        # copies a task with copy.copy before rendering it) shares the store with its
        # original, and rendering the copy must not rewrite the original's parameters.
        obj.__dict__[STORE] = Sealed({**_store(obj).values, self.name: value})


def seal(owner: type, names: tuple[str, ...]) -> None:
    """Make each of ``names`` a :class:`SealedAttribute` of ``owner`` (the operator's
    parameters whose rows in ``job_parameters`` say ``sealed``)."""
    for name in names:
        attribute = SealedAttribute()
        attribute.__set_name__(owner, name)
        setattr(owner, name, attribute)


def _store(obj: object) -> Sealed:
    """The object's store (an empty one when none was written yet)."""
    store = obj.__dict__.get(STORE)
    return Sealed() if store is None else store  # type: ignore[no-any-return]
