"""A plain HTTP /dbCheckpoint that answers what a test puts in its state, and the tar a packed checkpoint
streams as a file: the download and install tests of ratis_server/db_checkpoint.py and of OM's om.db."""

from __future__ import annotations

import http.server
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pyozone.ratis_server.db_checkpoint import CHECKPOINT_PATH, CHECKSUM_HEADER, PackedCheckpoint


def tar_of(packed: PackedCheckpoint) -> Path:
    """The tar /dbCheckpoint streams, as a file (as a follower downloads it)."""
    tar = packed.directory.parent / f"downloaded-{uuid.uuid4().hex}.tar"
    tar.write_bytes(b"".join(packed.chunks()))
    return tar


@contextmanager
def serving_state() -> Iterator[tuple[str, dict[str, bytes | str]]]:
    """An HTTP server answering `state["body"]` with `state["checksum"]` (and Content-Length `state["length"]`
    when set, to cut the body short), and its /dbCheckpoint URL."""
    state: dict[str, bytes | str] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = state["body"]
            assert isinstance(body, bytes)
            self.send_response(200)
            self.send_header(CHECKSUM_HEADER, str(state["checksum"]))
            self.send_header("Content-Length", str(state.get("length", len(body))))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{CHECKPOINT_PATH}", state
    finally:
        server.shutdown()
        server.server_close()
