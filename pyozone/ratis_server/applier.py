"""How a Raft member hands committed entries to its state machine (Ratis's StateMachineUpdater): the core's
`Apply` (each entry in log order, its result reported back to the core) and `InstallSnapshot` (the state
machine loads the leader's checkpoint). Apart from the member (server.py) because its rules concern the
state machine alone: the order of applies, when a result is reported, and which entries an install
covers.

- `Apply`: each entry to the `StateMachine` in log order, its result back to the core (`applied`);
  CONFIGURATION and no-op entries are reported applied by the shell itself. An `ApplyFailedError` is not
  a result: it goes up, and the member fails (server.py). A `DataStateMachine`'s
  `apply_async` results are reported as each completes, in any order.
- `InstallSnapshot`: the state machine fetches the leader's checkpoint (`install_snapshot`), then the core
  hears `snapshot_installed`; Applies that come meanwhile are held, then those past the snapshot applied.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from functools import partial

from pyozone.common.net import HostPort
from pyozone.ratis.messages import EntryKind, LogEntry, RaftPeerId
from pyozone.ratis.outputs import Apply, InstallSnapshot, Output
from pyozone.ratis.server import RaftServer
from pyozone.ratis_server.member_api import (
    ApplyFailedError,
    DataStateMachine,
    InstalledSnapshot,
    StateMachine,
)
from pyozone.ratis_server.state_machine_data import StateMachineData

log = logging.getLogger(__name__)


class Applier:
    """The applies of member `me`. `core()`: its running core; `step(what, input)`: gives the core an input
    no caller waits on and carries out its outputs; `carry_out(outputs)`: carries out outputs as the core's
    (the held Applies after an install); `running()`: whether the member still runs; `address_of(peer)`:
    a peer's address (the leader whose checkpoint is fetched)."""

    def __init__(
        self,
        me: RaftPeerId,
        state_machine: StateMachine,
        data_machine: DataStateMachine | None,
        data: StateMachineData | None,
        core: Callable[[], RaftServer],
        step: Callable[[str, Callable[[], list[Output]]], None],
        carry_out: Callable[[list[Output]], None],
        running: Callable[[], bool],
        address_of: Callable[[RaftPeerId], HostPort | None],
    ) -> None:
        self._me = me
        self._state_machine = state_machine
        self._data_machine = data_machine
        self._data = data
        self._core = core
        self._step = step
        self._carry_out = carry_out
        self._running = running
        self._address_of = address_of
        self.applied_index = 0
        """The last entry handed to the state machine and reported (what `status` shows)."""
        self._applying: set[asyncio.Task[None]] = set()
        self._installing: asyncio.Task[None] | None = None
        self._held_applies: list[LogEntry] = []
        """Committed entries that came while an install ran: applied after it, those past its snapshot."""
        self._refused_install = False

    def apply(self, output: Apply) -> list[Output]:
        """Carries out `output`: the core's outputs for the results known at once, to be carried out next;
        an async apply's are carried out when it completes. Held while an install runs."""
        if self._installing is not None:
            self._held_applies.extend(output.entries)
            return []
        core = self._core()
        outputs: list[Output] = []
        if self._data_machine is not None:
            for entry in output.entries:
                if entry.kind is EntryKind.STATE_MACHINE:
                    self._apply_async(self._data_machine, entry)
                else:
                    outputs.extend(core.applied(entry.index, None))
            self.applied_index = core.applied_index
        else:
            for entry in output.entries:
                outputs.extend(core.applied(entry.index, self._apply(entry)))
        return outputs

    def install(self, notice: InstallSnapshot) -> None:
        if self._installing is None:
            self._installing = asyncio.get_running_loop().create_task(self._install(notice))

    async def stop(self) -> None:
        """Cancels the applies and the install under way and waits for them to end."""
        for task in self._applying:
            task.cancel()
        for task in list(self._applying):
            with contextlib.suppress(BaseException):
                await task
        self._applying.clear()
        if self._installing is not None:
            self._installing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._installing
            self._installing = None

    def _apply_async(self, machine: DataStateMachine, entry: LogEntry) -> None:
        """Hands a committed entry to the state machine (in log order); its result is reported to the core
        when it completes, in any order (Ozone's ContainerStateMachine applies per container)."""

        async def applied() -> None:
            try:
                result = await machine.apply_async(entry)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the entry's result: its client gets it raised
                result = error
            if self._running():
                core = self._core()
                self._step(f"the apply of {entry.index}", partial(core.applied, entry.index, result))
                self.applied_index = core.applied_index
                if (
                    self._data is not None
                    and self._data.cache
                    and all(p == self._me for p in core.configuration)
                ):
                    self._data.cache.drop_through(core.applied_index)  # no follower will need them

        task = asyncio.get_running_loop().create_task(applied())
        self._applying.add(task)
        task.add_done_callback(self._applying.discard)

    def _apply(self, entry: LogEntry) -> object:
        """A committed entry's result; CONFIGURATION and no-op entries are the shell's, applied here. An
        `ApplyFailedError` goes up (the member fails), the entry not counted applied."""
        if entry.kind is not EntryKind.STATE_MACHINE:
            self.applied_index = entry.index
            return None
        try:
            result: object = self._state_machine.apply(entry)
        except ApplyFailedError:
            raise
        except Exception as error:  # the entry's result: its client gets it raised
            result = error
        self.applied_index = entry.index
        return result

    async def _install(self, notice: InstallSnapshot) -> None:
        """The state machine fetches and loads the leader's checkpoint; the core hears the outcome. Every
        Apply before the notice was carried out (and reported) before this task runs: the core's rule that
        `snapshot_installed` follows the reports of every earlier entry. An Apply that comes while the
        install runs (a new leader that still holds the entries sends them) is held, not handed to the
        state machine, whose state the checkpoint is about to replace: the core emits each committed entry
        once and never again, so none may be dropped. Once the core heard the outcome, the held entries
        past the installed snapshot are applied (and reported) in order; those it covers are not."""
        install = getattr(self._state_machine, "install_snapshot", None)
        installed: InstalledSnapshot | None = None
        if install is None:
            if not self._refused_install:
                log.warning(
                    "Raft member %s: leader %s no longer holds the entries it needs, and its state machine "
                    "cannot install a snapshot (no install_snapshot): it cannot catch up",
                    self._me,
                    notice.leader_id,
                )
                self._refused_install = True
        else:
            try:
                installed = await install(
                    notice.leader_id, self._address_of(notice.leader_id), notice.first_available
                )
            except Exception:
                log.exception(
                    "Raft member %s: installing the snapshot of %s failed", self._me, notice.leader_id
                )
        self._installing = None
        if not self._running():
            return
        snapshot, configuration = installed if installed is not None else (None, ())
        if snapshot is not None:
            self.applied_index = max(self.applied_index, snapshot.index)
        held, self._held_applies = self._held_applies, []
        core = self._core()
        self._step("snapshot_installed", partial(core.snapshot_installed, snapshot, configuration))
        after = tuple(e for e in held if e.index > self.applied_index)
        if after:
            self._carry_out([Apply(after)])
