#!/usr/bin/env bash
# Set up a virtual environment (once) and run the main job on the bundled example:
# the T_ex ontology compiled into an LTM topology and checked on Spark (local[*]) over examples/tex-stream.tnt.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
srtopo compile --tbox examples/tex.ttl --split 1,2 | sed -n '1,12p'
exec srtopo check --engine "${ENGINE:-spark}" --tbox examples/tex.ttl --split 1,2 \
  --stream examples/tex-stream.tnt --window 10 --once "$@"
