"""`pyozone repair ratislog` and `pyozone debug ratislogparser generic|om|scm` on a member's real log files: a
log a corrupt closed segment keeps from loading loads again after the repair, and the parser prints each
entry (`om`: with its om.db ops and calls; `scm`: with its scm.db ops)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.cli.main import main
from pyozone.protocol.om_ratis import CallAnswer, entry_to_bytes
from pyozone.protocol.scm_ratis import VALUE_CHARS
from pyozone.protocol.scm_ratis import entry_to_bytes as scm_entry_to_bytes
from pyozone.ratis.messages import LogEntry, RaftPeerId
from pyozone.ratis.outputs import Persist
from pyozone.ratis_server.segmented_log import RaftLogCorruptError, SegmentedRaftLog


def _log(group: Path) -> None:
    storage = SegmentedRaftLog(group, segment_size_max=200)
    storage.load()
    entries = tuple(LogEntry(1, i, b"x" * 20, client_id="c1", call_id=i) for i in range(1, 21))
    storage.write(Persist(1, 1, RaftPeerId("om1"), entries))
    storage.flush()
    storage.close()


def _segments(group: Path) -> list[Path]:
    return sorted((group / "current").glob("log_*"), key=lambda p: int(p.name.split("_")[-1].split("-")[0]))


def test_repair_cuts_a_damaged_closed_segment_and_the_log_loads_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    group = tmp_path / "group"
    _log(group)
    damaged = _segments(group)[1]
    data = bytearray(damaged.read_bytes())
    data[-3] ^= 0xFF
    damaged.write_bytes(bytes(data))
    with pytest.raises(RaftLogCorruptError, match="pyozone repair ratislog --dir"):
        SegmentedRaftLog(group).load()
    assert main(["repair", "ratislog", "--dir", str(group)]) == 0
    out = capsys.readouterr().out
    assert "the log loads, up to index" in out
    storage = SegmentedRaftLog(group)
    state = storage.load()
    storage.close()
    assert 0 < len(state.entries) < 20
    assert [e.index for e in state.entries] == list(range(1, len(state.entries) + 1))


def test_repair_refuses_a_directory_that_holds_no_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["repair", "ratislog", "--dir", str(tmp_path)]) != 0
    assert "not a Raft member's group directory" in capsys.readouterr().err
    assert not (tmp_path / "current").exists()


def test_ratislogparser_prints_each_entry_of_a_segment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    group = tmp_path / "group"
    _log(group)
    first = _segments(group)[0]
    assert main(["debug", "ratislogparser", "generic", "-s", str(first)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"Processing Raft Log file: {first.resolve()} size:")
    assert "(t:1, i:1), STATEMACHINELOGENTRY, c1, cid=1, size=20" in out[1]
    assert any(line.startswith("Num Total Entries: ") for line in out)
    assert main(["debug", "ratislogparser", "generic", "--segment-path", str(tmp_path / "nope")]) != 0


def test_repair_refuses_a_damaged_raft_meta_with_its_path_and_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    group = tmp_path / "group"
    _log(group)
    meta = group / "current" / "raft-meta"
    data = bytearray(meta.read_bytes())
    data[1] = 0xFF  # not UTF-8 any more
    meta.write_bytes(bytes(data))
    before = sorted(p.name for p in (group / "current").iterdir())
    assert main(["repair", "ratislog", "--dir", str(group)]) != 0
    err = capsys.readouterr().err
    assert f"{meta}: damaged" in err and "Traceback" not in err
    assert sorted(p.name for p in (group / "current").iterdir()) == before


def test_ratislogparser_om_prints_each_entry_with_its_ops_and_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    group = tmp_path / "group"
    storage = SegmentedRaftLog(group)
    storage.load()
    answer = CallAnswer("client-a", 7, "createVolume", b"")
    failed = CallAnswer("client-b", 3, "deleteKey", b"", "NOT_FOUND", "KEY_NOT_FOUND: k")
    entries = (
        LogEntry(1, 1, entry_to_bytes([("volumeTable", "/vol", b"v"), ("meta", "objectID", b"2")], [answer])),
        LogEntry(1, 2, entry_to_bytes([("keyTable", "/vol/b/k", None)], [failed])),
        LogEntry(1, 3, b"\xff\xff"),
    )
    storage.write(Persist(1, 1, RaftPeerId("om1"), entries))
    storage.flush()
    storage.close()
    assert main(["debug", "ratislogparser", "om", "-s", str(_segments(group)[0])]) == 0
    out = capsys.readouterr().out
    assert "State Machine: PersistDbRequest [put volumeTable /vol, put meta objectID] " in out
    assert "ExecutionControlRequest [createVolume (client-a, 7)]" in out
    assert "[delete keyTable /vol/b/k] ExecutionControlRequest [deleteKey (client-b, 3, NOT_FOUND)]" in out
    assert "State Machine: not an OM entry" in out
    assert "Num StateMachineEntries Entries: 3" in out


def test_ratislogparser_scm_prints_each_entry_with_its_scm_db_ops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    group = tmp_path / "group"
    storage = SegmentedRaftLog(group)
    storage.load()
    container = b'{"containerID": 7, "state": "OPEN", "owner": "om1", "replicationConfig": "RATIS/THREE"}'
    entries = (
        LogEntry(1, 1, scm_entry_to_bytes(3, [("containers", (7).to_bytes(8, "big"), container)])),
        LogEntry(
            1, 2, scm_entry_to_bytes(4, [("pipelines", b"p-1", None), ("sequenceId", b"localId", b"9")])
        ),
        LogEntry(1, 3, b"\xff\xff"),
    )
    storage.write(Persist(1, 1, RaftPeerId("scm1"), entries))
    storage.flush()
    storage.close()
    assert main(["debug", "ratislogparser", "scm", "-s", str(_segments(group)[0])]) == 0
    out = capsys.readouterr().out
    # a container id key reads as its number, the value as its first VALUE_CHARS characters and its size
    shown = container.decode()[:VALUE_CHARS]
    assert (
        f"State Machine: SCMRatisRequest epoch: 3 [put containers 7 {shown}... ({len(container)} bytes)]"
        in out
    )
    assert "SCMRatisRequest epoch: 4 [delete pipelines p-1, put sequenceId localId 9 (1 bytes)]" in out
    assert "State Machine: not an SCM entry" in out
    assert "Num StateMachineEntries Entries: 3" in out
