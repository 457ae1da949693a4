"""Objects kept in a temporary file while nobody needs them: what bounds a long input's memory.

A parse of an input with thousands of launches would hold every launch until the input ends (a
journal's launches are each on a stream of their own, open to the last line), and the store every
launch until its one transaction.  Both keep what they do not need now here instead:

* :class:`Spill`: pickled objects in an anonymous temporary file (``tempfile``, so ``$TMPDIR``),
  gone when it is closed or the process dies; :meth:`Spill.put` returns where an object is,
  :meth:`Spill.get` reads it back (a new copy each time: the object graph of one ``put`` is kept
  whole, shared references within it included);
* :class:`SpilledDict`: a mapping that keeps its ``resident`` most recently used values in memory
  and the others in a :class:`Spill` until they are asked for again.
"""

from __future__ import annotations

import pickle
import tempfile
from collections import OrderedDict
from collections.abc import Iterator
from typing import IO, Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Spill:
    """Pickled objects in an anonymous temporary file, created on the first :meth:`put`."""

    def __init__(self) -> None:
        self._fh: IO[bytes] | None = None
        self._end = 0

    def put(self, obj: Any) -> int:
        """Write ``obj``; returns where it is (for :meth:`get`)."""
        if self._fh is None:
            self._fh = tempfile.TemporaryFile(prefix="logparse-spill-")  # noqa: SIM115 (closed by close())
        at = self._end
        self._fh.seek(at)
        pickle.dump(obj, self._fh, protocol=pickle.HIGHEST_PROTOCOL)
        self._end = self._fh.tell()
        return at

    def get(self, at: int) -> Any:
        """A copy of the object written at ``at``."""
        assert self._fh is not None, "nothing was spilled"
        self._fh.seek(at)
        return pickle.load(self._fh)

    @property
    def size(self) -> int:
        """Bytes written so far."""
        return self._end

    def close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            fh.close()
        self._end = 0

    def __enter__(self) -> Spill:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SpilledDict(Generic[K, V]):
    """A mapping whose ``resident`` most recently used values stay in memory (``None``: all of
    them) and the others wait in a :class:`Spill`.  A value read back is a copy: whoever holds a
    value must not keep it past the next access of the mapping, which may spill it."""

    def __init__(self, resident: int | None = None) -> None:
        self.resident = resident
        self._live: OrderedDict[K, V] = OrderedDict()
        self._away: dict[K, int] = {}
        self._spill = Spill()
        #: values written to the spill and read back (how often the mapping was too small)
        self.spilled = self.restored = 0

    def get(self, key: K, default: V | None = None) -> V | None:
        if key in self._live:
            self._live.move_to_end(key)
            return self._live[key]
        at = self._away.pop(key, None)
        if at is None:
            return default
        value: V = self._spill.get(at)
        self.restored += 1
        self._keep(key, value)
        return value

    def __getitem__(self, key: K) -> V:
        if key not in self:
            raise KeyError(key)
        return self.get(key)  # type: ignore[return-value]

    def __setitem__(self, key: K, value: V) -> None:
        self._away.pop(key, None)
        self._keep(key, value)

    def pop(self, key: K, default: V | None = None) -> V | None:
        value = self.get(key, default) if key in self else default
        self._live.pop(key, None)
        return value

    def __delitem__(self, key: K) -> None:
        if key not in self:
            raise KeyError(key)
        self._live.pop(key, None)
        self._away.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._live or key in self._away

    def __len__(self) -> int:
        return len(self._live) + len(self._away)

    def __iter__(self) -> Iterator[K]:
        """The keys (values written first, then those in memory, each in the order they were last used)."""
        return iter([*self._away, *self._live])

    def _keep(self, key: K, value: V) -> None:
        self._live[key] = value
        self._live.move_to_end(key)
        if self.resident is None:
            return
        while len(self._live) > self.resident:
            old, out = self._live.popitem(last=False)
            self._away[old] = self._spill.put(out)
            self.spilled += 1

    def close(self) -> None:
        """Forget every value (the spill's file with them)."""
        self._live.clear()
        self._away.clear()
        self._spill.close()
