"""pyozone/proto is exactly what scripts/gen_proto.py makes of proto/pyozone/*.proto."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]
REGENERATE = "run `python scripts/gen_proto.py` and commit pyozone/proto"


def load_gen_proto() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_proto", ROOT / "scripts" / "gen_proto.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_proto", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gen_proto() -> ModuleType:
    return load_gen_proto()


@pytest.fixture(scope="module")
def generated(gen_proto: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("generated")
    gen_proto.generate(out)
    return out


def test_every_generated_file_is_committed_and_current(gen_proto: ModuleType, generated: Path) -> None:
    fresh = gen_proto.generated_files(generated)
    committed = gen_proto.generated_files(gen_proto.TARGET_DIR)
    versions = gen_proto.generator_versions()
    assert sorted(fresh) == sorted(committed), (
        f"pyozone/proto is missing {sorted(fresh.keys() - committed.keys())} and has extra "
        f"{sorted(committed.keys() - fresh.keys())}: {REGENERATE} ({versions})"
    )
    stale = [name for name in sorted(fresh) if fresh[name].read_bytes() != committed[name].read_bytes()]
    assert not stale, (
        f"pyozone/proto/{{{','.join(stale)}}} out of date with proto/: {REGENERATE} ({versions})"
    )


def test_one_module_set_per_proto_file(gen_proto: ModuleType, generated: Path) -> None:
    stems = {p.stem for p in gen_proto.proto_files()}
    expected = {f"{s}{suffix}" for s in stems for suffix in gen_proto.GENERATED_SUFFIXES} | {"__init__.py"}
    assert set(gen_proto.generated_files(generated)) == expected


def test_generation_is_deterministic(gen_proto: ModuleType, generated: Path, tmp_path: Path) -> None:
    gen_proto.generate(tmp_path)
    assert gen_proto.compare(tmp_path, generated) == []


def test_imports_are_package_relative(generated: Path) -> None:
    for path in sorted(generated.iterdir()):
        text = path.read_text(encoding="utf-8")
        assert "\nimport hdds_pb2" not in text and "\nfrom pyozone import " not in text, path.name
    assert "from pyozone.proto import hdds_pb2" in (generated / "ScmAdminProtocol_pb2.py").read_text()


def test_check_mode_reports_staleness(gen_proto: ModuleType, generated: Path, tmp_path: Path) -> None:
    """--check DIR exits 0 when fresh, and names a stale file otherwise."""
    assert gen_proto.main(["--check", str(tmp_path / "fresh")]) == 0
    (generated / "hdds_pb2.py").write_text("# edited by hand\n")
    problems = gen_proto.compare(generated)
    assert problems == [
        f"stale: {gen_proto.TARGET_DIR / 'hdds_pb2.py'} differs from what the .proto files generate"
    ]
    gen_proto.generate(generated)
