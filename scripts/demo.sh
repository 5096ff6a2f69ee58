#!/usr/bin/env bash
# Set up a virtual environment (once) and run the main job on the bundled example:
# the T_ex ontology compiled into an LTM topology and checked on Spark (local[*]) over examples/tex-stream.tnt.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip >/dev/null
python -m pip install -q -e .
python -m srtopo.environment >/dev/null || exit 1
export PYSPARK_PYTHON="$PWD/.venv/bin/python"
export PYSPARK_DRIVER_PYTHON="$PWD/.venv/bin/python"
srtopo compile --tbox examples/tex.ttl --split 1,2 | sed -n '1,12p'
exec srtopo check --engine "${ENGINE:-spark}" --tbox examples/tex.ttl --split 1,2 \
  --stream examples/tex-stream.tnt --window 10 --once "$@"
