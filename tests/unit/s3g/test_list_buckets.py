"""S3's ListBuckets lists the caller's buckets, at most max-buckets (1000) at once, with a continuation
token and a prefix (issue 28, defect 8: it listed every user's buckets and ignored MaxBuckets)."""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Any

import pytest

from pyozone.hdds.security.acl import OzoneAcl, ResourceType
from pyozone.om.core import OzoneManager
from pyozone.om.properties import PropertyManager
from pyozone.protocol.acl import ObjectPath
from tests.unit.s3g.gateway_harness import with_users

ACLS_ON = {"ozone.acl.enabled": "true", "ozone.administrators": getpass.getuser()}


def s3_for_everyone(om: OzoneManager) -> None:
    """Anyone may make buckets in s3v (as an administrator grants with `volume addacl -a world::rwl`)."""
    world = OzoneAcl.parse("world::rwl")
    PropertyManager(om).change_acls(ObjectPath(ResourceType.VOLUME, "s3v"), lambda acls: (*acls, world))


def names(reply: dict[str, Any]) -> list[str]:
    return [b["Name"] for b in reply["Buckets"]]


@pytest.mark.parametrize("om_settings", [ACLS_ON, {}], ids=["acls", "no-acls"])
def test_list_buckets_shows_only_the_callers_buckets(tmp_path: Path, om_settings: dict[str, str]) -> None:
    def calls(s3: dict[str, Any]) -> None:
        for user, buckets in (("alice", ("a-1", "a-2", "a-3")), ("bob", ("b-1",))):
            for bucket in buckets:
                s3[user].create_bucket(Bucket=bucket)
        assert names(s3["alice"].list_buckets()) == ["a-1", "a-2", "a-3"]
        assert names(s3["bob"].list_buckets()) == ["b-1"]
        assert s3["bob"].list_buckets()["Owner"]["ID"] == "bob"

        first = s3["alice"].list_buckets(MaxBuckets=2)
        assert names(first) == ["a-1", "a-2"]
        rest = s3["alice"].list_buckets(MaxBuckets=2, ContinuationToken=first["ContinuationToken"])
        assert names(rest) == ["a-3"] and "ContinuationToken" not in rest
        assert names(s3["alice"].list_buckets(Prefix="a-2")) == ["a-2"]
        assert s3["alice"].list_buckets(Prefix="a-2")["Prefix"] == "a-2"
        assert names(s3["alice"].list_buckets(BucketRegion="us-east-1")) == ["a-1", "a-2", "a-3"]
        assert names(s3["alice"].list_buckets(BucketRegion="eu-west-1")) == []

    with_users(tmp_path, ("alice", "bob"), calls, s3_for_everyone, om_settings)
