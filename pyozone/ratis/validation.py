"""What a peer may send (the core's first check of every message, before it changes anything): who a
message names as its sender, and the shape a well-formed append or install notification has. The refusal
is a ValueError the shell reports and drops."""

from __future__ import annotations

from pyozone.ratis.messages import (
    AppendEntriesRequest,
    InstallSnapshotRequest,
    Message,
    RaftPeerId,
    RequestVoteReply,
    RequestVoteRequest,
    StartLeaderElectionRequest,
)


def named_sender(message: Message) -> RaftPeerId:
    if isinstance(message, RequestVoteRequest):
        return message.candidate_id
    if isinstance(message, RequestVoteReply):
        return message.voter_id
    if isinstance(message, AppendEntriesRequest | StartLeaderElectionRequest | InstallSnapshotRequest):
        return message.leader_id
    return message.follower_id


def refuse(message: Message, why: str) -> ValueError:
    return ValueError(f"refused a {type(message).__name__} from {named_sender(message)}: {why}")


def validate(message: Message) -> None:
    """A malformed message from a peer is refused before it changes anything: an append whose entries do not
    follow `previous_index` one by one, or that names a negative index or a term above its leader's."""
    if isinstance(message, AppendEntriesRequest):
        if message.previous_index < 0 or message.leader_commit < 0:
            raise refuse(message, "a negative previous index or commit index")
        if not 0 <= message.previous_term <= message.leader_term or (
            message.previous_index == 0 and message.previous_term != 0
        ):
            raise refuse(message, f"previous term {message.previous_term} is impossible at that index")
        index, term = message.previous_index, message.previous_term
        for entry in message.entries:
            if entry.index != index + 1:
                raise refuse(message, f"entry index {entry.index} does not follow {index}")
            if not term <= entry.term <= message.leader_term:
                raise refuse(message, f"entry {entry.index} has term {entry.term} after term {term}")
            index, term = entry.index, entry.term
    elif isinstance(message, InstallSnapshotRequest) and (
        message.first_available.index < 1 or message.first_available.term > message.leader_term
    ):
        raise refuse(message, f"first available entry {message.first_available} is impossible")
