"""A least-recently-used cache bounded by the sizes of its values (the merge read's caches of
data files' keys and of bitmap frames: a data file and its deletes never change, so what was
read of them holds for good)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SizedLru(Generic[K, V]):
    """Values by key; the least recently used are dropped once the values' sizes pass
    ``limit``, and a value larger than the whole limit is not kept. Safe across threads.

        >>> c = SizedLru(5, len)
        >>> c.put("a", "xxx"); c.put("b", "yy"); _ = c.get("a"); c.put("c", "z")
        >>> c.get("b"), c.get("a"), c.size
        (None, 'xxx', 4)
    """

    def __init__(self, limit: int, size: Callable[[V], int],
                 on_drop: Callable[[V], None] | None = None) -> None:
        self.limit, self.size = limit, 0
        self._size_of = size
        self._on_drop = on_drop  # called with each value dropped, outside the lock
        self._lock = threading.Lock()
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        n = self._size_of(value)
        if n > self.limit:
            self._dropped([value])
            return
        gone = []
        with self._lock:
            old = self._items.pop(key, None)
            self.size += n - (0 if old is None else self._size_of(old))
            self._items[key] = value
            if old is not None and old is not value:
                gone.append(old)
            while self.size > self.limit:
                _, dropped = self._items.popitem(last=False)
                self.size -= self._size_of(dropped)
                gone.append(dropped)
        self._dropped(gone)

    def clear(self) -> None:
        """Drop every value."""
        with self._lock:
            gone = list(self._items.values())
            self._items.clear()
            self.size = 0
        self._dropped(gone)

    def _dropped(self, values: list[V]) -> None:
        if self._on_drop is not None:
            for v in values:
                self._on_drop(v)
