"""Which node of a service a client asks next when the one it asked failed or refused, as Ozone's failover
proxies do for OM and SCM (OMFailoverProxyProviderBase, SCMFailoverProxyProviderBase): the leader it named
first, then each other node in turn, none asked twice in one round; once every node was asked, a new round
begins (after the caller's wait) at the named leader, or the next node."""

from __future__ import annotations


def next_in_round(current: int, count: int, named: list[int], tried: set[int]) -> tuple[int, bool]:
    """The node to ask after `current` (of `count`), given the nodes the refusal `named` as leader (never
    `current`) and those `tried` this round (updated); True when a new round begins: the caller waits."""
    tried.add(current)
    following = [(current + step) % count for step in range(1, count)]
    untried = [i for i in named + following if i not in tried]
    if untried:
        return untried[0], False
    tried.clear()
    return (named[0] if named else following[0] if following else current), True
