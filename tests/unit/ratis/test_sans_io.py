"""The Raft core loads no I/O at run time (the import-linter contract checks the imports themselves)."""

import subprocess
import sys


def test_importing_the_core_loads_no_event_loop_socket_thread_store_or_rpc():
    watched = (
        "asyncio",
        "socket",
        "threading",
        "rocksdict",
        "grpc",
        "pyozone.rpc",
        "pyozone.proto",
        "pyozone.hdds.clock",
    )
    code = f"import sys, pyozone.ratis.server; print(' '.join(m for m in {watched!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == []
