"""The JSON of volumes, buckets and keys: what `pyozone sh ... --json` prints and what OM's web APIs answer.

One renderer per model, below both the CLI and OM's web UI, so the two cannot drift apart: an item of OM's
`/api/v1/volumes` is the dict `sh volume list --json` prints for the same volume, and so on for buckets
and keys. The shapes are Ozone's (Jackson over its OzoneVolume, OzoneBucket and OzoneKey classes).
"""

from __future__ import annotations

import datetime

from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.om_views import BucketInfo, KeyInfo, VolumeInfo
from pyozone.hdds.states import ReplicationFactor, ReplicationType


def _time(epoch_ms: int) -> str:
    """Ozone prints instants as ISO-8601 UTC."""
    instant = datetime.datetime.fromtimestamp(epoch_ms / 1000, tz=datetime.UTC)
    return instant.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def replication_dict(config: ReplicationConfig) -> dict:
    """A replication config as Ozone's JSON shows it (Jackson over Ozone's ReplicationConfig classes)."""
    if config.type is ReplicationType.EC:
        return {
            "data": config.ec_data,
            "parity": config.ec_parity,
            "ecChunkSize": config.ec_chunk_size,
            "codec": config.ec_codec,
            "replicationType": "EC",
            "requiredNodes": config.required_nodes,
        }
    kind = "STANDALONE" if config.type is ReplicationType.STAND_ALONE else config.type.name
    return {
        "replicationFactor": ReplicationFactor(config.factor).name,
        "requiredNodes": config.required_nodes,
        "replicationType": kind,
    }


def volume_dict(v: VolumeInfo) -> dict:
    """As Ozone prints a volume (a quota of -1 is none)."""
    return {
        "metadata": {},
        "volumeName": v.name,
        "name": v.name,
        "admin": v.admin,
        "owner": v.owner,
        "quotaInBytes": v.quota_in_bytes or -1,
        "quotaInNamespace": v.quota_in_namespace or -1,
        "usedBytes": v.used_bytes,
        "usedNamespace": v.used_namespace,
        "creationTime": _time(v.creation_time),
        "modificationTime": _time(v.modification_time),
    }


def bucket_dict(b: BucketInfo) -> dict:
    """As volume_dict, for a bucket."""
    return {
        "metadata": {},
        "volumeName": b.volume,
        "name": b.name,
        "storageType": "DISK",
        "versioning": b.versioning == "Enabled",  # Ozone's isVersionEnabled
        "usedBytes": b.used_bytes,
        "usedNamespace": b.used_namespace,
        "creationTime": _time(b.creation_time),
        "modificationTime": _time(b.modification_time),
        "quotaInBytes": b.quota_in_bytes or -1,
        "quotaInNamespace": b.quota_in_namespace or -1,
        "bucketLayout": b.layout,
        "owner": b.owner,
        "replicationConfig": replication_dict(b.replication),
    }


def key_dict(k: KeyInfo, locations: bool = False) -> dict:
    out = {
        "volumeName": k.volume,
        "bucketName": k.bucket,
        "name": k.name,
        "dataSize": k.data_size,
        "creationTime": _time(k.creation_time),
        "modificationTime": _time(k.modification_time),
        "replicationConfig": replication_dict(k.replication),
        "metadata": {},
    }
    if locations:
        out["ozoneKeyLocations"] = [
            {
                "containerID": loc.container_id,
                "localID": loc.local_id,
                "length": loc.length,
                "offset": loc.offset,
                "blockCommitSequenceId": loc.bcsid,
                "containerState": loc.container_state,
                "pipelineID": loc.pipeline.id,
                "datanodes": [
                    {"uuid": d.uuid, "hostname": d.host, "ipAddress": d.ip} for d in loc.pipeline.members
                ],
            }
            for loc in k.locations
        ]
    return out
