"""A volume's or bucket's quotas beside what it uses, as `pyozone sh ... info` shows them."""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.proto import OmClientProtocol_pb2 as om_pb


@dataclass(frozen=True, slots=True)
class Quota:
    """0: no quota. Space counts replicated bytes; the namespace of a volume is its buckets, of a bucket
    its keys."""

    space_bytes: int
    namespace: int

    @classmethod
    def from_proto(cls, p: om_pb.VolumeInfo | om_pb.BucketInfo) -> Quota:
        return cls(p.quotaInBytes, p.quotaInNamespace)
