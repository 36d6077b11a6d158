"""`pyozone admin om decommission` without the leader's answer (R9): the outcome is read back from the other
OMs' members in force, not taken for a failure."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from pyozone import rpc
from pyozone.cli.admin import om as om_cli
from pyozone.common.cli_options import CLIError
from pyozone.framework.om_admin import OmAdminError
from pyozone.protocol.om_admin import configuration_answer, decommission_answer, node_info

NODES = ("om1", "om2", "om3", "om4", "om5")


def _args() -> argparse.Namespace:
    overrides = [
        "ozone.om.service.ids=omservice",
        f"ozone.om.nodes.omservice={','.join(NODES)}",
        "ozone.om.decommissioned.nodes.omservice=om3",
        *(f"ozone.om.address.omservice.{node}=127.0.0.1:{9860 + i}" for i, node in enumerate(NODES)),
    ]
    return argparse.Namespace(
        service_id="omservice", node="om3", hostname=None, force=True, conf_dir=None, overrides=overrides
    )


def _admin(members: dict[str, tuple[str, ...] | None], leader: str | None = None) -> type:
    """An OmAdminClient whose OMs name `members` (None: down); `leader` answers the removal, else none."""

    class Admin:
        def __init__(self, nodes: Any, tls: Any = None) -> None:
            self.nodes = dict(nodes)

        def call_leader(self, *args: Any, **kwargs: Any) -> Any:
            if leader is not None:
                return leader, decommission_answer(7)
            raise OmAdminError(rpc.StatusCode.UNAVAILABLE, "no OM of the service took the call: ...")

        def configuration(self, node: str, timeout_s: float = 10) -> Any:
            seen = members.get(node)
            if seen is None:
                raise rpc.RpcError(rpc.StatusCode.UNAVAILABLE, f"failed to connect to {node}")
            in_memory = [node_info(m, "127.0.0.1", 0, 0, False) for m in seen]
            return configuration_answer(node, in_memory, [], True)

    return Admin


def test_a_removal_made_though_its_answer_was_lost_is_reported_made(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    after = ("om1", "om2", "om4", "om5")
    monkeypatch.setattr(om_cli, "OmAdminClient", _admin({"om1": after, "om2": after}))
    assert om_cli.run_decommission(_args()) == 0
    assert "Decommissioned OM om3" in capsys.readouterr().out


def test_a_removal_in_force_on_some_oms_only_is_reported_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    after = ("om1", "om2", "om4", "om5")
    monkeypatch.setattr(om_cli, "OmAdminClient", _admin({"om1": after, "om2": (*after, "om3")}))
    unknown = r"outcome unknown: .* OM\(s\) om1 no longer count om3 .* om2 still do"
    with pytest.raises(CLIError, match=unknown):
        om_cli.run_decommission(_args())


def test_a_removal_no_om_shows_is_reported_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(om_cli, "OmAdminClient", _admin({"om1": NODES}))
    with pytest.raises(CLIError, match=r"OM\(s\) om1 still count it as a member"):
        om_cli.run_decommission(_args())


def test_decommissioning_down_to_one_member_warns_that_the_service_runs_without_ha(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(om_cli, "OmAdminClient", _admin({"om1": ("om1",)}, leader="om1"))
    assert om_cli.run_decommission(_args()) == 0
    shown = capsys.readouterr()
    assert "Successfully decommissioned OM om3" in shown.out and "without high availability" in shown.err
    monkeypatch.setattr(om_cli, "OmAdminClient", _admin({"om1": ("om1", "om2")}, leader="om1"))
    assert om_cli.run_decommission(_args()) == 0
    assert "WARNING" not in capsys.readouterr().err
