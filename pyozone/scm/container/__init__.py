"""Containers: records, the lifecycle state machine, the manager, report handling and the close flow."""
