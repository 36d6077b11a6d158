"""Ratis pipelines: placement, the manager, the creator and the scrubber.

The limit rule is pyozone/scm/pipeline_limits.py, outside this package: NodeManager asks it too."""
