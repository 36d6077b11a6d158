"""A task's grouping (container_groups.groups) and its id ranges (range_scan): every container gets exactly
its own replicas and ops, in ascending id order, however the tables arrive, are chunked or encoded; ranges
cover every container and are declined when the tables are scattered."""

from __future__ import annotations

import random
from itertools import pairwise
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pyozone.analytics.container_groups import CHECK_TABLES, groups
from pyozone.analytics.range_scan import plan_ranges, read_range
from pyozone.analytics.schema import TABLES

DN = [f"00000000-0000-4000-8000-{i:012d}" for i in range(6)]


def tables(containers: int, seed: int) -> dict[str, list[dict]]:
    """Containers 1..n (some without replicas), up to 4 replicas each, a few pending ops, and replicas
    and ops of containers that are not listed (ids above n)."""
    rng = random.Random(seed)
    rows: dict[str, list[dict]] = {t: [] for t in CHECK_TABLES}
    for cid in range(1, containers + 1):
        rows["containers"].append(
            dict(
                container_id=cid,
                state=rng.choice(["CLOSED", "OPEN", "QUASI_CLOSED"]),
                replication_config=rng.choice(["RATIS/THREE", "EC/RS-3-2-1024k"]),
                pipeline_id=rng.choice([None, "p1"]),
                owner="om",
                used_bytes=cid,
                number_of_keys=1,
                sequence_id=cid,
                state_entered_ms=0,
                suppressed=False,
                replicas_reported=True,
            )
        )
    for cid in range(1, containers + 6):
        for i, dn in enumerate(rng.sample(DN, rng.randrange(5))):
            rows["replicas"].append(
                dict(
                    container_id=cid,
                    datanode=dn,
                    state=rng.choice(["CLOSED", "UNHEALTHY"]),
                    origin_node_id=dn,
                    sequence_id=cid,
                    key_count=1,
                    bytes_used=1,
                    replica_index=i,
                    is_empty=False,
                )
            )
        if rng.random() < 0.2:
            rows["pending_ops"].append(
                dict(
                    container_id=cid,
                    type=rng.choice(["ADD", "DELETE"]),
                    target=rng.choice(DN),
                    replica_index=0,
                    deadline_epoch_ms=cid,
                )
            )
    return rows


def arrow(rows: dict[str, list[dict]], shuffle: random.Random | None = None) -> list[pa.Table]:
    out = []
    for table in CHECK_TABLES:
        listed = list(rows[table])
        if shuffle is not None:
            shuffle.shuffle(listed)
        out.append(pa.Table.from_pylist(listed, schema=TABLES[table]))
    return out


def expected_groups(rows: dict[str, list[dict]]) -> list[tuple]:
    def by_container(table: str) -> dict[int, list]:
        held: dict[int, list] = {}
        for row in rows[table]:
            held.setdefault(row["container_id"], []).append(row)
        return held

    replicas, ops = by_container("replicas"), by_container("pending_ops")
    return [
        (
            c["container_id"],
            sorted(r["datanode"] for r in replicas.get(c["container_id"], [])),
            len(ops.get(c["container_id"], [])),
        )
        for c in rows["containers"]
    ]


def summary(found) -> list[tuple]:
    return [(c.container_id, sorted(r.datanode for r in held), len(ops)) for c, held, ops in found]


@pytest.mark.parametrize("chunk", [1, 3, 1000])
@pytest.mark.parametrize("order", ["sorted", "shuffled", "dictionary"])
def test_every_container_gets_exactly_its_own_rows(chunk: int, order: str) -> None:
    rows = tables(40, seed=chunk)
    data = arrow(rows, random.Random(1) if order == "shuffled" else None)
    if order == "dictionary":
        data = [
            t.cast(
                pa.schema(
                    [
                        f.with_type(pa.dictionary(pa.int32(), f.type)) if pa.types.is_string(f.type) else f
                        for f in t.schema
                    ]
                )
            )
            for t in data
        ]
    found = list(groups(*data, chunk=chunk))
    assert summary(found) == expected_groups(rows)
    container, replicas, ops = next(g for g in found if g[1] and g[2])
    assert container.state.name in ("CLOSED", "OPEN", "QUASI_CLOSED")
    assert container.replication_config.required_nodes in (3, 5)
    assert {r.container_id for r in replicas} == {o.container_id for o in ops} == {container.container_id}
    assert ops[0].type.name in ("ADD", "DELETE")


def test_no_containers_no_groups() -> None:
    assert list(groups(*(TABLES[t].empty_table() for t in CHECK_TABLES))) == []


def write(snapshot: Path, rows: dict[str, list[dict]], row_group_size: int, shuffle: bool = False) -> None:
    for table, data in zip(CHECK_TABLES, arrow(rows, random.Random(2) if shuffle else None), strict=True):
        (snapshot / table).mkdir(parents=True)
        pq.write_table(data, snapshot / table / "part-00000.parquet", row_group_size=row_group_size)


def test_ranges_cover_every_container_and_read_only_their_rows(tmp_path: Path) -> None:
    rows = tables(300, seed=5)
    write(tmp_path, rows, row_group_size=64)
    ranges = plan_ranges(tmp_path, parallelism=2)
    assert ranges and len(ranges) >= 4
    assert all(a < b for a, b in ranges) and all(r[1] == s[0] for r, s in pairwise(ranges))
    assert ranges[0][0] <= 1 and ranges[-1][1] > 300
    found = []
    for r in ranges:
        found += summary(groups(*(read_range(tmp_path, t, r) for t in CHECK_TABLES)))
    assert found == expected_groups(rows)


def test_scattered_tables_are_declined(tmp_path: Path) -> None:
    """Every range would read every row group: with 16 ranges, a shuffle is cheaper."""
    write(tmp_path, tables(300, seed=6), row_group_size=20, shuffle=True)
    assert plan_ranges(tmp_path, parallelism=8) is None


def test_footers_without_statistics_are_declined(tmp_path: Path) -> None:
    rows = tables(50, seed=7)
    for table, data in zip(CHECK_TABLES, arrow(rows), strict=True):
        (tmp_path / table).mkdir()
        pq.write_table(data, tmp_path / table / "part-00000.parquet", write_statistics=False)
    assert plan_ranges(tmp_path, parallelism=2) is None


def test_an_empty_snapshot_has_no_ranges(tmp_path: Path) -> None:
    write(tmp_path, {t: [] for t in CHECK_TABLES}, row_group_size=10)
    assert plan_ranges(tmp_path, parallelism=2) == []
