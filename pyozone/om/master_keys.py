"""OM's SSE-S3 master keys: a keystore file of numbered AES-256 keys that wrap each object's data key.

Ozone leaves this to a KMS (hadoop.security.key.provider.path; the bucket encryption key's versions,
generateEncryptedKey / decryptEncryptedKey); pyozone's OM is its own KMS for SSE-S3. `om --init` creates
the keystore (0600) with version 1; rotation adds a version, which wraps every new data key, while a
wrapped key names the version that wrapped it, so older objects stay readable. Wrapping is AES-256-GCM
with the version as associated data: a wrapped key altered, or unwrapped with another version, fails.

The file is JSON {"versions": {"1": "<base64 key>", ...}}, written whole to a temporary file and renamed.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from pyozone.config import OzoneConfiguration
from pyozone.hdds.security.sse import KEY_BYTES

KEYSTORE_KEY = "ozone.om.sse.master.keystore"
"""The keystore's path; unset: s3-sse-master.keystore in OM's metadata directory (ozone.om.db.dirs)."""
KEYSTORE_FILE = "s3-sse-master.keystore"
_NONCE = 12


class MasterKeyError(Exception):
    """A keystore that cannot be used, or a wrapped key that no master key version opens."""


class MasterKeyStore:
    def __init__(self, path: Path, versions: dict[int, bytes]) -> None:
        self.path = path
        self._versions = dict(versions)
        self._lock = threading.Lock()

    @classmethod
    def create(cls, path: Path) -> MasterKeyStore:
        """A new keystore with version 1 (refused where one exists: its keys would be lost)."""
        if path.exists():
            raise MasterKeyError(f"{path}: a keystore exists already")
        store = cls(path, {1: os.urandom(KEY_BYTES)})
        store._write()
        return store

    @classmethod
    def load(cls, path: Path) -> MasterKeyStore:
        try:
            raw = json.loads(path.read_bytes())
            versions = {int(v): base64.b64decode(k, validate=True) for v, k in raw["versions"].items()}
        except FileNotFoundError:
            raise MasterKeyError(f"{path}: no SSE master keystore (om --init creates it)") from None
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise MasterKeyError(f"{path}: not an SSE master keystore ({e})") from None
        if not versions:
            raise MasterKeyError(f"{path}: the keystore holds no master key")
        for version, key in versions.items():
            if version < 1 or len(key) != KEY_BYTES:
                raise MasterKeyError(f"{path}: master key version {version} is not a {KEY_BYTES}-byte key")
        mode = path.stat().st_mode & 0o777
        if mode & 0o077:
            raise MasterKeyError(
                f"{path}: permissions {mode:o}; the keystore must be readable by OM alone (600)"
            )
        return cls(path, versions)

    @property
    def current_version(self) -> int:
        return max(self._versions)

    @property
    def versions(self) -> tuple[int, ...]:
        return tuple(sorted(self._versions))

    def rotate(self) -> int:
        """Adds a version, which wraps every data key from now on; the new version's number."""
        with self._lock:
            version = self.current_version + 1
            self._versions[version] = os.urandom(KEY_BYTES)
            self._write()
        return version

    def wrap(self, data_key: bytes) -> tuple[bytes, int]:
        """`data_key` wrapped under the current version, and that version."""
        version = self.current_version
        nonce = os.urandom(_NONCE)
        return nonce + AESGCM(self._versions[version]).encrypt(nonce, data_key, _aad(version)), version

    def unwrap(self, wrapped: bytes, version: int) -> bytes:
        key = self._versions.get(version)
        if key is None:
            raise MasterKeyError(f"master key version {version} is not in {self.path}")
        try:
            return AESGCM(key).decrypt(wrapped[:_NONCE], wrapped[_NONCE:], _aad(version))
        except InvalidTag:
            raise MasterKeyError(f"a data key does not open with master key version {version}") from None

    def _write(self) -> None:
        body = {"versions": {str(v): base64.b64encode(k).decode() for v, k in sorted(self._versions.items())}}
        partial = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(body, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(partial, self.path)


def _aad(version: int) -> bytes:
    return f"pyozone-sse-master-v{version}".encode()


def keystore_path(conf: OzoneConfiguration, metadata_dir: Path) -> Path:
    """ozone.om.sse.master.keystore, else s3-sse-master.keystore beside om.db's VERSION."""
    named = str(conf.get(KEYSTORE_KEY) or "").strip()
    return Path(named) if named else metadata_dir / KEYSTORE_FILE


def open_keystore(path: Path, create: bool) -> MasterKeyStore | None:
    """The keystore at `path`; a missing one is created when `create` (`om --init`, a lone OM's first
    start), else None (SSE-S3 is refused until it is there). A file that is not one is MasterKeyError."""
    if path.exists():
        return MasterKeyStore.load(path)
    return MasterKeyStore.create(path) if create else None
