"""A long, sorted list kept on disk: a big run's findings and budget rows.

A run over 100,000 budgets holds about 300,000 findings and 100,000 report
rows; in memory that was about 5 KiB per budget (660 MiB). A
:class:`SpillList` keeps them in a temporary file instead, one pickled chunk
per budgets file and per file a finding names, and holds in memory only where
each chunk is. It is written once (``extend``) and read in one order: the
items sorted by ``key``, exactly as ``sorted(items, key=key)`` orders the list
that was extended (ties keep the order they were added in).

That order is rebuilt one file at a time, so reading holds one file's items:
``key(item)[0]`` must be the file the item is about (the name ``group``
returns), which is how findings and report rows sort (file, line, ...).

The temporary file is unlinked as it is created (``tempfile.TemporaryFile``),
so nothing is left behind however the run ends; where no temporary file can
be made, the chunks stay in memory: slower to nothing, only larger.
"""

from __future__ import annotations

import pickle
from typing import Any, Callable, Iterable, Iterator


class SpillList:
    """Items added in chunks, stored pickled on disk, read back sorted by ``key``."""

    def __init__(self, key: Callable[[Any], tuple], *, prepare: Callable[[Any], Any] | None = None,
                 restore: Callable[[Any], Any] | None = None,
                 on_add: Callable[[Any], None] | None = None) -> None:
        self._key = key
        self._on_add = on_add  # sees each item as it is added (counts kept beside the spill)
        self._prepare = prepare  # what makes an item picklable (a row's mapping proxy -> dict)
        self._restore = restore  # and back, on reading
        self._chunks: dict[str, list[tuple[int, int]]] = {}  # group -> [(offset, length)] in the order added
        self._memory: dict[int, bytes] = {}  # offset -> bytes, where no temporary file could be made
        self._file: Any = None
        self._end = 0
        self._len = 0
        self._opened = False
        self._full = False  # a write failed: later chunks stay in memory

    def __len__(self) -> int:
        return self._len

    def extend(self, items: Iterable[Any]) -> None:
        """Add ``items`` (one file's, usually), grouped by the file each is about."""
        groups: dict[str, list[Any]] = {}
        for item in items:
            if self._on_add is not None:
                self._on_add(item)
            groups.setdefault(self._key(item)[0], []).append(
                self._prepare(item) if self._prepare is not None else item)
        for group, chunk in groups.items():
            data = pickle.dumps(chunk, protocol=pickle.HIGHEST_PROTOCOL)
            self._chunks.setdefault(group, []).append((self._write(data), len(data)))
            self._len += len(chunk)

    def _write(self, data: bytes) -> int:
        if not self._opened:
            self._opened = True
            import tempfile

            try:
                # unbuffered: a write that fails (a full disk) fails here, inside the fallback,
                # not later in a buffer's flush at a seek or a read (issue 24: exit 3 and an
                # empty report on a temporary folder with little room)
                self._file = tempfile.TemporaryFile(prefix="budgetlint-", buffering=0)
            except OSError:
                self._file = None
        offset = self._end
        self._end += len(data)
        if self._file is not None and not self._full:
            try:
                self._file.seek(offset)
                view, done = memoryview(data), 0
                while done < len(data):
                    n = self._file.write(view[done:])
                    if not n:
                        raise OSError(28, "No space left on device")
                    done += n
                return offset
            except OSError:  # a full disk: what is written stays readable; the rest stays in memory
                self._full = True
        self._memory[offset] = data
        return offset

    def _read(self, offset: int, length: int) -> list[Any]:
        data = self._memory.get(offset)
        if data is None:
            self._file.seek(offset)
            parts, left = [], length
            while left:  # an unbuffered read may return less than asked
                part = self._file.read(left)
                if not part:
                    raise OSError(5, "the spill file ended early")
                parts.append(part)
                left -= len(part)
            data = b"".join(parts)
        chunk = pickle.loads(data)
        return [self._restore(x) for x in chunk] if self._restore is not None else chunk

    def __iter__(self) -> Iterator[Any]:
        """Every item, sorted by ``key`` (stable): one file's items in memory at a time."""
        for group in sorted(self._chunks):
            items: list[Any] = []
            for offset, length in self._chunks[group]:
                items.extend(self._read(offset, length))
            items.sort(key=self._key)
            yield from items

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
