#!/bin/sh
# install-deps.sh — install the Debian packages jsmf builds and tests with, if any are missing.
# Runs as part of `make` so a fresh machine needs no manual step (CI runs as root). Open MPI
# is only for the MPI plugin and its tests: jsmf itself never links it.
# python3-mypy type-checks the Python package (python/tests/test_typing.py); python3-xxhash
# recomputes the store's checksums independently (tests/py/test_store_v1.py).
# `install-deps.sh fuzz` (make check-fuzz) adds clang with libFuzzer and its OpenMP runtime.
set -e
PKGS="build-essential pkg-config liblmdb-dev lmdb-utils libzstd-dev zstd libxxhash-dev libopenblas-openmp-dev
liblapacke-dev python3-numpy openmpi-bin libopenmpi-dev python3-venv python3-setuptools
python3-pytest python3-scipy python3-sklearn python3-tqdm python3-mypy python3-xxhash"
[ "${1:-}" = fuzz ] && PKGS="$PKGS clang libclang-rt-14-dev libomp-dev"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
