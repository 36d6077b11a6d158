"""The datanode's command queue: SCM's commands from heartbeat responses, run by type-specific handlers.

What is taken, in what order and on how many workers is command_admission.py's (shared with the
simulator); this module runs it on asyncio. Replication-type commands (long-running pushes) run on the
replication workers; every other command runs in arrival order on one worker, so a closeContainer never
overtakes the createPipeline before it. The per-type counts of queued and running commands go to SCM in
each heartbeat (commandQueueReport), which SCM uses for throttling.

For operators (metrics and the web UI) it counts the commands received and how each ended (succeeded,
failed, dropped) per type, and keeps the last RECENT outcomes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass

from pyozone.datanode.command_admission import (
    REPLICATION_TYPES,
    CommandAdmission,
    QueueLimits,
    WaitingCommands,
)
from pyozone.hdds.commands import SCMCommand
from pyozone.hdds.states import SCMCommandType

log = logging.getLogger(__name__)

__all__ = ["CommandHandler", "CommandOutcome", "CommandQueue", "QueueLimits"]

RECENT = 200
"""How many outcomes the queue remembers for the web UI."""
SUCCEEDED, FAILED, DROPPED = "succeeded", "failed", "dropped"


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """How one command ended: `result` SUCCEEDED, FAILED (its handler raised) or DROPPED (refused: expired,
    stale term, queue full, no handler); `seconds` is its run time (0 for a dropped one)."""

    type: SCMCommandType
    command_id: int
    result: str
    at_ms: int
    seconds: float = 0.0
    reason: str = ""


class CommandHandler:
    """Runs one command type. Hooks let a handler report status for commands it never runs."""

    async def handle(self, command: SCMCommand) -> None:
        raise NotImplementedError

    def on_queued(self, command: SCMCommand) -> None:
        """The command was accepted (deleteBlocks reports PENDING here)."""

    def on_dropped(self, command: SCMCommand, reason: str) -> None:
        """The command will not run (expired, stale term, queue full)."""


class _Lane:
    """Commands run by at most `workers` tasks, lowest (priority, arrival) first."""

    def __init__(self, name: str, workers: int, run: Callable[[SCMCommand], Awaitable[None]]) -> None:
        self.name = name
        self.workers = workers
        self._run = run
        self.waiting = WaitingCommands()
        self._running: dict[asyncio.Task[None], SCMCommand] = {}
        self._closed = False

    def push(self, command: SCMCommand) -> None:
        self.waiting.push(command)
        self._pump()

    def resize(self, workers: int) -> None:
        """Running commands finish; the new size applies to the next ones started."""
        self.workers = workers
        self._pump()

    def commands(self) -> Iterator[SCMCommand]:
        """Waiting and running."""
        yield from self.waiting
        yield from self._running.values()

    def _pump(self) -> None:
        while not self._closed and self.waiting and len(self._running) < self.workers:
            command = self.waiting.pop()
            task = asyncio.get_running_loop().create_task(
                self._run(command), name=f"{self.name}-{command.id}"
            )
            self._running[task] = command
            task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._running.pop(task, None)
        self._pump()

    async def close(self, grace_s: float) -> None:
        """Abandons waiting commands; running ones get `grace_s` to finish, then are cancelled."""
        self._closed = True
        if self.waiting:
            log.warning("%s: abandoning %d queued commands at shutdown", self.name, len(self.waiting))
            self.waiting.clear()
        running = list(self._running)
        if not running:
            return
        _, late = await asyncio.wait(running, timeout=grace_s)
        for task in late:
            log.warning("%s: cancelling %s at shutdown", self.name, self._running.get(task))
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)


class CommandQueue:
    def __init__(
        self,
        handlers: Mapping[SCMCommandType, CommandHandler],
        limits: QueueLimits,
        out_of_service: bool = False,
        now_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
    ) -> None:
        self._handlers = dict(handlers)
        self.admission = CommandAdmission(limits, self._handlers, out_of_service)
        self._now_ms = now_ms
        self._commands = _Lane("commands", 1, self._execute)
        self._replication = _Lane("replication", self.admission.replication_workers, self._execute)
        self.received: Counter[SCMCommandType] = Counter()
        self.outcomes: Counter[tuple[SCMCommandType, str]] = Counter()
        self.recent: deque[CommandOutcome] = deque(maxlen=RECENT)

    # ------------------------------------------------------------------ configuration
    @property
    def max_term(self) -> int:
        return self.admission.max_term

    @property
    def replication_workers(self) -> int:
        return self._replication.workers

    @property
    def replication_queue_limit(self) -> int:
        return self.admission.replication_queue_limit

    def set_out_of_service(self, out_of_service: bool) -> None:
        """Decommissioning / maintenance: more replication streams and a longer queue
        (ReplicationSupervisor)."""
        self.admission.out_of_service = out_of_service
        workers = self.admission.replication_workers
        if workers != self._replication.workers:
            log.info("replication workers: %d -> %d", self._replication.workers, workers)
        self._replication.resize(workers)

    def observe_term(self, term: int) -> None:
        self.admission.observe_term(term)

    # ------------------------------------------------------------------ submission
    def submit(self, command: SCMCommand) -> bool:
        """Queues a command; False (and the handler's on_dropped) if it is not to run."""
        self.received[command.type] += 1
        handler = self._handlers.get(command.type)
        if handler is None:
            log.warning("no handler for %s (id %d); dropped", command.type.name, command.id)
            self._ended(command, DROPPED, reason="no handler for its type")
            return False
        lane = self._replication if command.type in REPLICATION_TYPES else self._commands
        reason = self.admission.refusal(command, self._now_ms(), lane.waiting)
        if reason:
            log.warning("dropped %s (id %d): %s", command.type.name, command.id, reason)
            handler.on_dropped(command, reason)
            self._ended(command, DROPPED, reason=reason)
            return False
        handler.on_queued(command)
        lane.push(command)
        return True

    async def _execute(self, command: SCMCommand) -> None:
        handler = self._handlers[command.type]
        reason = self.admission.refusal_at_start(command, self._now_ms())
        if reason:
            log.warning("dropped %s (id %d): %s", command.type.name, command.id, reason)
            handler.on_dropped(command, reason)
            self._ended(command, DROPPED, reason=reason)
            return
        started = time.perf_counter()
        try:
            await handler.handle(command)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.exception("%s (id %d) failed", command.type.name, command.id)
            self._ended(command, FAILED, time.perf_counter() - started, f"{type(e).__name__}: {e}")
        else:
            self._ended(command, SUCCEEDED, time.perf_counter() - started)

    def _ended(self, command: SCMCommand, result: str, seconds: float = 0.0, reason: str = "") -> None:
        self.outcomes[command.type, result] += 1
        self.recent.append(CommandOutcome(command.type, command.id, result, self._now_ms(), seconds, reason))

    # ------------------------------------------------------------------ reporting and shutdown
    def counts(self) -> dict[SCMCommandType, int]:
        """Queued + running commands of every handled type, zeros included."""
        return self.admission.counts(self._queued_and_running())

    def queue_report(self) -> dict[SCMCommandType, int]:
        """What the heartbeat's commandQueueReport tells SCM (CommandAdmission.queue_report)."""
        return self.admission.queue_report(self._queued_and_running())

    def _queued_and_running(self) -> list[SCMCommand]:
        return [*self._commands.commands(), *self._replication.commands()]

    async def close(self, grace_s: float) -> None:
        await asyncio.gather(self._commands.close(grace_s), self._replication.close(grace_s))
