"""How long a key write keeps retrying: Ozone's count of retries, a backoff and a deadline; and how long its
commit waits out an unreachable OM.

A write whose pipeline died must outlast what the cluster is about to repair: SCM marks the dead datanode
stale, closes its pipelines and forms new ones, and until then it has no pipeline outside the writer's
exclude list. So a run of failures (failures with no data acknowledged in between) retries the first time
after ozone.client.retry.interval, as Ozone does (container closes cost nothing), then backs off
exponentially (hdds.ratis.client.exponential.backoff.base.sleep, capped at .max.sleep), and is over after
more than ozone.client.max.retries failed blocks or once it has lasted ozone.client.retry.deadline. Waiting
for SCM to have a pipeline is not a failed block: it only spends the deadline.

A key's commit comes after all its data is on the datanodes: failing it loses the write and orphans the
replicas. So commitKey waits out an OM that is unreachable or restarting as Ozone's OM failover proxy does,
up to ozone.client.failover.max.attempts attempts ozone.client.wait.between.retries.millis apart, and in
all for at most ozone.client.retry.deadline, which also cuts the attempt in progress short: an OM that
accepts connections but does not answer (stopped, hung) costs a whole call timeout per attempt, so the
count alone would hold a writer for hours (OmRetryPolicy). OM answers a repeated commit of the same
open-key session as the first one (KeyManager.committed_session in om/keys.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyozone.config.units import parse_duration_ms


@dataclass(frozen=True, slots=True)
class WriteRetryPolicy:
    max_retries: int
    interval_s: float
    backoff_base_s: float
    backoff_max_s: float
    deadline_s: float

    def delay(self, attempt: int) -> float:
        """The wait before retry `attempt` (1-based) of a run."""
        if attempt <= 1:
            return self.interval_s
        return min(self.backoff_base_s * 2 ** (attempt - 2), self.backoff_max_s)


@dataclass(frozen=True, slots=True)
class LeaderFailover:
    """How far a block's requests follow the leader a NOT_LEADER names inside their pipeline before the block
    fails (and is rewritten elsewhere): Ozone's Ratis client retries a write by
    hdds.ratis.client.multilinear.random.retry.policy, pairs of a sleep and a count ("5s, 5, 10s, 5, ...":
    5 retries about 5 s apart, then 5 about 10 s apart, ...). The first failover of a block goes at once (the
    named leader was just elected); each later one waits its pair's sleep (an election still moving)."""

    steps: tuple[tuple[float, int], ...]

    KEY = "hdds.ratis.client.multilinear.random.retry.policy"

    @classmethod
    def parse(cls, text: str) -> LeaderFailover:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        if len(parts) % 2:
            raise ValueError(f"{cls.KEY}: {text!r} is not pairs of a sleep and a count")
        steps = []
        for sleep, count in zip(parts[::2], parts[1::2], strict=True):
            if not count.isdigit():
                raise ValueError(f"{cls.KEY}: {count!r} is not a count of retries")
            steps.append((parse_duration_ms(sleep) / 1000, int(count)))
        return cls(tuple(steps))

    def delay(self, failover: int) -> float | None:
        """The wait before failover `failover` (1-based) of a block, or None when the policy has no more."""
        left = failover
        for sleep, count in self.steps:
            if left <= count:
                return 0.0 if failover == 1 else sleep
            left -= count
        return None


LEADER_FAILOVER = LeaderFailover.parse("5s, 5, 10s, 5, 15s, 5, 20s, 5, 25s, 5, 60s, 10")
"""Ozone's default hdds.ratis.client.multilinear.random.retry.policy."""


COMMIT_DEADLINE_S = 120.0
"""A commit's wait for OM when ozone.client.retry.deadline is unset. Ozone has no overall bound (its
failover proxy counts attempts, and each may last ozone.om.client.rpc.timeout, 15 min). An OM restart or
an HA failover is over in seconds to a minute (the fault probe's restart: 10-15 s); two minutes outlast it
several times, while an OM that stays away longer is an outage the caller should hear of (and may write
again) rather than a client hanging for a quarter of an hour or more."""


@dataclass(frozen=True, slots=True)
class OmRetryPolicy:
    """Attempts of an OM call that must not be lost while OM is unreachable (Ozone's
    ozone.client.failover.max.attempts, 500, and ozone.client.wait.between.retries.millis, 2 s; Ozone
    lengthens the wait on each retry of the same OM, pyozone keeps it fixed), all within `deadline_s`
    (ozone.client.retry.deadline) from the first attempt's start."""

    max_attempts: int
    wait_s: float
    deadline_s: float = COMMIT_DEADLINE_S

    def delay(self, attempt: int, remaining_s: float) -> float | None:
        """The wait after failed attempt `attempt` (1-based) with `remaining_s` of the deadline left, or
        None when it was the last (the count is spent, or the deadline has passed). A wait the deadline
        cuts short ends the retries at the deadline itself."""
        if attempt >= self.max_attempts or remaining_s <= 0:
            return None
        return min(self.wait_s, remaining_s)


class RetryRun:
    """One run of failures: what was tried, since when, and whether (and after how long) to try again."""

    def __init__(self, policy: WriteRetryPolicy, clock: Callable[[], float]) -> None:
        self._policy = policy
        self._clock = clock
        self._started = clock()
        self.tries: list[str] = []

    @property
    def elapsed_s(self) -> float:
        return self._clock() - self._started

    @property
    def remaining_s(self) -> float:
        return max(0.0, self._policy.deadline_s - self.elapsed_s)

    def fail(self, what: str, backoff: bool = True) -> float | None:
        """Records a failed block; the wait before the retry, or None when the run is over. `backoff`
        False: waiting would not help (a closed container: the next block goes elsewhere at once, as
        Ozone retries ContainerNotOpenException without a sleep)."""
        self.tries.append(what)
        retries = len(self.tries)
        if retries > self._policy.max_retries or self.remaining_s <= 0:
            return None
        return min(self._policy.delay(retries), self.remaining_s) if backoff else 0.0

    def summary(self) -> str:
        return f"{len(self.tries)} tries in {self.elapsed_s:.1f}s; tried: " + "; ".join(self.tries)
