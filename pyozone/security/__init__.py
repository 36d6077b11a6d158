"""A daemon's side of security: its certificate from SCM's CA (first start, renewal) and the
secret keys it verifies or signs tokens with."""
