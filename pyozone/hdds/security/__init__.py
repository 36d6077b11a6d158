"""Security's shared rules: certificates and identities (`x509.py`), block and container tokens, secret
keys, and ACLs with the native authorizer's decision."""
