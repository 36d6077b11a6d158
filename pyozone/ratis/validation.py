"""What a peer may send (the core's first check of every message, before it changes anything): who a
message names as its sender, the shape a well-formed append or install notification has, and what a
leader's message may claim against what this member knows: one leader per term (Election Safety) and the
entries it committed (Leader Completeness). The refusal is a ValueError the shell reports and drops: a
lying peer never crashes a member nor has it delete a committed entry."""

from __future__ import annotations

from pyozone.ratis.log import RaftLog
from pyozone.ratis.messages import (
    AppendEntriesRequest,
    InstallSnapshotRequest,
    Message,
    RaftPeerId,
    RequestVoteReply,
    RequestVoteRequest,
    StartLeaderElectionRequest,
    TermIndex,
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
    follow `previous_index` one by one, or that names a negative index, a term above its leader's or a
    negative data size."""
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
            if entry.data_size < 0:
                raise refuse(message, f"entry {entry.index} has {entry.data_size} bytes of data")
            index, term = entry.index, entry.term
    elif isinstance(message, InstallSnapshotRequest) and (
        message.first_available.index < 1 or message.first_available.term > message.leader_term
    ):
        raise refuse(message, f"first available entry {message.first_available} is impossible")


def check_leader_claim(
    message: AppendEntriesRequest | InstallSnapshotRequest,
    current_term: int,
    leader: RaftPeerId | None,
    log: RaftLog,
    known_committed: int,
) -> None:
    """A leader's message of our term or a later one (a stale one is answered, not taken), before we follow
    it: refused when another leads its term as far as we know (ourselves, if we lead), or when it is an
    append that contradicts an entry we know is committed (`RaftLog.contradiction`): up to
    `known_committed`, which for a follower reaches past its own commit index to what its leader said is
    committed over entries it holds, its write of them not yet durable
    (`RaftServer.known_committed_index`)."""
    if message.leader_term == current_term and leader is not None and leader != message.leader_id:
        raise refuse(message, f"{leader} leads term {current_term}")
    if isinstance(message, AppendEntriesRequest):
        previous = TermIndex(message.previous_term, message.previous_index)
        why = log.contradiction(previous, message.entries, known_committed)
        if why:
            raise refuse(message, why)
