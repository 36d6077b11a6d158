"""S3 secrets: created once per user and kept (also across a restart), revoked, and the SigV4 signing key
derived in OM (AWS's published example), with its inputs checked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import S3_SECRET_TABLE
from pyozone.proto import OmClientProtocol_pb2 as om_pb
from tests.unit.om.om_fakes import FakeScm, make_om


@pytest.fixture
def om(tmp_path: Path) -> OzoneManager:
    return make_om(tmp_path, FakeScm())


def code(call, *args) -> OMResultCode:
    with pytest.raises(OMException) as error:
        call(*args)
    return error.value.code


def test_a_secret_is_made_once_and_kept_across_a_restart(tmp_path: Path, om: OzoneManager) -> None:
    assert code(om.s3_secrets.get, "alice", False) is OMResultCode.S3_SECRET_NOT_FOUND
    made = om.s3_secrets.get("alice")
    assert made.access_id == "alice" and re.fullmatch(r"[0-9a-f]{64}", made.secret)
    assert om.s3_secrets.get("alice") == om.s3_secrets.get("alice", False) == made
    assert om.s3_secrets.get("bob").secret != made.secret
    om.store.close()
    again = make_om(tmp_path, FakeScm())
    assert again.s3_secrets.get("alice", False) == made


def test_revoke(om: OzoneManager) -> None:
    assert code(om.s3_secrets.revoke, "alice") is OMResultCode.S3_SECRET_NOT_FOUND
    first = om.s3_secrets.get("alice")
    om.s3_secrets.revoke("alice")
    assert code(om.s3_secrets.get, "alice", False) is OMResultCode.S3_SECRET_NOT_FOUND
    assert code(om.s3_secrets.signing_key, "alice", "20240101", "us-east-1", "s3") is (
        OMResultCode.S3_SECRET_NOT_FOUND
    )
    assert om.s3_secrets.get("alice").secret != first.secret


def test_the_signing_key_is_awss_derivation(om: OzoneManager) -> None:
    """AWS's example ("Examples of how to derive a signing key for Signature Version 4")."""
    secret = om_pb.S3Secret(kerberosID="AKIDEXAMPLE", awsSecret="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    om.store.write([(S3_SECRET_TABLE, "AKIDEXAMPLE", secret.SerializeToString())])
    key = om.s3_secrets.signing_key("AKIDEXAMPLE", "20120215", "us-east-1", "iam")
    assert key.hex() == "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d"


@pytest.mark.parametrize(
    ("access_id", "date", "region", "service"),
    [
        ("alice", "2024011", "us-east-1", "s3"),
        ("alice", "20241301", "us-east-1", "s3"),
        ("alice", "2024-1-01", "us-east-1", "s3"),
        ("alice", "20240101", "", "s3"),
        ("alice", "20240101", "us/east", "s3"),
        ("alice", "20240101", "r" * 65, "s3"),
        ("alice", "20240101", "us-east-1", "s" * 33),
        ("", "20240101", "us-east-1", "s3"),
        ("a\nb", "20240101", "us-east-1", "s3"),
    ],
)
def test_bad_scopes_are_refused(
    om: OzoneManager, access_id: str, date: str, region: str, service: str
) -> None:
    om.s3_secrets.get("alice")
    assert code(om.s3_secrets.signing_key, access_id, date, region, service) is OMResultCode.INVALID_REQUEST


def test_bad_user_names_are_refused(om: OzoneManager) -> None:
    for name in ("", " ", "  \u3000", "x" * 257, "tab\there"):  # blank: issue 28 defect 19d
        assert code(om.s3_secrets.get, name) is OMResultCode.INVALID_REQUEST
        assert code(om.s3_secrets.revoke, name) is OMResultCode.INVALID_REQUEST


@pytest.mark.parametrize("access_id", ["@EVIL.ORG", "/x", "/host@REALM", "alice@EVIL.ORG", "alice/b", "a b"])
def test_an_access_id_is_a_user_name(om: OzoneManager, access_id: str) -> None:
    """The access id is the user the gateway acts for (no Kerberos, no short name): an id that is not a
    valid user name gets no secret and no signing key; a secret an older OM stored for it can be revoked."""
    assert code(om.s3_secrets.get, access_id) is OMResultCode.INVALID_REQUEST
    secret = om_pb.S3Secret(kerberosID=access_id, awsSecret="s" * 64)
    om.store.write([(S3_SECRET_TABLE, access_id, secret.SerializeToString())])
    assert code(om.s3_secrets.signing_key, access_id, "20240101", "us-east-1", "s3") is (
        OMResultCode.INVALID_REQUEST
    )
    om.s3_secrets.revoke(access_id)
    assert om.store.get(S3_SECRET_TABLE, access_id) is None
