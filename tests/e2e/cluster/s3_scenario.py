"""The scenario every S3 client of the matrix runs (issue 13): its objects, its listing tree, its ranges and
what each step must give back. Standard library only, so the s3fs driver can import it from its own venv."""

from __future__ import annotations

import hashlib
import random
import subprocess
from pathlib import Path

MiB = 1 << 20
BUCKET = "scenario"
REGION = "us-east-1"
REPO = Path(__file__).resolve().parents[3]

SIZES = {"empty": 0, "1KB": 1000, "20MB": 20 * MiB, "100MB": 100 * MiB}
"""Object sizes: the two large ones are multipart uploads for every client that chooses them by size."""
PART_SIZE = 8 * MiB
"""The part size the tests ask for where the client takes one (boto3's and awscli's default threshold)."""

TREE = [f"tree/{d}/{i:02d}" for d in ("a", "b", "c") for i in range(5)] + ["tree/top1", "tree/top2"]
TOP_PREFIXES = ["tree/a/", "tree/b/", "tree/c/"]
TOP_KEYS = ["tree/top1", "tree/top2"]
PAGE_SIZE = 4

RANGE_SIZE = 3 * MiB + 17
RANGES = [(0, 0), (100, 2_000_000), (RANGE_SIZE - 5, RANGE_SIZE - 1), (MiB - 3, MiB + 3)]
"""Inclusive (first, last) byte pairs: a byte, a span across pieces, the tail, a span across 1 MiB."""

PRESIGNED_BODY = b"presigned!"
PRESIGNED_KEY = "shared file.txt"


def object_key(name: str) -> str:
    return f"objects/{name}"


def payload(seed: str, size: int) -> bytes:
    """The same bytes in every process (the s3fs driver makes its own): a seeded generator."""
    return random.Random(seed).randbytes(size)


def md5_hex(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def multipart_etag(data: bytes, part_size: int) -> str:
    """S3's ETag of a completed upload: the MD5 of the parts' MD5s, dash, the part count."""
    parts = [data[i : i + part_size] for i in range(0, len(data), part_size)]
    return f"{hashlib.md5(b''.join(hashlib.md5(p).digest() for p in parts)).hexdigest()}-{len(parts)}"


def curl(url: str) -> subprocess.CompletedProcess[bytes]:
    """GET a (presigned) URL with curl: a client that knows nothing of S3."""
    return subprocess.run(["curl", "-sS", "--max-time", "30", url], capture_output=True, timeout=60)
