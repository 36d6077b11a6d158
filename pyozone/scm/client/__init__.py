"""Clients of SCM's protocols for other services (the Ozone Manager) and tools."""
