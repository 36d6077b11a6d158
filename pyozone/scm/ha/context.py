"""ScmContext: whether this SCM leads its service, in which term, and whether it may act (Ozone's SCMContext).

The SCM core asks it before anything only a leader does: a command carries `term_of_leader()` (which a
follower cannot give: Ozone's NotLeaderException), a state change reported by a datanode is made by the
leader alone, and the leader-only services run once the leader is ready (Ozone's notifyLeaderReady: the
first entry of its term applied). A lone SCM is always the ready leader of term 0 (`standalone()`).

Sans-IO: the Raft glue (or a test, or the simulator) tells it what the Raft server decided.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from pyozone.hdds.exceptions import ResultCode, SCMException

log = logging.getLogger(__name__)


class ScmContext:
    def __init__(self, ha: bool, leader: bool, term: int, leader_ready: bool) -> None:
        self.ha = ha
        self._leader = leader
        self._term = term
        self._leader_ready = leader and leader_ready
        self._leader_id: str | None = None
        # a follower's catch-up (StateMachineReadyRule): the leader's commit index when it learned the leader,
        # and how far its own state machine has applied
        self._catch_up_target: int | None = None
        self._applied_index = 0
        self._ready_listeners: list[Callable[[], None]] = []
        self._ready_seen = self.state_machine_ready()

    @classmethod
    def standalone(cls) -> ScmContext:
        """A lone SCM (no ozone.scm.service.ids): the ready leader of term 0, for ever."""
        return cls(ha=False, leader=True, term=0, leader_ready=True)

    @classmethod
    def ha_leader(cls, term: int) -> ScmContext:
        """One SCM of a service that leads `term` and has applied the term's first entry."""
        return cls(ha=True, leader=True, term=term, leader_ready=True)

    @classmethod
    def ha_follower(cls, leader_term: int = 0, leader_id: str | None = None) -> ScmContext:
        """One SCM of a service following the leader of `leader_term` (0: no leader known yet)."""
        context = cls(ha=True, leader=False, term=leader_term, leader_ready=False)
        context._leader_id = leader_id
        return context

    # ------------------------------------------------------------------ queries
    def is_leader(self) -> bool:
        return self._leader

    def is_leader_ready(self) -> bool:
        """Leader, and the first entry of its term applied: its state is the service's (Ozone's
        isLeaderReady). The leader-only services run only then."""
        return self._leader_ready

    def term_of_leader(self) -> int:
        """The term a leader stamps on its commands; a follower has none to give (Ozone's getTermOfLeader
        throws NotLeaderException)."""
        if not self._leader:
            raise SCMException(self.not_leader_text(), ResultCode.SCM_NOT_LEADER)
        return self._term

    @property
    def known_term(self) -> int:
        """This SCM's term as leader, else the term of the leader it follows (0 when none): what a
        heartbeat response carries, so that any SCM tells a datanode which terms are past (the datanode's
        StateContext)."""
        return self._term

    @property
    def leader_id(self) -> str | None:
        """The leader a follower knows of, named in its refusals."""
        return self._leader_id

    def not_leader_text(self) -> str:
        suggested = f" Suggested leader is SCM:{self._leader_id}." if self._leader_id else ""
        return f"this SCM is not the leader (the leader's term is {self._term}).{suggested}"

    def state_machine_ready(self) -> bool:
        """StateMachineReadyRule's condition: the ready leader, or a follower whose
        applied index reached the leader's commit index captured when it learned the leader (no report
        is judged against a half-replayed container table)."""
        if self._leader:
            return self._leader_ready
        return self._catch_up_target is not None and self._applied_index >= self._catch_up_target

    # ------------------------------------------------------------------ what the Raft glue tells it
    def lead(self, term: int) -> None:
        """This SCM won `term`; not ready until the term's first entry is applied (`set_leader_ready`)."""
        self._set_term(term)
        self._leader, self._leader_ready, self._leader_id = True, False, None
        self._catch_up_target = None
        self._update_ready()

    def set_leader_ready(self) -> None:
        """Ozone's notifyLeaderReady: the first entry of this leader's term is applied."""
        if not self._leader:
            raise SCMException(self.not_leader_text(), ResultCode.SCM_NOT_LEADER)
        if not self._leader_ready:
            log.info("SCM is the ready leader of term %d", self._term)
        self._leader_ready = True
        self._update_ready()

    def follow(self, leader_term: int, leader_id: str | None, leader_commit: int | None) -> None:
        """This SCM follows the leader of `leader_term` (a step-down, or a leader learned), whose commit
        index it must apply up to before its state counts again (`leader_commit`; None while unknown)."""
        self._set_term(leader_term)
        self._leader, self._leader_ready, self._leader_id = False, False, leader_id
        self._catch_up_target = leader_commit
        self._update_ready()

    def applied(self, index: int) -> None:
        """The state machine applied the log up to `index`."""
        self._applied_index = max(self._applied_index, index)
        self._update_ready()

    def add_ready_listener(self, listener: Callable[[], None]) -> None:
        """Called each time `state_machine_ready()` becomes true (safe mode's STATEMACHINE_READY)."""
        self._ready_listeners.append(listener)

    def _set_term(self, term: int) -> None:
        if term < self._term:
            raise ValueError(f"terms only grow: {term} after {self._term}")
        self._term = term

    def _update_ready(self) -> None:
        ready = self.state_machine_ready()
        if ready and not self._ready_seen:
            if not self._leader:
                log.info(
                    "SCM caught up with the leader of term %d: applied %d of %s",
                    self._term,
                    self._applied_index,
                    self._catch_up_target,
                )
            for listener in self._ready_listeners:
                listener()
        self._ready_seen = ready
