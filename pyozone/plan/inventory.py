"""Datanode inventories for planners: CSV `id,rack,data_disks,metadata_disks` or a JSON list."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from pyozone.scm.pipeline.planner import InventoryNode

FIELDS = ("id", "rack", "data_disks", "metadata_disks")
MAX_DISKS = 1024  # far above any real datanode; bounds the work a typo can cause


class InventoryError(ValueError):
    """A bad inventory; the message names the file, the row and the problem."""


def load_inventory(path: Path) -> list[InventoryNode]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as e:
        raise InventoryError(f"{path}: cannot read inventory: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise InventoryError(f"{path}: not UTF-8 text (byte {e.start})") from None
    if path.suffix.lower() == ".json" or text.lstrip().startswith("["):
        rows = _json_rows(path, text)
    else:
        rows = _csv_rows(path, text)
    nodes: list[InventoryNode] = []
    seen: set[str] = set()
    for where, row in rows:
        node = _node(path, where, row)
        if node.id in seen:
            raise InventoryError(f"{path}: {where}: duplicate datanode id {node.id!r}")
        seen.add(node.id)
        nodes.append(node)
    if not nodes:
        raise InventoryError(f"{path}: the inventory lists no datanodes")
    return nodes


def _json_rows(path: Path, text: str) -> list[tuple[str, Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InventoryError(f"{path}: not valid JSON: {e.msg} at line {e.lineno}") from None
    if not isinstance(data, list):
        raise InventoryError(f"{path}: expected a JSON list of datanode objects")
    return [(f"item {i}", row) for i, row in enumerate(data, 1)]


def _csv_rows(path: Path, text: str) -> list[tuple[str, Any]]:
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None or tuple(h.strip() for h in header) != FIELDS:
        raise InventoryError(f"{path}: line 1: the header must be {','.join(FIELDS)}")
    rows = []
    for values in reader:
        line = reader.line_num
        if not values or all(not v.strip() for v in values):
            continue
        if len(values) != len(FIELDS):
            raise InventoryError(f"{path}: line {line}: expected {len(FIELDS)} fields, got {len(values)}")
        rows.append((f"line {line}", dict(zip(FIELDS, (v.strip() for v in values), strict=True))))
    return rows


def _node(path: Path, where: str, row: Any) -> InventoryNode:
    if not isinstance(row, dict):
        raise InventoryError(f"{path}: {where}: expected an object with keys {', '.join(FIELDS)}")
    missing = [f for f in FIELDS if f not in row]
    if missing:
        raise InventoryError(f"{path}: {where}: missing {', '.join(missing)}")
    node_id, rack = str(row["id"]).strip(), str(row["rack"]).strip()
    if not node_id:
        raise InventoryError(f"{path}: {where}: empty id")
    if not rack:
        raise InventoryError(f"{path}: {where}: empty rack")
    disks = [_count(path, where, row, f) for f in ("data_disks", "metadata_disks")]
    return InventoryNode(node_id, rack if rack.startswith("/") else "/" + rack, disks[0], disks[1])


def _count(path: Path, where: str, row: dict[str, Any], name: str) -> int:
    value = row[name]
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DISKS:
        raise InventoryError(
            f"{path}: {where}: {name} must be a whole number from 0 to {MAX_DISKS}, got {row[name]!r}"
        )
    return value
