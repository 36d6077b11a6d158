"""SCM's certificate authority and secret keys, sans-IO: who may get which certificate, serial numbers,
lifetimes and renewal, the `validCerts` table and its expiry, and the rotation of the symmetric keys block
tokens are signed with. Time comes from the injected Clock; the daemon (`scm/server`) serves it on the
security protocol and keeps its files (`scm/server/ca_files.py`)."""
