"""What the layer contracts promise at run time (docs/architecture.md): light imports stay light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

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


REPO = Path(__file__).resolve().parents[1]
CORES = {
    # package: its edge (reads the configuration, builds the settings) and its shell, both left out
    "pyozone/scm": ("pyozone/scm/server/", "pyozone/scm/store/", "pyozone/scm/settings.py"),
    "pyozone/om": ("pyozone/om/server/", "pyozone/om/settings.py"),
    "pyozone/datanode": ("pyozone/datanode/daemon.py", "pyozone/datanode/settings.py"),
}
CONFIG_NAMES_ALLOWED = {
    ("pyozone.config.validate", "Rule"),  # the type of a settings group's rules table
    ("pyozone.config.keys", "KEYS_BY_NAME"),  # om/replication.py: a key's registered default, written once
    ("pyozone.config.dirs", "private_dir"),  # datanode/storage/volume.py: mkdir and chmod, no key read
}


def core_files() -> list[Path]:
    return [
        path
        for package, edge in CORES.items()
        for path in sorted((REPO / package).rglob("*.py"))
        if not str(path.relative_to(REPO)).startswith(edge)
    ]


@pytest.mark.parametrize("path", core_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_a_core_module_takes_settings_never_the_configuration(path: Path) -> None:
    """The import-linter contracts skip imports for annotations: this also catches a core that takes an
    `OzoneConfiguration` it names only under TYPE_CHECKING (issue 34: the configuration is read at the
    edge)."""
    tree = ast.parse(path.read_text(), str(path))
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert "OzoneConfiguration" not in names
    imported = {
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pyozone.config")
        for alias in node.names
    }
    assert imported <= CONFIG_NAMES_ALLOWED
    plain = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name.startswith("pyozone.config")
    ]
    assert plain == []
