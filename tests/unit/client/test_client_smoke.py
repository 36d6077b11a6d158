from __future__ import annotations

import os


def test_put_get(client, cluster):
    data = os.urandom(50_000)
    info = client.put_key("vol", "bucket", "k", data)
    assert info.data_size == len(data)
    with client.read_key("vol", "bucket", "k") as r:
        assert r.readall() == data
