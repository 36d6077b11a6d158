"""Requests that pyarrow's AWS C++ SDK sends, captured once per run (starting its S3 client costs ~0.5 s)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.unit.s3g.gateway_thread import GatewayOnThread, gateway_on_thread
from tests.unit.s3g.wire import ACCESS_KEY, REGION, SECRET, Captured, capture_server

PYARROW_KEYS = ["a b+c~=é@:$,;/x", "year=2026/part 0.parquet"]
PYARROW_BODY = b"hello" * 1000


@pytest.fixture(scope="session")
def pyarrow_requests() -> list[Captured]:
    """Per key: CreateMultipartUpload, UploadPart (aws-chunked with a checksum trailer), Complete, HEAD."""
    import pyarrow.fs

    with capture_server() as server:
        fs = pyarrow.fs.S3FileSystem(
            access_key=ACCESS_KEY,
            secret_key=SECRET,
            endpoint_override=f"127.0.0.1:{server.server_port}",
            scheme="http",
            region=REGION,
        )
        for key in PYARROW_KEYS:
            with fs.open_output_stream(f"bkt/{key}") as out:
                out.write(PYARROW_BODY)
            fs.get_file_info(f"bkt/{key}")
    return list(server.captured)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayOnThread]:
    """An OM and the S3 gateway on a thread, for one test module."""
    with gateway_on_thread(tmp_path_factory.mktemp("s3g")) as running:
        yield running
