#!/usr/bin/env bash
# Sets up .venv and runs the default test suite (slow suites: scripts/test.sh -m slow).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system_deps.sh  # Java 17, curl, headless Chromium (apt, when root)
bash scripts/bootstrap.sh
java -version 2>&1 | head -1
.venv/bin/ruff check pyozone tests benchmarks
.venv/bin/lint-imports  # the layer contracts of pyproject.toml (docs/architecture.md)
# Three workers, a test file each at a time (module fixtures such as a live cluster stay in one worker): most
# end-to-end tests wait on heartbeats and timers, and with two workers the two cores stood idle a sixth of the
# run; three fill them. PYTEST_WORKERS=N for another count, 0 for one process.
workers="${PYTEST_WORKERS:-3}"
if [ "$workers" = "0" ]; then
  exec .venv/bin/python -m pytest --durations=20 "$@"
fi
exec .venv/bin/python -m pytest -n "$workers" --dist loadfile --durations=20 "$@"
