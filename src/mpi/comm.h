/* comm.h — the collectives of the communicator, for the folders that run on several ranks
 * (src/mpi/comm.c; the public part is include/jsmf_comm.h). */
#ifndef JSMF_MPI_COMM_H
#define JSMF_MPI_COMM_H

#include <stdint.h>

#include "jsmf_comm.h"

/** Element types and operations of comm_allreduce. */
typedef enum { JSMF_COMM_U64 = 1, JSMF_COMM_I64, JSMF_COMM_F64 } jsmf_comm_type;
typedef enum { JSMF_COMM_SUM = 1, JSMF_COMM_MIN, JSMF_COMM_MAX } jsmf_comm_op;

/** The worst of every rank's `rc` (the most negative: an error anywhere is an error
 *  everywhere), and on the ranks that succeeded a message naming the first rank that failed. */
int comm_agree(jsmf_comm *c, int rc);

int comm_barrier(jsmf_comm *c);
/** `bytes` from `root` to every rank. */
int comm_bcast(jsmf_comm *c, void *buf, uint64_t bytes, int root);
/** Element-wise reduction of `count` elements in place on every rank. */
int comm_allreduce(jsmf_comm *c, void *buf, uint64_t count, jsmf_comm_type type,
                        jsmf_comm_op op);
/** Every rank sends scounts[r] bytes (blocks in rank order in `send`) to rank r and receives
 *  rcounts[r] bytes from rank r into `recv` (blocks in rank order). */
int comm_alltoallv(jsmf_comm *c, const void *send, const uint64_t *scounts, void *recv,
                        const uint64_t *rcounts);
/** Rank r's `bytes` (= counts[r]) end up at offset sum(counts[0..r)) of `recv` on every rank. */
int comm_allgatherv(jsmf_comm *c, const void *send, uint64_t bytes, void *recv,
                         const uint64_t *counts);
/** Point to point, bytes known to both sides. */
int comm_send(jsmf_comm *c, const void *buf, uint64_t bytes, int dest, int tag);
int comm_recv(jsmf_comm *c, void *buf, uint64_t bytes, int src, int tag);

void comm_stats_get(const jsmf_comm *c, jsmf_comm_stats *out);

/** Rows [*r0, *r1) of `n` owned by `rank` of `size` when ranges are cut so that each holds
 *  about the same weight (w[i] of row i; NULL: equal rows). Every rank computes the same cut. */
void comm_split(uint32_t n, const uint64_t *w, int size, int rank, uint32_t *r0,
                     uint32_t *r1);

#endif
