"""The durability check of the Jepsen-style test of OM HA (issue 30): after the faults every key is read once
more, and each key whose end follows from acknowledged changes must hold what one of them left."""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.jepsen.history import EventType, History
from tests.jepsen.models import KeyValueModel, Op, Refusal


@dataclass
class Durability:
    """What `lost_writes` found."""

    keys: int  # keys whose final content follows from acknowledged changes
    writes: int  # the acknowledged writes among those keys' possible last changes
    lost: list[str] = field(default_factory=list)


def lost_writes(history: History, final: dict[str, str | None]) -> Durability:
    """Acknowledged changes that no other change can follow, missing at the end. A key's changes are its
    puts, deletes and renames onto or from it that were not refused (a refusal changes nothing). The one
    that comes last is an acknowledged change that no other acknowledged change was invoked after (one
    invoked after an acknowledgement is ordered after it): the key must hold what one of those candidates
    left (a put's content; after a delete or a rename away, nothing). Every candidate is checked, not only
    the last invoked: concurrent writes may end a key on either. A key is left out when its end may be
    another's doing: an indeterminate change invoked after a candidate's invocation, or still in flight
    when it was invoked (it may take effect after the candidate), or a candidate that renames a key onto it
    (the content is another key's). An indeterminate change its client gave up before a candidate was
    invoked is taken as over: a request delayed in the network beyond the client's retries would be
    reported here as a lost write (the checker, which leaves it open to the end, decides)."""
    ops = [op for op in history.operations() if op.process != "final" and op.f is not Op.GET]
    changes = [op for op in ops if op.type is not EventType.FAIL and not isinstance(op.result, Refusal)]
    found = Durability(0, 0)
    for key in final:
        mine = [op for op in changes if key in KeyValueModel().keys(op.f, op.args)]
        acked = [op for op in mine if op.type is EventType.OK]
        last = [
            op
            for op in acked
            if not any(o.call > op.ret for o in acked if o is not op)  # type: ignore[operator]
        ]
        if not last or any(op.f is Op.RENAME and op.args[1] == key for op in last):
            continue
        first = min(op.call for op in last)
        if any(o.call > first or o.end is None or o.end > first for o in mine if o.type is EventType.INFO):
            continue
        ends = {op.args[1] if op.f in (Op.CREATE, Op.PUT) else None for op in last}
        found.keys += 1
        found.writes += sum(op.f in (Op.CREATE, Op.PUT) for op in last)
        if final[key] not in ends:
            found.lost.append(
                f"{key} holds {final[key]!r}, not what one of its last acknowledged changes left: "
                + "; ".join(map(str, last))
            )
    return found
