/* comm.c — the communicator (include/jsmf_comm.h): the one-process one, and Open MPI's through
 * the plugin libjsmf_mpi.so, found and loaded only when mpirun started the program. Counts the
 * bytes and the time of every collective for the scaling figures. */
#include "jsmf_comm.h"
#include "comm_plugin.h"
#include "core/plugin.h"
#include "core/clock.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"

#define PLUGIN "libjsmf_mpi.so"

struct jsmf_comm {
    int rank, size;
    int is_mpi;
    int elsewhere;  /* an agreement failed because of another rank */
    comm_mpi_api api;
    void *dl;
    jsmf_comm_stats st;
};

static jsmf_comm self_comm = {.rank = 0, .size = 1};

jsmf_comm *jsmf_comm_self(void)
{
    return &self_comm;
}

/* ---- finding the plugin -------------------------------------------------------------------- */

typedef struct plugin_try {
    jsmf_comm *c;
    char *why;
    size_t whylen;
} plugin_try;

static int try_plugin(void *arg, const char *path)
{
    plugin_try *t = arg;
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL); /* Open MPI's components need its symbols */
    if (!h) {
        snprintf(t->why, t->whylen, "%s", dlerror());
        return 0;
    }
    comm_mpi_plugin_fn init = (comm_mpi_plugin_fn)(uintptr_t)dlsym(h, JSMF_MPI_PLUGIN_SYMBOL);
    if (!init || init(&t->c->api)) {
        snprintf(t->why, t->whylen, "%s: no %s (plugin of another version?)", path,
                 JSMF_MPI_PLUGIN_SYMBOL);
        dlclose(h);
        return 0;
    }
    t->c->dl = h;
    return 1;
}

/* The search order of every plugin (core/plugin.h), JSMF_MPI_LIB first. */
static int load_plugin(jsmf_comm *c, char *why, size_t whylen)
{
#ifdef JSMF_MPI_SO_BUILD
    const char *build = JSMF_MPI_SO_BUILD;
#else
    const char *build = NULL;
#endif
#ifdef JSMF_MPI_SO_INSTALL
    const char *install = JSMF_MPI_SO_INSTALL;
#else
    const char *install = NULL;
#endif
    plugin_try t = {c, why, whylen};
    return plugin_find("JSMF_MPI_LIB", PLUGIN, build, install, try_plugin, &t);
}

/* The world size mpirun (or a PMI launcher) announced; 0 when not started by one. */
static long launcher_size(void)
{
    const char *names[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *v = getenv(names[i]);
        if (v && *v)
            return strtol(v, NULL, 10);
    }
    return getenv("PMIX_RANK") || getenv("PMI_RANK") ? 1 : 0;
}

int jsmf_comm_launched(int *rank)
{
    const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    *rank = 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) {
            *rank = (int)strtol(v, NULL, 10);
            break;
        }
    }
    long size = launcher_size();
    return size > 0 && size < (1L << 30) ? (int)size : 0;
}

int jsmf_comm_open(jsmf_comm **out)
{
    *out = &self_comm;
    long size = launcher_size();
    if (size == 0)
        return JSMF_OK;
    jsmf_comm *c = calloc(1, sizeof *c);
    if (!c)
        return jsmf_error(JSMF_ENOMEM, "out of memory");
    char why[512] = "not found";
    if (!load_plugin(c, why, sizeof why)) {
        free(c);
        if (size == 1) /* mpirun -np 1 without the plugin: one process is what was asked for */
            return JSMF_OK;
        return jsmf_error(JSMF_ENOTSUP, "started by mpirun with %ld ranks, but the MPI plugin "
                          PLUGIN " cannot be loaded (%s): install libopenmpi-dev and rebuild "
                          "(make builds it when mpicc is found), or set JSMF_MPI_LIB", size, why);
    }
    if (c->api.init(&c->rank, &c->size)) {
        dlclose(c->dl);
        free(c);
        return jsmf_error(JSMF_EIO, "MPI_Init failed");
    }
    c->is_mpi = 1;
    *out = c;
    return JSMF_OK;
}

void jsmf_comm_close(jsmf_comm *c)
{
    if (!c || c == &self_comm)
        return;
    c->api.finalize();
    /* libmpi stays loaded: Open MPI does not support being unloaded after MPI_Finalize */
    free(c);
}

int jsmf_comm_rank(const jsmf_comm *c)
{
    return c->rank;
}

int jsmf_comm_size(const jsmf_comm *c)
{
    return c->size;
}

const char *jsmf_comm_kind(const jsmf_comm *c)
{
    return c->is_mpi ? "mpi" : "self";
}

void comm_stats_get(const jsmf_comm *c, jsmf_comm_stats *out)
{
    *out = c->st;
}

/* ---- collectives ------------------------------------------------------------------------- */

static int done(jsmf_comm *c, double t0, uint64_t sent, int rc, const char *what)
{
    c->st.seconds += clock_seconds() - t0;
    c->st.bytes_sent += sent;
    c->st.calls++;
    return rc ? jsmf_error(rc, "MPI %s failed (rank %d of %d)", what, c->rank, c->size) : 0;
}

