"""References a reader can follow (issue 34): no citation points at a document outside the repository.

The code once cited a digest of Ozone's SCM behaviour by section ("spec 10.3"), a set of source documents
by number ("seed 003"), and the design documents of SCM HA and of the datanode pipelines on the Raft core
by section or step ("design 2.3", "design S4", "step S2"); none ships with pyozone, so a reader who clones it
could not follow them. A reference names what a reader can open instead: Ozone's class
(`ClosingContainerHandler`), a config key (`hdds.scm.replication.thread.interval`), an Ozone document by its
title, or a page under docs/.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("pyozone", "tests", "benchmarks", "docs", "scripts", "proto", "README.md")
TEXT_SUFFIXES = frozenset(
    {".py", ".pyi", ".md", ".txt", ".json", ".toml", ".yaml", ".yml", ".sh", ".cfg", ".proto"}
)

CITATION = re.compile(
    r"\bspec(?:\s+section)?\s*§?\s*\d+(?:\.\d+)*|§\s*\d|\bseed\s+00\d"
    r"|\bdesign(?:\s+(?:section|step|risk))?\s+§?\s*S?\d|\d\s+of\s+the\s+design\b|\bsteps?\s+S\d",
    re.IGNORECASE,
)
"""A numbered section of the digest ("spec 6.3", "Spec 10.3 (7)", "spec section 2", "§6"), a numbered
seed document ("seed 000", "Seed 004's"), or a section, step or risk of a design document ("design 2.3",
"Design S4", "design section 1", "section 2.1.3 of the design", "step S2")."""


def scanned_files() -> list[Path]:
    """Every text file of the scanned trees but this one (its examples of the pattern are not citations)."""
    files: list[Path] = []
    for name in SCANNED:
        top = ROOT / name
        candidates = [top] if top.is_file() else sorted(top.rglob("*"))
        files += [
            path
            for path in candidates
            if path.is_file()
            and path.suffix in TEXT_SUFFIXES
            and "__pycache__" not in path.parts
            and path != Path(__file__).resolve()
        ]
    return files


def citations() -> list[str]:
    """`path:line: text` of every line holding a citation of a document outside the repository."""
    found: list[str] = []
    for path in scanned_files():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
            if CITATION.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found


@pytest.mark.parametrize(
    "text",
    [
        "(spec 6.3)",
        "Spec 10.3 (7): QuasiClosedStuckReplicaCount",
        "spec section 2",
        "spec §9",
        "§10.7",
        "seed 000",
        "Seed 004's Pros3",
        "(design 2.3)",
        "design 3.1 (6)",
        "(design 2.1-2.5)",
        "Design S4: the same kill -9 rounds",
        "(issue 31, design 7 S4)",
        "design section 1",
        "Design section 2.4 says",
        "(issue 30, design step S5)",
        "Design risk 2:",
        "design §5",
        "(section 2.1.3 of the design)",
        "(data-loss path 1 of the design)",
        "(issue 31 step S1)",
        "steps S3-S4",
    ],
)
def test_the_pattern_catches_each_spelling(text: str) -> None:
    assert CITATION.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "rpc.ServiceSpec.of(wire.SECURITY_SERVICE)",
        "fsspec's buffered files",
        "the spec's extra files",
        "python -m tests.scm_ha_sim --seed 17",
        "seed 14's invariant 8",
        "an EC spec such as rs-3-2-1024k",
        "a write may fail by design",
        "The design is in docs/om.md",
        "the S3 gateway's storage classes",
        "(S3: InvalidArgument)",
        "the next step of the scan",
    ],
)
def test_the_pattern_spares_what_is_not_a_citation(text: str) -> None:
    assert not CITATION.search(text)


def test_no_citation_points_outside_the_repository() -> None:
    assert citations() == []
