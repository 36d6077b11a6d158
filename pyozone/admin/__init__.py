"""Clients of SCM's admin protocol, returning the project's own dataclasses."""
