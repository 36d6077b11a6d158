"""Ratis pipelines: records, the limit rule, placement, the manager, the creator and the scrubber."""
