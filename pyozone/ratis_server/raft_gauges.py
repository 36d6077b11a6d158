"""The Raft gauges OM HA and SCM HA export on /prom, read from the member's /api/v1/ratis report when
scraped (om/server/ha.py `OmReplication.report`, scm/server/ha.py `ScmRaft.report`): one definition for
both services, each with its own names.

- the leader state (Ozone's OMHAMetrics OzoneManagerHALeaderState, SCMHAMetrics SCMHALeaderState): 1 on the
  member that leads and serves, else 0, labelled with `nodeid` and `leadernodeid`;
- PREFIX_ratis_role{role}: 1 for this member's Raft role (LEADER, FOLLOWER, CANDIDATE), 0 for the others;
- PREFIX_ratis_term, _last_index, _commit_index, _applied_index: this member's;
- PREFIX_ratis_follower_match_index{follower}, PREFIX_ratis_follower_lag{follower}: on the leader, each
  follower's match index and the entries it is behind (pyozone's names: Ratis's own ratis_* metrics are not
  modelled).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from pyozone.ratis.roles import RaftPeerRole

INDEXES = (("term", "term"), ("last_index", "lastIndex"), ("commit_index", "commitIndex"),
           ("applied_index", "appliedIndex"))  # fmt: skip
"""(metric suffix, report field) of the member's own numbers."""


@dataclass(frozen=True)
class RaftGauges:
    """A collector of one service's Raft gauges: `prefix` names them (`om`, `scm`), `leader_state` is the
    leader-state gauge's name, `service` the daemon's name in help texts, `report` the member's report."""

    prefix: str
    leader_state: str
    service: str
    report: Callable[[], dict[str, Any]]

    def collect(self) -> Iterator[Metric]:
        report = self.report()
        if not report.get("running"):
            return
        state = GaugeMetricFamily(
            self.leader_state,
            f"1 on the {self.service} that leads its service and serves calls, else 0",
            labels=["nodeid", "leadernodeid"],
        )
        state.add_metric([report["nodeId"], report["leader"] or ""], 1 if report["ready"] else 0)
        yield state
        role = GaugeMetricFamily(
            f"{self.prefix}_ratis_role", f"1 for this {self.service}'s Raft role, else 0", labels=["role"]
        )
        for each in RaftPeerRole:
            role.add_metric([each.name], 1 if report["role"] == each.name else 0)
        yield role
        for name, field in INDEXES:
            yield GaugeMetricFamily(
                f"{self.prefix}_ratis_{name}",
                f"this {self.service}'s Raft {name.replace('_', ' ')}",
                report[field],
            )
        match = GaugeMetricFamily(
            f"{self.prefix}_ratis_follower_match_index",
            "the last entry a follower is known to hold (on the leader)",
            labels=["follower"],
        )
        lag = GaugeMetricFamily(
            f"{self.prefix}_ratis_follower_lag",
            "entries a follower is behind (on the leader)",
            labels=["follower"],
        )
        for follower in report["followers"]:
            match.add_metric([follower["nodeId"]], follower["matchIndex"])
            lag.add_metric([follower["nodeId"]], follower["lag"])
        yield match
        yield lag
