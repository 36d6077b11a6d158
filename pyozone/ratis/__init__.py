"""The Raft consensus core, sans-IO (issue 30).

Inputs are method calls on `server.RaftServer` (messages from peers, client requests, disk and state machine
completions, clock ticks); outputs are values the caller acts on (`outputs.py`). No I/O, no threads, no
time module: the I/O shell, the segmented log files and OM HA are later steps of issue 30.
"""
