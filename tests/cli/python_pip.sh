#!/bin/sh
# python_pip.sh — `pip install ./python` gives a working package with nothing built before: in
# a copy of the working tree (git's tracked and untracked files, none it ignores: no build
# directory, no copy of the library), a fresh venv (--system-site-packages) gets `pip install
# --no-index --no-build-isolation ./python`, whose build backend (python/backend/) builds the
# library and carries it in the wheel; the package loads its own copy from outside the tree,
# its version is include/jsmf.h's (the package's metadata, jsmf.__version__, the library's) and
# a K=3 fit finds three planted topics. python/ holds nothing more afterwards. Then `make
# wheel` (on the backend's build, so nothing is compiled twice) and its wheel installed into a
# second venv, which does the same. The plugins but CUDA's (nvcc is slow) are built when their
# compilers are here.
. "$(dirname "$0")/common.inc"
{ "$PYTHON" -c "import setuptools, wheel, numpy, venv" && "$PYTHON" -m pip --version; } >/dev/null 2>&1 ||
    { echo "python3-numpy, python3-pip, python3-setuptools, python3-wheel or python3-venv missing"; exit 77; }
T=$(mktemp -d /tmp/jsmf-pip-XXXXXX)
trap 'rm -rf "$T"' EXIT
ROOT=${ROOT:-$(pwd)}
# the make that runs the tests passes none of its variables (BUILD, SAN=1) to the makes here
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES JSMF_LIB JSMF_BUILD JSMF_CUDA_LIB JSMF_MPI_LIB
# nor those it exported to the environment (make check-asan's SAN=1 CUDA=no MPI=no)
unset SAN FUZZ CUDA MPI
SRC=$T/src
mkdir -p "$SRC"
if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$ROOT" && git ls-files -co --exclude-standard | while IFS= read -r f; do
        [ -e "$f" ] || [ -L "$f" ] && printf '%s\n' "$f"; done | tar -cf - -T -) | tar -xf - -C "$SRC"
else
    (cd "$ROOT" && tar -cf - --exclude='./build' --exclude='./build-*' --exclude='*.o' \
        --exclude='__pycache__' --exclude='./python/build' --exclude='./python/*.egg-info' \
        --exclude='./python/jsmf/libjsmf*' .) | tar -xf - -C "$SRC"
fi
[ -f "$SRC/python/backend/jsmf_backend.py" ] || { echo "copy of $ROOT failed"; exit 1; }
want=$(sed -n 's/^#define JSMF_VERSION_STRING "\(.*\)"/\1/p' "$SRC/include/jsmf.h")
(cd "$SRC/python" && find . -type f | sort) >"$T/before"

# what each venv runs from outside the tree: the library the package carries, the versions, a fit
cat >"$T/check.py" <<'EOF'
import importlib.metadata
import os
import random
import sys
import tempfile

import jsmf

want, prefix = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.realpath(jsmf.__file__))
assert here.startswith(os.path.realpath(prefix)), (here, prefix)
assert jsmf.LIBRARY_PATH == os.path.join(os.path.dirname(jsmf.__file__), "libjsmf.so.%s" %
                                         want.split(".")[0]), jsmf.LIBRARY_PATH
assert os.path.isfile(jsmf.LIBRARY_PATH) and not os.path.islink(jsmf.LIBRARY_PATH)
got = (jsmf.__version__, jsmf.version().split()[0], importlib.metadata.version("jsmf"))
assert got == (want, want, want), (got, want)
if os.environ.get("WANT_MPI"):
    assert os.environ.get("JSMF_MPI_LIB") == os.path.join(here, "libjsmf_mpi.so"), \
        os.environ.get("JSMF_MPI_LIB")
topics = [["apple", "banana", "cherry", "grape", "melon"],
          ["piano", "violin", "guitar", "drums", "flute"],
          ["river", "mountain", "forest", "valley", "ocean"]]
rng = random.Random(1)
docs = [" ".join(rng.choice(topics[i % 3]) for _ in range(10)) for i in range(300)]
store = jsmf.Store(os.path.join(tempfile.mkdtemp(dir=os.environ["T"]), "store"))
store.ingest(docs, vocabulary=sorted(w for t in topics for w in t), progress=False)
model = jsmf.fit(store, k=3, refine=0, progress=False)
assert model.B.shape == (15, 3), model.B.shape
found = sorted(sorted(t) for t in model.top_words(5))
assert found == sorted(sorted(t) for t in topics), found
print("ok", jsmf.__version__, jsmf.LIBRARY_PATH)
EOF
export T
WANT_MPI=
command -v mpicc >/dev/null && WANT_MPI=1
export WANT_MPI

# 1. pip install ./python: the backend builds the library in build-python/ of the tree
"$PYTHON" -m venv --system-site-packages "$T/v1" || { echo "venv failed"; exit 1; }
start=$(date +%s)
(cd "$SRC" && JSMF_MAKE_ARGS="CUDA=no" "$T/v1/bin/pip" install -q --no-index \
    --no-build-isolation ./python) >"$T/pip.log" 2>&1 ||
    { cat "$T/pip.log"; echo "FAIL: pip install ./python"; exit 1; }
echo "pip install ./python: $(( $(date +%s) - start )) s"
(cd "$T" && "$T/v1/bin/python" "$T/check.py" "$want" "$T/v1") || fail "the installed package"
(cd "$SRC/python" && find . -type f | sort) >"$T/after"
cmp -s "$T/before" "$T/after" ||
    fail "pip install left files in python/: $(diff "$T/before" "$T/after" | grep '^[<>]' | tr '\n' ' ')"

# 2. make wheel, on the same build, and its wheel in a second venv
start=$(date +%s)
make -s -C "$SRC" wheel BUILD=build-python CUDA=no >"$T/wheel.log" 2>&1 ||
    { cat "$T/wheel.log"; echo "FAIL: make wheel"; exit 1; }
echo "make wheel: $(( $(date +%s) - start )) s"
grep -q ' CC ' "$T/wheel.log" && fail "make wheel compiled again: $(grep -c ' CC ' "$T/wheel.log") files"
set -- "$SRC"/build-python/wheel/jsmf-"$want"-py3-none-*.whl
[ -f "$1" ] || { ls "$SRC/build-python/wheel"; echo "FAIL: no wheel jsmf-$want-py3-none-PLATFORM"; exit 1; }
case $1 in *-any.whl) fail "the wheel holds machine code but is tagged any: $1" ;; esac
(cd "$SRC/python" && find . -type f | sort) >"$T/after"
cmp -s "$T/before" "$T/after" || fail "make wheel left files in python/"
"$PYTHON" -m venv --system-site-packages "$T/v2" || { echo "venv failed"; exit 1; }
(cd "$T" && "$T/v2/bin/pip" install -q --no-index "$1") || fail "pip install $1"
(cd "$T" && "$T/v2/bin/python" "$T/check.py" "$want" "$T/v2") || fail "the package from the wheel"
exit $fails
