"""One iteration of the balancer (ContainerBalancerTask.initializeIteration and doIteration).

It reads every healthy, in-service datanode's usage (include/exclude.datanodes applied), finds the
cluster's average utilization and the datanodes over average + threshold (sources) and under average
- threshold (targets), then matches sources with targets container by container under the
iteration's limits: size.moved.max.per.iteration, size.leaving.source.max, size.entering.target.max,
and datanodes.involved.max.percentage.per.iteration (one datanode short of it only the targets already
chosen stay candidates; at it, only the sources and targets already chosen). Each match starts a move;
the results arrive later (`on_move_result`) and `status()` reports them, finished or not.

pyozone difference (docs/differences.md): Ozone considers only over- and under-utilized datanodes, so
a cluster whose only imbalance is a few empty datanodes (nothing over the upper limit) is never
balanced. With no over-utilized datanode, those within the threshold and above the average are the
sources (each down to the average at most); with no under-utilized one, those within and below the
average are the targets (each up to the average at most).
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import TYPE_CHECKING

from pyozone.hdds.balancer import IterationResult, IterationStatus
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.ids import ContainerID, DatanodeID
from pyozone.scm.balancer.config import ContainerBalancerConfiguration
from pyozone.scm.balancer.move_manager import MoveDataNodePair, MoveResult
from pyozone.scm.balancer.selection import ContainerBalancerSelectionCriteria
from pyozone.scm.balancer.strategies import FindSourceGreedy, FindTargetGreedyByUsageInfo
from pyozone.scm.balancer.usage import DatanodeUsage, average_utilization

if TYPE_CHECKING:
    from pyozone.scm.balancer.move_manager import MoveManager
    from pyozone.scm.container.manager import ContainerManager
    from pyozone.scm.node.node_manager import NodeManager
    from pyozone.scm.replication.manager import ReplicationManager

log = logging.getLogger(__name__)

SELECTION_STEP = 20_000
"""The selection's work per SCM tick: containers listed (a source's candidates, at its first visit)
or checked against the criteria, and targets tried for them, about 5 us each, and moves started,
MOVE_WORK each: some 100 ms of the event loop, as the Replication Manager's SCAN_STEP bounds its scan."""

MOVE_WORK = 30
"""A started (or refused) move in SELECTION_STEP's units: MoveManager.move runs the RM's check chain
twice, about 135 us, some 30 containers' worth (measured: without it a tick that started 2,791 moves ran
486 ms; with it every tick stayed within 53-142 ms)."""

_SOURCE_BACK = frozenset(
    {
        MoveResult.REPLICATION_FAIL_NOT_EXIST_IN_SOURCE,
        MoveResult.REPLICATION_FAIL_EXIST_IN_TARGET,
        MoveResult.REPLICATION_FAIL_CONTAINER_NOT_CLOSED,
        MoveResult.REPLICATION_FAIL_INFLIGHT_DELETION,
        MoveResult.REPLICATION_FAIL_INFLIGHT_REPLICATION,
    }
)
"""Immediate failures after which Ozone tries the source again (with another container)."""


def eligible_usages(nodes: NodeManager, config: ContainerBalancerConfiguration) -> list[DatanodeUsage]:
    """Healthy, in-service datanodes' usage, most used first, after include/exclude.datanodes. A
    datanode reporting no capacity (every data volume failed) is left out: Ozone's utilization 0 would
    make it the first target of moves that can only fail on it (R24 D6)."""
    usages = []
    for info in nodes.healthy_in_service():
        names = {info.details.hostname, info.details.ip_address}
        if names & config.exclude_datanodes:
            continue
        if config.include_datanodes and not names & config.include_datanodes:
            continue
        usage = DatanodeUsage.of(info)
        if usage.capacity > 0:
            usages.append(usage)
    usages.sort(key=lambda u: (-u.utilization(), u.datanode))
    return usages


