"""Types shared by every HDDS component: states, identifiers, replication configs."""
