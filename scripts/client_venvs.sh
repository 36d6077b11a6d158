#!/usr/bin/env bash
# Creates the S3 clients' own venvs for the client-matrix tests (tests/e2e/cluster/test_e2e_s3_*.py):
# awscli v1 pins its botocore and s3fs needs an aiobotocore that pins another, so neither can share .venv
# (next to the newest boto3 pip falls back to a 2020 s3fs). Safe to run again: a venv that already
# imports the pinned version is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

AWSCLI_PINS=(awscli==1.46.3)
S3FS_PINS=(s3fs==2026.9.0 fsspec==2026.9.0 aiobotocore==3.10.0 botocore==1.43.117 aiohttp==3.14.5)

# make_venv DIR CHECK PINS...: (re)installs PINS into DIR unless DIR's python runs CHECK.
make_venv() {
  local dir=$1 check=$2
  shift 2
  if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "$check" 2>/dev/null; then
    return 0
  fi
  [ -x "$dir/bin/python" ] || "$PYTHON" -m venv "$dir"
  "$dir/bin/python" -m pip install --quiet "$@"
  "$dir/bin/python" -c "$check"
}

make_venv .venv-awscli "import awscli; assert awscli.__version__ == '1.46.3'" "${AWSCLI_PINS[@]}"
make_venv .venv-s3fs "import s3fs; assert s3fs.__version__ == '2026.9.0'" "${S3FS_PINS[@]}"
