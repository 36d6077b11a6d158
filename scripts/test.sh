#!/usr/bin/env bash
# Sets up .venv and runs the default test suite (slow suites: scripts/test.sh -m slow).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/ruff check pyozone tests benchmarks
exec .venv/bin/python -m pytest "$@"
