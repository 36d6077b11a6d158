"""The core's in-memory view of the replicated log (the role of Ratis's RaftLog / RaftLogCache).

Indexes start at 1; index 0 is the empty prefix, of term 0. Every change here is mirrored by a `Persist`
output, so the shell's durable log follows it.
"""

from __future__ import annotations

from pyozone.ratis.messages import LogEntry


class RaftLog:
    def __init__(self, entries: tuple[LogEntry, ...] = ()) -> None:
        for position, entry in enumerate(entries, start=1):
            if entry.index != position:
                raise ValueError(f"log entry at position {position} has index {entry.index}")
        self._entries = list(entries)

    @property
    def last_index(self) -> int:
        return len(self._entries)

    @property
    def last_term(self) -> int:
        return self.term_at(self.last_index)

    def term_at(self, index: int) -> int | None:
        """The term of the entry at `index` (0 for index 0), or None past the end."""
        if index == 0:
            return 0
        if index > len(self._entries):
            return None
        return self._entries[index - 1].term

    def entry(self, index: int) -> LogEntry:
        return self._entries[index - 1]

    def entries_from(self, start: int, byte_limit: int, element_limit: int) -> tuple[LogEntry, ...]:
        """Entries from `start` on, at most `byte_limit` payload bytes (but at least one entry, as Ratis sends
        an entry larger than the buffer alone) and `element_limit` entries (0: no limit)."""
        batch: list[LogEntry] = []
        size = 0
        for entry in self._entries[start - 1 :]:
            if batch and (size + len(entry.payload) > byte_limit or len(batch) == element_limit):
                break
            batch.append(entry)
            size += len(entry.payload)
        return tuple(batch)

    def append(self, entry: LogEntry) -> None:
        if entry.index != self.last_index + 1:
            raise ValueError(f"appending index {entry.index} after {self.last_index}")
        self._entries.append(entry)

    def merge(self, entries: tuple[LogEntry, ...], commit_index: int) -> tuple[LogEntry, ...]:
        """A follower takes a leader's entries (Figure 2, AppendEntries steps 3-4): an existing entry that
        conflicts (same index, other term) is deleted with all that follow, entries already held are kept.
        Returns the suffix written, from the first changed index (empty if nothing changed)."""
        for position, entry in enumerate(entries):
            held = self.term_at(entry.index)
            if held == entry.term:
                continue
            if held is not None:
                if entry.index <= commit_index:
                    raise AssertionError(f"a leader's entry {entry} conflicts with committed {entry.index}")
                del self._entries[entry.index - 1 :]
            written = entries[position:]
            self._entries.extend(written)
            return written
        return ()

    def first_index_of_term_at(self, index: int) -> int:
        """The first index of the run of entries sharing the term of the entry at `index`."""
        term = self.term_at(index)
        while index > 1 and self.term_at(index - 1) == term:
            index -= 1
        return index

    def is_up_to_date(self, last_term: int, last_index: int) -> bool:
        """Is a log ending at (`last_term`, `last_index`) at least as up to date as this one? (5.4.1)"""
        return (last_term, last_index) >= (self.last_term, self.last_index)
