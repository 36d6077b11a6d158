"""The data pipeline on Spark: metadata snapshots and cluster analytics with PySpark."""
