#!/bin/sh
# python_pkg.sh — the Python package (python/): installed offline into a venv by `make
# install-python`, then its pytest suite (python/tests) run against that install from outside
# the checkout, with jsmf off PATH: everything goes through libjsmf.so in-process.
set -e
"$PYTHON" -c "import pytest, sklearn, scipy" 2>/dev/null ||
    { echo "python3-pytest, python3-sklearn or python3-scipy missing (tools/install-deps.sh)"; exit 77; }
make -s install-python BUILD="$BUILD" VENV="$BUILD/venv-test" PYTHON="$PYTHON" >/dev/null
VENV=$(cd "$BUILD/venv-test" && pwd)
PATH=$(echo "$PATH" | tr ':' '\n' | while read -r d; do [ -x "$d/jsmf" ] || printf '%s:' "$d"; done)
export PATH
if command -v jsmf >/dev/null; then echo "jsmf still on PATH"; exit 1; fi
cd "$(dirname "$VENV")"
unset JSMF_LIB
# A library built with sanitizers (make check-asan) needs their runtime loaded before Python;
# Python itself is not instrumented and keeps memory to the end, so leaks are not checked here.
if readelf -d "$VENV"/lib/python3*/site-packages/jsmf/libjsmf.so.* 2>/dev/null | grep -q '(NEEDED).*\[libasan'; then
    LD_PRELOAD="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
    export LD_PRELOAD ASAN_OPTIONS
fi
# the package loads its own copy of the library, not the checkout's
"$VENV/bin/python" -c "import jsmf; assert jsmf.LIBRARY_PATH.startswith('$VENV'), jsmf.LIBRARY_PATH"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider --durations=8 "$ROOT/python/tests"
