#!/bin/sh
# mpi_comm.sh — the communicator's collectives under 'mpirun -np 1, 2, 3' (oversubscribed),
# with messages cut into 1000-byte pieces so that the cutting that carries counts beyond 2^31
# is exercised on small data (test_mpi_comm checks values every rank can predict), the fit's
# row-split reductions (test_fit_part) and the fit as one call (test_fit_dir). Skips (77)
# without mpirun or the MPI plugin.
set -u
BUILD=${BUILD:-build}
command -v mpirun >/dev/null 2>&1 || { echo "no mpirun (Debian openmpi-bin)"; exit 77; }
[ -f "$BUILD/libjsmf_mpi.so" ] || { echo "no MPI plugin (libopenmpi-dev; make builds it)"; exit 77; }
# root in CI; containers may forbid the ptrace that Open MPI's single-copy transport uses
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 JSMF_MPI_PIECE_BYTES=1000
export OMPI_MCA_btl_vader_single_copy_mechanism=none
for np in 1 2 3; do
    mpirun --oversubscribe -np $np "$BUILD/tests/test_mpi_comm" || { echo "test_mpi_comm failed at -np $np"; exit 1; }
done
# the fit's reductions over rows split in chunks equal the one-process ones bit for bit
for np in 2 3; do
    mpirun --oversubscribe -np $np "$BUILD/tests/test_fit_part" ||
        { echo "test_fit_part failed at -np $np"; exit 1; }
done
# jsmf_fit_to_dir: rank 0 writes, a failure on one rank fails them all with one message
mpirun --oversubscribe -np 2 "$BUILD/tests/test_fit_dir" ||
    { echo "test_fit_dir failed at -np 2"; exit 1; }
# without the plugin, several ranks are refused with a message saying how to build it
out=$(JSMF_MPI_LIB=/nonexistent/libjsmf_mpi.so mpirun --oversubscribe -np 2 "$JSMF" ingest \
      /nonexistent/store /nonexistent/input 2>&1)
rc=$?
[ $rc -ne 0 ] || { echo "ingest under mpirun without the plugin exited 0"; exit 1; }
echo "$out" | grep -q "MPI plugin libjsmf_mpi.so cannot be loaded" || { echo "$out"; exit 1; }
# commands that do not share their work refuse several ranks, with one message
out=$(mpirun --oversubscribe -np 2 "$JSMF" topics /nonexistent/model 2>&1)
rc=$?
[ $rc -ne 0 ] || { echo "topics under mpirun -np 2 exited 0"; exit 1; }
[ "$(echo "$out" | grep -c 'runs on one process: run it without mpirun')" = 1 ] || { echo "$out"; exit 1; }
echo ok
