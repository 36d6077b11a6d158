#!/usr/bin/env bash
# Sets up .venv and runs the default test suite (slow suites: scripts/test.sh -m slow).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/ruff check pyozone tests benchmarks
.venv/bin/lint-imports  # the layer contracts of pyproject.toml (docs/architecture.md)
exec .venv/bin/python -m pytest "$@"
