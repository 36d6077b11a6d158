#!/usr/bin/env bash
# Sets up .venv and starts a local cluster on 127.0.0.1: SCM and 3 datanodes, one process each, with
# their data under ./pyozone-data/cluster. Prints the endpoints and a live status table; Ctrl-C stops it.
# Extra arguments go to `pyozone cluster up` (e.g. --datanodes 5 --racks 2 --background; --om-ha for three
# OMs of one service instead of one). With --secure
# the cluster runs SCM's CA, mutual TLS on every port, block tokens and ACLs, and its configuration
# (export OZONE_CONF_DIR=pyozone-data/cluster/conf) acts as you, the administrator.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/pyozone cluster up "$@"
