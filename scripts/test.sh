#!/usr/bin/env bash
# Set up a virtual environment (once) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh "[test]"
exec python -m pytest -q "$@"
