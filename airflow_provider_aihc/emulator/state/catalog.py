"""Models and datasets: named entries, each with numbered versions (no HTTP, no wire shapes).

The two families behave alike in Baidu's definitions (bce-openapi-meta HEAD ``11913e343072``
``schema/aihc/{Create,Describe,Modify,Delete}{Model,Dataset}*.json``): a create with an
initial version entry, a version create that names its parent in the query, describe of
the entry (with its latest version) and of one version, lists that page, deletes (deleting
a model deletes all its versions: bce-python-sdk 0.9.79 ``model_client.py:102``
"删除模型，同时删除所有版本").  One :class:`Catalog` per family holds them; the dialect
renders the family's field names (``dialects/v2/registry.py``).

Invented (no source gives them; marked in ``docs/fidelity.md``): the id forms, version
numbers ``v1``, ``v2``, … counted per entry and never reused, lists ordered newest first,
a ``keyword`` matched as a substring of the name ("模糊匹配"), the not-found codes
``404 <Kind>NotFound`` / ``<Kind>VersionNotFound``, a version delete that may remove the
last version (the entry then has no latest version).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .choices import Choices
from .errors import EmulatorError, not_found
from .jobs import Clock
from .paging import Page

T = TypeVar("T")


@dataclass
class Version:
    """One version: its id, its number, what the create said (wire field names)."""

    version_id: str
    number: int
    attrs: dict[str, Any]
    created_at: float
    creator: str

    @property
    def label(self) -> str:
        """The version's name, ``v<number>`` (invented)."""
        return f"v{self.number}"


@dataclass
class Entry:
    """A model or a dataset: what its create said, and its versions, oldest first."""

    entry_id: str
    name: str
    attrs: dict[str, Any]
    created_at: float
    updated_at: float
    creator: str
    seq: int
    versions: list[Version] = field(default_factory=list)
    next_number: int = 1

    @property
    def latest(self) -> Version | None:
        """The newest version still there."""
        return self.versions[-1] if self.versions else None

    def version(self, version_id: str, kind: str) -> Version:
        """One version; ``404 <Kind>VersionNotFound`` when it is not there."""
        for item in self.versions:
            if item.version_id == version_id:
                return item
        raise not_found(
            f"{kind}VersionNotFound",
            f"{kind.lower()} version {version_id!r} not found in {self.entry_id!r}",
        )


class Catalog:
    """Every entry of one family (``Model`` or ``Dataset``).

    :param kind: ``Model`` or ``Dataset`` (error codes and messages).
    :param id_prefix: the invented prefix of entry ids (``am-``, ``ds-``).
    :param version_prefix: the invented prefix of version ids.
    :param clock: epoch seconds.
    :param choices: the flagged choices (name uniqueness).
    """

    def __init__(
        self, kind: str, id_prefix: str, version_prefix: str, clock: Clock, choices: Choices
    ) -> None:
        self.kind = kind
        self._id_prefix = id_prefix
        self._version_prefix = version_prefix
        self._clock = clock
        self._choices = choices
        self._lock = threading.Lock()
        self._entries: dict[str, Entry] = {}
        self._seq = 0

    def create(
        self, name: str, attrs: dict[str, Any], first: dict[str, Any] | None, creator: str
    ) -> Entry:
        """A new entry, with a first version when ``first`` is given."""
        with self._lock:
            if self._choices.unique_names and any(e.name == name for e in self._entries.values()):
                raise EmulatorError(
                    409, f"{self.kind}AlreadyExists", f"{self.kind.lower()} {name!r} exists"
                )
            self._seq += 1
            now = self._clock()
            entry = Entry(_new_id(self._id_prefix), name, dict(attrs), now, now, creator, self._seq)
            self._entries[entry.entry_id] = entry
            if first is not None:
                self._add_version(entry, first, creator)
            return entry

    def add_version(self, entry_id: str, attrs: dict[str, Any], creator: str) -> Version:
        """A new version of an entry."""
        with self._lock:
            return self._add_version(self._get(entry_id), attrs, creator)

    def read(self, entry_id: str, render: Callable[[Entry], T]) -> T:
        """One entry, ``render``-ed under the lock."""
        with self._lock:
            return render(self._get(entry_id))

    def modify(self, entry_id: str, attrs: dict[str, Any], name: str | None) -> Entry:
        """Change the given fields (``name`` too, when given)."""
        with self._lock:
            entry = self._get(entry_id)
            entry.attrs.update(attrs)
            if name is not None:
                entry.name = name
            entry.updated_at = self._clock()
            return entry

    def delete(self, entry_id: str) -> None:
        """Gone, with every version."""
        with self._lock:
            self._get(entry_id)
            del self._entries[entry_id]

    def delete_version(self, entry_id: str, version_id: str) -> None:
        """One version gone."""
        with self._lock:
            entry = self._get(entry_id)
            entry.versions.remove(entry.version(version_id, self.kind))
            entry.updated_at = self._clock()

    def page(
        self,
        render: Callable[[Entry], T],
        *,
        wanted: Callable[[Entry], bool],
        page_no: int,
        page_size: int | None,
    ) -> Page[T]:
        """The entries ``wanted`` keeps, newest first; every one when ``page_size`` is
        ``None`` ("没传默认返回全部")."""
        with self._lock:
            found = sorted((e for e in self._entries.values() if wanted(e)), key=lambda e: -e.seq)
            return Page(len(found), [render(e) for e in _slice(found, page_no, page_size)])

    def version_page(
        self,
        entry_id: str,
        render: Callable[[Version], T],
        *,
        page_no: int,
        page_size: int | None,
    ) -> Page[T]:
        """An entry's versions, newest first; every one when ``page_size`` is ``None``."""
        with self._lock:
            found = list(reversed(self._get(entry_id).versions))
            return Page(len(found), [render(v) for v in _slice(found, page_no, page_size)])

    def count(self) -> tuple[int, int]:
        """``(entries, versions)``."""
        with self._lock:
            return len(self._entries), sum(len(e.versions) for e in self._entries.values())

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()

    def _get(self, entry_id: str) -> Entry:
        entry = self._entries.get(entry_id)
        if entry is None:
            raise not_found(f"{self.kind}NotFound", f"{self.kind.lower()} {entry_id!r} not found")
        return entry

    def _add_version(self, entry: Entry, attrs: dict[str, Any], creator: str) -> Version:
        now = self._clock()
        version = Version(
            _new_id(self._version_prefix), entry.next_number, dict(attrs), now, creator
        )
        entry.next_number += 1
        entry.versions.append(version)
        entry.updated_at = now
        return version


def _new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:12]}"


def _slice(items: list[T], page_no: int, page_size: int | None) -> list[T]:
    if page_size is None:
        return items if page_no == 1 else []
    start = (page_no - 1) * page_size
    return items[start : start + page_size]
