/* comm_plugin.h — the table of MPI operations that libjsmf_mpi.so (mpi_plugin.c, built with
 * mpicc) hands to the library (comm.c), so that only the plugin links Open MPI. Sizes are
 * 64-bit; the plugin cuts them into messages MPI's int counts can carry. */
#ifndef JSMF_COMM_PLUGIN_H
#define JSMF_COMM_PLUGIN_H

#include <stdint.h>

#define JSMF_MPI_PLUGIN_SYMBOL "jsmf_mpi_plugin_v1"

typedef struct comm_mpi_api {
    int (*init)(int *rank, int *size);
    void (*finalize)(void);
    void (*abort)(int code);
    int (*barrier)(void);
    int (*bcast)(void *buf, uint64_t bytes, int root);
    /* type, op: jsmf_comm_type, jsmf_comm_op */
    int (*allreduce)(void *buf, uint64_t count, int type, int op);
    int (*alltoallv)(const void *send, const uint64_t *scounts, void *recv,
                     const uint64_t *rcounts);
    int (*send)(const void *buf, uint64_t bytes, int dest, int tag);
    int (*recv)(void *buf, uint64_t bytes, int src, int tag);
} comm_mpi_api;

/* The plugin's one exported function: fills *api, returns 0. */
typedef int (*comm_mpi_plugin_fn)(comm_mpi_api *api);

#endif
