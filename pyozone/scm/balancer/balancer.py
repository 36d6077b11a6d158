"""ContainerBalancer: the balancer's lifecycle on the leader, its iterations on SCM's clock, its state.

Ozone runs ContainerBalancerTask on a thread that sleeps between iterations; here `tick()` (each SCM
tick) moves the same run along on the injected clock: an iteration starts when due, selects its moves
a step per tick (iteration.py SELECTION_STEP, so no tick blocks SCM's loop for long), then waits until
every move ended or move.timeout passed; the next one starts
balancing.iteration.interval later. A run stops after `iterations` iterations, when no datanode is
outside the threshold any more (Ozone's "could not initialize" stop), when an iteration could move
nothing (CAN_NOT_BALANCE_ANY_MORE), or on `stop`.

Only the ready leader out of safe mode balances (Ozone's isValidSCMState): on a step-down
(`clear_leader_state`) or a return to safe mode the run stops without touching its persisted state.
That state, the run's configuration with shouldRun and nextIterationIndex (Ozone's
ContainerBalancerConfigurationProto under "ContainerBalancer" in statefulServiceConfig), is written
through the store, so an HA leader's write reaches the followers through the log like any other record;
a new leader, or a restarted SCM, finding shouldRun resumes at nextIterationIndex once its services are
ready (Ozone's notifyStatusChanged with its delayed start), and knows a stopped run stays stopped.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Any

from pyozone.hdds.balancer import (
    BalancerStartOptions,
    BalancerStartResult,
    BalancerStatusInfo,
    IterationResult,
    IterationStatus,
)
from pyozone.hdds.clock import Clock
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import ContainerID, DatanodeID
from pyozone.hdds.store.codec import JsonCodec, StrKeyCodec
from pyozone.scm.balancer.config import (
    ContainerBalancerConfiguration,
    InvalidContainerBalancerConfigurationError,
)
from pyozone.scm.balancer.iteration import SELECTION_STEP, BalancerIteration, eligible_usages
from pyozone.scm.balancer.metrics import ContainerBalancerMetrics
from pyozone.scm.balancer.move_manager import MoveDataNodePair, MoveManager, MoveResult
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.store import SCMMetadataStore

if TYPE_CHECKING:
    from pyozone.scm.container.manager import ContainerManager
    from pyozone.scm.node.node_manager import NodeManager
    from pyozone.scm.replication.manager import ReplicationManager
    from pyozone.scm.settings import ScmSettings

log = logging.getLogger(__name__)

SERVICE_NAME = "ContainerBalancer"
"""The key of its record in statefulServiceConfig (Ozone's getServiceName)."""
HISTORY_LIMIT = 50
"""Finished iterations SCM keeps for `status -v -H` (Ozone keeps them all: a run with `-i -1` may never
end)."""
STATUS_TRANSFERS = 60_000
"""Datanode transfers (one datanode's bytes entering or leaving in one iteration, about 46 bytes on the
wire) a status answer carries at most: the newest iterations that fit, some 2.8 MB, inside the admin
channel's 4 MiB answer (hdds/limits.py MAX_ADMIN_MESSAGE_BYTES; Ozone's Hadoop RPC takes 128 MB)."""
COMPLETED = "Completed all iterations."
"""The stop reason of a run that ran its iterations (ContainerBalancerTask's)."""


def not_initialized(index: int) -> str:
    """The stop reason of a run whose next iteration finds no datanode outside the threshold."""
    return f"Could not initialize ContainerBalancer's iteration number {index}"


def _newest_within(statuses: list[IterationStatus], transfers: int) -> tuple[IterationStatus, ...]:
    """The newest of `statuses` whose datanode transfers add up to at most `transfers` (the newest one
    always), oldest first."""
    kept: list[IterationStatus] = []
    for status in reversed(statuses):
        transfers -= len(status.size_entering) + len(status.size_leaving)
        if kept and transfers < 0:
            break
        kept.append(status)
    return tuple(reversed(kept))


class ContainerBalancerStatus(Enum):
    """ContainerBalancerTask.Status."""

    RUNNING = "RUNNING"
    STOPPING = "STOPPING"
    STOPPED = "STOPPED"


class IllegalContainerBalancerStateError(SCMException):
    """Ozone's IllegalContainerBalancerStateException: start or stop asked at the wrong time."""

    def __init__(self, message: str) -> None:
        super().__init__(message, ResultCode.INTERNAL_ERROR)


class ContainerBalancer:
    def __init__(
        self,
        settings: ScmSettings,
        clock: Clock,
        store: SCMMetadataStore,
        context: ScmContext,
        nodes: NodeManager,
        containers: ContainerManager,
        replication: ReplicationManager,
        in_safe_mode: Callable[[], bool],
        services_ready: Callable[[], bool],
    ) -> None:
        self.default_config = settings.balancer
        self.config = self.default_config
        self._container_size = settings.container.size_bytes
        self._datanode_offset_ms = settings.replication.event_timeout_datanode_offset_ms
        self._clock = clock
        self._context = context
        self._nodes = nodes
        self._containers = containers
        self._rm = replication
        self._in_safe_mode = in_safe_mode
        self._services_ready = services_ready
        self._table = store.table("statefulServiceConfig", StrKeyCodec(), JsonCodec())
        self.metrics = ContainerBalancerMetrics()
        self.run_metrics = ContainerBalancerMetrics()
        """The same counters over the current (or last) run only: the simulator's rows and `analytics
        balance` total a run, and `history` keeps only its latest iterations."""
        self.moves = MoveManager(clock, nodes, containers, replication)
        self.moves.listener = self._on_move_result
        self.status = ContainerBalancerStatus.STOPPED
        self.iteration: BalancerIteration | None = None
        self.history: deque[IterationStatus] = deque(maxlen=HISTORY_LIMIT)
        """The finished iterations of the current (or last) run, for `status -v`: the latest
        HISTORY_LIMIT (a run with `-i -1` may never end)."""
        self.next_index = 0
        self._next_iteration_ms = 0
        self._moves_deadline_ms = 0
        self.started_at_ms: int | None = None
        self.stopped_at_ms: int | None = None
        self.stop_reason: str | None = None
        self.usage_at_start: dict[DatanodeID, float] = {}
        """Each balanced datanode's utilization when the run started (the web UI's "before")."""
        self._unresumable: dict[str, Any] | None = None
        self.selection_step = SELECTION_STEP
        """Containers the selection lists or checks per tick (iteration.py)."""

    # ------------------------------------------------------------------ the operator's calls
    def start(self, config: ContainerBalancerConfiguration | None = None) -> None:
        """`containerbalancer start` (Ozone's startBalancer): validates the state and the configuration,
        persists it with shouldRun, and runs from the first iteration."""
        self._validate_eligibility()
        if self.status is not ContainerBalancerStatus.STOPPED:
            raise IllegalContainerBalancerStateError(
                "Expect ContainerBalancer as not running state, but running state is actually "
                + self.status.name
            )
        config = config or self.default_config
        config.validate(self._container_size, self._datanode_offset_ms)
        self._validate_node_lists(config)
        self._save(config, should_run=True, index=0)
        self._run(config, 0)

    def stop(self) -> None:
        """`containerbalancer stop` (Ozone's stopBalancer): persists shouldRun false and stops the run."""
        self._validate_eligibility()
        self._save(self.config, should_run=False, index=0)
        self._stop_task("stopped by the operator")

    def start_balancer(self, options: BalancerStartOptions) -> BalancerStartResult:
        """startContainerBalancer as SCM answers it (SCMClientProtocolServer): the options over SCM's
        configuration; a refusal (state or configuration) is the answer's message, not an error."""
        try:
            self.start(self.default_config.with_start_options(options))
        except (IllegalContainerBalancerStateError, InvalidContainerBalancerConfigurationError) as e:
            message = e.args[0] if e.args else str(e)
            log.info("Container Balancer not started: %s", message)
            return BalancerStartResult(False, message)
        return BalancerStartResult(True)

    def status_info(self) -> BalancerStatusInfo:
        """getContainerBalancerStatusInfo: the run's start, configuration and iterations while it runs,
        and once it stopped also when and why (a run this SCM saw: none after a restart or a new leader
        that did not resume one)."""
        if self.started_at_ms is None:
            return BalancerStatusInfo(False)
        running = self.is_running()
        record = self.config.to_record(should_run=running, next_iteration_index=self.next_index)
        return BalancerStatusInfo(
            running,
            self.started_at_ms // 1000,
            record,
            _newest_within(self.iteration_statuses(), STATUS_TRANSFERS),
            None if running or self.stopped_at_ms is None else self.stopped_at_ms // 1000,
            None if running else self.stop_reason,
        )

    def is_running(self) -> bool:
        return self.status is ContainerBalancerStatus.RUNNING

    def iteration_statuses(self) -> list[IterationStatus]:
        """The run's finished iterations (the latest HISTORY_LIMIT), and the current one if under way
        (Ozone's getCurrentIterationsStatistic)."""
        current = [] if self.iteration is None else [self.iteration.status(self._clock.now_ms())]
        return [*self.history, *current]

    def persisted(self) -> dict[str, Any] | None:
        """The persisted record (None if no run was ever started)."""
        return self._table.get(SERVICE_NAME)

    # ------------------------------------------------------------------ leadership
    def clear_leader_state(self) -> None:
        """A step-down: the run stops here (its persisted state stays for the next leader), the moves
        were this leader's."""
        if self.status is not ContainerBalancerStatus.STOPPED:
            log.info("Stopping ContainerBalancer in this SCM: it no longer leads")
        self._halt("this SCM no longer leads")

    # ------------------------------------------------------------------ the run, on SCM's ticks
    def tick(self) -> None:
        """Moves the run along. A stopped Replication Manager (`replicationmanager stop`) pauses it too:
        its moves read the RM's container health and go through its command sender and pending ops."""
        if not self._eligible():
            if self.status is not ContainerBalancerStatus.STOPPED:
                log.info("Stopping ContainerBalancer in this SCM on status change")
                self._halt("SCM is not the ready leader, or is in safe mode")
            return
        if self.status is ContainerBalancerStatus.STOPPED:
            self._resume_if_persisted()
            return
        # the Replication Manager first takes in its own readiness (its pending-op table is reset then),
        # so no move's pending op is dropped after it was sent
        if not self._services_ready() or not self._rm.should_run():
            return
        self.moves.check()
        now = self._clock.now_ms()
        if self.iteration is None:
            if now >= self._next_iteration_ms:
                self._begin_iteration()
        elif self.iteration.selecting:
            self._select_step()
        elif self.iteration.moves_done() or now >= self._moves_deadline_ms:
            self._end_iteration()

    def _resume_if_persisted(self) -> None:
        """A new leader (or a restarted SCM) resumes a run its record says should run, once its services
        are ready (Ozone's delayed start)."""
        record = self.persisted()
        if record is None or not record["shouldRun"] or record == self._unresumable:
            return
        if not self._services_ready():
            return
        try:
            config = ContainerBalancerConfiguration.from_record(record)
            config.validate(self._container_size, self._datanode_offset_ms)
        except (ValueError, KeyError) as e:
            log.warning("Could not resume ContainerBalancer from its persisted configuration: %s", e)
            self._unresumable = record  # said once, not at every tick
            return
        log.info("Resuming ContainerBalancer at iteration %d", record["nextIterationIndex"] + 1)
        self._run(config, record["nextIterationIndex"])

    def _run(self, config: ContainerBalancerConfiguration, index: int) -> None:
        self.config = config
        self.moves.set_timeouts(config.move_timeout_ms, config.move_replication_timeout_ms)
        self.moves.clear()
        self.status = ContainerBalancerStatus.RUNNING
        self.history.clear()
        self.run_metrics = ContainerBalancerMetrics()
        self.iteration = None
        self.next_index = index
        self._next_iteration_ms = self._clock.now_ms()
        self.started_at_ms = self._clock.wall_ms()
        self.stopped_at_ms = None
        self.stop_reason = None
        self.usage_at_start = {u.datanode: u.utilization() for u in eligible_usages(self._nodes, config)}
        log.info("Starting ContainerBalancer at iteration %d: %s", index + 1, config)

    def _begin_iteration(self) -> None:
        if self.config.iterations_done(self.next_index):
            self._stop_with_save(COMPLETED)
            return
        self.moves.clear()  # Ozone's resetState
        iteration = BalancerIteration(
            self.next_index + 1,
            self.config,
            self._nodes,
            self._containers,
            self._rm,
            self.moves,
            self._clock.now_ms(),
        )
        self.metrics.num_datanodes_unbalanced = len(iteration.over) + len(iteration.under)
        self.metrics.data_size_unbalanced_bytes = iteration.unbalanced_bytes()
        if not iteration.unbalanced:
            log.info("Did not find any unbalanced Datanodes.")
            self._stop_with_save(not_initialized(self.next_index))
            return
        log.info(
            "Container Balancer has identified %d Over-Utilized and %d Under-Utilized Datanodes that need "
            "to be balanced.",
            len(iteration.over),
            len(iteration.under),
        )
        self.iteration = iteration
        self._select_step()

    def _select_step(self) -> None:
        """One tick's share of the selection (iteration.SELECTION_STEP); once it is over, the moves have
        move.timeout from then."""
        iteration = self.iteration
        if iteration is None or not iteration.select_step(self.selection_step):
            return
        self._moves_deadline_ms = self._clock.now_ms() + self.config.move_timeout_ms
        if iteration.result is IterationResult.CAN_NOT_BALANCE_ANY_MORE:
            self._end_iteration()

    def _end_iteration(self) -> None:
        iteration = self.iteration
        if iteration is None:
            return
        iteration.finish(interrupted=False)
        self.iteration = None
        self._iteration_ended(iteration.status(self._clock.now_ms()))
        log.info("Result of this iteration of Container Balancer: %s", self.history[-1])
        if iteration.result is IterationResult.CAN_NOT_BALANCE_ANY_MORE:
            self._stop_with_save(IterationResult.CAN_NOT_BALANCE_ANY_MORE.value)
            return
        self.next_index += 1
        if self.config.iterations_done(self.next_index):
            self._stop_with_save(COMPLETED)
            return
        self._save(self.config, should_run=True, index=self.next_index)
        self._next_iteration_ms = self._clock.now_ms() + self.config.balancing_interval_ms

    def _on_move_result(self, container_id: ContainerID, pair: MoveDataNodePair, result: MoveResult) -> None:
        if self.iteration is not None:
            self.iteration.on_move_result(container_id, result)
        if result is not MoveResult.COMPLETED:
            log.info(
                "Container move for container %d from %s to %s: %s",
                container_id,
                pair.source,
                pair.target,
                result.name,
            )

    # ------------------------------------------------------------------ stopping
    def _stop_with_save(self, reason: str) -> None:
        """Ozone's tryStopWithSaveConfiguration: the run is over for good."""
        log.info("Save Configuration for stopping. Reason: %s", reason)
        self._save(self.config, should_run=False, index=0)
        self._stop_task(reason)

    def _stop_task(self, reason: str) -> None:
        if self.iteration is not None:
            self.iteration.finish(interrupted=True)
            self._iteration_ended(self.iteration.status(self._clock.now_ms()))
        self._halt(reason)

    def _iteration_ended(self, status: IterationStatus) -> None:
        self.history.append(status)
        self.metrics.iteration_ended(status)
        self.run_metrics.iteration_ended(status)

    def _halt(self, reason: str) -> None:
        self.iteration = None
        self.moves.clear()
        if self.status is not ContainerBalancerStatus.STOPPED:
            self.stop_reason = reason
            self.stopped_at_ms = self._clock.wall_ms()
        self.status = ContainerBalancerStatus.STOPPED

    # ------------------------------------------------------------------ internals
    def _eligible(self) -> bool:
        return self._context.is_leader_ready() and not self._in_safe_mode()

    def _validate_eligibility(self) -> None:
        if not self._context.is_leader_ready():
            raise IllegalContainerBalancerStateError("SCM is not leader ready")
        if self._in_safe_mode():
            raise IllegalContainerBalancerStateError("SCM is in safe mode")

    def _validate_node_lists(self, config: ContainerBalancerConfiguration) -> None:
        """Ozone's validateNodeList, on `start` only (a resumed run's datanodes may not have registered
        yet): every included or excluded hostname or IP is a datanode SCM knows."""
        known = {
            name for info in self._nodes.nodes() for name in (info.details.hostname, info.details.ip_address)
        }
        for kind, names in (("included", config.include_datanodes), ("excluded", config.exclude_datanodes)):
            for name in sorted(names - known):
                raise InvalidContainerBalancerConfigurationError(
                    f"Invalid configuration: The {kind} datanode '{name}' does not exist or is not "
                    "registered with SCM. Please check the hostname/IP."
                )

    def _save(self, config: ContainerBalancerConfiguration, should_run: bool, index: int) -> None:
        self.config = config
        self._table.put(SERVICE_NAME, config.to_record(should_run, index))
