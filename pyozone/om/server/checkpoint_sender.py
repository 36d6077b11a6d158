"""OM's `/dbCheckpoint` sends: the shared, bounded sender of ratis_server/checkpoint_sender.py, which SCM's
leader uses too."""

from __future__ import annotations

from pyozone.ratis_server.checkpoint_sender import CheckpointSender

__all__ = ["CheckpointSender"]
