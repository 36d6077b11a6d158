"""The core's in-memory view of the replicated log (the role of Ratis's RaftLog / RaftLogCache).

Indexes start at 1. The log holds the entries after `snapshot` (index 0 of term 0 when there is none): what a
snapshot covers was purged, but its last position's term is still known, so an append right after it can be
checked (Ratis's RaftLog keeps the snapshot's TermIndex for this). Every change here is mirrored by a
`Persist` or `PurgeLog` output, so the shell's durable log follows it.

Two indexes keep the hot questions O(log n) on a long log: the runs of equal terms (where a conflicting term
starts, section 5.3's optimisation) and the client call each entry carries (the retry cache asks whether a
retried call is already in the log). A third keeps the CONFIGURATION entries: the members in force are those
of the last one in the log, or, when the log holds none, those in force at the snapshot (the thesis's
section 4.1: a configuration takes effect as it is appended, and is undone if its entry is truncated).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from pyozone.ratis.messages import EntryKind, LogEntry, RaftPeerId, TermIndex

_EMPTY = TermIndex(0, 0)


def payload_bytes(entry: LogEntry) -> int:
    """An entry's cost in an append when nothing better is known: its payload and the state machine data that
    travels with it (`data_size`; the core knows no wire format; its shell gives it the real cost, framing
    and client id included: `protocol.raft.entry_wire_bytes`, which must count the data too once the shell
    ships it)."""
    return len(entry.payload) + entry.data_size


class RaftLog:
    def __init__(
        self,
        entries: tuple[LogEntry, ...] = (),
        snapshot: TermIndex = _EMPTY,
        configuration: tuple[RaftPeerId, ...] = (),
        entry_bytes: Callable[[LogEntry], int] = payload_bytes,
    ) -> None:
        for position, entry in enumerate(entries, start=snapshot.index + 1):
            if entry.index != position:
                raise ValueError(f"log entry at position {position} has index {entry.index}")
        self.snapshot = snapshot
        self.snapshot_configuration = configuration  # the members in force at the snapshot
        self._entry_bytes = entry_bytes  # what an entry costs in an append (`entries_from`)
        self._configurations: list[int] = []  # the indexes of the CONFIGURATION entries held
        self._entries: list[LogEntry] = []
        self._run_starts: list[int] = []  # the first index of each run of entries of one term
        self._run_terms: list[int] = []
        self._calls: dict[tuple[str, int], int] = {}  # (client id, call id) -> its first entry's index
        self._extend(entries)

    @property
    def first_index(self) -> int:
        """The first index the log holds (or would hold: `last_index + 1` when empty)."""
        return self.snapshot.index + 1

    @property
    def last_index(self) -> int:
        return self.snapshot.index + len(self._entries)

    @property
    def last_term(self) -> int:
        term = self.term_at(self.last_index)
        assert term is not None
        return term

    def term_at(self, index: int) -> int | None:
        """The term of the entry at `index` (the snapshot's term at its index, 0 for index 0), or None past
        the end or before the snapshot (purged)."""
        if index == self.snapshot.index:
            return self.snapshot.term
        if index < self.snapshot.index or index > self.last_index:
            return None
        return self._entries[index - self.first_index].term

    def entry(self, index: int) -> LogEntry:
        if not self.first_index <= index <= self.last_index:
            raise IndexError(f"no entry {index}: the log holds {self.first_index}..{self.last_index}")
        return self._entries[index - self.first_index]

    @property
    def configuration(self) -> tuple[RaftPeerId, ...]:
        """The members in force: those of the last configuration entry, else those at the snapshot."""
        return self.configuration_at(self.last_index)

    def configuration_at(self, index: int) -> tuple[RaftPeerId, ...]:
        """The members in force once the entry at `index` (at least the snapshot's) was appended."""
        position = bisect.bisect_right(self._configurations, index) - 1
        if position < 0:
            return self.snapshot_configuration
        return self.entry(self._configurations[position]).peers

    def configuration_indexes(self) -> tuple[int, ...]:
        return tuple(self._configurations)

    def index_of_call(self, client_id: str, call_id: int) -> int | None:
        """The index of the entry carrying this client call, if the log holds one (never for a call without a
        client id: those are not retry-cached)."""
        return self._calls.get((client_id, call_id))

    def entries_from(self, start: int, byte_limit: int, element_limit: int) -> tuple[LogEntry, ...]:
        """Entries from `start` on, costing at most `byte_limit` bytes (each entry's `entry_bytes`; but at
        least one entry, as Ratis sends an entry larger than the buffer alone) and `element_limit` entries (0:
        no limit)."""
        batch: list[LogEntry] = []
        size = 0
        for position in range(start - self.first_index, len(self._entries)):
            entry = self._entries[position]
            cost = self._entry_bytes(entry)
            if batch and (size + cost > byte_limit or len(batch) == element_limit):
                break
            batch.append(entry)
            size += cost
        return tuple(batch)

    def append(self, entry: LogEntry) -> None:
        if entry.index != self.last_index + 1:
            raise ValueError(f"appending index {entry.index} after {self.last_index}")
        self._extend((entry,))

    def contradiction(self, previous: TermIndex, entries: tuple[LogEntry, ...], commit_index: int) -> str:
        """Why an append (its previous entry and entries) contradicts an entry this log committed, or "": a
        committed entry is in every later leader's log at the same index and term (Leader Completeness), so
        an append that names it with another term lies, and taking it would overwrite a committed entry.
        What a snapshot covers is committed; what it purged can no longer be checked."""
        checked = [(previous.index, previous.term, "previous entry")]
        checked += ((e.index, e.term, "entry") for e in entries)
        for index, term, what in checked:
            if index > commit_index:
                break
            held = self.term_at(index)
            if held is not None and held != term:
                return f"{what} {index} of term {term} contradicts committed entry {index} of term {held}"
        return ""

    def merge(self, entries: tuple[LogEntry, ...]) -> tuple[LogEntry, ...]:
        """A follower takes a leader's entries (Figure 2, AppendEntries steps 3-4): an existing entry that
        conflicts (same index, other term) is deleted with all that follow, entries already held are kept
        (and those a snapshot covers: they are committed, so they match). Returns the suffix written, from
        the first changed index (empty if nothing changed). The caller has refused an append that
        `contradiction` finds, so no committed entry is deleted."""
        for position, entry in enumerate(entries):
            if entry.index <= self.snapshot.index:
                continue
            held = self.term_at(entry.index)
            if held == entry.term:
                continue
            if held is not None:
                self._truncate(entry.index)
            written = entries[position:]
            self._extend(written)
            return written
        return ()

    def purge(self, up_to: TermIndex, configuration: tuple[RaftPeerId, ...] = ()) -> None:
        """A snapshot covers everything up to `up_to` (an entry this log holds, or the end of the log after an
        installed snapshot replaced it): drop those entries. Entries after it are kept when the log holds
        `up_to` itself (Figure 13's rule for InstallSnapshot); otherwise the whole log is dropped, and the
        members in force at the snapshot are `configuration` (the installed snapshot's)."""
        if up_to.index <= self.snapshot.index:
            return
        keep = self.term_at(up_to.index) == up_to.term
        kept = tuple(self._entries[up_to.index - self.first_index + 1 :]) if keep else ()
        self.snapshot_configuration = self.configuration_at(up_to.index) if keep else configuration
        self.snapshot = up_to
        self._entries, self._run_starts, self._run_terms, self._calls = [], [], [], {}
        self._configurations = []
        self._extend(kept)

    def first_index_of_term_at(self, index: int) -> int:
        """The first index held of the run of entries sharing the term of the entry at `index`."""
        run = bisect.bisect_right(self._run_starts, index) - 1
        return max(self._run_starts[run], self.first_index) if run >= 0 else index

    def is_up_to_date(self, last_term: int, last_index: int) -> bool:
        """Is a log ending at (`last_term`, `last_index`) at least as up to date as this one? (5.4.1)"""
        return (last_term, last_index) >= (self.last_term, self.last_index)

    def entries(self) -> tuple[LogEntry, ...]:
        return tuple(self._entries)

    def _extend(self, entries: tuple[LogEntry, ...]) -> None:
        for entry in entries:
            if not self._run_terms or self._run_terms[-1] != entry.term:
                self._run_starts.append(entry.index)
                self._run_terms.append(entry.term)
            if entry.client_id:
                self._calls.setdefault((entry.client_id, entry.call_id), entry.index)
            if entry.kind is EntryKind.CONFIGURATION:
                self._configurations.append(entry.index)
            self._entries.append(entry)

    def _truncate(self, index: int) -> None:
        """Delete the entry at `index` and all that follow."""
        for entry in self._entries[index - self.first_index :]:
            if self._calls.get((entry.client_id, entry.call_id)) == entry.index:
                del self._calls[(entry.client_id, entry.call_id)]
        del self._entries[index - self.first_index :]
        run = bisect.bisect_left(self._run_starts, index)
        del self._run_starts[run:], self._run_terms[run:]
        del self._configurations[bisect.bisect_left(self._configurations, index) :]