int comm_barrier(jsmf_comm *c)
{
    if (!c->is_mpi)
        return JSMF_OK;
    double t0 = clock_seconds();
    return done(c, t0, 0, c->api.barrier(), "barrier");
}

int comm_bcast(jsmf_comm *c, void *buf, uint64_t bytes, int root)
{
    if (!c->is_mpi || !bytes)
        return JSMF_OK;
    double t0 = clock_seconds();
    return done(c, t0, c->rank == root ? bytes * (uint64_t)(c->size - 1) : 0,
                c->api.bcast(buf, bytes, root), "broadcast");
}

int comm_allreduce(jsmf_comm *c, void *buf, uint64_t count, jsmf_comm_type type,
                        jsmf_comm_op op)
{
    if (!c->is_mpi || !count)
        return JSMF_OK;
    double t0 = clock_seconds();
    /* a reduction moves about 2 (P-1)/P of the data per rank (reduce-scatter + allgather) */
    uint64_t sent = 2 * count * 8 * (uint64_t)(c->size - 1) / (uint64_t)c->size;
    return done(c, t0, sent, c->api.allreduce(buf, count, (int)type, (int)op), "allreduce");
}

int comm_alltoallv(jsmf_comm *c, const void *send, const uint64_t *scounts, void *recv,
                        const uint64_t *rcounts)
{
    if (!c->is_mpi) {
        if (scounts[0])
            memcpy(recv, send, scounts[0]);
        return JSMF_OK;
    }
    double t0 = clock_seconds();
    uint64_t sent = 0;
    for (int r = 0; r < c->size; r++)
        sent += r == c->rank ? 0 : scounts[r];
    return done(c, t0, sent, c->api.alltoallv(send, scounts, recv, rcounts), "all-to-all");
}

/* One broadcast per rank: a rank's block is needed whole by every other rank anyway. */
int comm_allgatherv(jsmf_comm *c, const void *send, uint64_t bytes, void *recv,
                         const uint64_t *counts)
{
    uint64_t at = 0;
    for (int r = 0; r < c->rank; r++)
        at += counts[r];
    if (bytes && (char *)recv + at != (const char *)send)
        memmove((char *)recv + at, send, bytes);
    if (!c->is_mpi)
        return JSMF_OK;
    double t0 = clock_seconds();
    int rc = 0;
    at = 0;
    for (int r = 0; r < c->size && !rc; r++) {
        if (counts[r])
            rc = c->api.bcast((char *)recv + at, counts[r], r);
        at += counts[r];
    }
    return done(c, t0, bytes * (uint64_t)(c->size - 1), rc, "allgather");
}

int comm_send(jsmf_comm *c, const void *buf, uint64_t bytes, int dest, int tag)
{
    if (!c->is_mpi)
        return jsmf_error(JSMF_EINVAL, "send on a one-process communicator");
    double t0 = clock_seconds();
    return done(c, t0, bytes, c->api.send(buf, bytes, dest, tag), "send");
}

int comm_recv(jsmf_comm *c, void *buf, uint64_t bytes, int src, int tag)
{
    if (!c->is_mpi)
        return jsmf_error(JSMF_EINVAL, "receive on a one-process communicator");
    double t0 = clock_seconds();
    return done(c, t0, 0, c->api.recv(buf, bytes, src, tag), "receive");
}

int comm_agree(jsmf_comm *c, int rc)
{
    if (!c->is_mpi)
        return rc;
    int64_t v[2] = {rc, rc ? c->rank : c->size}; /* worst code, first failing rank */
    int agreed = comm_allreduce(c, v, 2, JSMF_COMM_I64, JSMF_COMM_MIN);
    if (agreed) /* its message says which call failed */
        return agreed;
    if (v[0] && v[1] != c->rank) /* the first failing rank's message is the one printed */
        c->elsewhere = 1;
    if (rc)
        return rc;
    if (v[0])
        return jsmf_error((int)v[0], "rank %d of %d failed (its message is above)", (int)v[1],
                          c->size);
    return JSMF_OK;
}

int jsmf_comm_failed_elsewhere(const jsmf_comm *c)
{
    return c->elsewhere;
}

/* ---- dividing rows ----------------------------------------------------------------------- */

void comm_split(uint32_t n, const uint64_t *w, int size, int rank, uint32_t *r0,
                     uint32_t *r1)
{
    if (!w) {
        *r0 = (uint32_t)((uint64_t)n * (uint64_t)rank / (uint64_t)size);
        *r1 = (uint32_t)((uint64_t)n * (uint64_t)(rank + 1) / (uint64_t)size);
        return;
    }
    long double total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += w[i];
    /* range r ends at the first row where the running weight reaches (r+1)/size of the total */
    uint32_t i = 0, start = 0;
    long double acc = 0;
    for (int r = 0; r <= rank; r++) {
        start = i;
        long double goal = total * (long double)(r + 1) / (long double)size;
        while (i < n && (r == size - 1 || acc + (long double)w[i] / 2 < goal))
            acc += w[i++];
    }
    *r0 = start, *r1 = i;
}
