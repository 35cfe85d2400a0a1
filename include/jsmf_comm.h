/* jsmf_comm.h — the communicator through which ingest and fit run on several processes (MPI
 * ranks) as one job: a handful of collectives over plain bytes and numbers, with byte counts
 * beyond 2^31 and the bytes and seconds spent in them counted.
 *
 * A program started by mpirun gets Open MPI's communicator from a plugin, libjsmf_mpi.so,
 * loaded at run time, so single-machine users need no MPI runtime; everyone else gets the
 * one-process communicator, on which every collective is a copy. Library code is written once
 * against this header and runs the same way on one process or on many.
 *
 * CAVEATS
 *  - Every rank must make the same collective calls in the same order with matching sizes, as
 *    in MPI. A rank that fails between collectives must still reach the next agreement point
 *    (jsmf_comm_agree) so that the job ends together instead of hanging.
 *  - Errors inside the MPI layer abort the whole job (Open MPI's default handler): a rank that
 *    dies takes the job down, and the work resumes from the last collective checkpoint when the
 *    job is run again.
 */
#ifndef JSMF_COMM_H
#define JSMF_COMM_H

#include "jsmf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jsmf_comm jsmf_comm;

/** Element types and operations of jsmf_comm_allreduce. */
typedef enum { JSMF_COMM_U64 = 1, JSMF_COMM_I64, JSMF_COMM_F64 } jsmf_comm_type;
typedef enum { JSMF_COMM_SUM = 1, JSMF_COMM_MIN, JSMF_COMM_MAX } jsmf_comm_op;

/** The job's communicator: Open MPI's world (through libjsmf_mpi.so) when the process was
 *  started by mpirun (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK set), else one process.
 *  JSMF_ENOTSUP, saying how to build the plugin, when mpirun started several ranks and the
 *  plugin cannot be loaded (JSMF_MPI_LIB overrides where it is looked for). Call once, from the
 *  main thread; jsmf_comm_close finalises MPI. */
int jsmf_comm_open(jsmf_comm **out);

/** The number of ranks mpirun (or a PMI launcher) started, read from the environment without
 *  loading MPI: 0 when not started by one; and this process's rank among them (0 when unknown).
 *  For programs that must refuse to run a command on several ranks that it does not share. */
int jsmf_comm_launched(int *rank);

/** The one-process communicator (never fails; a static object: closing it does nothing). */
jsmf_comm *jsmf_comm_self(void);

void jsmf_comm_close(jsmf_comm *c);

int jsmf_comm_rank(const jsmf_comm *c);
int jsmf_comm_size(const jsmf_comm *c);
/** "mpi" or "self". */
const char *jsmf_comm_kind(const jsmf_comm *c);

/** The worst of every rank's `rc` (the most negative: an error anywhere is an error
 *  everywhere), and on the ranks that succeeded a message naming the first rank that failed. */
int jsmf_comm_agree(jsmf_comm *c, int rc);
/** 1 when an agreement failed and this rank is not the first (lowest) rank that failed: that
 *  rank's message is the one to print (ranks often fail alike: the same bad option), so
 *  programs print nothing on this one. */
int jsmf_comm_failed_elsewhere(const jsmf_comm *c);

int jsmf_comm_barrier(jsmf_comm *c);
/** `bytes` from `root` to every rank. */
int jsmf_comm_bcast(jsmf_comm *c, void *buf, uint64_t bytes, int root);
/** Element-wise reduction of `count` elements in place on every rank. */
int jsmf_comm_allreduce(jsmf_comm *c, void *buf, uint64_t count, jsmf_comm_type type,
                        jsmf_comm_op op);
/** Every rank sends scounts[r] bytes (blocks in rank order in `send`) to rank r and receives
 *  rcounts[r] bytes from rank r into `recv` (blocks in rank order). */
int jsmf_comm_alltoallv(jsmf_comm *c, const void *send, const uint64_t *scounts, void *recv,
                        const uint64_t *rcounts);
/** Rank r's `bytes` (= counts[r]) end up at offset sum(counts[0..r)) of `recv` on every rank. */
int jsmf_comm_allgatherv(jsmf_comm *c, const void *send, uint64_t bytes, void *recv,
                         const uint64_t *counts);
/** Point to point, bytes known to both sides. */
int jsmf_comm_send(jsmf_comm *c, const void *buf, uint64_t bytes, int dest, int tag);
int jsmf_comm_recv(jsmf_comm *c, void *buf, uint64_t bytes, int src, int tag);

/** What this rank's collectives moved so far: bytes it sent to other ranks, and the seconds
 *  it spent inside communication calls (waiting for slower ranks included). */
typedef struct jsmf_comm_stats {
    uint64_t bytes_sent;
    uint64_t calls;
    double seconds;
} jsmf_comm_stats;
void jsmf_comm_stats_get(const jsmf_comm *c, jsmf_comm_stats *out);

/** Rows [*r0, *r1) of `n` owned by `rank` of `size` when ranges are cut so that each holds
 *  about the same weight (w[i] of row i; NULL: equal rows). Every rank computes the same cut. */
void jsmf_comm_split(uint32_t n, const uint64_t *w, int size, int rank, uint32_t *r0,
                     uint32_t *r1);

#ifdef __cplusplus
}
#endif
#endif /* JSMF_COMM_H */
