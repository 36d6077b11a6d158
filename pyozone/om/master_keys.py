"""OM's SSE-S3 master keys: a keystore file of numbered AES-256 keys that wrap each object's data key.

Ozone leaves this to a KMS (hadoop.security.key.provider.path; the bucket encryption key's versions,
generateEncryptedKey / decryptEncryptedKey); pyozone's OM is its own KMS for SSE-S3. `om --init` creates
the keystore (0600) with version 1; rotation adds a version, which wraps every new data key, while a
wrapped key names the version that wrapped it, so older objects stay readable. Wrapping is AES-256-GCM
with the version and the object's name (/volume/bucket/key) as associated data: a wrapped key altered,
unwrapped with another version, or copied onto another object's record, fails (R36 F12; a key wrapped
before names were bound fails too, as INVALID_KMS_PROVIDER: that format was never released).

The file is JSON {"versions": {"1": "<base64 key>", ...}}, written whole to a temporary file (synced) and
renamed.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import threading
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from pyozone.hdds.security.sse import KEY_BYTES

KEYSTORE_KEY = "ozone.om.sse.master.keystore"
"""The keystore's path; unset: s3-sse-master.keystore in OM's metadata directory (ozone.om.db.dirs)."""
KEYSTORE_FILE = "s3-sse-master.keystore"
KEYSTORE_ID = "#SSEKEYSTOREID"
"""om.db's meta row naming the keystore its SSE-S3 keys are wrapped with (MasterKeyStore.keystore_id)."""
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
        versions = {1: os.urandom(KEY_BYTES)}
        _write(path, versions)
        return cls(path, versions)

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
    def keystore_id(self) -> str:
        """Names this keystore without revealing a key: a check value of its first version (HMAC-SHA256 of
        a fixed label, 16 bytes hex). OM records it in om.db, so a start with another keystore, or with
        none where om.db's keys need one, is refused (R36 F2, F4)."""
        first = self._versions[min(self._versions)]
        return hmac.new(first, b"pyozone-sse-keystore-id", hashlib.sha256).hexdigest()[:32]

    @property
    def versions(self) -> tuple[int, ...]:
        return tuple(sorted(self._versions))

    def rotate(self) -> int:
        """Adds a version, which wraps every data key from now on; the new version's number. The file
        holds it (synced, renamed, its directory synced) before any key is wrapped under it: a failed
        write leaves the old version current (R36 F3)."""
        with self._lock:
            version = self.current_version + 1
            versions = {**self._versions, version: os.urandom(KEY_BYTES)}
            _write(self.path, versions)
            self._versions = versions  # one reference swap: `wrap` reads either dict whole
        return version

    def wrap(self, data_key: bytes, bound: str) -> tuple[bytes, int]:
        """`data_key` wrapped under the current version for the object `bound` (its /volume/bucket/key),
        and that version."""
        versions = self._versions
        version = max(versions)
        nonce = os.urandom(_NONCE)
        return nonce + AESGCM(versions[version]).encrypt(nonce, data_key, _aad(version, bound)), version

    def unwrap(self, wrapped: bytes, version: int, bound: str) -> bytes:
        key = self._versions.get(version)
        if key is None:
            raise MasterKeyError(f"master key version {version} is not in {self.path}")
        try:
            return AESGCM(key).decrypt(wrapped[:_NONCE], wrapped[_NONCE:], _aad(version, bound))
        except InvalidTag:
            raise MasterKeyError(
                f"a data key does not open with master key version {version} for {bound} (altered, or "
                "wrapped for another object)"
            ) from None


def _write(path: Path, versions: dict[int, bytes]) -> None:
    """The keystore file whole: a temporary file synced, renamed over it, the directory synced."""
    body = {"versions": {str(v): base64.b64encode(k).decode() for v, k in sorted(versions.items())}}
    partial = path.with_name(path.name + ".tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(body, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(partial, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _aad(version: int, bound: str) -> bytes:
    return f"pyozone-sse-master-v{version}:{bound}".encode()


def open_keystore(path: Path, create: bool, recorded: str | None) -> MasterKeyStore | None:
    """The keystore at `path`, which must be the one om.db `recorded` (its KEYSTORE_ID row; None: om.db
    names none yet). A missing one is created when `create` and om.db names none (`om --init`, a lone
    OM's start of an om.db without SSE-S3 keys), else None (SSE-S3 is refused until it is there); missing
    where om.db names one, or another keystore, is MasterKeyError: a new master key would leave every
    SSE-S3 key om.db holds unreadable. A file that is not a keystore is MasterKeyError."""
    if path.exists():
        store = MasterKeyStore.load(path)
    elif recorded is not None:
        raise MasterKeyError(
            f"{path}: missing, while om.db's SSE-S3 data keys are wrapped under keystore {recorded}: put "
            "that file back (OM makes no new one in its place: every SSE-S3 object would be unreadable)"
        )
    elif create:
        return MasterKeyStore.create(path)
    else:
        return None
    if recorded is not None and store.keystore_id != recorded:
        raise MasterKeyError(
            f"{path}: keystore {store.keystore_id}, while om.db's SSE-S3 data keys are wrapped under "
            f"keystore {recorded}: put that file here (the OMs of an HA service share one)"
        )
    return store
