"""The Replication Manager (spec section 10): pure building blocks shared by the check chain, the
processing stage and offline analysis (replica counting, health results, queues, pending operations,
placement validation, throttling formulas and the report)."""
