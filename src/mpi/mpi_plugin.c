/* mpi_plugin.c — libjsmf_mpi.so: the communicator's operations on Open MPI (MPI_COMM_WORLD).
 * Built with mpicc as a plugin so that jsmf itself never links libmpi. Messages are cut into
 * pieces of at most 1 GiB, so byte counts beyond MPI's int range work. The plugin does not link
 * the library, so it returns bare codes; comm.c's wrappers give each its message. */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

#include "comm.h"
#include "comm_plugin.h"

/* Bytes of one message and elements of one reduction: within MPI's int counts. Tests make them
 * small (JSMF_MPI_PIECE_BYTES) to exercise the cutting with small data. */
static uint64_t PIECE = 1ull << 30, PIECE_ELEMS = 1ull << 27;

static int ok(int mpi_rc)
{
    return mpi_rc == MPI_SUCCESS ? 0 : JSMF_EIO;
}

static int plugin_init(int *rank, int *size)
{
    const char *e = getenv("JSMF_MPI_PIECE_BYTES");
    if (e && strtoull(e, NULL, 10) >= 8)
        PIECE = strtoull(e, NULL, 10), PIECE_ELEMS = PIECE / 8;
    int provided, inited = 0;
    MPI_Initialized(&inited);
    /* only the main thread calls MPI; OpenMP threads work between the calls */
    if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return JSMF_EIO;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 0;
}

static void plugin_finalize(void)
{
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin)
        MPI_Finalize();
}

static void plugin_abort(int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
}

static int plugin_barrier(void)
{
    return ok(MPI_Barrier(MPI_COMM_WORLD));
}

static int plugin_bcast(void *buf, uint64_t bytes, int root)
{
    for (uint64_t at = 0; at < bytes; at += PIECE) {
        uint64_t n = bytes - at < PIECE ? bytes - at : PIECE;
        if (MPI_Bcast((char *)buf + at, (int)n, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS)
            return JSMF_EIO;
    }
    return 0;
}

static int plugin_allreduce(void *buf, uint64_t count, int type, int op)
{
    MPI_Datatype t = type == JSMF_COMM_F64 ? MPI_DOUBLE
                     : type == JSMF_COMM_I64 ? MPI_INT64_T : MPI_UINT64_T;
    MPI_Op o = op == JSMF_COMM_MIN ? MPI_MIN : op == JSMF_COMM_MAX ? MPI_MAX : MPI_SUM;
    for (uint64_t at = 0; at < count; at += PIECE_ELEMS) {
        uint64_t n = count - at < PIECE_ELEMS ? count - at : PIECE_ELEMS;
        if (MPI_Allreduce(MPI_IN_PLACE, (char *)buf + at * 8, (int)n, t, o, MPI_COMM_WORLD) !=
            MPI_SUCCESS)
            return JSMF_EIO;
    }
    return 0;
}

/* Post the receives (or sends) of `bytes` as pieces; returns requests used. */
static int post(int send, void *buf, uint64_t bytes, int peer, int tag, MPI_Request *req)
{
    int k = 0;
    for (uint64_t at = 0; at < bytes; at += PIECE, k++) {
        uint64_t n = bytes - at < PIECE ? bytes - at : PIECE;
        int rc = send ? MPI_Isend((char *)buf + at, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD,
                                  &req[k])
                      : MPI_Irecv((char *)buf + at, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD,
                                  &req[k]);
        if (rc != MPI_SUCCESS)
            return -1;
    }
    return k;
}

static int pieces(uint64_t bytes)
{
    return (int)((bytes + PIECE - 1) / PIECE);
}

/* Pairwise exchange: step s sends to rank + s and receives from rank - s, each side posting
 * as many pieces as the byte count both of them know, so counts beyond 2^31 need no datatype
 * tricks. */
static int plugin_alltoallv(const void *send, const uint64_t *scounts, void *recv,
                            const uint64_t *rcounts)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t *soff = malloc(sizeof(uint64_t) * (size_t)size * 2), *roff = soff + size;
    if (!soff)
        return JSMF_ENOMEM;
    soff[0] = roff[0] = 0;
    for (int r = 1; r < size; r++)
        soff[r] = soff[r - 1] + scounts[r - 1], roff[r] = roff[r - 1] + rcounts[r - 1];
    int rc = 0;
    for (int s = 0; s < size && !rc; s++) {
        int dst = (rank + s) % size, src = (rank - s + size) % size;
        int np = pieces(scounts[dst]) + pieces(rcounts[src]);
        MPI_Request *req = malloc(sizeof *req * (size_t)(np ? np : 1));
        if (!req) {
            rc = JSMF_ENOMEM;
            break;
        }
        int a = post(0, (char *)recv + roff[src], rcounts[src], src, 7, req);
        int b = a < 0 ? -1 : post(1, (char *)send + soff[dst], scounts[dst], dst, 7, req + a);
        if (a < 0 || b < 0 || MPI_Waitall(a + b, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            rc = JSMF_EIO;
        free(req);
    }
    free(soff);
    return rc;
}

static int plugin_send(const void *buf, uint64_t bytes, int dest, int tag)
{
    for (uint64_t at = 0; at < bytes; at += PIECE) {
        uint64_t n = bytes - at < PIECE ? bytes - at : PIECE;
        if (MPI_Send((const char *)buf + at, (int)n, MPI_BYTE, dest, tag, MPI_COMM_WORLD) !=
            MPI_SUCCESS)
            return JSMF_EIO;
    }
    return 0;
}

static int plugin_recv(void *buf, uint64_t bytes, int src, int tag)
{
    for (uint64_t at = 0; at < bytes; at += PIECE) {
        uint64_t n = bytes - at < PIECE ? bytes - at : PIECE;
        if (MPI_Recv((char *)buf + at, (int)n, MPI_BYTE, src, tag, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return JSMF_EIO;
    }
    return 0;
}

int jsmf_mpi_plugin_v1(comm_mpi_api *api);
int jsmf_mpi_plugin_v1(comm_mpi_api *api)
{
    api->init = plugin_init;
    api->finalize = plugin_finalize;
    api->abort = plugin_abort;
    api->barrier = plugin_barrier;
    api->bcast = plugin_bcast;
    api->allreduce = plugin_allreduce;
    api->alltoallv = plugin_alltoallv;
    api->send = plugin_send;
    api->recv = plugin_recv;
    return 0;
}
