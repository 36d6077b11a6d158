"""What the layer contracts promise at run time (docs/architecture.md): light imports stay light."""

from __future__ import annotations

import subprocess
import sys

import pytest


def loaded_after(module: str, watched: tuple[str, ...]) -> list[str]:
    """The watched top-level modules a fresh interpreter has loaded once it imported `module`."""
    code = f"import sys, {module}; print(' '.join(m for m in {watched!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return out.split()


@pytest.mark.parametrize(
    ("module", "absent"),
    [
        ("pyozone.client", ("grpc", "rocksdict", "pyarrow", "pyspark")),
        ("pyozone.scm.server.daemon", ("grpc", "pyarrow", "pyspark")),
        ("pyozone.om.server", ("grpc",)),
        ("pyozone.datanode.daemon", ("grpc",)),
        ("pyozone.s3g.daemon", ("grpc",)),
        ("pyozone.cli.main", ("grpc",)),
        ("pyozone.scm.scm", ("grpc", "asyncio", "socket", "pyozone.rpc", "rocksdict", "pyarrow")),
        ("pyozone.hdds.commands", ("grpc", "rocksdict", "pyarrow")),
    ],
)
def test_importing_a_layer_loads_nothing_it_must_not(module: str, absent: tuple[str, ...]) -> None:
    assert loaded_after(module, absent) == []
