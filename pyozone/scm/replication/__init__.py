"""The Replication Manager (Ozone's ReplicationManager): pure building blocks shared by the check chain, the
processing stage and offline analysis (replica counting, health results, queues, pending operations,
placement validation, throttling formulas and the report)."""
