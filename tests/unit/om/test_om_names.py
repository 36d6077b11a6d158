"""Ozone's name rules for volumes, buckets (strict S3 mode) and keys."""

from __future__ import annotations

import pytest

from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.names import check_bucket_name, check_key_name, check_volume_name


@pytest.mark.parametrize("name", ["abc", "vol-1", "a.b.c", "x" * 63, "1bucket", "my-bucket.2024"])
def test_valid_resource_names(name: str) -> None:
    check_volume_name(name)
    check_bucket_name(name)


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("", "empty"),
        ("ab", "shorter than 3"),
        ("x" * 64, "longer than 63"),
        ("Vol1", "uppercase"),
        ("vol_1", "unsupported character"),
        (".vol", "start"),
        ("-vol", "start"),
        ("vol.", "end"),
        ("vol-", "end"),
        ("a..b", "two contiguous periods"),
        ("a.-b", "dash after a period"),
        ("a-.b", "period after a dash"),
        ("192.168.1.1", "IPv4"),
    ],
)
def test_invalid_resource_names_say_which_rule(name: str, rule: str) -> None:
    with pytest.raises(OMException) as volume:
        check_volume_name(name)
    assert volume.value.code is OMResultCode.INVALID_VOLUME_NAME
    assert rule in str(volume.value)
    assert str(volume.value).startswith("INVALID_VOLUME_NAME: ")
    with pytest.raises(OMException) as bucket:
        check_bucket_name(name)
    assert bucket.value.code is OMResultCode.INVALID_BUCKET_NAME


@pytest.mark.parametrize("name", ["k", "a/b/c", "dir/", "ключ", "with space", "a" * 1024, "brace{"])
def test_valid_key_names_without_the_character_check(name: str) -> None:
    check_key_name(name, check_characters=False)


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("", "empty"),
        ("a\x00b", "control"),
        ("a\nb", "control"),
        ("a\x7f", "control"),
        ("é" * 513, "1026 bytes"),
    ],
)
def test_invalid_key_names(name: str, rule: str) -> None:
    with pytest.raises(OMException) as error:
        check_key_name(name, check_characters=False)
    assert error.value.code is OMResultCode.INVALID_KEY_NAME
    assert rule in str(error.value)


@pytest.mark.parametrize("c", list('\\{}^><%~#|`[]"'))
def test_the_character_check_refuses_unsafe_characters(c: str) -> None:
    check_key_name(f"a{c}b", check_characters=False)
    with pytest.raises(OMException) as error:
        check_key_name(f"a{c}b", check_characters=True)
    assert error.value.code is OMResultCode.INVALID_KEY_NAME
    assert "ozone.om.keyname.character.check.enabled" in str(error.value)
