"""A new leader's services wait hdds.scm.wait.time.after.safemode.exit from when it became the ready leader,
not only from safe mode's exit (Ozone's lastTimeToBeReadyInMillis): its pending replica operations start
empty, so repairing at once would copy again what the deposed leader's pushes are copying (issue 31's
replication storm, `tests/scm_ha_sim.py` invariant 8)."""

from __future__ import annotations

from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import ManualClock
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.ha.replication import ScmReplication
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import TABLE_NAMES, MemoryBackend, SCMMetadataStore

WAIT_MS = 30_000


def core(context: ScmContext, clock: ManualClock) -> StorageContainerManager:
    conf = OzoneConfiguration({"hdds.scm.wait.time.after.safemode.exit": f"{WAIT_MS // 1000}s"})
    scm = StorageContainerManager(
        ScmSettings.from_conf(conf), clock, SCMMetadataStore(MemoryBackend(TABLE_NAMES)), context=context
    )
    scm.safe_mode.force_exit()
    return scm


def test_a_follower_that_left_safe_mode_long_ago_waits_once_it_leads() -> None:
    clock = ManualClock()
    follower = core(ScmContext.ha_follower(1, "scm1"), clock)
    clock.advance(10 * WAIT_MS)
    assert not follower.services_ready()  # not the leader
    ScmReplication(follower).step_up(2)
    assert follower.leader_ready_at_ms == clock.now_ms()
    clock.advance(WAIT_MS - 1)
    assert not follower.services_ready()
    clock.advance(1)
    assert follower.services_ready()


def test_a_lone_scm_waits_from_safe_mode_exit_only() -> None:
    clock = ManualClock()
    lone = core(ScmContext.standalone(), clock)
    clock.advance(WAIT_MS - 1)
    assert not lone.services_ready()
    clock.advance(1)
    assert lone.services_ready()
