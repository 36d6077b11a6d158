"""The security protocol's converters: what crosses the wire comes back equal, and a bad field is named."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest

from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.hdds.security.x509 import CertRole
from pyozone.proto import ScmSecurityProtocol_pb2 as pb
from pyozone.protocol.security import (
    certificate_from_proto,
    role_from_proto,
    role_to_proto,
    secret_key_from_proto,
    secret_key_to_proto,
    serial_from_proto,
    uuid_from_proto,
)


def test_a_secret_key_survives_the_wire() -> None:
    key = ManagedSecretKey.generate(1_000, 60_000)
    wire = pb.ManagedSecretKey.FromString(secret_key_to_proto(key).SerializeToString())
    assert secret_key_from_proto(wire, "secretKey") == key


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        ({"id": ""}, "secretKey.id", "is missing"),
        ({"id": "not-a-uuid"}, "secretKey.id", "is not a UUID"),
        ({"algorithm": "MD5"}, "secretKey", "hdds.secret.key.algorithm"),
        ({"encoded": b"short"}, "secretKey", "at least 16 bytes"),
    ],
)
def test_a_bad_secret_key_names_its_field(change: dict, field: str, problem: str) -> None:
    proto = secret_key_to_proto(ManagedSecretKey.generate(0, 1))
    for name, value in change.items():
        setattr(proto, name, value)
    with pytest.raises(ProtocolError) as e:
        secret_key_from_proto(proto, "secretKey")
    assert e.value.field == field and problem in e.value.problem


@pytest.mark.parametrize("role", [*CertRole, None])
def test_every_role_and_none_survive_the_wire(role: CertRole | None) -> None:
    assert role_from_proto(role_to_proto(role), "role") is role


def test_roles_keep_ozones_node_type_numbers() -> None:
    assert (role_to_proto(CertRole.OM), role_to_proto(CertRole.SCM), role_to_proto(CertRole.DATANODE)) == (
        1,
        2,
        3,
    )
    assert role_to_proto(CertRole.S3G) == 5


def test_an_unknown_role_is_named() -> None:
    with pytest.raises(ProtocolError, match="role: unknown NodeType value 42"):
        role_from_proto(42, "role")


@pytest.mark.parametrize("text", ["", "-1", "12a", "1e3", "٣", "9" * 50])
def test_a_serial_is_a_decimal_number(text: str) -> None:
    with pytest.raises(ProtocolError) as e:
        serial_from_proto(text, "certSerialId")
    assert e.value.field == "certSerialId"


def test_a_serial_parses() -> None:
    assert serial_from_proto("12345678901234567890", "certSerialId") == 12345678901234567890


def test_uuid_round_trip_and_bad_input() -> None:
    value = uuid.uuid4()
    assert uuid_from_proto(str(value), "secretKeyId") == value
    with pytest.raises(ProtocolError, match="secretKeyId: 'x' is not a UUID"):
        uuid_from_proto("x", "secretKeyId")


def test_a_certificate_field_must_be_a_pem_certificate() -> None:
    key = X.generate_private_key()
    cert = X.self_signed_root(key, "CID-1", "SCM-1", "h", dt.timedelta(days=1), 1)
    pem = X.cert_to_pem(cert)
    assert certificate_from_proto(pem.decode(), "x509Certificate") == pem
    for bad, problem in (
        ("", "is missing"),
        ("-----BEGIN CERTIFICATE-----\nAAAA\n", "not a PEM certificate"),
    ):
        with pytest.raises(ProtocolError) as e:
            certificate_from_proto(bad, "x509Certificate")
        assert e.value.field == "x509Certificate" and problem in e.value.problem
