"""Generated protobuf modules for pyozone's protocols.

Sources: proto/pyozone/*.proto. Do not edit: run `python scripts/gen_proto.py`.
Converters to and from pyozone's own types live in pyozone.protocol.
"""
