"""S3's PublicAccessBlockConfiguration (issue 33, item 5), from Amazon's PutPublicAccessBlock reference:
four booleans, each false when left out; anything else is MalformedXML; the kept form names all four."""

from __future__ import annotations

import pytest

from pyozone.hdds.s3_public_access import (
    NONE,
    PublicAccessBlock,
    PublicAccessBlockError,
    document,
    parse,
)

NS = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'


def test_settings_left_out_are_false_and_the_kept_form_names_all_four() -> None:
    body = f"<PublicAccessBlockConfiguration {NS}><BlockPublicPolicy>TRUE</BlockPublicPolicy>"
    body += "</PublicAccessBlockConfiguration>"
    block = parse(body.encode())
    assert block == PublicAccessBlock(BlockPublicPolicy=True)
    assert parse(document(block)) == block
    assert document(block).count(b"false") == 3
    assert parse(b"<PublicAccessBlockConfiguration/>") == NONE


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"<PublicAccessBlockConfiguration>",
        b"<Other><BlockPublicAcls>true</BlockPublicAcls></Other>",
        b"<PublicAccessBlockConfiguration><BlockPublicAcls>yes</BlockPublicAcls></PublicAccessBlockConfiguration>",
        b"<PublicAccessBlockConfiguration><BlockEverything>true</BlockEverything></PublicAccessBlockConfiguration>",
        b"<PublicAccessBlockConfiguration><BlockPublicAcls>true</BlockPublicAcls>"
        b"<BlockPublicAcls>false</BlockPublicAcls></PublicAccessBlockConfiguration>",
        b"<PublicAccessBlockConfiguration>text</PublicAccessBlockConfiguration>",
        b"<PublicAccessBlockConfiguration>" + b" " * 5000 + b"</PublicAccessBlockConfiguration>",
    ],
)
def test_anything_else_is_malformed(body: bytes) -> None:
    with pytest.raises(PublicAccessBlockError) as error:
        parse(body)
    assert error.value.code == "MalformedXML"
