"""What the shell needs of a member's durable state (the role of Ratis's RaftLog with its
RaftStorageMetadataFile): the core's `Persist` outputs written in order, made durable by a group-committed
`flush`, and read back at a restart."""

from __future__ import annotations

from typing import Protocol

from pyozone.ratis.messages import RaftPeerId
from pyozone.ratis.outputs import Persist
from pyozone.ratis.server import PersistentState


class RaftStorage(Protocol):
    def load(self) -> PersistentState:
        """What the member restarts from: its term, vote, the snapshot its log starts after, and the log."""
        ...

    def write(self, persist: Persist) -> None:
        """Write one `Persist` (term and vote; a reset after `snapshot`; entries replacing the log from the
        first one's index on). Not yet durable: `flush` makes it so. Called on the event loop's thread, in
        the order the core gave them; it may run while a `flush` of earlier writes runs on another thread."""
        ...

    def flush(self) -> None:
        """Make every write so far durable (fsync of the files written and, after a segment was closed or
        created, of the directory): one group commit for everything written since the last. Called on a
        worker thread, one at a time."""
        ...

    def purge(self, up_to_index: int, configuration: tuple[RaftPeerId, ...] = ()) -> None:
        """Entries up to `up_to_index` are in a snapshot: drop the closed segments that hold only such
        entries (Ratis purges whole segments, `raft.server.log.purge.gap` apart), and keep `configuration`
        (the members in force at `up_to_index`) for `load` to return."""
        ...

    def close(self) -> None: ...
