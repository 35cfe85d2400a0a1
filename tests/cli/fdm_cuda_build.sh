#!/bin/sh
# fdm_cuda_build.sh — where nvcc exists and the build was made with CUDA on (the default): the
# program reports cuda in 'jsmf --version', the plugin libjsmf_cuda.so was built with sm_90 code
# and PTX, the program itself does not link cuBLAS (fast start), and asking for the GPU loads the
# plugin (without a GPU its answer is "no CUDA GPU", not "cannot load"). Without nvcc, or in a
# CUDA=no build (make check-asan), it skips.
set -u
JSMF=${JSMF:-build/jsmf}
BUILD=${BUILD:-build}
nvcc=$(command -v nvcc 2>/dev/null || ls "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" 2>/dev/null)
[ -n "$nvcc" ] || { echo "no nvcc on this machine"; exit 77; }
[ -f "$BUILD/.cuda-no" ] && { echo "this build was made with CUDA=no"; exit 77; }
"$JSMF" --version | grep -q "cuda" || { echo "FAIL: nvcc at $nvcc but 'jsmf --version' lacks cuda"; exit 1; }
[ -f "$BUILD/obj/src/fdm/fdm_cuda.o" ] || { echo "FAIL: no CUDA object built"; exit 1; }
[ -f "$BUILD/libjsmf_cuda.so" ] || { echo "FAIL: no plugin $BUILD/libjsmf_cuda.so"; exit 1; }
if command -v ldd >/dev/null 2>&1 && ldd "$JSMF" | grep -q cublas; then
    echo "FAIL: the program links cuBLAS directly"; exit 1
fi
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
printf 'a\nb\n' >"$d/C.npy.vocab.txt"
"${PYTHON:-/usr/bin/python3}" -c "import numpy; numpy.save('$d/C.npy', numpy.array([[.2,.3],[.3,.2]]))"
"$JSMF" fdm "$d/C.npy" -k 1 -o "$d/m" --device cuda --steps 2 --heldout 10 -q 2>"$d/err"
if grep -q "cannot load" "$d/err"; then echo "FAIL: plugin not loaded:"; cat "$d/err"; exit 1; fi
# sm_90 machine code and PTX for newer GPUs
if command -v cuobjdump >/dev/null 2>&1 || [ -x "$(dirname "$nvcc")/cuobjdump" ]; then
    cuobjdump=$(command -v cuobjdump || echo "$(dirname "$nvcc")/cuobjdump")
    list=$("$cuobjdump" --list-elf --list-ptx "$BUILD/obj/src/fdm/fdm_cuda.o" 2>&1)
    echo "$list" | grep -q "sm_90" || { echo "FAIL: no sm_90 code"; echo "$list"; exit 1; }
    echo "$list" | grep -qi "ptx" || { echo "FAIL: no PTX fallback"; echo "$list"; exit 1; }
fi
echo "CUDA back end compiled ($("$JSMF" --version))"
