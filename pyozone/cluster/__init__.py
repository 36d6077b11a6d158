"""A local cluster on 127.0.0.1: one OS process per daemon, under one data directory."""
