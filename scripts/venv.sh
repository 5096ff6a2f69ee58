# Sourced by demo.sh and test.sh: create .venv once, install the project (extras in $1), check Java,
# and point Spark's Python workers at the venv's interpreter.
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip >/dev/null
python -m pip install -q -e ".${1:-}"
python -m srtopo.environment >/dev/null || exit 1
export PYSPARK_PYTHON="$PWD/.venv/bin/python"
export PYSPARK_DRIVER_PYTHON="$PWD/.venv/bin/python"
