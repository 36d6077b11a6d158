"""Freon: load generators and verifiers for a running cluster (Ozone's `ozone freon`), one per layer.

`ome` calls OM's echoRPC (OM's RPC floor), `omkg` creates and commits empty keys in OM (its metadata
path, no datanode), `dne` sends Echo to one datanode of a pipeline (the data port's floor), `ockg` writes N
keys of a given size and `ockv` reads them back and checks every byte. All run on one runner (runner.py):
T threads, N operations and/or a duration, each operation timed for the report's percentiles. Key
contents are a deterministic function of (prefix, index), so a verifier needs no state from the
generator, only the same prefix.
"""

from pyozone.freon.content import key_content, key_name
from pyozone.freon.echo import EchoOptions, datanode_echo, om_echo, pipeline_datanode
from pyozone.freon.keys import FreonOptions, generate_keys, verify_keys
from pyozone.freon.om_keys import generate_om_keys
from pyozone.freon.report import FreonReport
from pyozone.freon.runner import Load

__all__ = [
    "EchoOptions",
    "FreonOptions",
    "FreonReport",
    "Load",
    "datanode_echo",
    "generate_keys",
    "generate_om_keys",
    "key_content",
    "key_name",
    "om_echo",
    "pipeline_datanode",
    "verify_keys",
]
