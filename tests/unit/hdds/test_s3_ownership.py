"""OwnershipControls documents (hdds/s3_ownership.py), from Amazon's PutBucketOwnershipControls reference."""

from __future__ import annotations

import pytest

from pyozone.hdds.s3_ownership import (
    DEFAULT,
    ObjectOwnership,
    OwnershipControlsError,
    document,
    ownership,
    parse,
)


@pytest.mark.parametrize("value", list(ObjectOwnership))
def test_document_round_trips(value: ObjectOwnership) -> None:
    assert parse(document(value)) is value


def test_only_bucket_owner_enforced_disables_acls_and_is_the_default() -> None:
    assert DEFAULT is ObjectOwnership.BUCKET_OWNER_ENFORCED
    assert [v.acls_enabled for v in ObjectOwnership] == [False, True, True]


@pytest.mark.parametrize(
    "body",
    [
        b"<OwnershipControls/>",
        b"<OwnershipControls><Rule/></OwnershipControls>",
        b"<OwnershipControls><Rule><ObjectOwnership>Anyone</ObjectOwnership></Rule></OwnershipControls>",
        b"<Other><Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule></Other>",
        b"not xml",
        b"<OwnershipControls>" + b" " * 5000 + b"</OwnershipControls>",
    ],
)
def test_a_malformed_document_is_refused(body: bytes) -> None:
    with pytest.raises(OwnershipControlsError):
        parse(body)


def test_a_header_value_is_read_as_the_element_is() -> None:
    assert ownership(" ObjectWriter ") is ObjectOwnership.OBJECT_WRITER
    with pytest.raises(OwnershipControlsError):
        ownership("objectwriter")
