"""Jepsen-style testing of OM (issue 30): a recorder of client histories (history.py), the sequential
specification of OM's keys (models.py) and a linearizability checker (checker.py)."""
