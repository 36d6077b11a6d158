"""The data source's table URLs, hidden keys and save modes (no cluster, no Spark session)."""

from __future__ import annotations

import pytest

from pyozone.analytics.datasource import SaveMode, TableLocation, TableLocationError, parse_table_url
from pyozone.analytics.datasource.options import WriteSettings, save_mode


def test_table_urls() -> None:
    assert parse_table_url("ofs://om:9862/vol/bucket/table") == TableLocation(
        "om:9862", "vol", "bucket", "table"
    )
    nested = parse_table_url("ofs://om/vol/bucket/a/b/")
    assert nested == TableLocation("om", "vol", "bucket", "a/b")
    assert str(nested) == "ofs://om/vol/bucket/a/b"
    assert nested.job_prefix("j1") == "a/b/_temporary/j1/"


@pytest.mark.parametrize(
    "url",
    ["s3a://om/vol/bucket/t", "ofs:///vol/bucket/t", "ofs://om/vol/bucket", "ofs://om/vol/bucket/t?x=1", "t"],
)
def test_bad_table_urls(url: str) -> None:
    with pytest.raises(TableLocationError):
        parse_table_url(url)


def test_hidden_keys_are_not_data() -> None:
    table = TableLocation("om", "vol", "bucket", "t")
    assert table.is_data("t/part-00000.parquet") and table.is_data("t/year=2024/part-0.parquet")
    hidden = ["t/_SUCCESS", "t/_temporary/j/attempt-1/part-0.parquet", "t/.part-0.crc", "tx/part-0", "t"]
    assert not any(table.is_data(key) for key in hidden)


def test_save_modes() -> None:
    assert SaveMode.parse("Error") is SaveMode.ERROR_IF_EXISTS is SaveMode.parse("default")
    with pytest.raises(ValueError, match="unknown save mode"):
        SaveMode.parse("upsert")
    assert save_mode({}, overwrite=True) is SaveMode.OVERWRITE
    assert save_mode({"saveMode": "ignore"}, overwrite=False) is SaveMode.IGNORE
    with pytest.raises(ValueError, match="contradicts"):
        save_mode({"saveMode": "ignore"}, overwrite=True)


def test_write_settings() -> None:
    assert WriteSettings.from_options({"objectBytes": "1MB"}).object_bytes == 1 << 20
    with pytest.raises(ValueError, match="positive"):
        WriteSettings.from_options({"rowGroupBytes": "0"})
