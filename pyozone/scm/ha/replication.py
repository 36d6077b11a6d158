"""ScmReplication: the sans-IO half of SCM HA's state machine (Ozone's SCMStateMachine).

The leader executes and the log carries the records its core wrote: the leader's store stages each
transaction (`SCMMetadataStore`, STAGING) and its memory runs ahead of the commit, as OM's table cache
does; nothing leaves it before its writes commit (answers wait for their epoch, commands are held by the
command barrier of `CommandQueue`). A follower runs no decision code: it applies the leader's records
and each record goes to its table's *record listener*, which brings the manager's memory to it
(certificates, JOIN tokens and the datanodeOpStates records keep nothing in a follower's memory). A
step-down undoes the uncommitted tail the same way: every key the tail touched goes back to its
committed record through the listeners (O(keys touched), not a reload), and what a leader alone keeps
is cleared.

The Raft glue (the daemon's, the simulator's) calls `seal` after each core input, submits the
transactions, and calls `own_applied` (leader) or `apply` (follower) as entries apply.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from pyozone.hdds.store.table import Op
from pyozone.scm.store.metadata_store import TRANSACTION_INFO_KEY, Transaction

if TYPE_CHECKING:
    from pyozone.scm.scm import StorageContainerManager

log = logging.getLogger(__name__)

RecordListener = Callable[[bytes, bytes | None], None]
"""(key, value or None when the record is gone), both as stored."""

# Pipelines before containers: a container's listener places it in its pipeline's set
_LISTENED = ("pipelines", "containers", "deletedBlocks", "sequenceId")


class ScmReplication:
    def __init__(self, scm: StorageContainerManager) -> None:
        self.scm = scm
        self.store = scm.store
        self.context = scm.context
        self._record_keys: dict[str, Callable[[], list[bytes]]] = {
            "pipelines": scm.pipelines.record_keys,
            "containers": scm.containers.record_keys,
            "deletedBlocks": scm.deleted_blocks.record_keys,
        }
        self._listeners: dict[str, RecordListener] = {
            "pipelines": scm.pipelines.record_changed,
            "containers": scm.containers.record_changed,
            "deletedBlocks": scm.deleted_blocks.record_changed,
            "sequenceId": lambda key, _: scm.sequence_ids.invalidate(key.decode()),
        }
        self.step_up_hooks: list[Callable[[], None]] = []
        """What else the ready leader does at a step-up, after the core (the CA: its own certificates
        recorded, a current secret key); their writes are the term's first."""
        if self.context.is_leader():
            self.store.stage()
        else:
            self.store.follow()

    # ------------------------------------------------------------------ the leader
    def seal(self) -> tuple[Transaction, ...]:
        """The transactions the core closed since the last seal, in epoch order (none on a follower)."""
        return self.store.seal()

    @property
    def epoch(self) -> int:
        """The epoch the last core call's writes belong to: its answer leaves once it applied."""
        return self.store.epoch

    def released(self, epoch: int) -> bool:
        """Whether an answer of `epoch` may leave: its writes have committed. Never for an epoch a
        step-down dropped, even once this SCM leads again (review R17 D3): its ids may be handed out by
        the next leader."""
        return self.store.committed(epoch)

    def own_applied(self, epoch: int, term: int, index: int) -> None:
        """The leader's log entry `term#index`, the last of its transactions up to `epoch`, applied: the
        staged records go to the backend with the transaction info, and what waited for them leaves."""
        self.store.own_applied(epoch, (self._transaction_info(term, index),))
        self.context.applied(index)

    # ------------------------------------------------------------------ a follower
    def apply(self, ops: Iterable[Op], term: int, index: int) -> None:
        """A follower applies the leader's entry `term#index`: one write, then every record to its
        listener in log order."""
        ops = list(ops)
        self.store.apply_committed([*ops, self._transaction_info(term, index)])
        self._notify((cf, key) for cf, key, _ in ops)
        self.context.applied(index)

    # ------------------------------------------------------------------ transitions
    def step_down(self, leader_term: int, leader_id: str | None, leader_commit: int | None, why: str) -> None:
        """This SCM no longer leads (NotLeader on a submit, a new term, an entry of another leader): the
        staged transactions are dropped, every key they touched returns to its committed record, and
        the leader-local state goes (Ozone's notifyNotLeader)."""
        touched = self.store.follow()
        log.warning(
            "SCM steps down (%s): %d uncommitted records undone; the leader of term %d is %s",
            why,
            len(touched),
            leader_term,
            leader_id,
        )
        self.context.follow(leader_term, leader_id, leader_commit)
        self._notify(touched)
        self._clear_leader_state()
        self.scm.nodes.follow_datanode_operational_states()

    def step_up(self, term: int) -> None:
        """This SCM leads `term` and applied the term's first entry (Ozone's notifyLeaderReady): sequence
        batches invalidated, leader-local state cleared, writes staged, the operational states of the
        records over those adopted from the datanodes, ALLOCATED pipelines' create commands sent again and
        the report handler's state rules replayed over the replicas recorded while following (its
        reconciliation pass); safe mode's rules re-read the records and are judged at once
        (SafeModeManager.reinitialize): block allocation waits on the exit. A follower counts an OPEN
        pipeline for HealthyPipelineSafeModeRule only from a pipeline report after the record that opened
        it (the next periodic one, a minute later): its OPEN pipelines every member reported count now."""
        self.context.lead(term)
        self._clear_leader_state()
        self.store.stage()
        self.context.set_leader_ready()
        self.scm.nodes.adopt_operational_state_records()
        self.scm.pipelines.resend_create_commands()
        self.scm.container_reports.drop_early_replicas()
        self.scm.container_reports.reconcile()
        self.scm.safe_mode.reinitialize()
        for hook in self.step_up_hooks:
            hook()
        log.info("SCM is the ready leader of term %d", term)

    def reload_all(self) -> None:
        """A follower installed a checkpoint of the leader's scm.db: every record in memory or in the
        new tables goes through its listener again (Ozone's reinitialize of each manager), and safe
        mode's rules re-read them."""
        keys = [
            (cf, key)
            for cf, record_keys in self._record_keys.items()
            for key in dict.fromkeys([*record_keys(), *(k for k, _ in self.store.items(cf))])
        ]
        self.scm.sequence_ids.invalidate()
        self._notify(keys)
        self.scm.safe_mode.reinitialize()
        log.info("SCM reloaded %d records from its installed scm.db", len(keys))

    # ------------------------------------------------------------------ internals
    def _notify(self, keys: Iterable[tuple[str, bytes]]) -> None:
        """Each key's record as it now stands (committed on a follower) to its listener; pipelines
        first, then the containers re-derive the pipelines' sets."""
        by_table: dict[str, dict[bytes, None]] = {}
        for cf, key in keys:
            by_table.setdefault(cf, {})[key] = None
        for cf in _LISTENED:
            for key in by_table.get(cf, ()):
                self._listeners[cf](key, self.store.get(cf, key))
        for key in by_table.get("pipelines", ()):
            self.scm.containers.pipeline_changed(self.scm.pipelines.record_id(key))

    def _clear_leader_state(self) -> None:
        scm = self.scm
        scm.sequence_ids.invalidate()
        scm.nodes.commands.clear()
        scm.close_containers.clear()
        scm.admin_monitor.clear()
        scm.replication.clear_leader_state()
        scm.balancer.clear_leader_state()
        scm.deleted_blocks.clear_leader_state()

    def _transaction_info(self, term: int, index: int) -> Op:
        table = self.store.transaction_infos
        return (
            table.name,
            table.key_codec.encode(TRANSACTION_INFO_KEY),
            table.value_codec.encode(f"{term}#{index}"),
        )
