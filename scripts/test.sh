#!/usr/bin/env bash
# Set up a virtual environment (once) and run the whole test suite on SRTOPO_TEST_WORKERS worker processes
# (default 2, one per core on the 2-core machines it is measured on: docs/architecture.md, "Testing").
# Arguments go to pytest after these: scripts/test.sh -x tests/spark, or -n 0 for one process.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh "[test]"
exec python -m pytest -q -n "${SRTOPO_TEST_WORKERS:-2}" --dist loadgroup "$@"
