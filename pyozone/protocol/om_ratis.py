"""OM's Raft entries (proto/pyozone/OmRatis.proto): the om.db ops of the requests a leader executed, with the
calls they answered and those answers, as it replicates them (leader-side execution, HDDS-11898's
PersistDbRequest and ExecutionControlRequest; one entry may carry several requests, as HDDS-11898's leader
batches them). The ops keep their order: consecutive ops of one table share a DBTableUpdate, a change of
table starts the next. Damaged bytes are refused with ProtocolError."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from pyozone.hdds.errors import ProtocolError
from pyozone.proto import OmRatis_pb2 as pb

Op = tuple[str, str, bytes | None]
"""(table, key, value); None deletes (om/double_buffer.py's Op)."""


@dataclass(frozen=True, slots=True)
class CallAnswer:
    """What a call was answered: the response's bytes, or the error status (a StatusCode name) and its
    details; `method` names the rpc, so a replay parses the response as its type."""

    client_id: str
    call_id: int
    method: str
    response: bytes = b""
    error_status: str = ""
    error_details: str = ""


@dataclass(frozen=True, slots=True)
class OmEntry:
    ops: tuple[Op, ...]
    answers: tuple[CallAnswer, ...]


def entry_to_bytes(ops: Sequence[Op], answers: Sequence[CallAnswer]) -> bytes:
    message = pb.OmReplicatedRequest()
    updates = message.persistDb.tableUpdates
    update: pb.DBTableUpdate | None = None
    for table, key, value in ops:
        if update is None or update.tableName != table:
            update = updates.add(tableName=table)
        if value is None:
            update.records.add(key=key.encode(), deleted=True)
        else:
            update.records.add(key=key.encode(), value=value)
    for answer in answers:
        message.executionControl.requestInfo.add(
            clientId=answer.client_id,
            callId=answer.call_id,
            method=answer.method,
            response=answer.response,
            errorStatus=answer.error_status,
            errorDetails=answer.error_details,
        )
    return message.SerializeToString()


def entry_from_bytes(data: bytes) -> OmEntry:
    try:
        message = pb.OmReplicatedRequest.FromString(data)
        ops = tuple(
            (update.tableName, record.key.decode(), None if record.deleted else record.value)
            for update in message.persistDb.tableUpdates
            for record in update.records
        )
    except (DecodeError, UnicodeDecodeError) as error:
        raise ProtocolError("OmReplicatedRequest", f"not an OM Raft entry: {error}") from None
    if any(not table for table, _, _ in ops):
        raise ProtocolError("persistDb.tableUpdates.tableName", "a DBTableUpdate names no table")
    answers = tuple(
        CallAnswer(
            info.clientId, info.callId, info.method, info.response, info.errorStatus, info.errorDetails
        )
        for info in message.executionControl.requestInfo
    )
    return OmEntry(ops, answers)


def describe(data: bytes) -> str:
    """An OM entry in a line, for `pyozone debug ratislogparser om` (Ratis's `State Machine:` line): each
    op (`put`/`delete` table key) and each call it answered (rpc, client id, call id, and its error)."""
    try:
        entry = entry_from_bytes(data)
    except ProtocolError as error:
        return f"not an OM entry: {error}"
    ops = ", ".join(f"{'delete' if v is None else 'put'} {t} {k}" for t, k, v in entry.ops)
    calls = ", ".join(
        f"{a.method} ({a.client_id}, {a.call_id}{', ' + a.error_status if a.error_status else ''})"
        for a in entry.answers
    )
    return f"PersistDbRequest [{ops}] ExecutionControlRequest [{calls}]"