class BalancerIteration:
    def __init__(
        self,
        number: int,
        config: ContainerBalancerConfiguration,
        nodes: NodeManager,
        containers: ContainerManager,
        replication: ReplicationManager,
        moves: MoveManager,
        started_ms: int,
    ) -> None:
        self.number = number
        self.config = config
        self._containers = containers
        self._rm = replication
        self._moves = moves
        self.started_ms = started_ms
        self.result: IterationResult | None = None
        self.usages = {u.datanode: u for u in eligible_usages(nodes, config)}
        self.average = average_utilization(self.usages.values())
        self.upper_limit = self.average + config.threshold_ratio
        self.lower_limit = self.average - config.threshold_ratio
        self.over = [u.datanode for u in self.usages.values() if u.utilization() > self.upper_limit]
        self.under = [u.datanode for u in self.usages.values() if u.utilization() < self.lower_limit]
        self.under.reverse()  # least used first
        self.sources = FindSourceGreedy(
            self.usages,
            config.max_size_leaving_source,
            self.lower_limit if self.over else self.average,
        )
        self.targets = FindTargetGreedyByUsageInfo(
            self.usages,
            config.max_size_entering_target,
            self.upper_limit if self.under else self.average,
            lambda cid, dn: containers.replica(cid, dn) is not None,
            self._placement_ok,
        )
        self.criteria = ContainerBalancerSelectionCriteria(
            nodes,
            containers,
            replication,
            moves.is_moving,
            self.sources.can_size_leave,
            config.exclude_containers,
            config.max_size_to_move_per_iteration,
        )
        self.selected_sources: set[DatanodeID] = set()
        self.selected_targets: set[DatanodeID] = set()
        self.container_to_pair: dict[ContainerID, MoveDataNodePair] = {}
        self.outstanding: dict[ContainerID, int] = {}  # moves under way -> their container's size
        self.size_scheduled = 0
        self.size_moved = 0
        self.scheduled = self.completed = self.failed = self.timed_out = 0
        self._selection: Generator[None, int | None, None] | None = None
        self._budget: int | None = None
        self._work = 0

    def unbalanced_bytes(self) -> int:
        """ContainerBalancerTask's dataSizeUnbalanced: the larger of the bytes the over-utilized datanodes
        hold above the upper limit and the bytes the under-utilized ones lack below the lower limit."""
        usages = self.usages
        over = sum(
            int(usages[dn].capacity * (usages[dn].utilization() - self.upper_limit)) for dn in self.over
        )
        under = sum(
            int(usages[dn].capacity * (self.lower_limit - usages[dn].utilization())) for dn in self.under
        )
        return max(over, under)

    @property
    def unbalanced(self) -> bool:
        """Ozone's initializeIteration found some datanode over or under the limits."""
        return bool(self.over or self.under)

    @property
    def datanodes_involved(self) -> int:
        return len(self.selected_sources) + len(self.selected_targets)

    def _max_datanodes(self) -> int:
        return int(self.config.max_datanodes_ratio * len(self.usages))

    def _placement_ok(self, container_id: ContainerID, source: DatanodeID, target: DatanodeID) -> bool:
        container = self._containers.find(container_id)
        if container is None:
            return False
        dns = [r.datanode for r in self._containers.replicas(container_id) if r.datanode != source]
        return self._rm.services.placement_status(container, [*dns, target]).satisfied

    # ------------------------------------------------------------------ selection (doIteration)
    def select(self) -> None:
        """Matches sources with targets and starts the moves, until a limit or the candidates run out
        (the whole selection at once: analytics balance, benchmarks and tests)."""
        while not self.select_step(None):
            pass

    def select_step(self, budget: int | None = SELECTION_STEP) -> bool:
        """Goes on with the selection until about `budget` units of its work were done (None: no
        bound); True once the selection is over. Ozone's ContainerBalancerTask selects on its own
        thread; SCM's loop selects a step per tick, as the Replication Manager's scan (SCAN_STEP)."""
        if self._selection is None:
            self._selection = self._selecting()
            next(self._selection)  # to its first `yield`, where it takes the budget
        try:
            self._selection.send(budget)
        except StopIteration:
            return True
        return False

    def _selecting(self) -> Generator[None, int | None, None]:
        """doIteration, pausing (yield) wherever the step's budget of work is used up."""
        self._budget = yield
        over = self.over or [
            u.datanode for u in self.usages.values() if self.average < u.utilization() <= self.upper_limit
        ]
        under = self.under or [
            u.datanode for u in self.usages.values() if self.lower_limit <= u.utilization() < self.average
        ]
        self.sources.reset(over)
        self.targets.reset(under)
        adapt_nearing = adapt_reaching = True
        generated = False
        while True:
            yield from self._pause()
            if self.size_scheduled >= self.config.max_size_to_move_per_iteration:
                break
            limit = self._max_datanodes()
            if adapt_nearing and self.datanodes_involved + 1 == limit:
                self.targets.restrict(self.selected_targets)
                adapt_nearing = False
            if adapt_reaching and self.datanodes_involved == limit:
                self.targets.restrict(self.selected_targets)
                self.sources.reset(self.selected_sources)
                adapt_reaching = adapt_nearing = False
            source = self.sources.next_candidate()
            if source is None:
                break
            match = yield from self._match(source)
            if match is not None:
                self._start(source, *match)
                generated = True
        if not generated:
            self.result = IterationResult.CAN_NOT_BALANCE_ANY_MORE

    def _pause(self) -> Generator[None, int | None, None]:
        """Yields to the next tick once this one's budget is used up; it brings the next budget."""
        if self._budget is not None and self._work >= self._budget:
            self._budget = yield
            self._work = 0

    def _match(
        self, source: DatanodeID
    ) -> Generator[None, int | None, tuple[ContainerInfo, DatanodeID] | None]:
        """matchSourceWithTarget: the source's first candidate container some target can take. Its work
        counts toward the step's budget: the containers listed (the source's first visit) and looked at,
        and the targets tried; it may pause between candidates (the source's list is its own meanwhile)."""
        excluded: set[ContainerID] = set()
        found = None
        scanned = 0
        if not self.criteria.listed(source):
            self._work += len(self.criteria.candidates(source))
        for cid in self.criteria.candidates(source):
            yield from self._pause()
            scanned += 1
            self._work += 1
            if self.criteria.should_be_excluded(cid, source, self.size_scheduled):
                excluded.add(cid)
                continue
            container = self._containers.get(cid)
            tried = self.targets.checked
            target = self.targets.find_target(cid, container.used_bytes, source)
            self._work += self.targets.checked - tried
            if target is not None:
                found = (container, target)
                break
        self.criteria.prune(source, scanned, excluded)
        return found

    def _start(self, source: DatanodeID, container: ContainerInfo, target: DatanodeID) -> None:
        cid = container.container_id
        self.scheduled += 1
        self._work += MOVE_WORK
        failure = self._moves.move(cid, source, target)
        if failure is not None:
            log.info("Container %d not moved from %s to %s: %s", cid, source, target, failure.name)
            self._count(failure)
            self.criteria.excluded.add(cid)
            if failure in _SOURCE_BACK:
                self.sources.add_back(source)
            return
        size = container.used_bytes
        self.outstanding[cid] = size
        self.criteria.excluded.add(cid)
        self.container_to_pair[cid] = MoveDataNodePair(source, target)
        self.selected_sources.add(source)
        self.selected_targets.add(target)
        self.size_scheduled += size
        self.sources.increase_size_leaving(source, size)
        self.targets.increase_size_entering(target, size)

    # ------------------------------------------------------------------ results
    def on_move_result(self, container_id: ContainerID, result: MoveResult) -> None:
        size = self.outstanding.pop(container_id, None)
        if size is None:
            return
        if result is MoveResult.COMPLETED:
            self.size_moved += size
        self._count(result)

    def _count(self, result: MoveResult) -> None:
        if result is MoveResult.COMPLETED:
            self.completed += 1
        elif result.timed_out:
            self.timed_out += 1
        else:
            self.failed += 1

    @property
    def selecting(self) -> bool:
        """The selection started and is not over yet."""
        return self._selection is not None and self._selection.gi_frame is not None

    def moves_done(self) -> bool:
        return not self.selecting and not self.outstanding

    def finish(self, interrupted: bool) -> None:
        """The iteration ends: moves still under way (move.timeout passed, or the balancer stopped) are
        given up and counted timed out (Ozone's cancelMovesThatExceedTimeoutDuration)."""
        for cid in list(self.outstanding):
            self._moves.cancel(cid)
            del self.outstanding[cid]
            self.timed_out += 1
        if interrupted:
            self.result = IterationResult.ITERATION_INTERRUPTED
        elif self.result is None:
            self.result = IterationResult.ITERATION_COMPLETED

    def status(self, now_ms: int) -> IterationStatus:
        return IterationStatus(
            self.number,
            self.result,
            (now_ms - self.started_ms) // 1000,
            self.scheduled,
            self.completed,
            self.failed,
            self.timed_out,
            self.size_scheduled,
            self.size_moved,
            self.datanodes_involved,
            {dn: size for dn, size in self.targets.size_entering.items() if size > 0},
            {dn: size for dn, size in self.sources.size_leaving.items() if size > 0},
        )
