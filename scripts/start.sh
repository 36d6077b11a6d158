#!/usr/bin/env bash
# Sets up .venv, initialises an SCM in ./pyozone-data and runs it with simulated datanodes.
# Extra arguments go to `pyozone sim` (e.g. --datanodes 10 --racks 2 --kill 1@6 --restart 1@14).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
DATA=${PYOZONE_DATA:-pyozone-data}
.venv/bin/pyozone scm --init -D ozone.metadata.dirs="$DATA/scm"
exec .venv/bin/pyozone sim --data-dir "$DATA/scm" "$@"
