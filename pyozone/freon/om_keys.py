"""omkg: keys created and committed in OM with no data (Ozone's OmKeyGenerator), OM's metadata path alone.

Each key is openKey (dataSize 0) then commitKey with an empty block list: the block OM pre-allocates at
openKey is never written, and no datanode is called. A crash harness passes `committing` and `acknowledged`
to learn which keys OM was asked to commit and which it answered as committed, and `stop` to end the load;
the hooks are called on the client's event loop (runner.run_tasks) and must not block.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from pyozone.client import OzoneClient
from pyozone.freon.content import key_name
from pyozone.freon.keys import FreonOptions, ensure_bucket
from pyozone.freon.report import FreonReport
from pyozone.freon.runner import Progress, run_tasks

Acknowledged = Callable[[str, int], None]
"""Called with (key name, object id) once per key whose commitKey OM answered OK."""


def generate_om_keys(
    client: OzoneClient,
    options: FreonOptions,
    progress: Progress | None = None,
    acknowledged: Acknowledged | None = None,
    stop: threading.Event | None = None,
    committing: Callable[[str], None] | None = None,
) -> FreonReport:
    """omkg: creates and commits empty keys PREFIX/0, PREFIX/1, ... (options.size is not used)."""
    ensure_bucket(client, options)

    async def one(index: int) -> int:
        name = key_name(options.prefix, index)
        om = client.async_client.om
        client_id = (
            await om.open_key(options.volume, options.bucket, name, 0, options.replication)
        ).client_id
        if committing is not None:
            committing(name)
        committed = await om.commit_key(options.volume, options.bucket, name, client_id, 0, [])
        if not committed.object_id:
            raise ValueError("commitKey answered OK without the key's object id")
        if acknowledged is not None:
            acknowledged(name, committed.object_id)
        return 0

    return run_tasks(options.key_run("omkg"), options.load, one, client.submit, progress, stop)
