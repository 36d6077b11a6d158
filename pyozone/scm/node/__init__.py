"""Datanode membership, health and operational state, as SCM's NodeManager keeps them."""
