"""`pyozone cluster up --scm-ha` with what it cannot combine with is refused before anything is planned or
started: a -D of a key it plans itself (each SCM's security port among them) and a data dir whose cluster
was made with one SCM."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pyozone.cluster.layout import plan_cluster
from tests.cli_support import Result


@pytest.mark.parametrize(
    ("flags", "error"),
    [
        (
            ("-D", "ozone.scm.service.ids=other"),
            "--scm-ha plans the SCM service itself: drop -D ozone.scm.service.ids",
        ),
        (("-D", "ozone.scm.names=127.0.0.1"), "drop -D ozone.scm.names"),
        (("-D", "ozone.scm.datanode.address=127.0.0.1:9861"), "drop -D ozone.scm.datanode.address"),
        (("-D", "ozone.scm.primordial.node.id=scm2"), "drop -D ozone.scm.primordial.node.id"),
        (
            ("-D", "ozone.scm.ratis.port.scmservice.scm2=9894", "-D", "ozone.scm.nodes.scmservice=a,b"),
            "drop -D ozone.scm.nodes.scmservice, ozone.scm.ratis.port.scmservice.scm2",
        ),
        (
            ("--secure", "-D", "ozone.scm.security.service.port.scmservice.scm1=9961"),
            "drop -D ozone.scm.security.service.port.scmservice.scm1",
        ),
        (
            ("--secure", "-D", "ozone.scm.security.service.address=127.0.0.1:9961"),
            "drop -D ozone.scm.security.service.address",
        ),
    ],
)
def test_scm_ha_with_what_it_cannot_combine_with_is_refused(
    cli: Callable[..., Result], tmp_path: Path, flags: tuple[str, ...], error: str
) -> None:
    data_dir = tmp_path / "refused"
    result = cli("cluster", "up", "--scm-ha", "--background", "--data-dir", str(data_dir), *flags)
    assert result.code == 1 and error in result.err, result
    assert not data_dir.exists()  # nothing planned, nothing started


def test_scm_ha_on_a_cluster_made_with_one_scm_is_refused(cli: Callable[..., Result], tmp_path: Path) -> None:
    plan_cluster(tmp_path / "lone", 1, 1, {}).save()
    result = cli("cluster", "up", "--scm-ha", "--background", "--data-dir", str(tmp_path / "lone"))
    assert result.code == 1 and "was made with one SCM; start it without --scm-ha" in result.err, result
