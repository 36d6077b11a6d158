"""Freon: load generators and verifiers for a running cluster (Ozone's `ozone freon`).

`ockg` writes N keys of a given size from T threads; `ockv` reads them back and checks every byte. Key
contents are a deterministic function of (prefix, index), so a verifier needs no state from the
generator, only the same prefix.
"""

from pyozone.freon.content import key_content, key_name
from pyozone.freon.keys import FreonOptions, generate_keys, verify_keys
from pyozone.freon.report import FreonReport

__all__ = ["FreonOptions", "FreonReport", "generate_keys", "key_content", "key_name", "verify_keys"]
