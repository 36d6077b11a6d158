"""The Storage Container Manager: sans-IO managers driven by events and an injected clock."""
