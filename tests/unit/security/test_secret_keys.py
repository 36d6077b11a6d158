"""SecretKeyCache: the current key is asked for again once it is as old as the rotation; a key not held is
fetched, and forged ids cannot make it call SCM per request; a daemon's cache asks SCM with its renewed
certificate."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.common.tls import TlsStore
from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.proto import ScmSecurityProtocol_pb2 as pb
from pyozone.protocol.security import MAX_SECURITY_MESSAGE_BYTES, secret_key_to_proto
from pyozone.rpc.sync import run_sync
from pyozone.security.secret_keys import MISS_REFRESH_MS, RECHECK_MS, RenewingSecretKeySource, SecretKeyCache
from tests.tls_certs import CertAuthority

DAY = 86_400_000


class FakeScm:
    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.keys = [ManagedSecretKey.generate(clock.wall_ms(), 9 * DAY)]
        self.current_calls = 0
        self.all_calls = 0
        self.down = False
        self.closed = False

    def rotate(self) -> ManagedSecretKey:
        self.keys.append(ManagedSecretKey.generate(self.clock.wall_ms(), 9 * DAY))
        return self.keys[-1]

    def get_current_secret_key(self) -> ManagedSecretKey:
        self.current_calls += 1
        if self.down:
            raise SecurityError(SecurityResult.UNAVAILABLE, "SCM is down")
        return self.keys[-1]

    def get_all_secret_keys(self) -> list[ManagedSecretKey]:
        self.all_calls += 1
        if self.down:
            raise SecurityError(SecurityResult.UNAVAILABLE, "SCM is down")
        return list(self.keys)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def scm(clock: ManualClock) -> FakeScm:
    return FakeScm(clock)


@pytest.fixture
def cache(scm: FakeScm, clock: ManualClock) -> SecretKeyCache:
    return SecretKeyCache(scm, clock, rotation_ms=DAY)


def test_the_current_key_is_held_until_it_is_as_old_as_the_rotation(
    cache: SecretKeyCache, scm: FakeScm, clock: ManualClock
) -> None:
    first = cache.current()
    clock.advance(DAY - 1)
    assert cache.current() is first and scm.current_calls == 1
    successor = scm.rotate()
    clock.advance(1)
    assert cache.current() == successor and scm.current_calls == 2


def test_an_old_key_scm_has_not_rotated_yet_is_rechecked_at_most_once_a_minute(
    cache: SecretKeyCache, scm: FakeScm, clock: ManualClock
) -> None:
    first = cache.current()
    clock.advance(DAY)
    for _ in range(5):
        assert cache.current() == first
    assert scm.current_calls == 2
    clock.advance(RECHECK_MS)
    successor = scm.rotate()
    assert cache.current() == successor and scm.current_calls == 3


def test_scm_down_keeps_an_unexpired_key_and_fails_without_one(
    cache: SecretKeyCache, scm: FakeScm, clock: ManualClock
) -> None:
    first = cache.current()
    scm.down = True
    clock.advance(DAY)
    assert cache.current() == first
    clock.advance(9 * DAY)
    with pytest.raises(SecurityError, match="down"):
        cache.current()
    fresh = SecretKeyCache(scm, clock, rotation_ms=DAY)
    with pytest.raises(SecurityError):
        fresh.current()


def test_a_key_not_held_is_fetched_with_every_key(
    cache: SecretKeyCache, scm: FakeScm, clock: ManualClock
) -> None:
    assert not cache.knows(scm.keys[0].id)
    assert cache.get(scm.keys[0].id) == scm.keys[0]
    assert scm.all_calls == 1
    clock.advance(MISS_REFRESH_MS)
    rotated = scm.rotate()
    assert cache.get(rotated.id) == rotated and scm.all_calls == 2
    assert cache.get(scm.keys[0].id) == scm.keys[0] and scm.all_calls == 2  # held: no call


def test_forged_ids_cost_scm_one_call_per_window(
    cache: SecretKeyCache, scm: FakeScm, clock: ManualClock
) -> None:
    for _ in range(100):
        assert cache.get(uuid.uuid4()) is None
    assert scm.all_calls == 1
    assert cache.knows(uuid.uuid4())  # answered from the cache: no SCM call on the event loop
    clock.advance(MISS_REFRESH_MS)
    assert not cache.knows(uuid.uuid4())
    assert cache.get(uuid.uuid4()) is None and scm.all_calls == 2


def test_scm_unreachable_on_a_miss_is_no_key(cache: SecretKeyCache, scm: FakeScm) -> None:
    scm.down = True
    assert cache.get(scm.keys[0].id) is None


def test_the_signing_key_is_known_to_the_verifier_side(cache: SecretKeyCache, scm: FakeScm) -> None:
    key = cache.current()
    assert cache.knows(key.id) and cache.get(key.id) == key and scm.all_calls == 0
    cache.close()
    assert scm.closed


class _SerialScm:
    """Answers the current key and notes the serial of the certificate each caller's connection showed."""

    def __init__(self, key: ManagedSecretKey) -> None:
        self.key = key
        self.serials: list[int] = []

    def getCurrentSecretKey(self, request, context):
        [pem] = context.auth_context()["x509_pem_cert"]
        self.serials.append(X.cert_from_pem(pem).serial_number)
        return pb.SCMGetCurrentSecretKeyResponse(secretKey=secret_key_to_proto(self.key))


def test_a_daemons_cache_asks_scm_with_its_renewed_certificate(tmp_path: Path) -> None:
    """SecretKeyCache.connect's source lives as long as its daemon: after a renewal its calls present the
    new certificate (a reconnect with the first one fails once it expired, e.g. to a restarted SCM)."""
    ca = CertAuthority(tmp_path)
    scm = _SerialScm(ManagedSecretKey.generate(0, 9 * DAY))
    server = rpc.Server(rpc.ServerSettings(MAX_SECURITY_MESSAGE_BYTES))
    server.add_service(rpc.service(pb, "SCMSecurityProtocolService"), scm)
    # Not scm@127.0.0.1: the test CA's own name, which OpenSSL would take for a self-signed certificate.
    scm_tls = ca.store("scm", X.Identity(X.CertRole.SCM, "scm", "localhost"))
    port = run_sync(server.start("127.0.0.1", 0, scm_tls), 10)  # on the process's RPC loop thread
    dn = X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1")
    paths = ca.issue("dn", dn)
    store = TlsStore(paths)
    conf = OzoneConfiguration({"ozone.scm.security.service.address": f"127.0.0.1:{port}"})
    source = RenewingSecretKeySource(conf, store)
    try:
        assert source.get_current_secret_key() == scm.key
        ca.issue("dn", dn)
        store.reload()
        assert source.get_current_secret_key() == scm.key
        first, renewed = scm.serials
        assert renewed == X.cert_from_pem(paths.cert.read_bytes()).serial_number != first
    finally:
        source.close()
        run_sync(server.stop(0), 10)
