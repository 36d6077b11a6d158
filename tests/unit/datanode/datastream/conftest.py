"""The EC data-path fixtures (a fake SCM holding EC containers, a dispatcher that asks it)."""

from tests.unit.datanode.xceiver.test_dns_ec import dispatcher, scm

__all__ = ["dispatcher", "scm"]
