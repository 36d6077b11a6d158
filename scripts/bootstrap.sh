#!/usr/bin/env bash
# Creates .venv (if missing) and installs pyozone with its test tools. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[test]"
bash scripts/client_venvs.sh  # awscli and s3fs, each in its own venv (S3 client tests)
