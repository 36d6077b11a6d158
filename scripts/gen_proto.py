#!/usr/bin/env python3
"""Regenerates pyozone/proto from the .proto files under proto/ (the only way that code is made).

    python scripts/gen_proto.py              # regenerate pyozone/proto in place
    python scripts/gen_proto.py --check DIR  # generate into DIR, compare with pyozone/proto, exit 1 if stale

protoc (from grpcio-tools, without its gRPC plugin: the services run on pyozone.rpc) writes <name>_pb2.py
and <name>_pb2.pyi for every proto/pyozone/<name>.proto; the generated imports (`from pyozone import
hdds_pb2`) are rewritten to the package they live in (`from pyozone.proto import hdds_pb2`). The output
depends only on the .proto files and the grpcio-tools version, so
tests/unit/protocol/test_generated_code_is_fresh.py can compare it byte for byte.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from importlib import metadata, resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PROTO_PACKAGE = "pyozone"  # proto/pyozone/*.proto; imported as "pyozone/<name>.proto"
TARGET_PACKAGE = "pyozone.proto"
TARGET_DIR = ROOT / "pyozone" / "proto"

GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi")
INIT_TEXT = '''"""Generated protobuf modules for pyozone's protocols.

Sources: proto/pyozone/*.proto. Do not edit: run `python scripts/gen_proto.py`.
Converters to and from pyozone's own types live in pyozone.protocol.
"""
'''

_IMPORT = re.compile(rf"^from {re.escape(PROTO_PACKAGE)} import (\w+_pb2\b)", re.MULTILINE)
# The module name protoc gives the message classes (their __module__), from the .proto path.
_MODULE_NAME = re.compile(
    rf"(BuildTopDescriptorsAndMessages\(DESCRIPTOR, '){re.escape(PROTO_PACKAGE)}\.(\w+_pb2')"
)


def fix_imports(text: str) -> str:
    """Makes generated code refer to its siblings as pyozone.proto.<name>_pb2."""
    text = _IMPORT.sub(rf"from {TARGET_PACKAGE} import \1", text)
    return _MODULE_NAME.sub(rf"\g<1>{TARGET_PACKAGE}.\2", text)


def proto_files() -> list[Path]:
    return sorted((PROTO_ROOT / PROTO_PACKAGE).glob("*.proto"))


def is_generated(path: Path) -> bool:
    return path.name == "__init__.py" or path.name.endswith(GENERATED_SUFFIXES)


def generate(out_dir: Path) -> list[Path]:
    """Writes the generated package into out_dir (created if needed); returns the files written, sorted."""
    from grpc_tools import protoc

    protos = proto_files()
    if not protos:
        raise SystemExit(f"no .proto files under {PROTO_ROOT / PROTO_PACKAGE}")
    out_dir.mkdir(parents=True, exist_ok=True)
    well_known = resources.files("grpc_tools") / "_proto"
    with tempfile.TemporaryDirectory(prefix="gen_proto_") as tmp:
        args = [
            "grpc_tools.protoc",
            f"--proto_path={PROTO_ROOT}",
            f"--proto_path={well_known}",
            f"--python_out={tmp}",
            f"--pyi_out={tmp}",
            *(p.relative_to(PROTO_ROOT).as_posix() for p in protos),
        ]
        if protoc.main(args) != 0:
            raise SystemExit("protoc failed (see the messages above)")
        written = []
        for src in sorted((Path(tmp) / PROTO_PACKAGE).iterdir()):
            if not src.name.endswith(GENERATED_SUFFIXES):
                continue
            text = fix_imports(src.read_text(encoding="utf-8"))
            dest = out_dir / src.name
            dest.write_text(text, encoding="utf-8", newline="\n")
            written.append(dest)
    init = out_dir / "__init__.py"
    init.write_text(INIT_TEXT, encoding="utf-8", newline="\n")
    written.append(init)
    return sorted(written)


def generated_files(directory: Path) -> dict[str, Path]:
    """The generated files a directory holds, by name."""
    if not directory.is_dir():
        return {}
    return {p.name: p for p in sorted(directory.iterdir()) if p.is_file() and is_generated(p)}


def compare(generated_dir: Path, committed_dir: Path = TARGET_DIR) -> list[str]:
    """What differs between freshly generated code and the committed package; empty when fresh."""
    fresh, committed = generated_files(generated_dir), generated_files(committed_dir)
    problems = [
        f"missing: {committed_dir / name} is not committed" for name in sorted(fresh.keys() - committed)
    ]
    problems += [
        f"extra: {committed_dir / name} comes from no .proto file"
        for name in sorted(committed.keys() - fresh)
    ]
    problems += [
        f"stale: {committed_dir / name} differs from what the .proto files generate"
        for name in sorted(fresh.keys() & committed.keys())
        if fresh[name].read_bytes() != committed[name].read_bytes()
    ]
    return problems


def generator_versions() -> str:
    versions = []
    for dist in ("grpcio-tools", "protobuf"):
        try:
            versions.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{dist} (not installed)")
    return ", ".join(versions)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", metavar="DIR", type=Path, help="generate into DIR and compare with pyozone/proto"
    )
    args = parser.parse_args(argv)
    if args.check is not None:
        generate(args.check)
        problems = compare(args.check)
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            print(f"pyozone/proto is stale: run `python scripts/gen_proto.py` ({generator_versions()})")
            return 1
        print("pyozone/proto is up to date")
        return 0
    with tempfile.TemporaryDirectory(prefix="gen_proto_out_") as tmp:
        written = generate(Path(tmp))
        TARGET_DIR.mkdir(parents=True, exist_ok=True)
        for stale in generated_files(TARGET_DIR).keys() - {p.name for p in written}:
            (TARGET_DIR / stale).unlink()
        for path in written:
            shutil.copyfile(path, TARGET_DIR / path.name)
    print(f"wrote {len(written)} files to {TARGET_DIR.relative_to(ROOT)} ({generator_versions()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
