#!/bin/sh
# core_error_codes.sh — no library source returns or assigns a bare JSMF_E* code: every failing
# call raises its code with jsmf_error (a message naming what failed), so jsmf_errmsg_for() never
# falls back to a generic text, nor a message left by an earlier, handled failure. The MPI
# plugin is the exception: it does not link the library, and comm.c's wrappers say what failed.
set -u
ROOT=${ROOT:-.}
bare=$(grep -rnE 'return JSMF_E[A-Z]+;|[A-Za-z_]+ = JSMF_E[A-Z]+;' \
           "$ROOT/src" --include='*.c' --include='*.h' --include='*.cu' \
       | grep -v '/src/mpi/mpi_plugin.c:')
if [ -n "$bare" ]; then
    echo "FAIL: bare error codes (raise them with jsmf_error and a message):"
    echo "$bare"
    exit 1
fi
echo "core_error_codes: ok"
