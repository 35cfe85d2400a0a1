/* jsmf_comm.h — the communicator through which ingest and fit run on several processes (MPI
 * ranks) as one job: a program opens it, passes it to jsmf_ingest_run or jsmf_fit_to_dir on
 * every rank, and closes it at the end. Its collectives are the library's own (src/mpi/comm.h).
 *
 * A program started by mpirun gets Open MPI's communicator from a plugin, libjsmf_mpi.so,
 * loaded at run time, so single-machine users need no MPI runtime; everyone else gets the
 * one-process communicator, on which every collective is a copy.
 *
 * CAVEATS
 *  - Every rank must make the same calls with the same arguments, in the same order, as in MPI;
 *    an error on one rank is returned on every rank.
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

/** The job's communicator: Open MPI's world (through libjsmf_mpi.so) when the process was
 *  started by mpirun (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK set), else one process.
 *  JSMF_ENOTSUP, saying how to build the plugin, when mpirun started several ranks and the
 *  plugin cannot be loaded (JSMF_MPI_LIB overrides where it is looked for). Call once, from the
 *  main thread; jsmf_comm_close finalises MPI. JSMF_ENOMEM otherwise. */
JSMF_API int jsmf_comm_open(jsmf_comm **out);

/** The number of ranks mpirun (or a PMI launcher) started, read from the environment without
 *  loading MPI: 0 when not started by one; and this process's rank among them (0 when unknown).
 *  For programs that must refuse to run a command on several ranks that it does not share. */
JSMF_API int jsmf_comm_launched(int *rank);

/** The one-process communicator (never fails; a static object: closing it does nothing). */
JSMF_API jsmf_comm *jsmf_comm_self(void);

/** Close a communicator jsmf_comm_open opened (NULL and jsmf_comm_self's are fine); MPI is
 *  finalised with it. */
JSMF_API void jsmf_comm_close(jsmf_comm *c);

/** This process's rank (0 .. size - 1) and the number of ranks. */
JSMF_API int jsmf_comm_rank(const jsmf_comm *c);
JSMF_API int jsmf_comm_size(const jsmf_comm *c);
/** "mpi" or "self" (a static string). */
JSMF_API const char *jsmf_comm_kind(const jsmf_comm *c);

/** 1 when a call of the job failed and this rank is not the first (lowest) rank that failed:
 *  that rank's message is the one to print (ranks often fail alike: the same bad option), so
 *  programs print nothing on this one. */
JSMF_API int jsmf_comm_failed_elsewhere(const jsmf_comm *c);

/** What this rank's collectives moved so far: bytes it sent to other ranks, and the seconds
 *  it spent inside communication calls (waiting for slower ranks included); reported by
 *  jsmf_ingest_run (jsmf_ingest_dist_summary) and jsmf_fit (jsmf_fit_report). */
typedef struct jsmf_comm_stats {
    uint64_t bytes_sent;
    uint64_t calls;
    double seconds;
    uint64_t reserved[16]; /**< room to grow (zero; jsmf.h, "Structs that grow") */
} jsmf_comm_stats;

#ifdef __cplusplus
}
#endif
#endif /* JSMF_COMM_H */
