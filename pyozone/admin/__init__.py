"""`pyozone admin snapshot`'s client side: SCM's streamed snapshot written with analytics' SnapshotWriter,
then OM's keys (the SCM admin client itself is pyozone.framework.scm_admin)."""
